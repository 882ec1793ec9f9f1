r"""The checker's pipeline: extract -> read -> document model -> judge -> report.

:func:`check_document` walks the pieces of a document in order (:mod:`.extract`), splits each formula
into relation chains (:mod:`.read`), keeps what the document has said in a :class:`.model.DocumentModel`
and asks :func:`.judge.judge` for one verdict per chain.  Code assignments of numbers and printed
outputs bind or compare values like ``NAME = [...]`` would; prose settings bind sizes.
"""

from __future__ import annotations

import re
from typing import Any

from sympy import ImmutableMatrix

from ..errors import MHASymbolicError
from ..parse.encoding import repair_encoding
from .judge import judge
from .model import DocumentModel, dim_name
from .report import Finding, Report

__all__ = ["check_document"]

_CODE_NAMES = {"x": "X", "wq": "W_Q^{}", "w_q": "W_Q^{}", "wk": "W_K^{}", "w_k": "W_K^{}", "wv": "W_V^{}",
               "w_v": "W_V^{}", "wo": "W_O", "w_o": "W_O", "q": "Q_{}", "k": "K_{}", "v": "V_{}",
               "scores": "S_{}", "s": "S_{}", "scaled": "S'_{}", "weights": "A_{}", "attn": "A_{}", "a": "A_{}",
               "head": "head_{}", "head_output": "head_{}", "heads": "head_{}", "concat": "Concat", "out": "Output",
               "attention": "A_{}", "attn_weights": "A_{}", "probs": "A_{}", "logits": "S_{}",
               "scaled_scores": "S'_{}",
               "output": "Output"}


def _code_key(name: str, zero_based: bool) -> str | None:
    """``WQ1`` -> ``W_Q^1``, ``weights2`` -> ``A_2``, ``W_q[0]`` -> ``W_Q^1``, ``X`` -> ``X``."""
    m = re.fullmatch(r"([A-Za-z_]+?)_?(\d*)(?:_output)?(?:\[(\d+)\])?", name.strip())
    if not m:
        return None
    base, digits, sub = m.group(1).lower(), m.group(2), m.group(3)
    fmt = _CODE_NAMES.get(base.rstrip("_"))
    if fmt is None:
        return None
    if "{}" not in fmt:
        return fmt
    index = sub if sub is not None else digits
    if not index:
        return None
    i = int(index) + (1 if (sub is not None or zero_based) else 0)
    return fmt.format(i)


def _matrix(value: Any) -> ImmutableMatrix | None:
    if isinstance(value, (int, float)):
        return ImmutableMatrix([[value]])
    if isinstance(value, list) and value and all(isinstance(x, (int, float)) for x in value):
        return ImmutableMatrix([value])
    if isinstance(value, list) and value and all(isinstance(r, list) for r in value):
        try:
            return ImmutableMatrix(value)
        except (ValueError, TypeError):
            return None
    return None


def check_document(text: str, name: str = "<text>", seconds_per_piece: float | None = 5.0) -> Report:
    """Check a document (Markdown, plain text or a notebook's JSON) with the pipeline; a piece that takes
    longer than ``seconds_per_piece`` is reported ``unchecked`` with the time it was given."""
    from .budget import PieceTimeout, time_limit
    from .extract import extract
    from .tables import table_groups

    repair = repair_encoding(text)
    pieces = extract(repair.text, name)
    report = Report(name, repair.repaired, repair.method, math_fragments=sum(p.kind == "math" for p in pieces))
    doc = DocumentModel()
    doc.zero_based_code = bool(re.search(r"\b(?:W_?[QKVqkv]|head|weights|scores|attn|Q|K|V|A|S)_?0\b", repair.text))
    doc.zero_based = bool(re.search(r"(?:H|head|\\mathrm\{head\})_\{?0\}?|W(?:\^\{?[QKV]\}?)?_\{?0\b|\[0\]",
                                    repair.text))
    if re.search(r"X_\{?(?:[i1-9]|\\text\{head\s*\d\})\}?\s*(?:=|(?:\\times|\\cdot|\\,)?\s*W)", repair.text):
        doc.use_convention("split")  # X_i W_Q^i: each head projects its own column block of X
    groups = table_groups(pieces)

    def row_emit(q: Any, status: str, message: str, expected: str | None, kind: str, basis: str) -> None:
        report.findings.append(Finding(q.line, q.text, status, expected, message, kind, basis, q.cell, q.output))

    for index, p in enumerate(pieces):
        def emit(line: int, tex: str, status: str, message: str, expected: str | None = None, kind: str = "",
                 basis: str = "", p: Any = p) -> None:
            report.findings.append(Finding(line, tex, status, expected, message, kind, basis, p.cell, p.output))
        try:
            with time_limit(seconds_per_piece):
                _piece(doc, p, index, groups, emit, row_emit)
                _sizes_agree(doc, p, emit)
        except PieceTimeout:
            emit(p.line, p.text, "unchecked", f"gave up after {seconds_per_piece:g} s (too large to check exactly)")
        except (MHASymbolicError, RecursionError, ValueError, TypeError, ZeroDivisionError, AttributeError,
                IndexError, KeyError, NotImplementedError) as e:
            emit(p.line, p.text, "unchecked", f"not understood: {str(e).splitlines()[0][:160] if str(e) else e}")
    report.findings.sort(key=lambda f: (f.cell or 0, f.output, f.line))
    return report


