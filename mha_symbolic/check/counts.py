r"""Counts a document states about one attention layer: KV-cache size and parameters, from the engine.

Explanation
===========

* **KV cache** -- values per token and layer are :func:`mha_symbolic.proofs.counts.kv_cache_per_token` of the
  document's model (one row of every ``K_j``, ``V_j`` step: ``2 g d_k`` with ``g`` key/value heads, ``2 h d_k``
  for multi-head attention); a stated total is compared after multiplying by the tokens, layers and bytes
  per value (fp16, bf16 = 2; fp32 = 4; int8 = 1) the sentence or the document states.  Without "per layer"
  or a layer count, the document's layer count (the whole model) is the reading; a total that fits only one
  layer of it is ``unchecked`` (saying so), never ``correct``; one that fits no reading is ``wrong``.
  KB/MB/GB are read decimally or in powers of 1024 (a common convention).  "4 times smaller than multi-head
  attention" is the ratio of the counts of the model and of the same model without grouping.
* **parameters** -- of ``W_Q``, ``W_K`` and ``W_V``, ``W_O`` (the entries of the model's inputs) or of the
  layer (:func:`mha_symbolic.proofs.counts.parameter_count`), with biases when the sentence says so.

An arithmetic chain before the stated number (``2 · 8 · 128 = 2048 values``) is read by
:func:`.arithmetic.arithmetic_value`; a term that disagrees with the engine's count is reported.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

import sympy

from .arithmetic import arithmetic_value
from .model import DocumentModel, as_int
from .numbers import Verdict3
from .prose import RatioClaim, Variant, read, variants

__all__ = ["judge_cache", "judge_parameters", "remember", "sizes", "cache_text"]

_KV = r"(?:kv|k/v|key[-/ ]?value|key\s+and\s+value)"
_UNITS = {"values": 1, "value": 1, "numbers": 1, "elements": 1, "entries": 1, "scalars": 1, "floats": 1,
          "bytes": 1, "B": 1, "KiB": 2 ** 10, "MiB": 2 ** 20, "GiB": 2 ** 30, "KB": 10 ** 3, "kB": 10 ** 3,
          "MB": 10 ** 6, "GB": 10 ** 9}
_AMOUNT = re.compile(r"(?<![\w.^_])(\d[\d,]*(?:\.\d+)?)\s*(values?|numbers|elements|entries|scalars|floats|bytes|B|KiB"
                     r"|MiB|GiB|KB|kB|MB|GB)\b(?!\s*per\s+(?:value|element|number|entry|scalar))")
_DTYPES = [(r"\b(?:fp16|bf16|float16|bfloat16|half[- ]precision|16-bit)\b", 2),
           (r"\b(?:fp32|float32|single[- ]precision|32-bit)\b", 4), (r"\b(?:int8|fp8|8-bit)\b", 1)]


def remember(doc: DocumentModel, s: str) -> None:
    """Layers and bytes per value a sentence states for the whole document ("The model has 32 layers")."""
    if re.search(r"\b(?:per\s+layer|would|instead|if|for\s+example)\b", s, re.I):
        return
    layers = re.search(r"\b(\d+)\s+(?:transformer\s+|decoder\s+)?layers\b", s, re.I)
    if layers:
        doc.memory["layers"] = int(layers.group(1))
    tokens = _TOKENS.search(s)
    if tokens:  # "a context of 2048 tokens": later sentences may speak of "the same context"
        doc.memory["tokens"] = int(next(x for x in tokens.groups() if x).replace(",", ""))
    for pattern, size in _DTYPES:
        if re.search(pattern, s, re.I):
            doc.memory["bytes"] = size


_TOKENS = re.compile(r"\b(\d[\d,]*)[- ](?:tokens?|token\s+context)\b|\bcontext\s+(?:length|window)?\s*(?:of|=)\s*"
                     r"(\d[\d,]*)|\bsequence\s+of\s+(\d[\d,]*)|\b(\d[\d,]*)\s+tokens\b|\bat\s+T\s*=\s*(\d[\d,]*)", re.I)


def _multipliers(doc: DocumentModel, s: str) -> tuple[list[int], list[int], int | None, bool]:
    """Candidate token counts, layer counts, the bytes per value (None if unknown), and whether the sentence
    itself says how many tokens it counts (a number of tokens, or "per token")."""
    tokens = []
    m = _TOKENS.search(s)
    if m:
        tokens = [int(next(x for x in m.groups() if x).replace(",", ""))]
    layers = [1] if re.search(r"\bper\s+layer\b", s, re.I) else []
    ml = re.search(r"\b(\d+)\s+(?:transformer\s+|decoder\s+)?layers\b|\bL\s*=\s*(\d+)", s, re.I)
    if ml:
        layers = [int(ml.group(1) or ml.group(2))]
    if not layers:
        layers = sorted({1, doc.memory.get("layers", 1)})
    last = list(_AMOUNT.finditer(s))
    if last and re.match(r"\s*(?:per|a|each)\s+token\b", s[last[-1].end():], re.I) or not tokens and not last or \
            not tokens and re.search(r"\bper[\s-]+token\b", s, re.I):
        tokens = [1]  # "256 MiB per token", even "with a 4096-token context, ... N bytes per token"
    # the sentence says which tokens it counts: a number of them, "per token", or the context it refers back to
    said = bool(tokens) or bool(re.search(r"\bsame\s+(?:context|sequence|prompt|length|number\s+of\s+tokens)\b", s,
                                          re.I))
    if not tokens:  # a total, no count here: the context an earlier sentence stated ("the same context"), or n
        tokens = sorted({1, doc.memory.get("tokens", 1), doc.known_dims().get("n", 1)})
    size = None
    mb = re.search(r"\b(\d+)[- ]bytes?\s+per\s+(?:value|element|number|entry|scalar)\b", s, re.I)
    if mb:
        size = int(mb.group(1))
    else:
        for pattern, b in _DTYPES:
            if re.search(pattern, s, re.I):
                size = b
    if size is None:
        size = doc.memory.get("bytes")
    return tokens, layers, size, said


def _agrees(true: Fraction | int, stated_text: str, scale: int) -> bool:
    """``true`` (in units) against the stated number of units of ``scale``, at the decimals written."""
    stated = Fraction(stated_text.replace(",", ""))
    places = len(stated_text.split(".")[1]) if "." in stated_text else 0
    value = Fraction(true) / scale
    if scale == 1 and places == 0:
        return value == stated
    return abs(value - stated) <= Fraction(1, 2 * 10 ** places)


def _chain_terms(s: str, at: int, names: dict[str, int]) -> list[str]:
    """The terms ``a = b =`` written just before position ``at`` (``2 * 2 * 64 = 256 values``): before each
    ``=``, the longest run of words that reads as arithmetic in the sizes ``names``."""
    before = s[:at]
    terms: list[str] = []
    while True:
        m = re.search(r"=\s*$", before)
        if not m:
            return terms
        before = before[:m.start()].rstrip()
        words = before.split()
        for k in range(max(0, len(words) - 12), len(words)):
            term = " ".join(words[k:])
            try:
                arithmetic_value(term, names)
            except (ValueError, ZeroDivisionError):
                continue
            terms.append(term)
            before = before[:len(before) - len(term)]
            break
        else:
            return terms


def sizes(doc: DocumentModel) -> dict[str, int]:
    """The document's sizes with the head widths and ``g`` the model derives (``d_k = d_model / h``)."""
    d = doc.known_dims()
    M = doc.model()
    for name in ("d_k", "d_v", "h"):
        value = as_int(getattr(M.dims, name))
        if value is not None:
            d.setdefault(name, value)
    return d


