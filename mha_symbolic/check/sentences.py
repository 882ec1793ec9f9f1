r"""Statements in sentences: sizes in words and in inline code, shapes stated in words (``$W_O$ is $4 \\times
12$``, ``Shape: (4, 2)`` under a heading naming the matrix), and weights given for every head at once.
"""

from __future__ import annotations

import re
from typing import Any

from .judge import judge
from .model import VARIANT_NAMES, DocumentModel, dim_name
from .shapes import shape_product

__all__ = ["prose_statement"]

_SHAPE_WORDS = r"(?:shape|form|dimensions?|größe|forma|tamaño|dimensão|dimensione|taille)"


_ROLES = [(r"scaled (?:raw )?scores|scaled logits", "S'"), (r"(?:raw )?scores|logits", "S"),
          (r"attention weights|attention matrix|weights|attention probabilities", "A"),
          (r"(?:head )?outputs?|head", r"\mathrm{head}"), (r"queries", "Q"), (r"keys", "K"), (r"values", "V")]


def prose_statement(doc: DocumentModel, p: Any, emit: Any, scoped: dict[str, int] | None = None) -> None:
    """One line of prose: names for the model's quantities, declared shapes, code spans, shapes and sizes."""
    # the role starts and ends with a letter (linear: spaces were shared by four quantifiers, cubic)
    for name, role in re.findall(r"\$\s*([A-Z])_\{?[a-z]\}?\s*\$\s+(?:for|denotes|is)\s+"
                                 r"(?:(?:its|their|the|each head's)\s*)?([a-z](?:[a-z ]*?[a-z])?)"
                                 r"(?=\s*[,.;]|\s+and\b|\s*$)", p.text):
        target = next((t for pattern, t in _ROLES if re.fullmatch(pattern, role.strip(), re.I)), None)
        if target is not None and name != target:  # "$P_i$ for the attention weights": P_1 is the model's A_1
            doc.renames[name] = target
    from .read import settings

    every = re.search(r"\ball\s+((?:query|key|value)(?:\s*(?:,|and|&)\s*(?:query|key|value))*)\s+"
                      r"(?:weights?|projections?|matrices)\s+(?:are\s+)?\$([^$]+)\$", p.text, re.I)
    if every:  # "all query and key weights $(1, 0)^T$": every head's
        _every_head(doc, p, emit, re.findall(r"query|key|value", every.group(1), re.I), every.group(2))

    declared = re.search(_SHAPE_WORDS + r"\s*:\s*(?:\$\s*)?\(\s*(\w{1,64})\s*(?:,|\\times|×|x)\s*(\w+)\s*\)\s*\$?",
                         p.text, re.I)
    if declared:
        here = re.findall(r"\$\s*([A-Za-z](?:_\{[^{}$]*(?:\{[^{}$]*\})?[^{}$]*\}|_\w)?(?:\^\{?\w+\}?)?)\s*=",
                          p.text[:declared.start()])
        subject = here[-1] if here else doc.last_subject
        if subject:
            _declare(doc, p, emit, subject, declared.group(1), declared.group(2))

    if _code_spans(doc, p, emit, scoped or {}):
        return
    said = settings(re.sub(r"\$[^$]*\$|`[^`]*`", " ", p.text))  # inline math and code are judged apart
    compared = {x.name for x in said if len({y.value for y in said if y.name == x.name}) > 1}
    for name in sorted(compared):  # "from 4096 tokens in one model to 1024 in the next": a comparison
        values = ", ".join(str(y.value) for y in said if y.name == name)
        emit(p.line, p.text, "given", f"the sentence compares {name} = {values}: it binds none of them",
             kind="setting")
    own = {x.name: int(x.value) for x in said if x.name not in compared}
    known = {k: doc.known_dims().get(k) for k in own if doc.known_dims().get(k) is not None}
    whole = {"d_model", "h", "d_k"} <= set(own)  # (a configuration stated whole may share a size with the other)
    if len(own) >= 2 and known and any(own[k] != v for k, v in known.items()) and _one_configuration(own) and (
            whole or all(own[k] != v for k, v in known.items())) and not _another_scenario(p.text):
        doc.restart()  # "GPT-3 (d_model = 12288 with 96 heads) has d_k = 128" after BERT-base's sizes: a whole
        # configuration of its own, every size it restates another: another example, not a contradiction (the
        for k in own:  # sizes its paragraph set before are the other configuration's, too)
            doc.dims.pop(k, None)
            doc.bound_in.pop(k, None)
            doc.bound_line.pop(k, None)
        doc._model = doc._table = None
    for s in (x for x in said if x.name not in compared):
        _setting(doc, p, emit, s.name, int(s.value), s.text)
    _shapes(doc, p, emit)  # after the sizes the line sets ("d_model = 4 y ... X ∈ ℝ^{3×4}")


