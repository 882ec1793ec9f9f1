r"""Scopes: where a size is bound, and which configuration a statement is about.

Explanation
===========

A document is read paragraph by paragraph (:func:`paragraphs`; a heading, a cell or a blank line starts
another).  A size restated with another value in another paragraph starts another example
(:meth:`.model.DocumentModel.new_example`); only a paragraph that binds a size twice contradicts itself.

A paragraph may also speak of another configuration without binding it ("What if $h$ were 16?  Then
$d_k = 32$ ..."): :func:`paragraph_sizes` reads the sizes a paragraph states in any form -- inline math
``h = 16``, prose settings, "h were 16" -- and a verdict against the document's model that holds in such a
configuration is about that configuration, not an error (:func:`other_configurations`).

Examples
========

>>> paragraphs("a\nb\n\n\nc\n- d\n  e\n2. f")
{1: (1, 0), 2: (1, 0), 5: (2, 0), 6: (2, 1), 7: (2, 1), 8: (2, 2)}
>>> sorted(paragraph_sizes("What if $h$ were 16? Then $d_k = 512/16 = 32$ and $n = 4$."))
[('h', 16), ('n', 4)]
"""

from __future__ import annotations

import re

from ..errors import MHASymbolicError
from .model import DocumentModel, as_int

__all__ = ["paragraphs", "paragraph_sizes", "variant_sizes", "model_sizes", "other_configurations", "with_sizes",
           "substituted_sizes"]


def paragraphs(text: str) -> dict[int, tuple[int, int]]:
    """Each non-blank line's scope ``(paragraph, item)``: blank lines separate paragraphs; the items of a list are
    scopes nested in their paragraph (``item`` counts them from 1; 0 is the paragraph's own lines before its first
    item), so a size the paragraph's opening binds holds in every item, while two items are siblings."""
    out: dict[int, tuple[int, int]] = {}
    count, item, blank = 0, 0, True
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            blank = True
            continue
        if blank:
            count, item = count + 1, 0
        if line.lstrip()[:1] in "-*+" and line.lstrip()[1:2] == " " or _numbered(line.lstrip()):
            item += 1
        blank = False
        out[number] = (count, item)
    return out


def _numbered(line: str) -> bool:
    """``12. text`` or ``3) text``: an item of a numbered list."""
    digits = len(line) - len(line.lstrip("0123456789"))
    return 0 < digits <= 3 and line[digits:digits + 2] in (". ", ") ")


def paragraph_sizes(text: str) -> set[tuple[str, int]]:
    """The (size, value) pairs a paragraph states in any form, hypotheticals and conditions included."""
    from .prose import _plain, _sentence_settings

    return {(s.name, s.value) for _, s in _sentence_settings(_plain(text))}


def model_sizes(doc: DocumentModel) -> dict[str, int]:
    """The document model's sizes: those stated, and the head width the model derives (d_model / h)."""
    known = dict(doc.known_dims())
    try:
        for name in ("d_k", "d_v"):
            value = as_int(getattr(doc.model().dims, name))
            if name not in known and value is not None:
                known[name] = value
    except (MHASymbolicError, ValueError, TypeError):
        pass
    return known


def other_configurations(doc: DocumentModel, text: str) -> list[dict[str, int]]:
    """The configurations a paragraph speaks of besides the document's model: each size it states with another
    value than the model's, alone and all together (at most a handful: a budget of work)."""
    known = model_sizes(doc)
    stated = paragraph_sizes(text) | variant_sizes(text)
    changes = sorted((k, v) for k, v in stated if known.get(k) not in (None, v))[:6]
    configs = [{k: v} for k, v in changes]
    together = dict(changes)
    if len(together) > 1 and together not in configs:
        configs.append(together)
    return configs


def variant_sizes(text: str) -> set[tuple[str, int]]:
    """The number of key/value heads fixed by a variant a paragraph names: multi-query attention has one (a
    paragraph on MQA in a document about GQA speaks of g = 1).  Multi-head attention is not read so: it is the
    baseline most paragraphs compare with, and its g = h is the value a planted error most often takes.

    >>> sorted(variant_sizes("MQA keeps a single KV head")), sorted(variant_sizes("4x less than MHA"))
    ([('g', 1)], [])
    """
    import re

    return {("g", 1)} if re.search(r"\b(?:MQA|multi-query)\b", text, re.I) else set()


