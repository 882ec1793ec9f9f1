r"""Statements about grouped-query (GQA) and multi-query (MQA) attention, decided by the engine.

Explanation
===========

A document that states ``g`` key/value heads (``g = 2``, ``n_kv_heads = 8``, "8 KV heads", "a single
key/value head") is checked against :class:`~mha_symbolic.attention.MultiHeadAttention` with
``kv_heads = g`` (:meth:`.model.DocumentModel.model`).  This module reads what such documents state about
the grouping and decides each statement with that model:

* **group size** -- "each key/value head is shared by 4 query heads", ``n_rep = 4``: the number of query
  heads ``i`` whose :meth:`~MultiHeadAttention.kv_index` is ``j``, counted for every ``j``;
* **which key/value head** -- "query head 5 reads key/value head 2": :meth:`~MultiHeadAttention.kv_index`;
  a formula with an index expression (``K_{\lceil i g / h \rceil}``) is instantiated for every query head
  ``i = 1..h`` and each instance judged by the formula machinery (:func:`.judge.judge`);
* **KV cache and parameters** -- read by :mod:`.counts` from the engine's counts of the same model;
* **stacked weights** -- ``W_K \in \mathbb{R}^{512 \times 128}``: the model's ``g`` key/value weights side
  by side (one head's shape is accepted as well: the document may mean one head's).

A ``g`` that does not divide ``h`` is reported once, on the line that fixes the sizes
(:func:`kv_heads_problem`), and every statement about the grouping is then ``inconsistent`` with that
reason.  Indices and code right sides are read by :func:`.arithmetic.arithmetic_value`; nothing is ever
``eval``'d or ``sympify``'d.

Examples
========

>>> doc = DocumentModel()
>>> for name, value in (("d_model", 512), ("h", 8), ("g", 2)):
...     doc.bind_dim(name, value)
>>> judge_sentence(doc, "Each key/value head is shared by 4 query heads.")[0][:2]
('correct', 'each key/value head serves h/g = 4 query heads (query head i reads key/value head ceil(i g / h))')
>>> judge_sentence(doc, "The KV cache per token per layer holds 512 values.")[0][2]
'256 values'
>>> judge_sentence(doc, "Query head 4 reads key/value head 2.")[0][:3]
('wrong', 'query head 4 reads key/value head ceil(i g / h) = 1, not 2', '1')
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

from .arithmetic import arithmetic_value
from .counts import cache_text, judge_cache, judge_parameters, remember, sizes
from .model import DocumentModel, as_int
from .numbers import Verdict3, _worst

__all__ = ["kv_heads_problem", "judge_indexed", "judge_sentence", "grouped_prose", "grouped_code", "stacked_shape"]


# ----- sizes that do not fit --------------------------------------------------------------------------
def kv_heads_problem(doc: DocumentModel) -> str | None:
    """Why the document's ``g`` key/value heads cannot serve its ``h`` query heads, or None (also when g and h were
    bound in different paragraphs of a document with several examples: they may be two examples' sizes)."""
    d = doc.known_dims()
    g, h = d.get("g"), d.get("h")
    if g is None or _apart(doc):
        return None
    if g < 1:
        return f"g = {g} key/value heads: g must be a positive integer"
    if h is None:
        return None
    if h % g:
        return (f"g = {g} does not divide h = {h}: g must divide h (each key/value head serves h/g query heads, "
                f"and {h}/{g} is not an integer)")
    return None


def _apart(doc: DocumentModel) -> bool:
    """Were g and h bound in different paragraphs of a document with several examples?  Then they may be two
    examples' sizes, and the grouping they would make is no statement of the document."""
    d = doc.known_dims()
    return "g" in d and "h" in d and bool(doc.examples) and doc.scope_of("g")[0] != doc.scope_of("h")[0]


# ----- index arithmetic -------------------------------------------------------------------------------
# ----- formulas with a key/value index ------------------------------------------------------------------
_SUBSCRIPT = re.compile(r"([_^])(\{(?:[^{}]|\{[^{}]*\})*\}|[A-Za-z0-9])")
_KV_INDEX = re.compile(r"\\lceil|\\lfloor|⌈|⌊|ceil|floor|(?<![A-Za-z\\])[gG](?![A-Za-z])")