def _terms_verdict(doc: DocumentModel, terms: list[str], true: Any, what: str) -> Verdict3 | None:
    """Each term of a chain that reads as arithmetic in the document's sizes, against the engine's value."""
    names = sizes(doc)
    for term in terms:
        if not re.search(r"[-+*/ ]", term.strip()) and not (term.strip().isascii() and term.strip().isdigit()):
            continue  # a lone size (d_k) is a name before "=", not the whole count
        try:
            value = arithmetic_value(term, names)
        except (ValueError, ZeroDivisionError):
            continue
        if value != true:
            return ("wrong", f"{term} = {value}, but {what} = {true}", str(true), "computed")
    return None


#: words before a variant's name that make it a comparison ("one eighth of the MHA cache"), not the subject
_RELATIVE = r"(?:\bof|\bthan|\bcompared\s+(?:to|with)|\brelative\s+to|\bvs\.?|\bversus)\s+(?:the\s+)?$"
_MHA = re.compile(r"\bmulti-head\s+attention\b|\bMHA\b", re.I)
_GROUPED = re.compile(r"\bGQA\b|\bMQA\b|grouped|multi-query", re.I)


def about_mha(s: str, at: int) -> bool:
    """Does the count at position ``at`` speak of multi-head attention ("Multi-head attention of the same width
    would have N parameters"): named before the number, and grouped attention not named at all?  ("K and V hold
    N parameters, against M in multi-head attention" speaks of the document's own model.)"""
    mha = _MHA.search(s)
    relative = mha is not None and re.search(_RELATIVE, s[:mha.start()], re.I)
    return mha is not None and mha.start() < at and not _GROUPED.search(s) and not relative