def _shapes(doc: DocumentModel, p: Any, emit: Any) -> None:
    r"""The shapes a line states in words (the grammar's ``shape_claim``: "$W_O$ is $4 \times 12$", "Q * K^T is 2 x 2",
    "$M$ hat die Form $2 \times 6$"), each judged like ``subject \in \mathbb{R}^{a \times b}``; a shape of more than
    two sizes ("(2, 12, 128, 128)") is batched and not read as its first two.  A product of shapes ("$A_i V_i$ is $(n
    \times n)(n \times d_v)$") is judged factor by factor."""
    from . import scopes
    from .plain import math_words
    from .prose import Setting, ShapeClaim, _plain, holds, read, size_condition
    from .read import normalise

    product = re.search(r"\$([^$]+)\$\s+(?:is|are)\s+\$([^$]+)\$", p.text)
    factors = shape_product(product.group(2).split("=")[0]) if product else None  # (4 x 2)(2 x 4) = 4 x 4
    if product and factors and len(factors) > 1:
        from .shapes import judge_shape_product

        subject = re.split(r"=", product.group(1))[-1]
        inner = judge_shape_product(doc, [factors], [product.group(2).split("=")[0]], [])
        got = ("shape", inner) if inner[0] != "correct" else judge(
            doc, [subject, r"\mathbb{R}^{%s \times %s}" % (factors[0][0], factors[-1][1])], ["in"], p.text)
        if got is not None:
            emit(p.line, p.text, got[1][0], got[1][1], got[1][2], got[0], got[1][3])
        return
    plain = _plain(re.sub(r"`[^`]*`|\$[^$]*\\in\b[^$]*\$", " § ", p.text))  # code spans are the code reader's, and
    # "$Q \in \mathbb{R}^{n \times d}$" the math reader's
    if not holds(plain, ("SHAPE_VERB", "SHAPE_NOUN", "MEMBER_OF")) and not _LISTED_SHAPE.search(plain):
        return
    statements = read(plain)
    model = scopes.model_sizes(doc)  # stated, and the head width the model derives from them
    words = statements if "$" not in p.text else read(_plain(re.sub(r"\$[^$]*\$|`[^`]*`", " ", p.text)))
    if any(isinstance(c, Setting) and model.get(c.name) != c.value for _, c in words):
        return  # "Take n = 2, d_v = 2 and an output width of 3 (so W_O is 4×3)": a size in words the model does not
        # hold (sizes in math are bound by the math reader before it judges what follows them)
    for at, claim in statements:
        if not isinstance(claim, ShapeClaim) or size_condition(plain[:at]):
            continue  # (a shape after "with", "for": a condition of its clause, not a claim)
        dims = _matrix_of_batch(claim.dims, model.get("h"))
        if dims is None or len(claim.dims) > 2 and not _batch_here(doc, claim.text):
            continue
        # "Q_1 = X WQ_1 has shape 2 x 3": the factors right before the subject the grammar read belong to it
        before = re.search(r"(?:(?<![\w^'])[A-Z](?:[A-Z0-9'ᵀ]|[_^][\w()]+)*\s*(?:[*·/]\s*)?)+$", plain[:at])
        rest = plain[:at - len(before.group(0)) if before else at].rstrip()
        if re.search(r"[\w})\]ᵀ]$", rest) and not re.search(r"(?<![\\\w])[^\W\d_]{2,}$", rest) or \
                re.search(r"[*·⋅×/+−-]$", rest):
            continue  # "W_K^(i)\top W_Q^(i) is d x d", "Concat · W^O ∈ ℝ^{3×4}": a factor the pattern does not take
            # stands before it
        subject = math_words(normalise((before.group(0) if before else "") + claim.subject))
        subject = re.sub(r"([_^])(\([^()]*\))", r"\1{\2}", subject)  # W_Q^(i): the plain text's W_Q^{(i)}
        if len(claim.dims) == 4 or len(claim.dims) == 3 and claim.dims[0] == str(model.get("h")):
            subject = _PER_HEAD.sub(r"\1_1", subject)  # (B, h, n, d_v) of AV: one head's A_1 V_1, as code lays it out
        got = judge(doc, [subject, r"\mathbb{R}^{%s \times %s}" % dims], ["in"], p.text)
        if got is not None and len(claim.dims) > 2 and got[1][0] in ("wrong", "inconsistent") and \
                _other_tokens(got[1][2], dims, model.get("n")):
            continue  # a batch of another number of tokens than the example's: another configuration, not judged
        if got is not None and got[1][0] != "unchecked":
            batch = f" (of the batched shape ({', '.join(claim.dims)}))" if len(claim.dims) > 2 else ""
            emit(p.line, p.text, got[1][0], got[1][1] + batch, got[1][2], got[0], got[1][3])