_I = re.compile(r"(?<![A-Za-z\\])i(?![A-Za-z])")


def _indexed(tex: str, grouped: bool) -> bool:
    r"""Does a subscript of ``tex`` compute a key/value head from the query head ``i``
    (``K_{\lceil i g / h \rceil}``), or -- in a document with key/value heads -- does a general head ``i``
    read a fixed key/value head (``Q_i K_1^T``, multi-query attention)?"""
    bodies = [m.group(2).strip("{}").strip() for m in _SUBSCRIPT.finditer(tex)]
    if any(_KV_INDEX.search(b) and _I.search(b) for b in bodies):
        return True
    return grouped and "i" in bodies and bool(re.search(r"(?<![A-Za-z\\])[KV]_\{?\d+\}?", tex))


def _instance(tex: str, names: dict[str, Any]) -> str:
    """``tex`` with every subscript or superscript that involves ``i`` replaced by its value."""
    def repl(m: re.Match[str]) -> str:
        body = m.group(2)[1:-1] if m.group(2).startswith("{") else m.group(2)
        if not re.search(r"(?<![A-Za-z\\])i(?![A-Za-z])", body):
            return m.group(0)
        return f"{m.group(1)}{{{arithmetic_value(body, names)}}}"
    return _SUBSCRIPT.sub(repl, tex)


def judge_indexed(doc: DocumentModel, sides: list[str], ops: list[str], text: str) -> tuple[str, Verdict3] | None:
    """A formula whose subscripts compute the key/value head of query head ``i`` (``K_{\\lceil i g/h \\rceil}``):
    judged for every query head ``i = 1..h`` of the document's model; None when it has no such subscript."""
    from .judge import judge

    if not any(_indexed(s, "g" in doc.known_dims()) for s in sides):
        return None
    M = doc.model()
    h = as_int(M.dims.h)
    known = doc.known_dims()
    if h is None or known.get("g") is None:
        return "formula", ("unchecked", "an index in g and h, but the document does not fix both", None, "")
    verdicts = []
    for i in range(1, h + 1):
        names = {**known, "i": i}
        try:
            instance = [_instance(s, names) for s in sides]
        except (ValueError, ZeroDivisionError) as e:
            return "formula", ("unchecked", f"index not read: {e}", None, "")
        got = judge(doc, instance, ops, text)
        if got is None:
            return None
        status, message, expected, basis = got[1]
        if status in ("wrong", "inconsistent", "unchecked", "assumed"):
            return "formula", (status, f"for query head i = {i}: {message}", expected, basis)
        verdicts.append(got[1])
    return "formula", ("correct", f"holds for every query head i = 1..{h} (each instance the same expression in the "
                       f"model's inputs, g = {known['g']} key/value heads)", None, "proven")


