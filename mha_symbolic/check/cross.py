r"""Cross-attention and masks in a document: which model the document speaks of.

Explanation
===========

A document about cross-attention (encoder-decoder attention: "queries from the decoder, keys and values from
the encoder", "cross-attention") is checked against :class:`~mha_symbolic.attention.MultiHeadAttention` with
``n_kv`` keys and values read from a second input ``Y``: :func:`document_variant` reads that from the whole
text, and :meth:`.model.DocumentModel.model` builds the model with the document's ``n_kv`` (``n_{kv}``,
``src_len``, "source length 5"; symbolic while the document does not state it) and queries ``n`` (``n_q``,
``T``, ``L``, "target length").  A document that speaks of a key padding mask (a 0/1 row ``m`` per key) or an
additive mask (``softmax(S' + M)``) gets that mask in its model, so that the values it gives for ``Y``, ``m``
and ``M`` are the model's inputs.  Every verdict is then the engine's, on that model: the shapes of ``K_i``,
``S_i`` (``n x n_kv``), the rank bounds (``min(n, n_kv, d_k)``), the counts, the masked weights.

Examples
========

>>> document_variant("In encoder-decoder attention the queries come from the decoder.")
(True, None)
>>> document_variant("Padded keys are masked with a key padding mask.")
(False, 'key_padding')
"""

from __future__ import annotations

import re
from typing import Any

from .arithmetic import arithmetic_value
from .model import as_int

__all__ = ["document_variant", "judge_flops", "flops_prose"]

_CROSS = re.compile(r"cross[- ]?attention|encoder[- ]decoder\s+attention|\bqueries\s+(?:come\s+|are\s+taken\s+)?from\s+"
                    r"the\s+decoder|\bkeys\s+and\s+values\s+(?:come\s+|are\s+taken\s+)?from\s+the\s+encoder"
                    r"|\bsource\s+(?:sequence\s+)?length|\bsrc_len\b|\bn_\{?kv\}?(?![\w}]*_?heads)\s*=", re.I)
_GROUPED = re.compile(r"\bGQA\b|\bMQA\b|grouped[- ]query|multi[- ]query|key/value\s+heads|kv[_ ]heads", re.I)
_PADDING = re.compile(r"key[_ ]padding|padding\s+mask|padded\s+(?:keys?|tokens?|positions?)", re.I)
_ADDITIVE = re.compile(r"additive\s+(?:attention\s+)?mask|\battn_mask\b", re.I)


def document_variant(text: str) -> tuple[bool, str | None]:
    """(cross-attention?, mask) of a whole document: ``mask`` is ``"key_padding"``, ``"additive"`` or None.
    ``n_kv = 2`` in a document about grouped-query attention names key/value heads, not keys."""
    cross = bool(_CROSS.search(text))
    if cross and not re.search(r"cross[- ]?attention|encoder|decoder|source", text, re.I) and _GROUPED.search(text):
        cross = False
    mask = "key_padding" if _PADDING.search(text) else "additive" if _ADDITIVE.search(text) else None
    return cross, mask


_FLOPS = re.compile(r"(?<![\w.^_])(\d[\d,]*)\s*(?:FLOPs|flops|floating[- ]point\s+operations)\b")
_STAGES = [(r"\b(?:scores|logits|Q_?i?\s*K_?i?\^?T|QK\^?T|QKᵀ)\b", "S_1", "the scores S_i = Q_i K_i^T of one head"),
           (r"\b(?:weighted\s+sum|A_?i?\s*V_?i?|head\s+outputs?)\b", "head_1", "head_i = A_i V_i of one head"),
           (r"\b(?:keys|K_i?)\b(?![^.;]*\band\b)", "K_1", "the keys K_i = Y W_K^i of one head"),
           (r"\b(?:queries|Q_i?)\b", "Q_1", "the queries Q_i = X W_Q^i of one head"),
           (r"\b(?:matrix\s+products|matmuls?|multiplications)\b[^.;]*\b(?:layer|in\s+total|total|all)\b|\blayer\b[^.;]*"
            r"\bmatrix\s+products\b", "matmul_flops", "the layer's matrix products")]