def _variant_before(s: str, at: int) -> str | int | None:
    """The variant a sentence names last before the amount at ``at``: "With MHA (32 KV heads) ...", "With MQA (a
    single KV head) it would be ...", "so MHA needs ..." -- ``"mha"``, ``"mqa"`` or a number of key/value heads;
    None when that is GQA (the document's own) or the sentence then speaks of "our model".

    >>> _variant_before("so GQA saves 3 GiB. With MQA (a single KV head) it would be 16 KiB", 60)
    'mqa'
    >>> _variant_before("With MHA (32 KV heads) the cache is 4 GiB", 35), _variant_before("The cache is 4 GiB", 13)
    (32, None)
    >>> _variant_before("GQA-8 caches 2 GiB", 13)
    8
    """
    sentence = re.split(r"(?<=[.;])\s+", s[:at])[-1]
    found = [(k, v) for k, v in variants(sentence)  # not "one eighth of the MHA cache": a comparison
             if not re.search(_RELATIVE, sentence[:k], re.I)]
    if not found:
        return None
    k, v = found[-1]  # the variant named last before the amount ("..., so MHA needs 384 MiB")
    if re.search(r"\b(?:our|this)\s+(?:model|layer)\b", sentence[k + len(v.text):], re.I):
        return None  # "In MHA every head has its own keys, but our model caches ...": about the document's model
    return _variant_heads(v)


def _variant_heads(v: Variant) -> str | int | None:
    """What a named variant sets: its key/value heads when stated ("GQA-8", "MHA (32 KV heads)"), "mqa" or "mha",
    or None for grouped-query attention without a number (the document's own)."""
    if v.kind == "mqa":
        return "mqa"
    if v.kv_heads is not None:
        return v.kv_heads
    return None if v.kind == "gqa" else v.kind


def _document_heads(doc: DocumentModel, v: Variant) -> str | int | None:
    """:func:`_variant_heads`, where grouped-query attention named without a number is the configuration the
    document stated for it ("KV heads for GQA: $h_{kv} = 8$"), if any, else the document's own model (None)."""
    heads = _variant_heads(v)
    return doc.memory.get("variant_g", {}).get("gqa") if heads is None and v.kind == "gqa" else heads


def _as_variant(M: Any, variant: str | int) -> Any:
    """The model with the key/value heads of a named variant: "mha" (or as many as query heads), "mqa", or a
    number."""
    return M.replace_options(kv_heads=None if variant in ("mha", as_int(M.dims.h)) else
                             1 if variant == "mqa" else variant)