def _piece(doc: DocumentModel, p: Any, index: int, groups: dict[int, list[Any]], emit: Any, row_emit: Any
           ) -> None:
    from .read import chains
    from .tables import judge_table

    if p.kind == "heading":
        from .read import scope

        doc.section += 1
        named = re.findall(r"\$\s*([A-Za-z](?:_\{?\w+\}?)?(?:\^\{?\w+\}?)?)\s*\$", p.text) or re.findall(
            r"\b(?:matrix|matrices|input|weights?)\s+([A-Z])\b", p.text, re.I)
        doc.last_subject = named[0] if len(named) == 1 else None

        head = scope(p.text).get("head") or _heading_head(p.text)
        if head is not None and head != doc.current_head:  # a new head's section ("Head 2"); sub-headings keep it
            doc.aliases = {}
            doc.current_head = head
    if p.kind == "math":
        here, scoped = _scoped(doc, p)
        for c in chains(p.text):
            alias = _alias(c)
            if alias is not None:
                doc.aliases = {name: alias for name in c.sides[:-1]}
                note = _identity_projections(doc, alias, list(c.sides[:-1]))
                emit(p.line + c.row, c.text, "given", f"{', '.join(c.sides[:-1])} stand for {alias} in this section"
                     + note, kind="formula")
                continue
            if scoped and _is_binding(c, scoped):
                emit(p.line + c.row, c.text, "given", "a condition of this sentence only "
                     f"({', '.join(f'{k} = {v}' for k, v in scoped.items())})", kind="setting")
                continue
            subject = re.fullmatch(r"[A-Za-z](?:_\{?[^=]*?\}?)?(?:\^\{?\w+\}?)?", c.sides[0].strip())
            if c.ops and c.ops[0] == "eq" and subject:
                doc.last_subject = c.sides[0].strip()
            size = dim_name(c.sides[0]) if len(c.sides) == 2 and c.ops == ("eq",) else None
            if size is not None and re.fullmatch(r"\s*\d+\s*", c.sides[1]) and here is doc and \
                    doc.new_example(size, int(c.sides[1])):
                emit(p.line + c.row, c.text, "given", f"another example: sets {size} = {c.sides[1].strip()} (the "
                     "earlier sizes and values no longer apply)", kind="setting")
                doc.bind_dim(size, int(c.sides[1]))
                continue
            got = judge(here, list(c.sides), list(c.ops), c.text)
            if got is not None:
                kind, (status, message, expected, basis) = got
                emit(p.line + c.row, c.text, status, message, expected, kind, basis)
    elif p.kind in ("code", "output") and p.name:
        _code(doc, p, emit)
    elif p.kind == "table" and index in groups:
        judge_table(doc, groups[index], row_emit)
    elif p.kind == "prose":
        from .plain import formula_line, judge_code_prose

        here, scoped = _scoped(doc, p)
        line = formula_line(p.text)
        if line is not None:  # a formula in plain text: judged like math
            for c in chains(line):
                got = judge(here, list(c.sides), list(c.ops), c.text)
                if got is not None:
                    emit(p.line, p.text, got[1][0], got[1][1], got[1][2], got[0], got[1][3])
        elif not judge_code_prose(here, p, emit):
            _prose(here, p, emit, scoped)
    elif p.kind == "unclosed":
        emit(p.line, p.text, "unchecked", "a $$ that is never closed: the math after it was not read")