# ----- stacked weights --------------------------------------------------------------------------------
def stacked_shape(doc: DocumentModel, name: str, stated: tuple[Any, Any]) -> Verdict3 | None:
    """``W_K \\in R^{a x b}`` for a bare ``W_Q``/``W_K``/``W_V`` in a document with ``g`` key/value heads: the
    model's weights of that kind side by side (or one head's), against the stated ``(a, b)``; None when the
    document states no ``g``."""
    from sympy import simplify

    from .._convert import as_sympy

    kind = re.fullmatch(r"\s*W_?\{?([QKV])\}?\s*|\s*W\^\{?([QKV])\}?\s*", name)
    projected = re.fullmatch(r"\s*([QKV])\s*", name)
    if projected is not None and _projection(doc.definitions.get(projected.group(1)), projected.group(1)):
        kind = projected  # K = X W_K in the document: every key/value head's keys side by side
    if kind is None or "g" not in doc.known_dims():
        return None
    M = doc.model()
    letter = kind.group(1) or kind.group(2)
    weights = M.inputs[f"W_{letter}"]
    rows = M.dims.shape(weights[0].shape)[0]
    if kind is projected:
        source = M.X if letter == "Q" else M.Y
        rows = M.dims.shape(source.shape)[0]
        name = letter
    stacked = (rows, sum(M.dims.shape(w.shape)[1] for w in weights))
    one = M.dims.shape(weights[0].shape)
    heads = len(weights)

    def same(a: tuple[Any, Any]) -> bool | None:
        diffs = [simplify(as_sympy(x) - as_sympy(y)) for x, y in zip(a, stated, strict=True)]
        if any(d.free_symbols for d in diffs):
            return None
        return all(d == 0 for d in diffs)

    if kind is projected:
        one = (rows, one[1])
    outcomes = (same(stacked), same(one))
    what = "query" if letter == "Q" else "key/value"
    got = f"{stacked[0]} x {stacked[1]}"
    label = letter if kind is projected else f"W_{letter}"
    if True in outcomes:
        part = f"{letter}_j" if kind is projected else f"W_{letter}^j"
        things = "projections" if kind is projected else "weights"
        which = (f"the {heads} {what} head{'s' if heads > 1 else ''}' {things} side by side are {got}" if outcomes[0]
                 else f"one {what} head's {part} is {one[0]} x {one[1]}")
        return "correct", f"{label}: {which}", None, "proven"
    if None in outcomes:
        return "unchecked", f"{label} is {got} stacked; it depends on sizes the document does not fix", None, ""
    plural = "s" if heads > 1 else ""
    return ("wrong", f"{label} stacked over the {heads} {what} head{plural} is {got} (one head's is {one[0]} x "
            f"{one[1]}), not {stated[0]} x {stated[1]}", got, "proven")


def _projection(definition: Any, letter: str) -> bool:
    """Is ``definition`` the document's ``X W_K`` (the input times one weight: ``letter`` names the kind)?"""
    from sympy import MatMul

    return isinstance(definition, MatMul) and len(definition.args) == 2 and str(definition.args[0]) in ("X", "Y")


# ----- sentences -------------------------------------------------------------------------------------
_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
          "ten": 10, "eleven": 11, "twelve": 12, "sixteen": 16, "thirty-two": 32, "single": 1, "a": 1}
_NUM = r"(\d[\d,]*(?:\.\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|sixteen|thirty-two)"
_KV = r"(?:kv|k/v|key[-/ ]?value|key\s+and\s+value)"
_QUERY_HEADS = r"(?:query\s+)?heads"
_GROUP = [
    rf"\bshared\s+by\s+(?:all\s+)?{_NUM}\s+{_QUERY_HEADS}\b",
    rf"\bserves\s+(?:all\s+)?{_NUM}\s+{_QUERY_HEADS}\b",
    rf"\bgroups?\s+(?:of|contains?|has|holds|with|includes?)\s+{_NUM}\s+{_QUERY_HEADS}\b",
    rf"\b{_NUM}\s+query\s+heads\s+(?:per|share\s+each|for\s+each|in\s+each|share\s+one)\s+(?:{_KV}\s+head|group)\b",
    rf"\bgroup\s+size\s*(?:is|of|=|:)?\s*{_NUM}\b(?!\s*[/×*·+−-]\s*\d)",  # ("group size 64 / 8 = 8": arithmetic)
]
_READS = re.compile(rf"\b(?:query\s+)?head\s+(\d+)\s+(?:reads|uses|attends\s+(?:with|to)|is\s+served\s+by|belongs\s+to"
                    rf"|shares)\s+(?:the\s+)?(?:(?:{_KV}\s+head|group)\s+(\d+)|K_\{{?(\d+)\}}?)", re.I)
#: what follows a number that opens an expression ("5 // 4 = 1"): the result it states (group 1), if any
_EXPRESSION_AFTER = re.compile(r"(?:\s*(?://|[/*+×÷−-]|\bmod\b|%)\s*\d+)+(?:\s*=\s*(\d+)(?![\d.]))?")
_CACHE = re.compile(rf"\b{_KV}[- ]?cache\b|\bcaches?\b", re.I)
_PARAMS = re.compile(r"\b(?:parameters|params|weights)\b", re.I)
def _number(text: str) -> int | Fraction:
    t = text.lower().replace(",", "")
    if t in _WORDS:
        return _WORDS[t]
    value = Fraction(t)
    return int(value) if value.denominator == 1 else value