def judge_cache(doc: DocumentModel, M: Any, s: str, context: str = "", ratios_only: bool = False) -> list[Verdict3]:
    from ..proofs.counts import kv_cache_per_token

    own = M  # the document's model, before the variant an amount speaks of

    amount = _AMOUNT.search(s)
    last = list(_AMOUNT.finditer(s))
    variant = _variant_before(s, last[-1].start()) if last else None
    if variant is None and last and context and not variants(s[:last[-1].start()]):
        # the line continues a sentence that named the variant before it (not one the sentence names after it: "GQA
        # caches 131,072 bytes per token, \n and MQA 16,384 bytes" is GQA's on its first line)
        at = context.find(s.strip()[:40])
        variant = _variant_before(context, at if at > 0 else len(context))
    question = s.find("?")
    if last and (re.search(r"\bbudget\b", s, re.I) or 0 <= last[-1].start() < question):
        return [("unchecked", "a question or a budget, not a stated cache size", None, "")]
    batch = doc.memory.get("batch_name")  # "$B$ | batch size | 8" in a table: "at $B = 8$" is a batch
    sequences = _BATCH.search(s)  # "a batch of 32 sequences of 4,096 tokens": 32 times the cache of one
    if sequences and (int(next(x for x in sequences.groups() if x)) < 2 or _EACH_SEQUENCE.search(s)):
        sequences = None  # "batch 1", "the cache of each sequence": not a multiplier the sentence computes with
    if last and not sequences and (re.search(r"\bbatch\b", s + " " + context, re.I) or batch and re.search(
            rf"(?<![A-Za-z_\\]){re.escape(batch)}\s*=\s*\d+", s)):
        return [("unchecked", "a cache said of a batch of sequences, with no batch of two or more that the sentence "
                 "computes with: the batch size times the cache per sequence is not read", None, "")]
    if variant is not None:  # "With MQA (a single KV head) it would be 16 KiB": that variant's cache
        M = _as_variant(M, variant)
    elif amount and about_mha(s, amount.start()) and not re.search(r"\btimes\b|\bfactor\b", s, re.I):
        M = M.replace_options(kv_heads=None)  # what multi-head attention of the same sizes would cache
    per_token = kv_cache_per_token(M)
    rule = "2 g d_k" if M.kv_heads is not None else "2 h d_k"
    ratios = _ratios(doc, own, M, s) or []  # "GQA needs a quarter of the MHA cache", "MQA is one eighth of GQA"
    if ratios and not _AMOUNT.search(s) or ratios_only:
        return ratios
    batch = int(next(x for x in sequences.groups() if x)) if sequences else 1
    stated = _cache_amount(doc, M, s, per_token, rule, batch)  # and the amount the sentence states with it
    return ratios + [(v[0], v[1] + (f" (for a batch of {batch} sequences)" if batch > 1 else ""), *v[2:])
                     for v in stated]


#: the sequences of a batch a sentence states: "a batch of 32 sequences", "batch size 16", "for 8 sequences"
_BATCH = re.compile(r"\bbatch(?:\s+size)?\s+(?:of\s+)?(\d{1,4})\b(?![,.]\d|\s+tokens?\b)"
                    r"|\b(\d{1,4})\s+(?:concurrent\s+)?sequences\b", re.I)
#: an amount said of one sequence of a batch: "the cache of each sequence", "per sequence"
_EACH_SEQUENCE = re.compile(r"\b(?:each|every|per|a\s+single|one)\s+(?:sequence|request|prompt)\b"
                            r"|\b(?:each|every)\s+(?:one|of\s+them)\b", re.I)