#: a shape listed after a colon ("AV: (4, 8, 128, 64)"), the grammar's shape_claim of a list
_LISTED_SHAPE = re.compile(r":\s*\(\s*\d+\s*,\s*\d+\s*,\s*\d+")
#: a bare letter of a per-head step (Q, K, V, the scores S, the weights A, the output Z)
_PER_HEAD = re.compile(r"(?<![\\a-z0-9^_{])([QKVASZ])(?![a-z0-9_{])")


def _other_tokens(expected: str | None, stated: tuple[str, str], n: int | None) -> bool:
    """Does a stated shape differ from the model's ``expected`` one ("512 x 64") on an axis of the model's ``n``
    tokens?"""
    sizes = re.findall(r"\d+", expected or "")
    return n is not None and len(sizes) == 2 and any(a == str(n) and a != b for a, b in zip(sizes, stated, strict=True))


def _batch_here(doc: DocumentModel, said: str) -> bool:
    """Is a shape of three or four sizes a batched shape of this section's example?  Its words must name a shape
    ("has shape", "∈ ℝ^{..}", or a list of shapes under a heading that names them: "(1, 1, 1)" after "is" is a
    vector), and the section must state its number of tokens (a batch of an exercise whose n the document never
    gives is not the example of another section)."""
    shape = re.search(r"(?i:shape|form|größe|tamaño|dimension)|∈|ℝ|mathbb", said) or ":" in said and re.search(
        r"(?i:shape|form|größe|tamaño|dimension)", doc.heading)
    return bool(shape) and doc.bound_in.get("n", (-1,))[0] >= doc.section_paragraph


def _matrix_of_batch(dims: tuple[str, ...], heads: int | None) -> tuple[str, str] | None:
    """The matrix a shape speaks of: its two sizes, or the last two of a batched shape -- (B, r, c), (h, r, c) or
    (B, h, r, c) with h the model's number of heads, written in numbers (the per-head matrix, as tensors in code are
    laid out: its subject is read as head 1's); None for any other shape.

    >>> _matrix_of_batch(("4", "8", "128", "64"), 8), _matrix_of_batch(("4", "2", "128", "64"), 8)
    (('128', '64'), None)
    """
    if len(dims) == 2:
        return dims[0], dims[1]
    if len(dims) == 4 and heads is not None and dims[1] == str(heads) and dims[0].isdigit() or \
            len(dims) == 3 and dims[0].isdigit():
        return dims[-2], dims[-1]
    return None