def judge_flops(doc: Any, text: str) -> tuple[str, str, str | None, str] | None:
    """``The scores of one head take 2 n_q n_kv d_k = 120 FLOPs``: the engine's count of that stage
    (:func:`mha_symbolic.proofs.parameter_and_flop_counts` of the document's model) against the number."""
    from ..proofs import parameter_and_flop_counts
    from .counts import _chain_terms, _terms_verdict, sizes
    from .grouped import _plain

    s = _plain(text)
    m = _FLOPS.search(s)
    if not m:
        return None
    named = [(key, what) for pattern, key, what in _STAGES if re.search(pattern, s[:m.start()], re.I)]
    stage = named[0] if named else None
    if stage is None:
        return None
    if {"S_1", "head_1"} <= {key for key, _ in named}:  # "the core (QK^T + AV) costs N FLOPs": both products
        return ("unchecked", "the sentence counts both the scores and the weighted sum (QK^T and AV) together, of one "
                "head or all: not one step's count", None, "")
    if s[:m.start()].rstrip().endswith(("·", "*", "×", "/", "^", "+", "-", "−", "⋅")):  # 2·n²·128 FLOPs: the
        return ("unchecked", f"{stage[1]}: the amount is an expression ending in {m.group(1)}, not a number of FLOPs",
                None, "")  # number is the last factor of a formula, not the amount
    result = parameter_and_flop_counts(doc.model()).result
    true = result["stages"].get(stage[0]) if stage[0] != "matmul_flops" else result["matmul_flops"]
    names = sizes(doc)
    names.setdefault("n_kv", int(doc.model().n_kv)) if as_int(doc.model().n_kv) is not None else None
    stated = int(m.group(1).replace(",", ""))
    terms = _chain_terms(s, m.start(), names)
    for term in (t for t in terms if not any(ch.isalpha() for ch in t)):
        # "2*B*h*n*n*d_k = 2*4*8*128*128*64 = N FLOPs": arithmetic on numbers is a local computation, judged from
        # what it writes alone, whatever the model fixes
        value = arithmetic_value(term, {})
        if value != stated:
            return "wrong", f"{term} = {value}, not {stated} FLOPs", str(value), "computed"
    if true is None or getattr(true, "free_symbols", None):
        return "unchecked", f"{stage[1]}: {true} FLOPs, which depends on sizes the document does not fix", None, ""
    own = [t for t in terms if re.search(r"[A-Za-z]", t)]  # the document's formula in its sizes (2 n^2 d_model)
    if own and stated != int(true) and all(_terms_verdict(doc, [t], stated, "") is None for t in terms):
        # its own count, computed right in its sizes, of what its words call the stage: which quantity that is (one
        # head or all of them, FLOPs or multiply-adds) is the document's to say, and its formula says it
        return ("correct", f"{' = '.join(terms)} = {stated} in the document's sizes (its own formula; {stage[1]} "
                f"would be {true} FLOPs: another count of the same stage)", None, "computed")
    if terms and stated != int(true) and all(_terms_verdict(doc, [t], stated, "") is None for t in terms):
        # "2 * 32 * 8192 * 128 = 67108864 FLOPs" per new token: arithmetic of its own that holds, counting what the
        # sentence says it counts; which quantity that is, is not read here
        return ("unchecked", f"{' = '.join(terms)} = {stated} holds as arithmetic; {stage[1]} would be {true} FLOPs, "
                "and which quantity the sentence counts (per token, per layer, all heads) is not read", None, "")
    bad = _terms_verdict(doc, terms, int(true), f"{stage[1]} (FLOPs)")
    if bad is not None:
        return bad
    counted = f"{stage[1]}: {true} FLOPs (a multiply and an add per term; counted from the model's steps)"
    if stated == int(true):
        return "correct", counted, None, "computed"
    h = names.get("h")
    others = {f"all {h} heads": int(true) * h} if h and h > 1 else {}
    others |= {f"{k} counting a multiply-add as one".replace("one head", "one head,"): v // 2
               for k, v in {"one head": int(true), **others}.items() if v % 2 == 0}
    other = next((what for what, v in others.items() if v == stated), None)
    if other is not None:  # "AV: another 402,653,184 FLOPs": the stage's count for all heads, the sentence not saying
        return ("unchecked", f"{stated} is the count of that stage for {other} ({stage[1]}: {true} FLOPs); which "
                "quantity the sentence counts is not said", None, "")
    return "wrong", f"{counted}, not {stated}", str(true), "computed"


def flops_prose(doc: Any, p: Any, emit: Any) -> bool:
    got = judge_flops(doc, p.text)
    if got is None:
        return False
    emit(p.line, p.text, got[0], got[1], got[2], "number", got[3])
    return True