def _identity_projections(doc: DocumentModel, alias: str, names: list[str]) -> str:
    """``Q = K = V = X_1`` in the split convention (or ``= X`` with one head): the head's projections are the
    identity; bound as givens so that the engine computes the section's steps."""
    from sympy import eye

    from .model import as_int

    m = re.fullmatch(r"X(?:_\{?(\d+)\}?)?", alias.strip())
    known = doc.known_dims()
    known.setdefault("d_k", as_int(doc.model().dims.d_k))  # type: ignore[arg-type]
    if not m or known.get("d_k") is None:
        return ""
    split = doc.convention == "split" and m.group(1) is not None
    if not split and not (m.group(1) is None and known.get("h") == 1):
        return ""
    k = int(m.group(1)) + (1 if doc.zero_based else 0) if m.group(1) else 1
    bound = []
    for name in names:
        key = f"W_{name}^{k}"
        if key not in doc.values:
            doc.values[key] = eye(known["d_k"]).as_immutable()
            bound.append(key)
    doc._model = doc._table = None
    if doc.current_head is None:
        doc.current_head = k - (1 if doc.zero_based else 0)
    return f" (so {', '.join(bound)} = I)" if bound else ""


def _sizes_agree(doc: DocumentModel, p: Any, emit: Any) -> None:
    """Once sizes are fixed: h must divide d_model when the head width is d_model / h (said once)."""
    d = doc.dims
    if {"d_model", "h"} <= d.keys() and "d_k" not in d and d["d_model"] % d["h"] and not doc.sizes_reported:
        doc.sizes_reported = True
        emit(p.line, p.text, "inconsistent", f"h = {d['h']} does not divide d_model = {d['d_model']}: the head width "
             f"d_k = d_model / h = {d['d_model']}/{d['h']} is not an integer", None, "setting", "computed")


def _heading_head(text: str) -> int | None:
    m = re.search(r"\b(?:head|kopf|cabeza|tête)\s*#?\s*(\d+)\b", text, re.I)
    return int(m.group(1)) if m else None


def _alias(c: Any) -> str | None:
    """``Q = K = V = X_1``: the layer's inputs named as one matrix, or None."""
    sides = [x.strip() for x in c.sides]
    if len(sides) >= 2 and all(op == "eq" for op in c.ops) and all(x in ("Q", "K", "V") for x in sides[:-1]) \
            and sides[-1] not in ("Q", "K", "V") and re.fullmatch(r"[A-Za-z](?:_\{?\w+\}?)?", sides[-1]):
        return sides[-1]
    return None


def _scoped(doc: DocumentModel, p: Any) -> tuple[DocumentModel, dict[str, int]]:
    """The model a math piece is judged in: the document's own, or a local copy for an example inside a
    paragraph -- a condition that sets sizes ("with h = 1 the bound reads ...", "whenever d_k = 2", "for
    example, take n = 2 ...") when the sentence is hypothetical or conditional, when the sizes differ from
    the document's, or when the document constrained those sizes (h >= 2) instead of fixing them.  The copy
    binds nothing in the document and lasts to the end of the paragraph."""
    from dataclasses import replace

    from .read import hypothetical, scope

    paragraph = p.sentence or ""
    clause = p.clause or paragraph
    sizes = {k: v for k, v in scope(clause).items() if k in ("n", "d_model", "h", "d_k", "d_v")}
    if doc.local is not None and doc.local[0] == paragraph and paragraph and (not sizes or sizes == doc.local[2]):
        return doc.local[1], doc.local[2]
    known = doc.known_dims()
    conditional = bool(re.search(r"\b(?:if|when|whenever|wenn|falls|si|cuando)\b", clause, re.I))
    local = hypothetical(clause) or conditional or any(known.get(k) not in (None, v) for k, v in sizes.items()) \
        or any(k in doc.constrained for k in sizes)
    if not sizes or not local:
        return doc, {}
    copy = replace(doc, dims={k: v for k, v in doc.dims.items() if k not in ("d_k", "d_v")} | sizes,
                   values={k: v for k, v in doc.values.items() if k == "X"} if "h" not in sizes else {},
                   assumed={}, definitions=dict(doc.definitions), local=None, _model=None, _table=None)
    doc.local = (paragraph, copy, sizes)
    return copy, sizes