def _setting(doc: DocumentModel, p: Any, emit: Any, name: str, value: int, said: str = "") -> None:
    """A size the line sets (in words or in inline code): bound, or another example's (in a paragraph of its own),
    or a condition of its sentence, or restated -- and ``inconsistent`` only against its own paragraph.  ``said``:
    the binding as written ("n = 4096"), whose clause may open with the word of a condition ("At n = 4096 the
    matrix is 16x bigger": that sentence's size, as ``At $n = 4096$`` is in math)."""
    from .prose import size_condition

    known = doc.known_dims().get(name)
    clause = p.clause or p.text
    at = clause.find(said) if said else -1
    if known not in (None, value) and at >= 0 and size_condition(re.split(r"[.;:!?]\s", clause[:at])[-1],
                                                                  alone=True):
        emit(p.line, p.text, "given", f"a condition of this sentence only ({name} = {value}; {known} elsewhere)",
             kind="setting")
        return
    if name == "h" and known not in (None, value) and doc.known_dims().get("g") == value:
        return  # "it tiles the 8 heads" in a document with g = 8 key/value heads: those heads
    from .prose import variants

    # the key/value heads of a variant the sentence names by a fixed count (MHA: g = h, MQA: g = 1, GQA-8), or that it
    # opens with: that variant's, not the document's model's
    variant = name == "g" and (re.match(rf"\s*[-*]?\s*\**{VARIANT_NAMES}\b", p.text, re.I) or any(
        v.kind in ("mha", "mqa") or v.kv_heads is not None and not v.configured for _, v in variants(p.text)))
    scenario = _another_scenario(p.text) or _another_scenario(p.clause or "")
    d = doc.known_dims()
    implied = d["d_model"] // d["h"] if known is None and name in ("d_k", "d_v") and d.get("h") and \
        d.get("d_model", 0) % d["h"] == 0 and d.get("d_model") else None
    if implied not in (None, value) and scenario:  # "a single head with d_k = 64 would": not the d_model / h in force
        emit(p.line, p.text, "given", f"a condition of this sentence only ({name} = {value}; d_model / h = {implied} "
             "elsewhere)", kind="setting")
        return
    if implied not in (None, value) and doc.memory.get("width_kept"):  # "- h = 8: dₖ = 4" in a list of cases that
        from .judge import judge  # keeps d_model = 64 (the item's d_k is d_model / h there): judged as math is

        got = judge(doc, [name, str(value)], ["eq"], p.text)
        if got is not None:
            emit(p.line, p.text, got[1][0], got[1][1], got[1][2], got[0], got[1][3])
            return
    if known is not None and known != value and not variant and not scenario and doc.new_example(name, value):
        known = None  # "one head with d_k = 2" in a paragraph of its own, after "two heads" before it
    if known is None:
        doc.bind_dim(name, value)
        emit(p.line, p.text, "given", f"sets {name} = {value}", kind="setting")
    elif known != value and variant:
        emit(p.line, p.text, "given", f"g = {value} of the variant this line is about ({known} in the "
             "document's model)", kind="setting")
    elif known != value and scenario:
        emit(p.line, p.text, "given", f"a condition of this sentence only ({name} = {value}; {known} "
             "elsewhere)", kind="setting")
    elif known != value and doc.earlier(name, value) is not None:
        emit(p.line, p.text, "given", f"refers to the earlier example where {name} = {value} (line "
             f"{doc.earlier(name, value)})", kind="setting")
    elif known != value:
        emit(p.line, p.text, "inconsistent", f"{name} is {known} earlier in this paragraph (line "
             f"{doc.bound_line.get(name, '?')})", str(known), "setting", "computed")
    else:  # nothing computed: a restated setting is given, not "correct"
        emit(p.line, p.text, "given", f"restates {name} = {known}" + (
            f" (line {doc.bound_line[name]})" if name in doc.bound_line else ""), kind="setting")


def _one_configuration(sizes: dict[str, int]) -> bool:
    """Do the sizes a sentence states hold together (d_model = h d_k where it states all three)?"""
    if {"d_model", "h", "d_k"} <= set(sizes):
        return sizes["d_model"] == sizes["h"] * sizes["d_k"]
    return True


def _another_scenario(sentence: str) -> bool:
    """Does the sentence set up another configuration ("For a model with 24 layers and a context of 2048
    tokens, ...", "Consider a model with ...", "Suppose ...")?  Sizes it states hold in it only.

    >>> _another_scenario("For a model with 24 layers, the cache holds"), _another_scenario("It has 7 tokens")
    (True, False)
    """
    from .read import hypothetical

    return hypothetical(sentence) or bool(re.match(
        r"\s*(?:for|in|with|take|consider|suppose|imagine|if)\s+(?:a|an|another|any|some)\s+(?:[\w-]+\s+){0,2}?"
        r"(?:model|example|configuration|network|transformer|setup|llm)\b", sentence, re.I)) or \
        bool(re.search(r"\b\d+-(?:token|layer)\b[^.]*\bexample\b", sentence, re.I))  # "the 2048-token example"