def _cache_amount(doc: DocumentModel, M: Any, s: str, per_token: Any, rule: str, batch: int = 1) -> list[Verdict3]:
    """The verdict on the amount a sentence states of the KV cache of ``M`` (see :func:`judge_cache`), for
    ``batch`` sequences."""
    if getattr(per_token, "free_symbols", None):
        return [("unchecked", f"the KV cache per token is {per_token}, which depends on sizes the document does not "
                 "fix", None, "")]
    # "2 · g · d_k · L · 2 bytes": a number that is the last operand of a product is a factor of the formula the
    # sentence gives, not the amount (that is the formula's value, which names sizes)
    amounts = [m for m in _AMOUNT.finditer(s) if not re.search(r"(?:[·*×/+−]|\\cdot|\\times)\s*$", s[:m.start()])]
    if not amounts:
        return []
    if batch > 1 and len(amounts) > 1:  # "a batch of 32 ... needs 64 GiB, more than the 13 GiB of weights": the
        # amount that is the cache
        fits = [v[0] for a in amounts if (v := _one_amount(doc, s, a, int(per_token), rule, batch))
                and v[0][0] == "correct"]
        return fits[:1] or [("unchecked", "several amounts in a sentence on a batch, none of them its KV cache: "
                             "which one the sentence gives as the cache is not read", None, "")]
    return _one_amount(doc, s, amounts[-1], int(per_token), rule, batch)


def _one_amount(doc: DocumentModel, s: str, m: re.Match[str], count: int, rule: str, batch: int) -> list[Verdict3]:
    """The verdict on the amount ``m`` of the sentence as the KV cache of ``count`` values per token and layer."""
    tokens, layers, size, said = _multipliers(doc, s)
    unit = m.group(2)
    in_bytes = unit not in ("values", "value", "numbers", "elements", "entries", "scalars", "floats")
    if in_bytes and size is None:
        return [("unchecked", "a KV cache in bytes, but neither the sentence nor the document states the bytes per "
                 "value (fp16, fp32, ...)", None, "")]
    scales = [_UNITS[unit]] + ([2 ** 10 * {"KB": 1, "kB": 1, "MB": 2 ** 10, "GB": 2 ** 20}[unit]]
                               if unit in ("KB", "kB", "MB", "GB") else [])
    width = size if in_bytes and size is not None else 1
    readings = [(count * t * L * width * batch, t, L) for t in tokens for L in layers]
    candidates = [r[0] for r in readings]
    for total, t, L in readings:
        if any(_agrees(total, m.group(1), scale) for scale in scales):
            bad = _terms_verdict(doc, _chain_terms(s, m.start(), sizes(doc)), total, "the KV cache")
            if bad is None and L != max(layers):  # fits a reading the sentence does not choose: one layer of a
                # model whose layers the document counted
                return [("unchecked", f"{cache_text(rule, count, total, size if in_bytes else None)} if it counts "
                         f"{t} token(s) and {L} layer(s); the document counts {max(layers)} layers and "
                         "the sentence does not say it means one", None, "")]
            return [bad or ("correct", cache_text(rule, count, total, size if in_bytes else None), None, "computed")]
    total = candidates[-1]
    if not said:  # the sentence does not say how many tokens it counts: a total of another sentence's context
        return [("unchecked", f"{cache_text(rule, count, total, size if in_bytes else None)}, not {m.group(1)} "
                 f"{unit}; but the sentence does not say which tokens, layers and sequences it counts (the "
                 f"readings {', '.join(map(str, candidates))} do not fit it)", None, "")]
    shown = str(Fraction(total, scales[0])) if scales[0] > 1 else str(total)
    other = f" (or {candidates[0]} for one layer)" if len(candidates) > 1 else ""
    return [("wrong", f"{cache_text(rule, count, total, size if in_bytes else None)}{other}, not {m.group(1)} "
             f"{unit}", f"{shown} {unit}", "computed")]