def _is_binding(c: Any, sizes: dict[str, int]) -> bool:
    from .model import dim_name

    return len(c.sides) == 2 and c.ops == ("eq",) and dim_name(c.sides[0]) in sizes and \
        c.sides[1].strip() == str(sizes[dim_name(c.sides[0]) or ""])


def _code(doc: DocumentModel, p: Any, emit: Any) -> None:
    from .model import dim_name

    size = dim_name(p.name)
    if size is not None and isinstance(p.value, int):
        known = doc.known_dims().get(size)
        if known is None:
            doc.bind_dim(size, p.value)
            emit(p.line, p.text, "given", f"sets {size} = {p.value}", kind="setting")
        else:
            emit(p.line, p.text, "correct" if known == p.value else "wrong", f"{size} = {known}",
                 None if known == p.value else str(known), "setting", "computed")
        return
    code_zero = bool(re.search(r"\b(?:[A-Za-z]+_?0|\w+\[0\])\b", p.name or "")) or doc.zero_based_code
    key = _code_key(p.name, code_zero)
    stacked = _stacked(p.value)
    if key is None and stacked is not None:  # W_q = tensor of shape (h, d_model, d_k): one matrix per head
        for k, M in enumerate(stacked):
            _code_matrix(doc, p, emit, _code_key(f"{p.name}[{k}]", True), M)
        return
    _code_matrix(doc, p, emit, key, _matrix(p.value))


def _stacked(value: Any) -> list[ImmutableMatrix] | None:
    if isinstance(value, list) and value and all(isinstance(m, list) and m and all(isinstance(r, list) for r in m)
                                                 for m in value):
        mats = [_matrix(m) for m in value]
        return None if any(m is None for m in mats) else mats  # type: ignore[return-value]
    return None


def _side_tex(doc: DocumentModel, key: str) -> str:
    """The LaTeX of a model key (``W_Q^1``, ``A_2``, ``Concat``) in the document's head numbering."""
    tex = {"W_Q": "W_Q^{%s}", "W_K": "W_K^{%s}", "W_V": "W_V^{%s}"}
    shift = 1 if doc.zero_based else 0  # the side is read in the document's numbering
    if "^" in key:
        base, i = key.split("^")
        return tex[base] % (int(i) - shift)
    if "_" in key and key not in ("W_O",):
        base, i = key.rsplit("_", 1)
        return {"head": r"\mathrm{head}_{%s}"}.get(base, base + "_{%s}") % (int(i) - shift)
    return {"Concat": r"\mathrm{Concat}", "Output": r"\mathrm{Output}"}.get(key, key)


def _code_matrix(doc: DocumentModel, p: Any, emit: Any, key: str | None, M: ImmutableMatrix | None) -> None:
    if key is None:
        return
    from sympy import latex as sympy_latex

    if M is None:
        _code_formula(doc, p, emit, key)
        return
    got = judge(doc, [_side_tex(doc, key), sympy_latex(M)], ["eq"], p.text)
    if got is not None:
        kind, (status, message, expected, basis) = got
        emit(p.line, p.text, status, message, expected, kind, basis)


def resolver(doc: DocumentModel) -> Any:
    """Code names (``X``, ``WQ1``, ``W_q[0]``, ``weights2``, ``dk``) as the model's symbols, for
    :func:`._code_expr.code_expression`; None for a name the model does not have."""
    def resolve(name: str, index: int | None) -> Any:
        k = _code_key(name if index is None else f"{name}[{index}]", doc.zero_based_code)
        if k is not None:
            return doc.read(_side_tex(doc, k))
        size = dim_name(name) if index is None else None
        return doc.read({"d_model": "d_{model}"}.get(size, size)) if size else None

    return resolve