def with_sizes(doc: DocumentModel, sizes: dict[str, int]) -> DocumentModel:
    """A copy of the document's model with ``sizes`` in force (a head width derived from d_model / h follows
    them); the document's own model is not touched."""
    import copy

    alt = copy.copy(doc)
    for name in ("dims", "values", "assumed", "shapes", "definitions", "aliases", "bound_in", "bound_line",
                 "memory", "section_sizes", "renames", "formulas", "declared", "labels"):
        setattr(alt, name, copy.copy(getattr(doc, name)))
    alt.constrained, alt.confirmed = set(doc.constrained), set(doc.confirmed)
    alt.history = {k: list(v) for k, v in doc.history.items()}  # a restart there must not write into the document
    alt.examples = list(doc.examples)
    alt._model = alt._table = None
    if {"d_model", "h"} & sizes.keys() and "d_k" not in sizes:
        alt.dims.pop("d_k", None)
        alt.dims.pop("d_v", None)
    for name, value in sizes.items():
        alt.dims[name] = value
    return alt


#: a token of a formula: a command (not a value), a number, or a name with its subscript (``d_{\text{model}}``)
_TOKEN = re.compile(r"\\[A-Za-z]+|(\d+(?:\.\d+)?)|([A-Za-z](?:_\{(?:[^{}]|\{[^{}]*\})*\}|_[A-Za-z0-9])?)")
#: what two sides of a substitution may write differently: spacing, grouping, the sign of a product
_LAYOUT = re.compile(r"\s+|[{}*]|\\(?:cdot|times|left|right|[,;:! ])(?![A-Za-z])")


def _skeleton(tex: str) -> tuple[str, list[tuple[str, str]]]:
    """A formula with each number and name replaced by ``#``, and its tokens (number or name) in order."""
    found: list[tuple[str, str]] = []

    def mark(m: re.Match[str]) -> str:
        if m.group(1) or m.group(2):
            found.append(("number", m.group(1)) if m.group(1) else ("name", m.group(2)))
            return "#"
        return m.group(0)
    return _LAYOUT.sub("", _TOKEN.sub(mark, tex)), found


def substituted_sizes(text: str) -> dict[str, int]:
    r"""Sizes a formula of ``text`` states by substituting them: a side in sizes followed by the same side in numbers
    (``d_{\text{model}}/h = 768/12``, ``\frac{n^2}{h} = \frac{4^2}{2}``) gives each size its number.  Two sizes or
    more, each given one number; an ambiguous or structurally different pair (``\sqrt{d_k} = 8``) gives nothing.

    >>> substituted_sizes(r"no BERT-base temos $d_k = d_{\text{model}}/h = 768/12 = 64$ e portanto $\sqrt{d_k} = 8$")
    {'d_model': 768, 'h': 12}
    >>> substituted_sizes(r"$\sqrt{d_k} = 8$, $h d_k = 8$"), substituted_sizes(r"$2 n d = 2 \cdot 3 \cdot 4$")
    ({}, {'n': 3, 'd_model': 4})
    """
    from .model import dim_name
    from .read import chains

    out: dict[str, int] = {}
    for run in re.findall(r"\$([^$]+)\$", text):
        for c in chains(run):
            for a, b in zip(c.sides, c.sides[1:], strict=False):
                (shape_a, tokens_a), (shape_b, tokens_b) = _skeleton(a), _skeleton(b)
                if shape_a != shape_b or any(kind == "name" for kind, _ in tokens_b):
                    continue
                mapping: dict[str, int] = {}
                for (kind, x), (_, y) in zip(tokens_a, tokens_b, strict=True):
                    name = dim_name(x) if kind == "name" else None
                    if kind == "number" and x != y or kind == "name" and (
                            name is None or "." in y or mapping.get(name, int(float(y))) != int(float(y))):
                        break
                    if name is not None:
                        mapping[name] = int(y)
                else:
                    if len(mapping) >= 2 and all(out.get(k, v) == v for k, v in mapping.items()):
                        out.update(mapping)
    return out