def _ratios(doc: DocumentModel, own: Any, M: Any, s: str) -> list[Verdict3] | None:
    """Each ratio of KV caches the sentence states between two variants, or None when it states none: the variant
    named right after the ratio is the base ("a quarter of the MHA cache", "one eighth of GQA"; multi-head attention
    when the sentence names it elsewhere: "by a factor of 4"), the one named before it the subject ("MQA needs
    1/32 of ...", else the model ``M`` the sentence speaks of).  ``own`` is the document's model."""
    from ..proofs.counts import kv_cache_per_token

    claims = [(k, c) for k, c in read(s) if isinstance(c, RatioClaim)]
    named = variants(s)
    mha = next((v for _, v in named if v.kind == "mha"), None)  # named anywhere (the grammar's variants)
    out: list[Verdict3] = []
    for at, ratio in claims:
        end = at + len(ratio.text)
        if ratio.larger:  # "Plain MHA (32 KV heads) would need 4× more": the variant before it over the one after it
            out += _larger(own, [v for k, v in named if k < at], next((v for k, v in named if end <= k <= end + 24),
                                                                    None), ratio)
            continue
        base = next((v for k, v in named if end <= k <= end + 24), None) or mha
        if base is None:
            continue
        subject = [v for k, v in named if k < at and v.kind != "mha" and v is not base]
        who, variant = (subject[-1].text, _document_heads(doc, subject[-1])) if subject else ("this model", None)
        model = (own if variant is None else _as_variant(own, variant)) if subject else M
        if model.kv_heads is None and variant is None and doc.known_dims().get("g") is not None:
            out.append(("unchecked", "the document's key/value heads are known, its query heads are not: the ratio to "
                        "multi-head attention (h / g) is not computed", None, ""))
            continue
        other = _document_heads(doc, base)
        reference = own.replace_options(kv_heads=None) if base.kind == "mha" else \
            own if other is None else _as_variant(own, other)
        mine, theirs = kv_cache_per_token(model), kv_cache_per_token(reference)
        quotient = sympy.cancel(theirs / mine)  # a ratio of variants: h / g, whatever d_k is
        if getattr(quotient, "free_symbols", None) or not quotient.is_Rational:
            out.append(("unchecked", f"the KV cache of {base.text} over {who}'s is {quotient}, which depends on sizes "
                        "the document does not fix", None, ""))
            continue
        factor = Fraction(int(quotient.p), int(quotient.q))
        if factor == 1:  # "8× smaller than the GQA cache" where the model is that GQA: another configuration of it
            out.append(("unchecked", f"{base.text} here is the document's own model ({who}): which configuration the "
                        "ratio is to is not said", None, ""))
            continue
        rule = "2 g d_k" if model.kv_heads is not None else "2 h d_k"
        if getattr(mine, "free_symbols", None):
            why = f"{base.text} caches {factor} times what {who} caches ({rule} per token and layer)"
        else:
            why = f"{base.text} caches {theirs} values per token and layer, {who} {rule} = {mine}: {factor} times fewer"
        out.append(("correct", why, None, "computed") if _agrees(factor, ratio.factor, 1) else
                   ("wrong", f"{why}, not {ratio.factor}", str(factor), "computed"))
    return out if claims and out else None


def _larger(own: Any, before: list[Any], after: Any, ratio: Any) -> list[Verdict3]:
    """"MHA (32 KV heads) would need 4× more": the KV cache of the variant named last before the ratio over that of the
    one named right after it ("than MQA"), else of the document's own model; nothing when no variant precedes it."""
    from ..proofs.counts import kv_cache_per_token

    if not before:
        return []
    subject = before[-1]

    def cache(v: Any) -> Any:
        heads = _variant_heads(v)
        return kv_cache_per_token(own if heads is None else _as_variant(own, heads))

    quotient = sympy.cancel(cache(subject) / (cache(after) if after is not None else kv_cache_per_token(own)))
    if getattr(quotient, "free_symbols", None) or not quotient.is_Rational or quotient <= 1:
        return []  # sizes not fixed, or not larger: read no more into it
    factor = Fraction(int(quotient.p), int(quotient.q))
    base = after.text if after is not None else "the document's model"
    why = f"{subject.text} caches {factor} times what {base} caches per token and layer"
    return [("correct", why, None, "computed")] if _agrees(factor, ratio.factor, 1) else \
        [("wrong", f"{why}, not {ratio.factor}", str(factor), "computed")]