def _code_formula(doc: DocumentModel, p: Any, emit: Any, key: str) -> None:
    """``Q1 = X @ WQ1``: the right side read with :func:`._code_expr.code_expression` (through ``ast``, never
    run) in the model's symbols and compared with the model's step like a formula."""
    from ..latex import latex
    from ._code_expr import code_expression

    source = p.text.split("=", 1)[1] if "=" in p.text else ""
    try:
        expr = code_expression(source, resolver(doc))
    except (MHASymbolicError, ValueError, TypeError) as e:
        emit(p.line, p.text, "unchecked", f"the right side is not read (it is never run): "
             f"{str(e).splitlines()[0][:160]}", kind="formula")
        return
    side = _side_tex(doc, key)
    got = judge(doc, [side, latex(expr)], ["eq"], p.text, read=[doc.read(side), expr])
    if got is not None:
        kind, (status, message, expected, basis) = got
        emit(p.line, p.text, status, message, expected, kind, basis)


_SHAPE_WORDS = r"(?:shape|form|dimensions?|größe|forma|tamaño)"


def _prose(doc: DocumentModel, p: Any, emit: Any, scoped: dict[str, int] | None = None) -> None:
    from .read import settings

    every = re.search(r"\ball\s+((?:query|key|value)(?:\s*(?:,|and|&)\s*(?:query|key|value))*)\s+"
                      r"(?:weights?|projections?|matrices)\s+(?:are\s+)?\$([^$]+)\$", p.text, re.I)
    if every:  # "all query and key weights $(1, 0)^T$": every head's
        _every_head(doc, p, emit, re.findall(r"query|key|value", every.group(1), re.I), every.group(2))

    declared = re.search(_SHAPE_WORDS + r"\s*:\s*\$?\s*\(\s*(\w+)\s*(?:,|\\times|×|x)\s*(\w+)\s*\)\s*\$?",
                         p.text, re.I)
    if declared:
        here = re.findall(r"\$\s*([A-Za-z](?:_\{[^{}$]*(?:\{[^{}$]*\})?[^{}$]*\}|_\w)?(?:\^\{?\w+\}?)?)\s*=",
                          p.text[:declared.start()])
        subject = here[-1] if here else doc.last_subject
        if subject:
            _declare(doc, p, emit, subject, declared.group(1), declared.group(2))

    if _code_spans(doc, p, emit, scoped or {}):
        return
    stated = re.search(r"\$([^$]+)\$\s+(?:is|has shape|of shape|ist|es|est)\s+\$?\s*\(?\s*(\w+)\s*(?:\\times|×|x|,)\s*"
                       r"(\w+)\s*\)?\s*\$?(?![\w^])", p.text)
    if stated:  # "Since $W_O$ is $4 \times 12$": a shape stated in words
        got = judge(doc, [stated.group(1), r"\mathbb{R}^{%s \times %s}" % (stated.group(2), stated.group(3))], ["in"],
                    p.text)
        if got is not None:
            emit(p.line, p.text, got[1][0], got[1][1], got[1][2], got[0], got[1][3])
    for s in settings(re.sub(r"\$[^$]*\$|`[^`]*`", " ", p.text)):  # inline math and code are judged apart
        known = doc.known_dims().get(s.name)
        if known is None:
            doc.bind_dim(s.name, int(s.value))
            emit(p.line, p.text, "given", f"sets {s.name} = {s.value}", kind="setting")
        elif known != s.value:
            emit(p.line, p.text, "wrong", f"{s.name} is {known} earlier in the document", str(known), "setting",
                 "computed")
        else:
            emit(p.line, p.text, "correct", f"{s.name} = {known}", kind="setting", basis="computed")


def _declare(doc: DocumentModel, p: Any, emit: Any, subject: str, rows: str, cols: str) -> None:
    """``Shape: (4, 2)`` under a heading or after a formula naming one matrix: its declared shape, checked
    against the model now and against every later use (:func:`.judge.judge` reports a contradiction)."""
    from .judge import judge

    per_head = re.fullmatch(r"W_\{?([QKV])\}?", subject)
    probe = r"W_{%s}^{%d}" % (per_head.group(1), 0 if doc.zero_based else 1) if per_head else subject
    got = judge(doc, [probe, r"\mathbb{R}^{%s \times %s}" % (rows, cols)], ["in"], p.text)
    if got is not None and got[1][0] == "wrong" and per_head:
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
        got = judge(doc, tex, ["eq"] * (len(tex) - 1), p.text)
        if got is not None:
            emit(p.line, p.text, got[1][0], got[1][1], got[1][2], got[0], got[1][3])
    return True
