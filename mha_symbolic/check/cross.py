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

__all__ = ["document_variant"]

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