def _sentence_of(line: str, at: int, context: str) -> tuple[str, int]:
    r"""The whole sentence that the position ``at`` of ``line`` sits in, when the line is part of ``context`` (a
    sentence may run over several lines), and the position in it; else the line itself.

    >>> _sentence_of("i.e. 42 of them. B", 5, "Yes. A has 6 x 7,\ni.e. 42 of them. B")
    ('A has 6 x 7,\ni.e. 42 of them.', 18)
    """
    pos = context.find(line) if context and line else -1
    if pos < 0:
        return line, at
    absolute = pos + at
    ends = [e.end() for e in re.finditer(r"(?<![.\s][A-Za-z])[.;?!](?=\s|$)", context)]  # not i.e. or e.g.
    start = max((e for e in ends if e <= absolute), default=0)
    stop = min((e for e in ends if e > absolute), default=len(context))
    lead = len(context[start:stop]) - len(context[start:stop].lstrip())
    return context[start + lead:stop], absolute - start - lead


def cache_text(rule: str, count: int, total: int, size: int | None) -> str:
    """``the KV cache holds 2 g d_k = 256 values per token and layer ...; here 512 bytes at 2 bytes per value``."""
    text = f"the KV cache holds {rule} = {count} values per token and layer (read off the model's K_j, V_j steps)"
    if total != count or size is not None:
        text += f"; here {total} {'values' if size is None else f'bytes at {size} bytes per value'}"
    return text


def _distributive(whole: str, pattern: str, count: str) -> bool:
    """Is a count said of each of two parts named together ("each of its K and V projections is N parameters",
    "W_K and W_V each hold N", "N weights each"): ``each`` right before the parts, right after them, or after the
    count?"""
    return bool(re.match(r"[\d,]+\s+(?:parameters|params|weights)\s+each\b", count, re.I)) or any(
        re.search(r"\b(?:each|every|either)\s+(?:one\s+)?(?:of\s+)?(?:its|the|their|our)?\s*$", whole[:x.start()], re.I)
        or re.match(r"\s*(?:\w+\s+)?each\b", whole[x.end():], re.I) for x in re.finditer(pattern, whole, re.I))