def _declare(doc: DocumentModel, p: Any, emit: Any, subject: str, rows: str, cols: str) -> None:
    """``Shape: (4, 2)`` under a heading or after a formula naming one matrix: its declared shape, checked
    against the model now and against every later use (:func:`.judge.judge` reports a contradiction)."""
    from .judge import judge

    per_head = re.fullmatch(r"W_\{?([QKV])\}?", subject)
    probe = r"W_{%s}^{%d}" % (per_head.group(1), 0 if doc.zero_based else 1) if per_head else subject
    got = judge(doc, [probe, r"\mathbb{R}^{%s \times %s}" % (rows, cols)], ["in"], p.text)
    if got is not None and got[1][0] in ("wrong", "inconsistent") and per_head:
        # a weight's declared shape that the model's sizes contradict: recorded, reported where it is used
        doc.shapes[subject] = ((rows, cols), p.line)
        emit(p.line, p.text, "given", f"{subject} declared {rows} x {cols}", kind="shape")
        return
    if got is not None:
        kind, (status, message, expected, basis) = got
        emit(p.line, p.text, status, message, expected, kind, basis)


def _every_head(doc: DocumentModel, p: Any, emit: Any, kinds: list[str], value_tex: str) -> None:
    from .judge import judge
    from .model import as_int

    h = as_int(doc.model().dims.h)
    if h is None:
        emit(p.line, p.text, "unchecked", "weights for every head, but the number of heads is not fixed")
        return
    first = 0 if doc.zero_based else 1
    for kind in kinds:
        letter = {"query": "Q", "key": "K", "value": "V"}[kind.lower()]
        for k in range(first, first + h):
            got = judge(doc, [f"W_{{{letter}}}^{{{k}}}", value_tex], ["eq"], p.text)
            if got is not None:
                emit(p.line, p.text, got[1][0], got[1][1], got[1][2], got[0], got[1][3])


def _code_spans(doc: DocumentModel, p: Any, emit: Any, scoped: dict[str, int]) -> bool:
    """Sizes in inline code: ``dk = 6 // 2 = 3`` is a chain checked like math; in a sentence that sets its own
    sizes ("with ``d_model = 768`` and ``n_heads = 12`` one gets ``dk = 64``") those are the local model's
    (``scoped``) and the others are checked in it.  True when the line had such spans."""
    spans = [s for s in re.findall(r"`([^`]+)`", p.text) if "=" in s and dim_name(s.split("=")[0].strip())]
    if not spans:
        return False
    for c in ([x.strip().replace("//", "/") for x in s.split("=")] for s in spans):
        tex = [{"d_model": "d_{model}"}.get(dim_name(x) or "", dim_name(x) or x) for x in c]
        if len(c) == 2 and scoped.get(dim_name(c[0]) or "") == (int(c[1]) if c[1].isdigit() else None):
            emit(p.line, p.text, "given", f"a condition of this sentence only ({tex[0]} = {c[1]})", kind="setting")
            continue
        if len(c) == 2 and c[1].isdigit() and (_another_scenario(p.text) or _another_scenario(p.clause or "")):
            emit(p.line, p.text, "given", f"a condition of this sentence only ({tex[0]} = {c[1]}: another "
                 "configuration)", kind="setting")
            continue
        if len(c) == 2 and c[1].isdigit() and (dim_name(c[0]) not in ("d_k", "d_v") or doc.own_width):
            # `d_model = 512`: a size set in code, read like one set in words (a head width d_model / h is judged)
            _setting(doc, p, emit, str(dim_name(c[0])), int(c[1]))
            continue
        got = judge(doc, tex, ["eq"] * (len(tex) - 1), p.text)
        if got is not None:
            emit(p.line, p.text, got[1][0], got[1][1], got[1][2], got[0], got[1][3])
    return True