def _plain(text: str) -> str:
    from .prose import _plain as plain

    return re.sub(r"\s*\*\s*", " * ", plain(text))


def judge_sentence(doc: DocumentModel, text: str, context: str = "") -> list[Verdict3]:
    """The verdicts on a sentence about the grouping, the KV cache or the parameters (none when it states
    nothing of the kind); ``context``: the whole sentence a line of it belongs to ("With MHA we would have ...
    \n cache would be 10 GiB")."""
    from . import scopes
    from .prose import RatioClaim, read, sentence_sizes, variants

    s = _plain(re.sub(r"(\d)\{,\}(?=\d)", r"\1,", text))  # 32{,}768: a thousands separator
    remember(doc, s)
    if _apart(doc):
        return []  # g of one example, h of another: which grouping the sentence means is not known
    ratio = any(isinstance(c, RatioClaim) for _, c in read(s))
    own = {k: v for k, v in sentence_sizes(s).items() if k in ("h", "g") and doc.known_dims().get(k) != v}
    if own:  # "Here h = 12, so GQA with g = 4 stores a third of ...", "h = 64, h_kv = 8 (group size 8)": what the
        doc = scopes.with_sizes(doc, own)  # sentence states is computed from the sizes it states itself
    stated = doc.memory.get("variant_g", {}).get("gqa")  # "KV heads for GQA: $h_{kv} = 8$": what GQA is here
    plain_gqa = bool(stated) and doc.known_dims().get("g") is None and \
        any(v.kind == "gqa" and v.kv_heads is None for _, v in variants(s)) and \
        all(doc.known_dims().get(k) in (None, v) for k, v in sentence_sizes(s).items())  # "under GQA": that
    # configuration, in a sentence that sets no other sizes (of another model, which its math binds after it)
    named = plain_gqa or any(v.kind == "mqa" or v.kv_heads is not None for _, v in variants(s))
    if doc.known_dims().get("g") is None and not (named and doc.known_dims().get("h")):
        if _CACHE.search(s) and re.search(rf"\b{_KV}\s+heads?\b|\bGQA\b|\bMQA\b|grouped|multi-query", s, re.I):
            return [("unchecked", "the KV cache of grouped-query attention, but the document never states g", None,
                     "")]
        return []  # a document without key/value heads of its own: multi-head attention, read as before
    M = doc.model()
    if plain_gqa:
        from .counts import _as_variant

        M = _as_variant(M, stated)
    out: list[Verdict3] = []
    group = next((m for m in (re.search(pattern, s, re.I) for pattern in _GROUP) if m), None)
    if group:  # "MQA: n_kv = 1, all 32 query heads share one KV head": the group of the variant it names
        from .counts import _as_variant, _variant_before

        variant = _variant_before(s, group.start())
        out.append(_group_size(_as_variant(M, variant) if variant is not None else M, _number(group.group(1))))
    reads = _READS.search(s)
    if reads:  # "K/V head 5 // 4 = 1": a number that opens an expression states the expression's result
        result = _EXPRESSION_AFTER.match(s, reads.end())
        if result is None or result.group(1):
            j = int(result.group(1)) if result else int(reads.group(2) or reads.group(3))
            out.append(_kv_index(doc, M, int(reads.group(1)), j))
    if _CACHE.search(s):
        out += judge_cache(doc, M, s, _plain(context) if context else "")
    elif ratio and _CACHE.search(doc.heading) and any(v.kind == "mha" or v.kv_heads for _, v in variants(s)):
        out += judge_cache(doc, M, s, _plain(context) if context else "", ratios_only=True)  # "MHA (32 KV heads) needs
        # 4× more" under a heading on the KV cache: the ratio of caches (its amounts may count other things)
    if _PARAMS.search(s):
        out += judge_parameters(doc, M, s, _plain(context) if context else "")
    problem = kv_heads_problem(doc)
    if out and problem:
        return [("inconsistent", problem, None, "computed")]
    return out