def judge_parameters(doc: DocumentModel, M: Any, s: str, context: str = "") -> list[Verdict3]:
    from ..proofs.counts import parameter_count

    m = re.search(r"(?<![\w.^_])(\d[\d,]*)\s+(?:parameters|params|weights)\b", s, re.I)
    if not m:
        return []
    stated = int(m.group(1).replace(",", ""))
    model = M.replace_options(bias=bool(re.search(r"\bwith\s+bias(?:es)?\b", s, re.I)))
    mha = about_mha(s, m.start())
    if mha:
        model = model.replace_options(kv_heads=None)
    named_after = [v for k, v in variants(s) if k >= m.end() and s[m.end():k].strip(" )").lower() in (
        "for", "of", "in", "for the", "of the", "in the")]  # "(4,194,304 parameters) for GQA-8": that variant's
    heads = _variant_heads(named_after[0]) if named_after else None
    if heads is not None:
        model = _as_variant(model, heads)

    def entries(key: str) -> Any:
        return sum((w.shape[0] * w.shape[1] for w in model.inputs[key]), 0) if isinstance(model.inputs[key], list) \
            else model.inputs[key].shape[0] * model.inputs[key].shape[1]

    def w(x: str) -> str:  # W_K, W^K, W_{K}
        return rf"\bW[_^]\{{?{x}\}}?(?![\w}}])"

    kv = (rf"\b(?:keys?|K)\s+and\s+(?:values?|V)\b|{w('K')}\s+and\s+{w('V')}"
          r"|\b(?:key/value|K/V|KV)\s+(?:projections?|weights)\b")
    parts = [(kv, "W_K and W_V", lambda: entries("W_K") + entries("W_V")),
             (rf"\b(?:query|Q)\s+projection\b|{w('Q')}", "W_Q", lambda: entries("W_Q")),
             (rf"\b(?:key|K)\s+projection\b|{w('K')}", "W_K", lambda: entries("W_K")),
             (rf"\b(?:value|V)\s+projection\b|{w('V')}", "W_V", lambda: entries("W_V")),
             (rf"\b(?:output|O)\s+projection\b|{w('O')}", "W_O", lambda: entries("W_O")),
             (r"\battention\s+(?:layer|block)\b|\bin\s+total\b|\btotal\b|\blayer\s+(?:has|holds)\b" + (
                 r"|multi-head\s+attention|\bMHA\b" if mha else ""), "the layer", lambda: parameter_count(model))]
    # the subject is the part named nearest before the number ("W_K has shape 4096 x 1024, i.e. N parameters ...
    # W_Q and W_O are unchanged" counts W_K), else the first named after it; a fixed order of parts would pick
    # whichever the list names first
    whole, at = _sentence_of(s, m.start(), context)

    counts = [c.start() for c in re.finditer(r"(?<![\w.])\d[\d,]*\s+(?:parameters|params|weights)\b", whole, re.I)]
    named = re.match(r"[\d,]+\s+(?:parameters|params|weights)\s+(?:for|of|in)\s+(?:the\s+)?", whole[at:], re.I)

    def nearest(part: tuple[str, str, Any]) -> tuple[int, int]:
        if named and re.match(part[0], whole[at + named.end():], re.I):
            return (-1, 0)  # "N parameters for K and V": the words right after the count name its subject
        ends = [x.end() for x in re.finditer(part[0], whole, re.I)]  # by their ends: "W_K and W_V" holds W_V
        # a name binds the first count after it: "W_V, with 8192 parameters, and the block has N parameters"
        before = [x for x in ends if x <= at and not any(x <= c < at for c in counts)]
        return (0, -max(before)) if before else (1, min(ends)) if ends else (2, 0)

    ranked = sorted((p for p in parts if re.search(p[0], whole, re.I)), key=nearest)
    if not ranked:
        return []
    pattern, what, count = ranked[0]
    if heads is None and not mha:  # "the MQA key projection", "GQA-8's W_K": the variant the part is named with
        starts = [x.start() for x in re.finditer(pattern, whole, re.I)]
        modifier = [v for k, v in variants(whole) if any(k + len(v.text) <= x and re.fullmatch(
            r"(?:'s)?\s*", whole[k + len(v.text):x]) for x in starts)]
        heads = _document_heads(doc, modifier[0]) if modifier else None
        if heads is None:  # "With MQA, W^K and W^V are ... (N weights each)": the variant its clause opens with
            opening = re.match(r"\s*(?:with|for|in|under|using)\s+", whole, re.I)
            first = variants(whole)
            if opening and first and first[0][0] == opening.end() and first[0][1].kind in ("mha", "mqa"):
                heads = _variant_heads(first[0][1])
        if heads is not None:
            model = _as_variant(model, heads)
    true = count()
    if what == "W_K and W_V" and _distributive(whole, pattern, s[m.start():]):
        true = entries("W_K")  # "each of its K and V projections is N", "W_K and W_V ..., N weights each": of each
    if getattr(true, "free_symbols", None):
        return [("unchecked", f"{what} has {true} parameters, which depends on sizes the document does not "
                 "fix", None, "")]
    kind = "multi-head attention of the same sizes" if mha else f"g = {model.kv_heads or model.dims.h}"
    bad = _terms_verdict(doc, _chain_terms(s, m.start(), sizes(doc)), int(true), f"the weights of {what}")
    if bad is not None:
        return [bad]
    if int(true) == stated:
        return [("correct", f"{what}: {true} weights ({kind}; counted from the model's inputs)", None,
                 "computed")]
    return [("wrong", f"{what}: {true} weights ({kind}; counted from the model's inputs), not {stated}",
             str(true), "computed")]