def _group_size(M: Any, stated: Any) -> Verdict3:
    h = as_int(M.dims.h)
    if h is None:
        return "unchecked", "the group size needs a fixed h", None, ""
    sizes = sorted({sum(1 for i in M.head_indices if M.kv_index(i) == j) for j in M.kv_indices})
    if len(sizes) != 1:
        return "unchecked", f"the groups have different sizes {sizes}", None, ""
    size = sizes[0]
    rule = "(query head i reads key/value head ceil(i g / h))"
    if size == stated:
        return "correct", f"each key/value head serves h/g = {size} query heads {rule}", None, "computed"
    return "wrong", f"each key/value head serves h/g = {size} query heads {rule}, not {stated}", str(size), "computed"


def _kv_index(doc: DocumentModel, M: Any, i: int, j: int) -> Verdict3:
    shift = 1 if doc.zero_based else 0
    h = as_int(M.dims.h)
    if h is None:
        return "unchecked", "which key/value head a query head reads needs a fixed h", None, ""
    if not 1 <= i + shift <= h:
        return "wrong", f"there is no query head {i}: h = {h}", None, "computed"
    got = int(M.kv_index(i + shift)) - shift
    if got == j:
        return "correct", f"query head {i} reads key/value head ceil(i g / h) = {got}", None, "computed"
    return "wrong", f"query head {i} reads key/value head ceil(i g / h) = {got}, not {j}", str(got), "computed"


def grouped_prose(doc: DocumentModel, p: Any, emit: Any) -> bool:
    """Judge a line of prose (or a formula with a named quantity) about grouped-query attention; True when it
    stated something of the kind (the line is then not read again as prose)."""
    verdicts = judge_sentence(doc, p.text, p.clause or "")
    if not verdicts:
        return False
    status, message, expected, basis = _worst(verdicts)
    kind = "number" if any(w in message for w in ("cache", "weights")) else "setting"
    emit(p.line, p.text, status, message, expected, kind, basis)
    return True


_CODE_GROUP = re.compile(r"(?:group_size|n_rep|num_queries_per_kv|queries_per_kv|heads_per_group|num_key_value_groups"
                         r"|n_groups_size|kv_group_size)", re.I)
_CODE_CACHE = re.compile(r"kv_cache(?:_per_token|_values|_size)?|cache_per_token", re.I)


def grouped_code(doc: DocumentModel, p: Any, emit: Any) -> bool:
    """``n_rep = n_heads // n_kv_heads``, ``kv_cache_per_token = 2 * n_kv_heads * head_dim``: the right side
    read as arithmetic in the document's sizes (through :func:`index_value`, never run) against the engine's
    group size or KV cache per token and layer.  True when the statement was of that kind."""
    name = (p.name or "").strip()
    group, cache = _CODE_GROUP.fullmatch(name), _CODE_CACHE.fullmatch(name)
    if not (group or cache) or p.kind != "code":
        return False
    M = doc.model()
    problem = kv_heads_problem(doc)
    if problem:
        emit(p.line, p.text, "inconsistent", problem, None, "setting", "computed")
        return True
    source = p.text.split("=", 1)[1] if "=" in p.text else ""
    try:
        value = arithmetic_value(source, sizes(doc))
    except (ValueError, ZeroDivisionError):
        value = None
    if value is None:
        return False
    if group:
        verdict = _group_size(M, value)
        verdict = (verdict[0], f"{name} = {value}: {verdict[1]}", verdict[2], verdict[3])
        emit(p.line, p.text, verdict[0], verdict[1], verdict[2], "setting", verdict[3])
        return True
    from ..proofs.counts import kv_cache_per_token

    true = kv_cache_per_token(M)
    if getattr(true, "free_symbols", None):
        return False
    what = cache_text("2 g d_k" if M.kv_heads is not None else "2 h d_k", int(true), int(true), None)
    if value == true:
        emit(p.line, p.text, "correct", f"{name} = {value}: {what}", None, "number", "computed")
    else:
        emit(p.line, p.text, "wrong", f"{name} = {value}, but {what}", str(true), "number", "computed")
    return True
