r"""The checker's pipeline: extract -> read -> document model -> judge -> report.

:func:`check_document` walks the pieces of a document in order (:mod:`.extract`), splits each formula
into relation chains (:mod:`.read`), keeps what the document has said in a :class:`.model.DocumentModel`
and asks :func:`.judge.judge` for one verdict per chain.  Code assignments of numbers and printed
outputs bind or compare values like ``NAME = [...]`` would; prose settings bind sizes.
"""

from __future__ import annotations

import itertools
import re
import sys
from typing import Any

from sympy import Integer

from ..budget import Deadline, PieceTimeout, time_limit
from ..errors import MHASymbolicError, SizeLimitError
from ..parse.encoding import repair_encoding
from ..parse.latex import malformed
from . import scopes
from .code import code_statement
from .cross import document_variant, flops_prose
from .grouped import grouped_code, grouped_prose, judge_indexed, kv_heads_problem
from .judge import VECTOR_NAME, judge, numbers_run
from .masks import CAUSAL_WORDS, drawn_causal, mask_prose
from .model import NEVER_GIVEN, DocumentModel, bare_line, dim_name, numeric_matrix, spelling, written_name
from .numbers import literal_value
from .numerals import as_points, decimal_comma
from .own_formula import judge_line, model_values, own_formula
from .prose import LayerCount, count_said, counts_sequences
from .prose_amounts import judge_prose_amounts
from .prose_claims import (
    document_axes,
    judge_named_rows,
    judge_prose_claims,
    judge_softmax_of_row,
    judge_weight_rows,
)
from .report import Finding, Report
from .sentences import prose_statement
from .softmax_tables import softmax_calls

__all__ = ["check_document"]


def check_document(text: str, name: str = "<text>", seconds_per_piece: float | None = None,
                   deadline: Deadline | None = None, progress: bool = False) -> Report:
    """Check a document (Markdown, plain text or a notebook's JSON) with the pipeline; a piece that takes
    longer than ``seconds_per_piece`` is reported ``unchecked`` with the time it was given, and once the
    ``deadline`` has passed every piece left is reported ``unchecked`` with the document's budget.
    ``progress`` shows a progress bar (tqdm) on standard error."""
    from .extract import extract
    from .tables import table_groups

    repair = repair_encoding(text)
    cross, mask = document_variant(repair.text)
    source = _head_count_letter(repair.text)
    if decimal_comma(source):  # 1,5 GiB and 196 608 tokens: one number each, read with a point
        source = as_points(source)
    if cross:  # the document names its inputs in its own letters; or, where it uses X or Y otherwise too, each
        whole = _cross_roles(source)  # section in its own (one section's Y is not another's)
        source = whole if whole != source else "".join(_cross_roles(x) for x in re.split(r"(?m)^(?=#{1,6} )", source))
    pieces = extract(source, name, programs=True)
    if not name.endswith(".ipynb"):
        written = _unicode_math(source, pieces)  # "Mᵢ = Wᵢ^Q (Wᵢ^K)ᵀ" in a sentence: read as math is
        if written != source:
            source, pieces = written, extract(written, name, programs=True)
    report = Report(name, repair.repaired, repair.method, math_fragments=sum(p.kind == "math" for p in pieces))
    doc = DocumentModel()
    doc.cross, doc.mask = cross, mask
    # (a cross-attention document that names its lengths by role, n_q and n_kv, says which is the queries')
    doc.memory["lengths_named"] = cross and bool(re.search(r"n_\{?(?:q|kv|\\text\{kv\})\}?(?![A-Za-z])", source))
    doc.causal_text = bool(CAUSAL_WORDS.search(repair.text)) or drawn_causal(repair.text)
    doc.own_width = not _states_width_relation(pieces)
    declared = _declared_convention(pieces)  # X in R^{d x n}: tokens are columns; R^{n x d}: rows
    doc.columns = declared["columns"] > declared["rows"]  # (a remark on the other convention is outvoted)
    doc.rows = declared["rows"] > 0 and not doc.columns  # (or a formula of the row convention holds, below)
    doc.memory["query_axis"] = _query_axis(pieces) if doc.columns else None
    doc.zero_based_code = bool(re.search(r"\b(?:W_?[QKVqkv]|head|weights|scores|attn|Q|K|V|A|S)_?0\b", repair.text))
    # the numbering of the maths and prose, read from them alone: code counts from 0 by its language's rule
    # (Qs[0] is the first head), which says nothing of how the prose numbers heads ("head 1" beside Qs[0]).
    # "[0]" only as an index of a name (W_q[0], heads[0]); "[[1], [0]]" is a matrix literal
    written = "\n".join(p.text for p in pieces if p.kind in ("math", "prose", "heading", "table"))
    doc.zero_based = bool(re.search(r"(?:H|head|\\mathrm\{head\})_\{?0\}?|W(?:\^\{?[QKV]\}?)?_\{?0\b|\w\[0\]"
                                    r"|\bheads?\s+0\s*(?:[–—-]|to\b|,|\.\.)",  # "query heads 0–3 read KV head 0"
                                    written))
    if re.search(r"X_\{?(?:[i1-9]|\\text\{head\s*\d\})\}?\s*(?:=|(?:\\times|\\cdot|\\,)?\s*W)", repair.text):
        doc.use_convention("split")  # X_i W_Q^i: each head projects its own column block of X
    groups = table_groups(pieces)
    doc.memory["axes"] = document_axes(pieces)  # what the document says of its softmax axis, everywhere
    doc.memory["lines"] = source.splitlines()
    doc.memory["own_formula"] = own_formula(doc.memory["lines"])  # KV cache bytes = 2 × L × H × d × T × 2

    def row_emit(q: Any, status: str, message: str, expected: str | None, kind: str, basis: str) -> None:
        report.findings.append(Finding(q.line, q.text, status, expected, message, kind, basis, q.cell, q.output))

    deadline = deadline or Deadline(None)
    paragraphs = scopes.paragraphs(source) if not name.endswith(".ipynb") else {}
    doc.memory["apart"] = _spelled_apart(pieces, paragraphs)  # d_k = 4 and d_h = 2 in one paragraph: two sizes
    paragraph_text: dict[tuple[int, int], str] = {}
    for number, line in enumerate(source.splitlines(), start=1):
        if number in paragraphs:
            line = _LIST_MARKER.sub("", line)  # "- h = 8: ...": a list's marker is no minus sign
            paragraph_text[paragraphs[number]] = paragraph_text.get(paragraphs[number], "") + line + "\n"
    counter = 0
    scope_key: Any = None
    given_on: dict[str, tuple[Any, int]] = {}
    sections = _section_conventions(pieces)
    document_axis = doc.memory["query_axis"]
    passing: dict[int, DocumentModel | None] = {}  # lists whose items state a configuration of their own
    items: set[tuple[int, int]] = set()
    for index, p in enumerate(_progress(pieces, name) if progress else pieces):
        where = paragraphs.get(p.line, (0, 0))
        key = (p.cell, p.output, doc.section, where[0])
        if key != scope_key:  # another paragraph, section or cell: a scope of its own
            scope_key = key
            counter += 1
        doc.paragraph = (counter, where[1])  # and within it, a list item
        if p.kind == "heading" or p.kind == "prose" and _BOLD_HEAD.fullmatch(p.text):
            doc.section_paragraph = counter + 1  # the first scope of the section this heading (or question) opens
        if p.kind == "heading":
            doc.heading = p.text
            own = sections.get(index)  # a section in the other convention: another model, another example
            columns = declared["columns"] > declared["rows"] if own is None else own[0] == "columns"
            if columns != doc.columns:
                doc.columns, doc.rows = columns, not columns and (own is not None or declared["rows"] > 0)
                doc.memory["query_axis"] = own[1] if own is not None else document_axis
                doc.restart()
        doc.line = p.line
        if deadline.expired():
            if not report.stopped:
                left = len(pieces) - index
                report.stopped = (f"the document's time budget of {deadline.seconds:g} s ran out at line {p.line}; "
                                  f"{left} of its {len(pieces)} pieces were not checked (give more with --timeout)")
            report.findings.append(Finding(p.line, p.text, "unchecked", None, "not checked: the document's time "
                                           f"budget of {deadline.seconds:g} s ran out before this piece",
                                           cell=p.cell, output=p.output))
            continue

        def emit(line: int, tex: str, status: str, message: str, expected: str | None = None, kind: str = "",
                 basis: str = "", p: Any = p) -> None:
            if status == "inconsistent" and basis == "proven" and (kind == "formula" or "inner sizes" in message
                                                                  or "by the model's shapes" in message) \
                    and not (doc.rows or doc.columns or _rows_given(doc)):
                status, expected, basis = "unchecked", None, ""  # K^T Q of a document that never said
                message = (f"the document does not say that tokens are rows (X is n x d_model); in that convention: "
                           f"{message}")  # which way its tokens go: the row convention is the checker's default
            evidence: tuple[str, ...] = ()
            if status == "wrong" and p.matrix_lines and line == p.line:  # a matrix drawn over several lines: the
                entry = _ENTRY.search(message)  # verdict goes to the line of the row that differs
                if entry and int(entry.group(1)) <= len(p.matrix_lines):
                    line = p.matrix_lines[int(entry.group(1)) - 1]
            if status in ("wrong", "inconsistent"):
                evidence = tuple(f"{k} = {v} (line {doc.bound_line[k]})" for k, v in doc.dims.items()
                                 if k in doc.bound_line) + \
                    tuple(f"{k} given on line {given_on[k][1]}" for k in doc.values if k in given_on)
            if kind == "formula" and status == "correct" and basis == "proven":
                doc.rows = True  # a formula of the row convention held (Q = X W_Q, Concat(...) W_O): tokens are rows
            report.findings.append(Finding(line, tex, status, expected, message, kind, basis, p.cell, p.output,
                                           evidence))
        if where[1] and (counter, where[1]) not in items:  # an item that states a configuration of its own: it and
            items.add((counter, where[1]))  # the items after it in its list are about that one
            passing[counter] = _passing_example(doc, paragraph_text.get(where, "")) or passing.get(counter)
        listed = passing.get(counter) if where[1] else None
        if doc.paragraph[0] == doc.section_paragraph and p.kind in ("prose", "math"):
            _part_cited(doc, p)  # "*For the layer of Problem 1, bound ...*": this part works in that part's sizes
        try:
            with time_limit(seconds_per_piece):
                before, start = scopes.with_sizes(doc, {}), len(report.findings)
                _piece(listed or doc, p, index, groups, emit, row_emit)
                _sizes_agree(listed or doc, p, emit)
                if p.kind in ("math", "prose"):
                    _other_configuration(before, p, index, groups, report.findings, start,
                                         paragraph_text.get(paragraphs.get(p.line, (-1, -1))) or p.sentence or "")
        except PieceTimeout:
            emit(p.line, p.text, "unchecked", f"gave up after {seconds_per_piece:g} s (too large to check exactly)")
        except MemoryError:
            emit(p.line, p.text, "unchecked", "gave up: it needed more memory than the document's budget")
        except (MHASymbolicError, RecursionError, ValueError, TypeError, ZeroDivisionError, AttributeError,
                IndexError, KeyError, NotImplementedError, re.error) as e:
            emit(p.line, p.text, "unchecked", f"not understood: {str(e).splitlines()[0][:160] if str(e) else e}")
        except Exception as e:  # a bug in the checker costs this piece, never the rest of the document
            emit(p.line, p.text, "unchecked", f"not checked: an internal error of the checker ({type(e).__name__}"
                 f"{': ' + str(e).splitlines()[0][:120] if str(e) else ''}); please report it")
        for k, v in doc.values.items():  # the line each given value came from (the evidence of later verdicts)
            if given_on.get(k, (None,))[0] is not v:
                given_on[k] = (v, p.line)
    printouts = doc.memory.get("printouts", set())  # what the code prints, judged by its trace: names are not guessed
    report.findings = [f for f in report.findings if f.basis == "traced" or (f.cell, f.output, f.line) not in printouts]
    report.findings = _named_elsewhere(report.findings, source, name, doc.zero_based)
    once: dict[tuple[Any, ...], Finding] = {}  # one shape claim read by two readers (the grammar and the formulas of
    for number, f in enumerate(report.findings):  # a sentence), said in one message naming subject and shapes: one
        once.setdefault((f.cell, f.output, f.line, f.status, f.kind, f.message) if f.kind == "shape" else (number,), f)
    report.findings = list(once.values())
    report.findings.sort(key=lambda f: (f.cell or 0, f.output, f.line))
    return report


def _named_elsewhere(findings: list[Finding], source: str, name: str, zero_based: bool) -> list[Finding]:
    """An ``assumed`` verdict says the document never gives an input; where the document writes that input's name on
    another line the checker did not read whole, it may give it there in a form not read, so the verdict is
    ``unchecked``, naming that line.  ``assumed`` stays when some input it lacks is named on no such line."""
    from dataclasses import replace

    from .extract import written_lines

    if not any(f.status == "assumed" for f in findings):
        return findings
    lines = [(cell, output, number, bare_line(text)) for cell, output, number, text in written_lines(source, name)]
    read: dict[tuple[Any, bool, int], bool] = {}  # lines the checker read whole (every finding a verdict): a value
    for f in findings:  # written there would have been read too, so a name on them gives nothing
        where = (f.cell, f.output, f.line)
        read[where] = read.get(where, True) and f.status != "unchecked"
    out = []
    for f in findings:
        lacks = NEVER_GIVEN.search(f.message) if f.status == "assumed" else None
        inputs = lacks.group(1).split(", ") if lacks else []
        named: list[str | None] = []  # where the document writes each input the verdict lacks (not its own line)
        for missing in inputs:
            if not re.fullmatch(r"[A-Za-z](?:_\w+)?(?:\^\w+)?", missing):  # ("sizes the document does not fix")
                named.append(None)
                continue
            pattern = written_name(missing, zero_based)
            named.append(next((f"line {number}" + (f" of cell {cell}" if cell is not None else "")
                               for cell, output, number, text in lines
                               if (cell, output, number) != (f.cell, f.output, f.line) and
                               not read.get((cell, output, number)) and pattern.search(text)), None))
        if named and None not in named:  # every input it lacks is named: perhaps given there, in a form not read
            said = ", ".join(f"{m} ({at})" for m, at in zip(inputs, named, strict=True))
            f = replace(f, status="unchecked", expected=None, basis="", message=(
                f"{f.message.split(' depends on ')[0]} depends on {said}, which the document names there: a value "
                "it gives there, if any, is not read, so this is not computed"))
        out.append(f)
    return out


#: the entry a wrong matrix names first (numbers.py: "... computed exactly; entry (2, 3) differs")
_ENTRY = re.compile(r"; entry \((\d+), \d+\) differs")
_RELATIONS = {"eq": "=", "approx": r"\approx"}
#: formulas written side by side in a line of plain text, three spaces or more apart
_WIDE_GAP = re.compile(r"\S {3,}\S")
#: an identity matrix of a stated size, I_4 (plain text's I₄): a matrix a sentence gives, as numbers are
_IDENTITY = re.compile(r"\s*I_\{?\d{1,2}\}?\s*")
#: a matrix's name in a sentence's formula (``Q``, ``W_Q``, ``W^Q``, ``K_{1}``), given a matrix of numbers there
_MATRIX_NAME = re.compile(r"\s*[A-Z](?:[_^]\{?\w+\}?){0,2}\s*")
#: a lower-case name in a sentence's formula (``s``, ``z_1``): a vector the document may have given
_LOWER_NAME = re.compile(r"(?<![A-Za-z])[a-z](?:_\{?\w+\}?)?(?![A-Za-z])")


def _other_configuration(before: DocumentModel, p: Any, index: int, groups: dict[int, list[Any]],
                         findings: list[Any], start: int, paragraph: str) -> None:
    """A wrong or inconsistent finding that holds in a configuration its paragraph states ("What if $h$ were
    16?  Then $d_k = 32$") is about that configuration: it becomes ``unchecked``, saying so (:mod:`.scopes`).  So does
    one in a later section than the one where the current example started, that holds in the example before it: a
    section after a small example of its own may speak of the main example again without restating its sizes."""
    from dataclasses import replace

    flagged = [i for i in range(start, len(findings)) if findings[i].status in ("wrong", "inconsistent")]
    if not flagged:  # the common case costs nothing: the paragraph is read only for a flagged piece
        return
    configurations = scopes.other_configurations(before, paragraph.replace(p.text, " "))  # sizes stated elsewhere
    own = _sentence_sizes(p.text) or _plain_sizes(p.text)  # (not a size its own sentence states otherwise)
    configurations = [c for c in configurations if not any(own.get(k, v) != v for k, v in c.items())]
    earlier = before.examples[-1] if before.examples and before.example_section < before.section else None
    if earlier is not None and earlier[0]:
        configurations.append(dict(earlier[0]))
    squares = _section_squares(before)  # n x n matrices of the section's own example: their side is its n
    configurations += [{"n": side} for side in squares if side != scopes.model_sizes(before).get("n")]
    lengths = scopes.model_sizes(before)
    swapped = {"n": lengths.get("n_kv", 0), "n_kv": lengths.get("n", 0)}
    if before.cross and not before.memory.get("lengths_named") and 0 not in swapped.values() and \
            swapped["n"] != swapped["n_kv"] and not set(before.definitions) - before.letters and not before.values:
        # (values decide; a letter given a number, m = 3 target positions, does not)
        configurations.append(swapped)  # cross-attention: which length is the queries' is the document's to name
    named = before.cited(p.sentence or paragraph)  # "In Problem 2, rank(QK^T) = 2": the part the sentence names
    configurations += [sizes for sizes in named.values() if sizes not in configurations]
    unmasked = before.causal and before.causal_section < before.section  # the mask of an earlier section
    for sizes in configurations + ([{}] if unmasked else []):
        rerun: list[Any] = []

        def emit(line: int, tex: str, status: str, message: str = "", expected: str | None = None, kind: str = "",
                 *args: Any, rerun: list[Any] = rerun, **kw: Any) -> None:
            rerun.append((line, tex, kind, status))

        def row_emit(q: Any, status: str, message: str, expected: str | None, kind: str, *args: Any,
                     rerun: list[Any] = rerun) -> None:
            rerun.append((q.line, q.text, kind, status))
        other = scopes.with_sizes(before, sizes)
        if not sizes:
            other.use_causal(False)
        try:
            _piece(other, p, index, groups, emit, row_emit)
        except (MHASymbolicError, RecursionError, ValueError, TypeError, ZeroDivisionError, AttributeError,
                IndexError, KeyError, NotImplementedError, re.error):
            continue
        # the same statement (line, text, kind) is correct there and nothing of its kind is flagged there
        flags = {(line, tex, kind) for line, tex, kind, status in rerun if status in ("wrong", "inconsistent")}
        # without the mask, on the same values, or in a part the sentence names: not refuted there is enough to doubt
        cited = next((label for label, part in named.items() if part is sizes), None)
        special = not sizes or cited is not None
        holds = {(line, tex, kind) for line, tex, kind, status in rerun
                 if status == "correct" or special and status in ("unchecked", "given")} - flags
        said = ", ".join(f"{k} = {v}" for k, v in sizes.items())
        model = ", ".join(f"{k} = {scopes.model_sizes(before).get(k)}" for k in sizes)
        where = "which its paragraph states" if earlier is None or sizes is not configurations[-1] else \
            f"the example before the one this document started in an earlier section (line " \
            f"{min(earlier[1].values(), default='?')})"
        if set(sizes) == {"n"} and sizes["n"] in squares:
            where = f"the side of the square matrix {squares[sizes['n']]} this section gives"
        if sizes is swapped:
            where = "the query and key lengths named the other way round (the document's own naming of its inputs)"
        if not sizes:
            said, where, model = "no mask", "as before the section that applied the causal mask", "the causal mask"
        if cited is not None:
            where = f"the sizes of {cited.title()}, which the sentence names"
        for i in flagged:
            f = findings[i]
            if f.status in ("wrong", "inconsistent") and (f.line, f.latex, f.kind) in holds:
                findings[i] = replace(f, status="unchecked", expected=None, basis="", message=(
                    f"{'is not refuted' if special else 'holds'} with {said}, {where}; the document's model has "
                    f"{model}: about that configuration, not judged against the model"))


def _named_grid(doc: DocumentModel, p: Any) -> tuple[str, Any] | None:
    """A line of plain text that ends with ":" or "is" and names a matrix in a formula ("head₁ = A₁V₁ (3×3 times ...):",
    "Concat(head₁, head₂) ∈ ℝ^{3×4}:"), over a grid drawn on the lines below it: the formula that says the grid is
    that matrix (its first relation chain whose first side is a capital name), and the piece with the grid's lines."""
    from dataclasses import replace

    from .grids import drawn_below
    from .plain import formula_runs
    from .read import chains

    drawn = drawn_below(doc.memory.get("lines", []), p.line - 1)
    if not drawn:
        return None
    for run in formula_runs(p.text):
        for c in chains(run):
            upto = c.ops.index("in") if "in" in c.ops else len(c.ops)
            sides = c.sides[:upto + 1]
            if re.match(r"\s*(?:[A-Z]|\\mathrm\{(?:head|Concat|MultiHead|Attention)\})", sides[0]) and \
                    all(op == "eq" for op in c.ops[:upto]):
                # the grid is the value of the last side ("S₁ = Q₁K₁ᵀ": of Q₁K₁ᵀ, whatever S₁ names here)
                return f"{sides[-1]} = {drawn[0]}", replace(p, matrix_lines=tuple(j + 1 for j in drawn[1]))
    return None


def _own_sentence(sentences: str, piece: str) -> str:
    """The sentence of ``sentences`` (a line or paragraph) that holds the math ``piece``, or all of it."""
    from .prose import _sentences

    at = sentences.find(f"${piece}$")
    return next((s for k, s in _sentences(sentences) if k <= at < k + len(s)), sentences) if at >= 0 else sentences


#: the marker that opens a list item's line ("- ", "* ", "3. ", "2) ")
_LIST_MARKER = re.compile(r"^\s{0,3}(?:[-*+]|\d{1,3}[.)])\s+")


def _passing_example(doc: DocumentModel, item: str) -> DocumentModel | None:
    """A list item that states two or more sizes, at least two of them other than the example in force ("- Example:
    $h = 8$, $n = 128$, $d_{model} = 512$ gives scores of shape ..."), speaks of a configuration of its own: its
    statements are judged in a copy of the model with those sizes, and what it binds ends with its list (the document
    goes on with the example it was in) -- the items after it in the same list speak of it too.  The key/value heads
    a variant names do not count (:mod:`.grouped` reads them).  None for any other item."""
    sizes = _sentence_sizes(item) or _plain_sizes(item)
    model = scopes.model_sizes(doc)
    other = [k for k, v in sizes.items() if model.get(k) not in (None, v) and k not in ("g", "n_kv")]
    if len(sizes) < 2 or len(other) < 2:
        return None
    if {"h", "d_k"} <= sizes.keys() and "d_model" not in sizes and model.get("d_model") and not doc.own_width and \
            sizes["h"] * sizes["d_k"] != model["d_model"]:
        sizes.pop("d_k")  # the d_model it keeps fixes the head width (d_model / h): the item's d_k is judged by it
    listed = scopes.with_sizes(doc, sizes)
    listed.memory["width_kept"] = "d_k" not in sizes and "h" in sizes
    for name in sizes:  # bound here, by the item
        listed.bound_line[name], listed.bound_in[name] = doc.line, doc.paragraph
    return listed


def _section_squares(doc: DocumentModel) -> dict[int, str]:
    """The sides of the square matrices (2 x 2 or larger) the document gave names to in the current section, each
    with the name and line ("S (line 77)"): scores or weights of the section's own example, of n tokens."""
    out: dict[int, str] = {}
    for name, value in doc.definitions.items():
        rows, cols = getattr(value, "rows", 0), getattr(value, "cols", 0)
        if not isinstance(rows, int):  # a matrix of symbolic shape (S = K^T Q of n x n) has no side in numbers
            rows = int(rows) if getattr(rows, "is_Integer", False) else 0
        if rows == cols and rows >= 2 and doc.bound_in.get(name, (-1,))[0] >= doc.section_paragraph:
            out.setdefault(rows, f"{name} (line {doc.bound_line.get(name, '?')})")
    return out


def _arithmetic_holds(doc: DocumentModel, sides: Any) -> bool:
    """Every side is plain arithmetic on numbers equal to the last (``512/16 = 32``), or on sizes its own paragraph
    binds (``d_{model}/h = 64`` after ``d_{model} = 768``, ``h = 12`` there); one side is trivially so."""
    own = {k: v for k, v in doc.dims.items() if doc.bound_in.get(k, (None,))[0] == doc.paragraph[0]}
    try:
        values = [doc.read(x) for x in sides]
        values = [v.subs({s: own[name] for s in v.free_symbols if (name := dim_name(str(s))) in own})
                  if hasattr(v, "free_symbols") else v for v in values]
        return all(getattr(v, "is_number", False) and (v - values[-1]).doit() == 0 for v in values)  # 32^2 = 1024
    except (MHASymbolicError, ValueError, TypeError, RecursionError):
        return False


#: M used as a mask: added to the scores, indexed entry by entry, or multiplied entrywise
_MASK_USE = re.compile(r"\+\s*M(?![A-Za-z])|(?<![A-Za-z\\])M_\{?[ij]|\\odot\s*M(?![A-Za-z])|M\s*\\odot")
_ROLE = r"\b{0}(?:_\{{?[\w,]+\}}?)?\s*&?=\s*(?:\\mathbf\{{)?([A-Z])\}}?\s*(?:\\mathbf\{{)?W"
_NAMED = (r"(?<![\\A-Za-z^_])(?<![\^_]\{{)(?<!\\mathbb\{{)(?<!\\mathcal\{{)(?<!\\text\{{)(?<!\\mathrm\{{)({0})"
          r"(?![A-Za-z])")


def _cross_roles(text: str) -> str:
    r"""A cross-attention document (one section of it) that names its inputs otherwise (``Q_i = Y W_{Q,i}``,
    ``K_i = E W_{K,i}``: the queries from ``Y``, keys and values from ``E``) with the model's names: queries from
    ``X``, keys and values from ``Y``.  Only when both are single letters, distinct, and the model's letters are not
    used otherwise; same length, lines do not move.

    >>> _cross_roles(r"$Y \in R^{5 \times 4}$, $Q = Y W_Q$, $K = E W_K$, $V = E W_V$, $\mathbb{E}[x]$")
    '$X \\in R^{5 \\times 4}$, $Q = X W_Q$, $K = Y W_K$, $V = Y W_V$, $\\mathbb{E}[x]$'
    """
    q = re.search(_ROLE.format("Q"), text)
    k = re.search(_ROLE.format("K"), text)
    if not q or not k or q.group(1) == k.group(1) or (q.group(1), k.group(1)) == ("X", "Y") or \
            {q.group(1), k.group(1)} & set("TASPOIQKVW") or "M" in (q.group(1), k.group(1)) and _MASK_USE.search(text):
        return text  # T of ^T, the model's own step and weight letters; M, unless the projected input is all it names
    roles = {q.group(1): "X", k.group(1): "Y"}
    others = {"X", "Y"} - set(roles)
    if any(re.search(_NAMED.format(x), text) for x in others):
        return text  # the document uses X or Y for something else
    return re.sub(_NAMED.format("|".join(roles)), lambda m: roles[m.group(1)], text)


_VERDICTS = ("correct", "wrong", "inconsistent", "assumed")
#: a document whose tokens are columns: "one token per column", "tokens as column vectors", X in R^{d_model x n}


def _drawn(p: Any) -> bool:
    """Is this formula drawn as a result by the clause before it ("..., we get $d_k = 4$", "so $d_k = 2$")?"""
    from .prose import concluded

    at = (p.sentence or "").find(p.text)
    return at > 0 and concluded(p.sentence[:at].rstrip("$ "))


#: the input's space written in plain text, normalised: X \in \mathbb{R}^{d \times n}
_PLAIN_SPACE = re.compile(r"(?<![A-Za-z])X\s*\\in\s*\\mathbb\{R\}\^\{([^{}]+)\}")


def _declared_convention(pieces: list[Any]) -> dict[str, int]:
    r"""How the document stores its tokens, by how often it says so: the shape it declares for its input, a chain
    of a formula that starts at ``X`` and ends in a space ``\mathbb{R}^{a \times b}`` (``X \in \mathbb{R}^{d \times
    n}``): rows when ``a`` is the number of tokens and ``b`` the model width, columns the other way round; and each
    projection it writes, ``Q = W_Q X`` (columns) or ``Q = X W_Q`` (rows).  A document that mentions the other
    convention in passing ("in the row convention, $X \in \mathbb{R}^{n \times d}$") still has its own."""
    from .normalise import normalise
    from .read import chains

    found = {"rows": 0, "columns": 0}
    for p in pieces:
        if p.kind == "prose" and "X" in p.text and "$" not in p.text:  # "X ∈ R^{d × n}" written in plain text
            for m in _PLAIN_SPACE.finditer(normalise(p.text)):
                axes = [dim_name(a.strip()) for a in m.group(1).split("\\times")]
                if axes in (["n", "d_model"], ["d_model", "n"]):
                    found["rows" if axes[0] == "n" else "columns"] += 1
        if p.kind != "math" or "X" not in p.text:
            continue
        for c in chains(p.text):
            first = re.sub(r"\\mathbf\{(\w)\}|[{}\s]", r"\1", c.sides[0]) if c.sides else ""
            if len(c.sides) >= 2 and c.ops[0] == "eq" and re.fullmatch(r"[QKV](?:_\w+|\^\(?\w+\)?)?", first):
                product = re.sub(r"\s+", "", c.sides[1])  # Q = W_Q X, Q^{(h)} = W_Q^{(h)} X; Q = X W_Q
                found["columns"] += bool(re.fullmatch(r"W[^X]*X", product))
                found["rows"] += bool(re.fullmatch(r"XW.*", product))
            if len(c.sides) < 2 or c.ops[-1] != "in" or first != "X":
                continue
            space = re.fullmatch(r"\s*\\mathbb\{R\}\^\{(.+)\}\s*", c.sides[-1])
            axes = [dim_name(a.strip()) for a in space.group(1).split("\\times")] if space else []
            if axes in (["n", "d_model"], ["d_model", "n"]):
                found["rows" if axes[0] == "n" else "columns"] += 1
    return found


def _section_conventions(pieces: list[Any]) -> dict[int, tuple[str, str | None]]:
    r"""The convention in force in each section that declares one other than the document's, by the index of the
    section's heading: a section (with its sub-sections) whose own declarations (:func:`_declared_convention`) are
    all of one convention has that convention, and its sub-sections keep it; the query axis of its own formulas
    comes with it.  A document in the row convention with a section on the column convention is two models."""
    heads = [i for i, p in enumerate(pieces) if p.kind == "heading"]
    own: dict[int, tuple[str, str | None] | None] = {}
    for i in heads:
        end = next((j for j in heads if j > i and pieces[j].level <= pieces[i].level), len(pieces))
        found = _declared_convention(pieces[i + 1:end])
        if bool(found["rows"]) != bool(found["columns"]):
            own[i] = ("rows" if found["rows"] else "columns", _query_axis(pieces[i + 1:end]))
    out: dict[int, tuple[str, str | None]] = {}
    stack: list[tuple[int, tuple[str, str | None] | None]] = []
    for i in heads:
        while stack and stack[-1][0] >= pieces[i].level:
            stack.pop()
        stack.append((pieces[i].level, own.get(i)))
        inner = next((c for _, c in reversed(stack) if c is not None), None)
        if inner is not None:
            out[i] = inner
    return out


def _unicode_math(source: str, pieces: list[Any]) -> str:
    """The document with each formula that a line of prose writes without delimiters (Unicode or ASCII: ``Mᵢ =
    Wᵢ^Q (Wᵢ^K)ᵀ``, ``rank(Sᵢ) ≤ min(n, dₖ) = 64``) put in ``$...$`` (:func:`.plain.as_math`): one reading of
    formulas, whatever their notation.  Only whole lines the extractor read as prose, and not a line that ends
    by announcing what the lines below draw ("S = QKᵀ/√2 =", "... is:")."""
    from .plain import as_math

    lines = source.split("\n")
    for p in pieces:
        if p.kind != "prose" or not 0 < p.line <= len(lines) or p.text.strip() != lines[p.line - 1].strip() or \
                re.search(r"(?:=|:|\bis)\s*$", p.text):
            continue
        written = as_math(lines[p.line - 1])
        if written is not None:
            lines[p.line - 1] = written
    return "\n".join(lines)


def _spelled_apart(pieces: list[Any], paragraphs: dict[int, tuple[int, int]]) -> dict[tuple[Any, int, str], str]:
    r"""Spellings that :func:`.model.dim_name` reads as one size (``d_k`` and ``d_h``, ``d`` and ``d_{model}``) which
    the document sets to different values in one paragraph (or cell): two sizes of its own ("a single head of width
    $d_k = 4$ ... two heads of width $d_h = 2$").  Each piece (cell, line) where a spelling after the first is set
    there, with the size it would be read as: a chain that it opens is judged by its own arithmetic and binds
    nothing."""
    from .read import chains

    seen: dict[tuple[Any, int, str], dict[str, int]] = {}  # (cell, paragraph, size) -> spelling -> value
    apart: dict[tuple[Any, int, str], str] = {}
    for p in pieces:
        if p.kind != "math":
            continue
        for c in chains(p.text):
            size = dim_name(c.sides[0]) if len(c.sides) >= 2 and set(c.ops) == {"eq"} else None
            if size is None or not c.sides[-1].strip().isdigit():
                continue
            values = seen.setdefault((p.cell, paragraphs.get(p.line, (0, 0))[0], size), {})
            name, value = spelling(c.sides[0]), int(c.sides[-1])
            if name not in values and any(v != value for v in values.values()):
                apart[(p.cell, p.line, name)] = size
            values.setdefault(name, value)
    return apart


def _states_width_relation(pieces: list[Any]) -> bool:
    """Does the document write its head width as d_model / h (``d_k = d_{model}/h``, ``d_k = \frac{d}{h}``,
    ``d_k = d_model // h`` in code)?  Then a d_k it states is judged by that relation; otherwise a d_k it sets is a
    size of its own (a single head projecting 3 dimensions to 2)."""
    from .read import chains

    for p in pieces:
        if p.kind == "math":
            pairs = [(a, b) for c in chains(p.text) for a in c.sides for b in c.sides if a is not b]
        elif p.kind == "code" and p.name and "=" in p.text:
            pairs = [(p.name, p.text.split("=", 1)[1])]
        elif p.kind == "prose" and "=" in p.text:  # a chain written in plain text: "dₖ = d_v = d_model / h = 64"
            from .read import normalise

            pairs = [((a.split() or [a])[-1], b) for c in chains(normalise(p.text)) for a in c.sides for b in c.sides
                     if a is not b]  # ("each head is d_{k} = d_{model} / h": the words before the name are not it)
        else:
            continue
        if any(_width_relation(a, b) for a, b in pairs):
            return True
    return False


def _width_relation(a: str, b: str) -> bool:
    """Is ``a = b`` the head width written as d_model / h (``d_k = d_{model}/h``, ``d_k = \frac{d}{h}``)?"""
    names = {dim_name(t) for t in re.findall(r"[A-Za-z]+(?:_\{[^{}]*\}|_\\(?:text|mathrm)\{\w+\}|_\w+)?", b)}
    return dim_name(a.strip()) in ("d_k", "d_v") and {"d_model", "h"} <= names and ("/" in b or "frac" in b)


#: the capital H itself names the number of heads (case matters: "$h = 12$ heads" does not make H the count)
_H_IS_HEADS = re.compile(r"\$\s*H\s*=\s*\d+\s*\$[^.$]{0,40}?\b(?i:heads?)\b"
                         r"|\b(?i:number\s+of\s+(?:attention\s+|query\s+)?heads)\b[^.$]{0,20}\$\s*H\s*(?:=\s*\d+\s*)?\$"
                         r"|\$\s*H\s*\$\s*(?i:(?:attention\s+|query\s+)?heads)\b")


def _head_count_letter(text: str) -> str:
    """A document that names the number of heads ``H`` ("$H = 8$ query heads", "the number of heads $H$") with
    ``H`` read as ``h`` wherever it stands alone (``\\frac{d}{H}``, ``H d_k``); ``H_i`` and ``H^{(1)}`` stay
    matrices.  Same length: lines and columns do not move.

    >>> _head_count_letter(r"$H = 8$ heads, $d_k = d / H$, $H_1 = A_1 V_1$")
    '$h = 8$ heads, $d_k = d / h$, $H_1 = A_1 V_1$'
    >>> _head_count_letter(r"$H = A V$ is the output")
    '$H = A V$ is the output'
    """
    if not _H_IS_HEADS.search(text):
        return text
    return re.sub(r"(?<![\\A-Za-z])H(?![A-Za-z_^({'])", "h", text)


def _progress(pieces: list[Any], name: str) -> Any:
    """A progress bar over the pieces on standard error (tqdm), for long documents."""
    from tqdm import tqdm

    return tqdm(pieces, desc=name, unit="piece", leave=False, file=sys.stderr, mininterval=0.5)


def _piece(doc: DocumentModel, p: Any, index: int, groups: dict[int, list[Any]], emit: Any, row_emit: Any
           ) -> None:
    from .read import chains, components
    from .tables import judge_table

    if p.kind == "heading" or p.kind == "prose" and _BOLD_HEAD.fullmatch(p.text):
        doc.section_sizes = _section_sizes(doc, p.text)
        _part_label(doc, p)
        if p.kind == "heading":  # (a bold line is prose too: its sentence reader binds what it states)
            _heading_configuration(doc, p, emit)
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
        from .plain import holds_if_rounded, numeric_function

        broken = _broken_rows(p)
        if broken.get(0):  # judging a formula with a brace missing would guess at what it means
            emit(p.line, p.text, "unchecked", f"malformed LaTeX: {broken[0]}; the formula was not read", kind="formula")
            return
        for row, why in broken.items():  # a broken row of an aligned block; its other rows are judged
            emit(p.rows[row - 1][0], p.rows[row - 1][1], "unchecked", f"malformed LaTeX: {why}; the row was not read",
                 kind="formula")
        if (doc.columns or doc.rows) and p.sentence and "X" in p.sentence:
            from types import SimpleNamespace

            said = _declared_convention([SimpleNamespace(kind="math", text=t) for t in re.findall(r"\$([^$]+)\$",
                                                                                                  p.sentence)])
            elsewhere = "rows" if doc.columns else "columns"
            if said[elsewhere] > said["rows" if elsewhere == "columns" else "columns"]:
                emit(p.line, p.text, "unchecked", f"the sentence speaks of the other convention (tokens as "
                     f"{elsewhere}), not the document's own", kind="formula")
                return
        here, scoped = _scoped(doc, p)
        # "So $p \approx (0, 1)$": a result about the same p, compared ("$s = ...$ gives $p \approx ...$" is another
        # example's: the clause gives new values before it)
        doc.drawn = here.drawn = _drawn(p) and "$" not in (p.sentence or "")[:max(0, (p.sentence or "").find(
            p.text))].rstrip().rstrip("$")
        if re.search(r"\\(?:text|mathrm|textrm|operatorname)\{[^{}]*(?:cache|param)", p.text, re.I) and \
                grouped_prose(here, p, emit):
            return  # \text{KV cache per token} = 2 g d_k = 256: the engine's count, not arithmetic alone
        statuses: list[str] = []  # what each finding of this piece said, in order
        said, quoted = emit, _disowned(p)

        def emit(*args: Any, **kwargs: Any) -> None:
            if quoted and args[2] in ("wrong", "inconsistent"):  # "the most common mistake was writing $...$"
                message = args[3] if len(args) > 3 else kwargs.pop("message", "")
                args = (*args[:2], "unchecked", f"the document quotes it as a mistake, not as a claim ({message})",
                        *args[4:])
            statuses.append(args[2])
            said(*args, **kwargs)

        tuple_at: tuple[Any, int] = (None, 0)  # the tuple being read, and where its findings start
        for whole, c in ((chain, part) for chain in chains(p.text) for part in components(chain)):
            if c.row in broken:
                continue
            if c is not whole and re.fullmatch(r"\s*[A-Za-z]\s*", c.sides[0]) and dim_name(c.sides[0]) is None:
                continue  # B = 2 of (B, h, n) = (2, 3, 5): a name that is no size of the model
            if c is not whole and tuple_at[0] is not whole:
                tuple_at = (whole, len(statuses))
            elif c is not whole and {"wrong", "inconsistent"} & set(statuses[tuple_at[1]:]):
                continue  # (B, h, n) = (1, 3, 2) with h = 3 refuted: one statement, one finding; n binds nothing
            alias = _alias(c)
            if alias is not None:
                doc.aliases = {name: alias for name in c.sides[:-1]}
                note = _identity_projections(doc, alias, list(c.sides[:-1]))
                emit(p.line + c.row, c.text, "given", f"{', '.join(c.sides[:-1])} stand for {alias} in this section"
                     + note, kind="formula")
                continue
            equal = _equal_steps(doc, c)
            if equal is not None:  # Q_1 = K_1 = V_1 with weights never given: the document's choice of weights
                emit(p.line + c.row, c.text, "given", f"{' = '.join(equal)}: equal for the weights this document "
                     "chose, which it does not give; not judged", kind="formula")
                if "in" in c.ops:
                    got = judge(here, list(c.sides[c.ops.index("in"):]), list(c.ops[c.ops.index("in"):]), c.text)
                    if got is not None:
                        emit(p.line + c.row, c.text, got[1][0], got[1][1], got[1][2], got[0], got[1][3])
                continue
            if scoped and _is_binding(c, scoped):
                emit(p.line + c.row, c.text, "given", "a condition of this sentence only "
                     f"({', '.join(f'{k} = {v}' for k, v in scoped.items())})", kind="setting")
                continue
            outside = _own_size(doc, c) if here is not doc else None
            if outside is not None:  # "Say we had d_k = 256 ... than with $d_k = 64$": the document's own example
                emit(p.line + c.row, c.text, "given", f"{outside}: the document's own value, outside the example "
                     f"this paragraph takes ({', '.join(f'{k} = {v}' for k, v in scoped.items())})", kind="setting")
                continue
            sized = re.search(r"[A-Za-z]", re.sub(r"\\[A-Za-z]+", "", c.text))  # a size in it, not 1024 > 2048
            relation = set(c.ops) <= {"lt", "le", "gt", "ge"} or set(c.ops) <= {"eq", "ne"} and not any(
                re.fullmatch(r"\s*[\d.]+\s*", x) for x in c.sides)  # "when $N = d_k$": two sizes, no number
            if c.ops and relation and sized and c is whole and _regime(p):
                emit(p.line + c.row, c.text, "given", "a condition (when it holds), not a claim that it does",
                     kind="setting")  # "the quadratic term overtakes the linear one when $n > 2d$"
                continue
            if c.ops and relation and _sizes_only(c) and _chosen(p):  # "propose setting d_k to n, $d_k = n$", "a
                emit(p.line + c.row, c.text, "given", "a choice the sentence makes or proposes (a relation of "
                     "sizes without a value), not a claim about the example", kind="setting")  # head with $d_k \ge n$
                continue  # is needed"
            case = r"\b(?:for|take|with)\s+(?:a|an|another|any|some)\s+(?:[\w-]+\s+)?\$\s*"
            if len(c.sides) == 2 and c.sides[0].strip() in doc.definitions and re.search(
                    case + re.escape(p.text.strip()), p.sentence or "", re.I):  # "for a saturated $p \approx (0, 1)$"
                emit(p.line + c.row, c.text, "given", f"another case: {c.sides[0].strip()} here is not the value given "
                     "earlier", kind="formula")
                continue
            kv_named = any(dim_name(x) == "g" for x in re.findall(r"[A-Za-z](?:_\{?[\w{}]+\}?)?", c.text))
            if kv_named and re.search(r"\b(?:for|in|with|under)\s+(?:MHA|MQA|multi-head|multi-query)\b[^$]*\$\s*"
                                      + re.escape(p.text.strip()), p.sentence or "", re.I):
                emit(p.line + c.row, c.text, "given", "a statement about the variant the sentence names, with its "
                     "own key/value heads", kind="setting")  # "For MHA $H_{kv} d_h = d_{model}$"
                continue
            counted = _counted(doc, p, c)
            if counted is not None:  # "$L = 80$ layers", "$n_q = 64$ query heads": what the number counts
                emit(p.line + c.row, c.text, "given", counted, kind="setting")
                continue
            apart = doc.memory["apart"].get((p.cell, p.line, spelling(c.sides[0]))) if set(c.ops) == {"eq"} else None
            if apart is not None:  # "two heads of width $d_h = d_{model}/h = 2$" beside "$d_k = 4$": its own size
                got = judge(here, list(c.sides[1:]), list(c.ops[1:]), c.text) if len(c.sides) > 2 else None
                status, message, expected, basis = got[1] if got is not None else ("given", "", None, "")
                emit(p.line + c.row, c.text, status, f"{c.sides[0].strip()} is a size of the document's own, apart "
                     f"from its {apart} (the paragraph gives both, with other values); binds nothing"
                     + (f": {message}" if message else ""), expected, "setting", basis)
                continue
            label = _variant_label(doc, p, c)
            if label is not None:  # MQA ($g = 1$), MHA ($g = H$): what g is in that variant, not this model's g
                emit(p.line + c.row, c.text, label[0], label[1], kind="setting", basis="computed")
                continue
            subject = re.fullmatch(r"[A-Za-z](?:_\{?[^=]*?\}?)?(?:\^\{?\w+\}?)?", c.sides[0].strip())
            if c.ops and c.ops[0] == "eq" and subject:
                doc.last_subject = c.sides[0].strip()
            size = dim_name(c.sides[0]) if len(c.sides) >= 2 and set(c.ops) == {"eq"} else None
            cases = sorted({v for name, v in _written_bindings(p.clause or "")
                            if re.sub(r"[{}\s]", "", name) == re.sub(r"[{}\s]", "", c.sides[0])})  # as written
            # (L is not n; n_heads is n_{heads})
            if size is not None and len(c.sides) == 2 and c.sides[-1].strip().isdigit() and len(cases) > 1 and \
                    not _drawn(p):  # (values drawn as results, "so $d_k = 4$ and $d_k = 5$", are judged)
                emit(p.line + c.row, c.text, "given", f"one of the values the sentence gives {size} "
                     f"({', '.join(map(str, cases))}): cases it compares, not a setting", kind="setting")
                continue  # "going from $n = 512$ to $n = 8192$", "for $h = 1$ and $h = 8$"
            if size is not None and here is doc and c.sides[-1].strip().isdigit() and \
                    scopes.model_sizes(doc).get(size) == int(c.sides[-1]):
                was, derived = doc.bound_line.get(size), size not in doc.dims
                doc.bind_dim(size, int(c.sides[-1]))  # restated with its value: this paragraph binds it too
                if len(c.sides) == 2 and not derived:  # nothing computed: a restated setting is given
                    emit(p.line + c.row, c.text, "given", f"restates {size} = {c.sides[-1].strip()}"
                         + (f" (line {was})" if was else ""), kind="setting")
                    continue
            if size is not None and len(c.sides) == 2 and c.sides[-1].strip().isdigit() and \
                    doc.known_dims().get(size) not in (None, int(c.sides[-1])) and \
                    doc.earlier(size, int(c.sides[-1])) is not None:
                back = doc.return_to(_sentence_sizes(p.sentence or p.text))
                if back is not None:  # "(B, h, n, d_k) = (2, 3, 5, 4)" after a small example in another section
                    emit(p.line + c.row, c.text, "given", f"returns to the example of line {back}, whose sizes the "
                         "sentence restates", kind="setting")
                    continue
                emit(p.line + c.row, c.text, "given", f"refers to the earlier example where {size} = "
                     f"{c.sides[-1].strip()} (line {doc.earlier(size, int(c.sides[-1]))})", kind="setting")
                continue
            names = [dim_name(x) for x in c.sides[:-1]] if size is not None else []
            # d_k = d_v = 2: the document's own; or its example's, when the sentence gives it with its d_model
            sentence = _own_sentence(p.sentence or p.text, p.text)
            given_width = bool(names) and set(names) <= {"d_k", "d_v"} and "d_model" in _sentence_sizes(sentence) \
                and not any(_width_relation(a, b) for tex in re.findall(r"\$([^$]+)\$", sentence)
                            for c in chains(tex) for a in c.sides for b in c.sides if a is not b)
            own = (doc.own_width or given_width) and any(name in ("d_k", "d_v") for name in names) and \
                not any(name in doc.dims for name in names) and not _drawn(p)
            if names and all(names) and c.sides[-1].strip().isdigit() and here is doc and \
                    (own or len(names) > 1 and any(doc.new_example(str(name), int(c.sides[-1])) for name in names)):
                # d = d_k = d_v = 2 after d = 512: each of the sizes named is set, in another example
                for name in names:
                    doc.bind_dim(str(name), int(c.sides[-1]))
                doc.width_given = doc.width_given or given_width and not doc.own_width
                emit(p.line + c.row, c.text, "given", f"sets {', '.join(map(str, names))} = {c.sides[-1].strip()}"
                     + (" (the document's own head width: it never writes d_k = d_model / h)" if own and
                        doc.own_width else " (this example's own head width: its sentence gives it with d_model)"
                        if own else
                        " in another example (the earlier sizes and values, bound in another paragraph, no longer "
                        "apply)"), kind="setting")
                continue
            lead = [str(x) for x in itertools.takewhile(lambda x: x is not None, map(dim_name, c.sides[:-1]))] \
                if size else []  # d_k = d_v = 768/12 = 64: the sizes the chain sets
            if lead and re.fullmatch(r"\s*\d+\s*", c.sides[-1]) and here is doc and \
                    _arithmetic_holds(doc, c.sides[len(lead):]) and \
                    any([doc.new_example(name, int(c.sides[-1]), len(c.sides) > len(lead) + 1) for name in lead]):
                # d_k = 512/16 = 32 (or d_k = d_v = 768/12 = 64) in a paragraph of its own, after d_k = 64 elsewhere:
                # another configuration
                computed = len(c.sides) > len(lead) + 1
                emit(p.line + c.row, c.text, "correct" if computed else "given",
                     f"another example: sets {', '.join(lead)} = {c.sides[-1].strip()} (the earlier sizes and values, "
                     "bound in another paragraph, no longer apply)", kind="setting",
                     basis="computed" if computed else "")
                for name in lead:
                    doc.bind_dim(name, int(c.sides[-1]))
                continue
            before = scopes.with_sizes(here, {}) if len(set(c.side_rows)) > 1 else None
            try:
                got = judge_indexed(here, list(c.sides), list(c.ops), c.text) or \
                    judge(here, list(c.sides), list(c.ops), c.text)
            except SizeLimitError as e:  # one statement too large to evaluate costs that statement, not its rows'
                emit(p.line + c.row, c.text, "unchecked", f"not evaluated: {str(e).splitlines()[0][:160]}")
                continue
            if got is not None and got[1][0] == "wrong" and numeric_function(c.text) and \
                    holds_if_rounded(here, list(c.sides), list(c.ops)):  # e^{3.536} ≈ 34.31: 3.536 is 5/√2 rounded
                got = (got[0], ("unchecked", f"{c.text}: holds if its decimals are rounded values (computed on with "
                                "more places)", None, ""))
            if got is not None:
                kind, (status, message, expected, basis) = got
                row = c.row if before is None or status not in ("wrong", "inconsistent") else \
                    _failing_row(before, c)
                emit(p.line + row, c.text, status, message, expected, kind, basis)
                if status == "correct":  # a chain over continuation rows (&= 768 / 12 \\ &= 64): each row held
                    for other in sorted(set(c.side_rows) - {row}):
                        emit(p.line + other, c.text, status, message, expected, kind, basis)
    elif p.kind == "program":
        _traced(doc, p, row_emit)
        _said_before(doc, row_emit)
    elif p.kind == "transcript":
        from dataclasses import replace

        from .octave import transcript
        from .tracing import Tracer

        for f in transcript(doc.memory.setdefault("octave", Tracer()), p.text):
            row_emit(replace(p, line=p.line + f.line - 1, text=f.text), f.status, f.message, f.expected, f.kind,
                     "traced")
        _said_before(doc, row_emit)
    elif p.kind in ("code", "output") and p.name:
        if not grouped_code(doc, p, emit):
            code_statement(doc, p, emit)
    elif p.kind == "table" and index in groups:
        judge_table(doc, groups[index], row_emit)
    elif p.kind == "prose" and _by_own_formula(doc, p, emit):
        pass  # "| 4K tokens | 5 GB |" under a calculator's formula: that formula's amount for the line's tokens
    elif p.kind == "prose":
        from .plain import (
            GREEK_PARAMETER,
            formula_line,
            formula_runs,
            holds_if_rounded,
            judge_code_prose,
            judge_traced_shapes,
            numeric_function,
            shape_chain,
        )
        from .shapes import SPACE
        from .tracing import shape_products

        doc.return_to(_sentence_sizes(p.text) or _plain_sizes(p.text))  # it restates an earlier example's sizes: it
        # speaks of that one again
        here, scoped = _scoped(doc, p)
        line = formula_line(p.text)
        if line is not None and re.search(r"(?:=|\\approx)\s*$", line) and p.cell is None:
            from dataclasses import replace

            from .grids import drawn_below  # "S = QKᵀ/√2 =" over a grid of numbers drawn on the lines below it

            drawn = drawn_below(doc.memory.get("lines", []), p.line - 1)
            if drawn:  # the verdict goes to the rows: every row when it holds, the row that differs when not
                line, p = f"{line} {drawn[0]}", replace(p, matrix_lines=tuple(j + 1 for j in drawn[1]))
        elif p.cell is None and re.search(r"(?::|\bis)\s*$", p.text) and ("=" in p.text or "∈" in p.text):
            grid = _named_grid(doc, p)  # "head₁ = A₁V₁ (3×3 times 3×2 = 3×2):" over a grid of numbers
            if grid is not None:
                line, p = grid
        calls = softmax_calls(p.text)  # softmax([2, 1, 1]) -> [0.576, 0.212, 0.212]: from its own numbers
        for status, message, expected in calls:
            emit(p.line, p.text, status, message, expected, "number", "computed")
        for status, message, expected in shape_products(p.text):  # (2, 8, 10, 64) @ (2, 8, 64, 10) = (2, 8, 10, 10)
            emit(p.line, p.text, status, message, expected, "shape", "proven")
        if line is None:  # "128 KB × 131,072 = 16.7 GB": arithmetic written in the prose, from its own numbers
            for status, message, expected, basis in judge_prose_amounts(p.text):
                emit(p.line, p.text, status, message, expected, "number", basis)
        # an axis of the softmax, a rank in words
        for status, message, expected, kind, basis in judge_prose_claims(here, p.text, p.clause) + \
                judge_weight_rows(here, p.text, p.clause) + judge_softmax_of_row(here, p.text) + \
                judge_named_rows(here, p.text):  # ... and a row of the
            # weights ("row 2: (0.1, 0.9)"), a row of a matrix named in math ("row 1 of $S'$: [2, 1]")
            emit(p.line, p.text, status, message, expected, kind, basis)
        if calls:
            pass
        elif grouped_prose(here, p, emit) or mask_prose(here, p, emit) or flops_prose(here, p, emit):
            pass  # the grouping, the KV cache or the parameters of grouped-query attention; masked weights
        elif line is not None:  # a formula in plain text: judged like math
            from .grids import plain_formulas
            from .plain import _aside

            parts = plain_formulas(p.text) if _WIDE_GAP.search(p.text) else []  # side by side: W_Q = [..]   W_K = [..]
            parts = parts or [run for run, _ in _aside(line.rstrip(" :"), "")]  # and a formula in brackets after one
            for c in (c for part in parts for c in chains(part)):
                got = judge(here, list(c.sides), list(c.ops), c.text)
                if got is not None:
                    for at in (p.line, *p.matrix_lines) if got[1][0] == "correct" and got[0] == "number" else (p.line,):
                        emit(at, p.text, got[1][0], got[1][1], got[1][2], got[0], got[1][3], p=p)
        elif not judge_code_prose(here, p, emit):
            judge_traced_shapes(here, p, emit)  # "`Q1` and `K1` are 3×2": names of the traced code
            for run in formula_runs(p.text):  # "so det(QKᵀ) = 0 and rank(QKᵀ) = 2": formulas inside the sentence,
                bare = re.sub(r"\\[A-Za-z]+|\^\s*\{?\s*(?:T|\\top)\s*\}?", " ", run)  # QK^T: the matrices Q and K
                matrices = set(re.findall(r"[A-Z](?:_\{?\w+\}?)?", bare))
                local = "bmatrix" in run or shape_chain(run) or numeric_function(run)  # from its own numbers
                given_names = set(here.definitions)
                upper = {x.replace("{", "").replace("}", "") for x in matrices}
                lower = {x.replace("{", "").replace("}", "") for x in _LOWER_NAME.findall(bare)} & given_names
                given = local or bool(upper | lower) and upper <= given_names  # or from what the document gave
                for c in chains(run):  # judged on a copy: what a sentence defines or binds is the grammar's to read
                    greek = bool(GREEK_PARAMETER.fullmatch(c.sides[0]))  # σ² = 0.5: a parameter, never a size
                    if len(c.sides) == 2 and re.fullmatch(r"\s*[A-Za-z][\w{}\\]*\s*", c.sides[0]) and \
                            re.fullmatch(r"\s*[\d.,]+\s*", c.sides[1]) and not greek:
                        continue  # "L=24, T=2048, B=8": settings, the grammar's
                    gives = c.ops[0] == "eq" and set(c.ops) <= {"eq", "approx"} and bool(
                        _MATRIX_NAME.fullmatch(c.sides[0])) and (numeric_matrix(c.sides[-1]) is not None or bool(
                            _IDENTITY.fullmatch(c.sides[-1]))) and \
                        not re.search(rf"\b(?:of|de|von|di|du|da|del|der)\s+{re.escape(c.sides[0].strip()[0])}"
                                      r"[\w{}()⁽⁾]*\s*(?:=|≈)", p.text)  # "Row 1 of P2 = ...": of a part of P2
                    if len(c.sides) == 2 and list(c.ops) == ["eq"] and (greek and re.fullmatch(
                            r"\s*[\d.]+\s*", c.sides[1]) or VECTOR_NAME.fullmatch(c.sides[0]) and
                            "," in c.sides[1] and literal_value(c.sides[1])) or gives:
                        got = judge(here, list(c.sides), list(c.ops), c.text)  # "the scores are s = (2, 1, 0)", "take
                        if got is not None:  # Q = [1 0; 0 1]": the sentence names numbers in its scope, as math does
                            emit(p.line, c.text, got[1][0], got[1][1], got[1][2], got[0], got[1][3])
                        key = "".join(c.sides[0].replace("{", "").replace("}", "").split())
                        if gives and len(c.sides) > 2 and numeric_matrix(c.sides[-1]) is not None and \
                                (got is None or got[1][0] not in ("wrong", "inconsistent")) and \
                                not getattr(here.definitions.get(key), "is_Matrix", False):
                            # "so S = QKᵀ = [1 3; 1 4]": what the sentence's later words say of S is said of these
                            here.definitions[key] = numeric_matrix(c.sides[-1])
                            here.bound_in[key], here.bound_line[key] = here.paragraph, p.line
                            here.formulas.pop(key, None)
                        continue
                    sides, ops, text = list(c.sides), list(c.ops), c.text
                    space = list(ops) == ["in"] and bool(SPACE.fullmatch(sides[1]))  # "Q ∈ ℝ^{dₖ×n}": a shape,
                    moment = bool(re.match(r"\s*\\mathrm\{(?:Var|Cov)\}\s*\(", sides[0]))  # "Var(q·k) = 64 × 0.25 = 16"
                    if not given and not space and not moment:  # by the shape rules of the scope's model, a moment
                        # by the statistics of its sizes; else only the links of written numbers: what the sentence
                        # computes from its own,
                        span = numbers_run(sides, ops)  # shown as what was computed (never the claim around it)
                        if span is None:
                            continue
                        sides, ops = sides[span[0]:span[1]], ops[span[0]:span[1] - 1]
                        text = sides[0].strip() + "".join(f" {_RELATIONS[op]} {x.strip()}" for op, x in zip(
                            ops, sides[1:], strict=True))
                    stated = _sentence_sizes(p.text) or _plain_sizes(p.text) if moment else {}  # "with d_k = 128
                    try:  # gives Var(q·k) = 32": a moment in the sizes its own sentence states
                        got = judge(scopes.with_sizes(here, stated), sides, ops, text)
                    except (MHASymbolicError, ValueError, TypeError, AttributeError, RecursionError):
                        continue  # a formula of a sentence the reader cannot follow: the sentence's other readers
                    if got is not None and got[1][0] == "wrong" and numeric_function(run) and \
                            holds_if_rounded(here, sides, ops):
                        got = (got[0], ("unchecked", f"{text}: holds if its decimals are rounded values (computed "
                                        "on with more places)", None, ""))
                    if got is not None and got[1][0] != "assumed" and not (space and (got[1][0] == "unchecked" or
                                                                              re.search(r"\d", sides[1]))):
                        # (a value the document never gave: not here; a shape not decided, or one in numbers, which
                        # may be another configuration's: the grammar's to say)
                        emit(p.line, text, got[1][0], got[1][1], got[1][2], got[0], got[1][3])
            prose_statement(here, p, emit, scoped)
    elif p.kind == "unclosed":
        emit(p.line, p.text, "unchecked", "a $$ that is never closed: the math after it was not read")


def _said_before(doc: DocumentModel, row_emit: Any) -> None:
    """The shapes prose gave names of the code just traced before that code defined them (one attempt each)."""
    from .plain import judge_traced_shapes

    for q in doc.memory.pop("pending_shapes", []):
        judge_traced_shapes(doc, q, row_emit, pending=True)


def _by_own_formula(doc: DocumentModel, p: Any, emit: Any) -> bool:
    """Judge a row or an item by the document's own KV-cache formula (:mod:`.own_formula`); True when it was
    such a line."""
    formula, lines = doc.memory.get("own_formula"), doc.memory.get("lines", [])
    if formula is None or not 0 < p.line <= len(lines) or p.cell is not None:
        return False
    got = judge_line(formula, lines[p.line - 1], lines[:p.line - 1], model_values(doc))
    if got is None:
        return False
    emit(p.line, p.text, got[0], got[1], got[2], "number", got[3])
    return True


def _traced(doc: DocumentModel, p: Any, row_emit: Any) -> None:
    """A block of code traced with the blocks before it (:mod:`.tracing`): its shape comments, the values printed
    in its comments, and its printed output, each judged on its own line."""
    from dataclasses import replace

    from .tracing import Tracer

    tracer = doc.memory.setdefault("tracer", Tracer())
    printed, listing = p.value if p.value else (None, None)
    for f in tracer.run(p.text, printed):
        if not f.output:
            where = replace(p, line=p.line + f.line - 1, text=f.text)
        elif listing is None:
            where = replace(p, line=f.line, text=f.text, output=True)
        else:
            where = replace(p, line=listing + f.line - 1, text=f.text)
        row_emit(where, f.status, f.message, f.expected, f.kind, "traced")
        if f.output and (f.line in tracer.confirmed or f.status in ("correct", "wrong", "inconsistent")):
            # a printed value the code's trace confirmed or contradicted: judged here once, by the trace alone
            doc.memory.setdefault("printouts", set()).add((where.cell, where.output, where.line))


def _failing_row(before: DocumentModel, c: Any) -> int:
    """The row of an aligned chain (``P &= ... \\\\ &= ... \\\\ &= 4{,}196{,}352``) where it first fails: the
    chain is judged again on a copy of the document's model, one side more at a time, and the verdict is placed
    on the row of the side that broke it (the row a reader must correct), not on the chain's first row."""
    for k in range(2, len(c.sides) + 1):
        try:
            got = judge(scopes.with_sizes(before, {}), list(c.sides[:k]), list(c.ops[:k - 1]), c.text)
        except (MHASymbolicError, ValueError, TypeError, ZeroDivisionError, AttributeError, IndexError, KeyError):
            break
        if got is not None and got[1][0] in ("wrong", "inconsistent"):
            culprit = k - 1  # the side that broke the chain; unless the chain holds without the side before it (a
            if k >= 3:  # row that differs from both its neighbours, which agree: that row is the one to correct)
                try:
                    without = judge(scopes.with_sizes(before, {}), list(c.sides[:k - 2]) + [c.sides[k - 1]],
                                    list(c.ops[:k - 3]) + [c.ops[k - 2]], c.text)
                except (MHASymbolicError, ValueError, TypeError, ZeroDivisionError, AttributeError, IndexError,
                        KeyError):
                    without = None
                if without is not None and without[1][0] == "correct":
                    culprit = k - 2
            return c.side_rows[culprit] if len(c.side_rows) > culprit else c.row
    return c.row






def _derived_elsewhere(doc: DocumentModel, own: dict[Any, int]) -> bool:
    """Is one of these sizes a head width the model derives (d_model / h) from sizes bound outside the paragraph
    being read, with another value here ("... three keys with $d_k = 4$" after a section on d_model = 2048,
    h = 16)?  Then a condition word before it makes it the condition of its clause: nothing in the paragraph
    derives the model's value, so nothing here contradicts it."""
    known, stated = scopes.model_sizes(doc), doc.known_dims()
    return any(k in ("d_k", "d_v") and k not in stated and known.get(k) not in (None, v)
               and all(doc.scope_of(s)[0] != doc.paragraph[0] for s in ("d_model", "h"))
               for k, v in own.items())


def _restated_here(doc: DocumentModel, own: dict[Any, int]) -> bool:
    """Does the paragraph being read already bind one of these sizes to another value?"""
    known = doc.known_dims()
    return any(known.get(k or "") not in (None, v) and doc.scope_of(k or "")[0] == doc.paragraph[0]
               for k, v in own.items())


def _counted(doc: DocumentModel, p: Any, c: Any) -> str | None:
    """``$L = 80$ layers`` or ``$n_q = 64$ query heads``: a number the words after it say counts layers or heads,
    not the size its letter usually names (L and n_q are a sequence length elsewhere); the heads are bound as
    ``h`` or ``g``.  None when the words say nothing of the kind."""
    if len(c.sides) != 2 or c.ops != ("eq",) or not c.sides[1].strip().isdigit() or \
            not re.fullmatch(r"\s*[A-Za-z](?:_\{?\w+\}?)?\s*", c.sides[0]):  # a name: 16 / 2 = 8 heads is a ratio
        return None
    if c.sides[0].strip() == doc.memory.get("layer_name"):  # "Multiplying by $L = 24$" after "$L = 24$ layers"
        layers = doc.memory.get("layers")
        return (f"the number of layers ({c.sides[1].strip()}" + ("" if layers == int(c.sides[1]) else
                f"; {layers} elsewhere") + ")")
    value = int(c.sides[1])
    sentence = p.sentence or ""
    at = sentence.find(f"${p.text.strip()}$")
    if at >= 0 and counts_sequences(sentence[at + len(p.text.strip()) + 2:]):  # "$N = 16$ sequences": a batch
        doc.memory["batch_name"] = c.sides[0].strip()
        return f"the number of sequences ({value}): a batch, not a length"
    said = count_said(sentence, c.sides[0].strip(), value)
    if said is None:
        return None
    if isinstance(said, LayerCount):
        doc.memory["layers"] = value
        doc.memory["layer_name"] = name = c.sides[0].strip()  # L is the layers in this document from now on
        doc.definitions[name] = Integer(value)  # and reads as that count, not as the size its letter names elsewhere
        doc.bound_in[name], doc.bound_line[name] = doc.paragraph, doc.line
        return f"the number of layers ({value})"
    name = "g" if said.name == "g" or dim_name(c.sides[0]) == "g" else "h"
    known = doc.known_dims().get(name)
    if known is None or known != value and doc.new_example(name, value):  # another scope: another example
        doc.bind_dim(name, value)
        return f"sets {name} = {value} (the number of {'key/value' if name == 'g' else 'query'} heads)"
    return None if known == value else f"the number of heads ({value}) in a sentence of its own"


def _variant_label(doc: DocumentModel, p: Any, c: Any) -> tuple[str, str] | None:
    """``MQA ($g = 1$)``, ``MHA ($g = h$)``, "in multi-head attention ... $n_{kv} = n_q$": the number of key/value
    heads said of a variant the sentence names (the grammar's variants), judged against that variant (multi-query:
    g = 1; multi-head: g = h), whatever this document's g: when the variant labels the clause ("- **MQA**: $g = 1$",
    "**MHA:** $g = 8$"), defines it ("MQA is $g = 1$", the grammar's VARIANT_LINK), or stands beside other variants in
    the clause (the one named last before it), or when the sentence contrasts variants (CONTRAST_WORD) and names one
    right before it ("MQA ($g = 1$)") or only one in the clause."""
    from .prose import _plain, contrasts, linked, variants

    kv = dim_name(c.sides[0]) if len(c.sides) >= 2 and set(c.ops) == {"eq"} else None
    if kv != "g" and not (kv == "n_kv" and not doc.cross):
        return None
    clause = p.clause or p.sentence or ""
    before, named = _variants_before(p, clause)
    kinds = {v.kind for _, v in variants(_plain(clause))}
    if named:
        off, v = named[-1]
        tail = before[off + len(v.text):]
        if off <= 12 and linked(tail) or linked(tail, defines=True) or len(kinds) >= 2:
            return _judge_variant(doc, v, c)  # a label, a definition, or variants side by side
        if contrasts(_plain(p.sentence or "")) and linked(tail):
            return _judge_variant(doc, v, c)  # "... whereas MQA ($g = 1$) ...": the variant named before it
    if len(kinds) == 1 and kinds != {"gqa"} and contrasts(_plain(p.sentence or "")):
        v = next(v for _, v in variants(_plain(clause)))
        return _judge_variant(doc, v, c)  # one variant in a clause that contrasts it with others
    return None


def _variants_before(p: Any, clause: str) -> tuple[str, tuple[tuple[int, Any], ...]]:
    """The words of the clause before the piece (as plain text) and the variants the grammar reads in them, with
    their offsets: the variants a statement may be said of."""
    from .prose import _plain, variants

    at = clause.find(p.text.strip())
    before = _plain(clause[:at]) if at >= 0 else ""
    return before, variants(before) if before else ()


def _judge_variant(doc: DocumentModel, v: Any, c: Any) -> tuple[str, str] | None:
    """``g = value`` (or ``g = h = 16``) against the variant ``v`` names (:class:`.prose.Variant`): multi-query g = 1,
    multi-head g = h, grouped-query the key/value heads its name gives (GQA-8)."""
    side = c.sides[-1].strip()
    h = doc.known_dims().get("h")
    value = int(side) if side.isdigit() else h if dim_name(side) == "h" or side.replace("{", "").replace("}", "") \
        == "n_q" else None
    if v.kind == "gqa":  # "GQA-8: $H_{kv} = 8$": the groups of that variant, not this model's
        if value is None or v.kv_heads is None:
            if value is not None:  # "GQA uses $g = 8$ KV heads": that variant's, where it is named
                doc.memory.setdefault("variant_g", {})["gqa"] = value
            return "given", f"g = {side} of the variant this line is about ({v.text})"
        groups = v.kv_heads  # GQA-8: 8 key/value heads (or, read as the group size, h / 8 of them)
        if value == groups:
            return "correct", f"{v.text} has g = {value} key/value heads"
        if h is not None and value * groups == h:  # one reading fits, the usual one does not: not decided
            return "unchecked", (f"g = {value} reads {v.text} as groups of {groups} query heads (h / {groups} = "
                                 f"{value}); read as {groups} key/value heads, the usual meaning, it would be "
                                 f"{groups}; the document does not say which")
        return "wrong", f"{v.text} has {groups} key/value heads" + (f" (or h / {groups} = {h // groups})" if h
                                                                      and h % groups == 0 else "") + f", not {side}"
    multi_query = v.kind == "mqa"
    want, name = (1, "multi-query attention shares one key/value head") if multi_query else \
        (h, "multi-head attention has one key/value head per query head, g = h")
    if value is None or want is None:
        return "given", f"names the variant: {name}"
    if value == want:
        return "correct", f"{name}" + ("" if multi_query else f" = {h}")
    return "wrong", f"{name}" + ("" if multi_query else f" = {h}") + f", not {side}"


def _broken_rows(p: Any) -> dict[int, str]:
    """What is malformed in a math piece: ``{}`` when nothing; ``{row: why}`` (1-based) for the broken rows of a
    multi-row block, its environment's own ``\\begin``/``\\end`` set aside; ``{0: why}`` for the whole piece."""
    why = malformed(p.text)
    if why is None:
        return {}
    rows = {k: malformed(re.sub(r"\\(?:begin|end)\s*\{[^{}]*\}(?:\{[^{}]*\})?", "", text))
            for k, (_, text) in enumerate(p.rows or (), start=1)}
    bad = {k: reason for k, reason in rows.items() if reason is not None}
    return bad or {0: why}


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
    """Once sizes are fixed: h must divide d_model when the head width is d_model / h, and g must divide h
    (each said once)."""
    problem = kv_heads_problem(doc)
    if problem is not None and not doc.kv_reported:
        doc.kv_reported = True
        emit(p.line, p.text, "inconsistent", problem, None, "setting", "computed")
    d = doc.dims
    if {"d_model", "h"} <= d.keys() and not {"d_k", "d_v"} & d.keys() and d["d_model"] % d["h"] and \
            not doc.sizes_reported:  # (a document that states its own head width does not divide d_model)
        doc.sizes_reported = True
        emit(p.line, p.text, "inconsistent", f"h = {d['h']} does not divide d_model = {d['d_model']}: the head width "
             f"d_k = d_model / h = {d['d_model']}/{d['h']} is not an integer", None, "setting", "computed")


def _heading_head(text: str) -> int | None:
    m = re.search(r"\b(?:head|kopf|cabeza|tête)\s*(?:#\s*)?(\d+)\b", text, re.I)
    return int(m.group(1)) if m else None


def _rows_given(doc: DocumentModel) -> bool:
    """Has the document said, by its values, that tokens are rows: X given with n rows (n stated, and not also
    its width), or a stated shape of X with n rows?"""
    known = doc.known_dims()
    X = doc.values.get("X")
    return X is not None and known.get("n") == X.rows != X.cols and "n" in doc.dims


def _equal_steps(doc: DocumentModel, c: Any) -> list[str] | None:
    r"""``Q_1 = K_1 = V_1`` (before any ``\in``): the queries, keys or values of heads said equal, when the
    document never gave the weights that would decide it -- then it is the document's choice, not an identity of
    the model (which has independent W_Q, W_K, W_V).  The names, or None."""
    ops = list(c.ops[:c.ops.index("in")]) if "in" in c.ops else list(c.ops)
    names = [x.strip() for x in c.sides[:len(ops) + 1]]
    if len(names) < 2 or set(ops) != {"eq"} or len(set(names)) < 2 or \
            not all(x[:1] in ("Q", "K", "V") and (len(x) == 1 or x[1] == "_" and x[2:].strip("{}").isalnum())
                    for x in names):
        return None
    if any(k.startswith("W_") for k in doc.values) or any(k[0] in "QKV" for k in doc.values):
        return None  # weights or steps given: the model can decide it
    return names


def _alias(c: Any) -> str | None:
    """``Q = K = V = X_1``: the layer's inputs named as one matrix, or None."""
    sides = [x.strip() for x in c.sides]
    if len(sides) >= 2 and all(op == "eq" for op in c.ops) and all(x in ("Q", "K", "V") for x in sides[:-1]) \
            and sides[-1] not in ("Q", "K", "V") and re.fullmatch(r"[A-Za-z](?:_\{?\w+\}?)?", sides[-1]):
        return sides[-1]
    return None


#: the sizes a condition of one sentence may set for a local example
_LOCAL_SIZES = ("n", "n_kv", "d_model", "h", "g", "d_k", "d_v")


#: a paragraph that is one bold question or numbered line ("**Q5. What does a causal mask look like for $n = 4$?**",
#: "**3. Masks:**"): a heading; other bold lines ("**Answer: lower triangular.**") are not
_BOLD_HEAD = re.compile(r"\s*(?:\*\*|__)(?:(?:Q|Question\s*)?\d+[.):]\s*[^\n]*|[^\n]*[?:])(?:\*\*|__)\s*", re.I)


#: a part the document labels: a heading (or bold question) that opens with a word and a number ("### Problem 2 (15
#: pts)", "## Exercise 3.1", "**Aufgabe 4.**"); the number may be roman or a letter after a word ("Part B")
_PART_LABEL = re.compile(r"[\s#*_>]*(?:\d+[.)]\s+)?([^\W\d_]{3,})\s+(\d+(?:\.\d+)?|[IVX]+|[A-Z])(?!\w|\.\d)")


def _part_cited(doc: DocumentModel, p: Any) -> None:
    """A part whose opening sentence names one other part ("For the layer of Problem 1, ...") works in that part's
    sizes: they are bound anew (its values stay forgotten), as when a section restates an earlier example's sizes."""
    cited = doc.cited(p.sentence or p.text)
    if len(cited) == 1:
        sizes = next(iter(cited.values()))
        if any(doc.known_dims().get(k) != v for k, v in sizes.items()):
            doc.restart()
            for k, v in sizes.items():
                doc.bind_dim(k, v)


def _part_label(doc: DocumentModel, p: Any) -> None:
    """The label of the part a heading opens, kept by its sub-headings (:meth:`.DocumentModel.cited`).  A heading
    naming a head or a token ("## Head 2") is a scope of the model, not a part."""
    from .read import scope

    level = len(p.text) - len(p.text.lstrip("#")) if p.kind == "heading" else 7
    m = _PART_LABEL.match(p.text)
    label = f"{m.group(1).lower()} {m.group(2).lower()}" if m and not {"head", "token"} & set(scope(p.text)) \
        and not _heading_head(p.text) else None
    if label is not None or level <= doc.memory.get("label_level", 0):
        doc.section_label = label
        doc.memory["label_level"] = level if label is not None else 0


def _heading_configuration(doc: DocumentModel, p: Any, emit: Any) -> None:
    """``## Worked example: d = 3, n = 4, h = 2``: the sizes a heading states are its section's configuration.  In a
    document that has fixed none of them yet they are the document's, bound in the heading's scope (a later section
    that states others starts another example); otherwise :func:`_section_sizes` judges the section in them."""
    from .prose import _plain
    from .read import settings

    if doc.section_sizes:
        return
    stated = {s.name: int(s.value) for s in settings(_plain(p.text)) if s.name in _LOCAL_SIZES}
    known = doc.known_dims()
    if not stated or any(known.get(name) is not None for name in stated):
        return
    for name, value in stated.items():
        doc.bind_dim(name, value)
        emit(p.line, p.text, "given", f"sets {name} = {value} (the configuration its heading states)", kind="setting")


def _section_sizes(doc: DocumentModel, heading: str) -> dict[str, int]:
    """The sizes a heading sets for its section's own example when they differ from the document's ("... for
    $n = 4$?" in a document of 5 tokens): the section is judged in them, the document keeps its own."""
    from .read import scope

    known = doc.known_dims()
    sizes = {k: v for k, v in scope(heading).items() if k in _LOCAL_SIZES}
    for name, value in re.findall(r"\b(?:with|for|when|if|at|using)\s+\$\s*([^$=]+?)\s*=\s*(\d+)\s*\$", heading, re.I):
        if dim_name(name) in _LOCAL_SIZES:  # "(e) What changes with $h = 2$ heads"
            sizes.setdefault(dim_name(name) or "", int(value))
    return sizes if any(known.get(k) not in (None, v) for k, v in sizes.items()) else {}


def _resplit(doc: DocumentModel, h: int) -> dict[str, Any]:
    """The inputs of an example with ``h`` heads drawn from the document's: ``X`` and the full projections given
    side by side (``W^Q``, d_model x h d_k), cut into ``h`` column blocks ("with two heads, head i takes column i of
    each projection"); nothing else carries over."""
    from .numbers import head_blocks

    out: dict[str, Any] = {k: v for k, v in doc.values.items() if k == "X"}
    for letter, W in doc.memory.get("full_weights", {}).items():
        if W.cols % h == 0:
            out |= {f"W_{letter}^{i}": block for i, block in enumerate(head_blocks(W, h), start=1)}
    return out


def _scoped(doc: DocumentModel, p: Any) -> tuple[DocumentModel, dict[str, int]]:
    """The model a math piece is judged in: the document's own, or a local copy for an example inside a
    paragraph -- a condition that sets sizes ("with h = 1 the bound reads ...", "whenever d_k = 2", "for
    example, take n = 2 ...") when the sentence is hypothetical or conditional, when the sizes differ from
    the document's, or when the document constrained those sizes (h >= 2) instead of fixing them.  The copy
    binds nothing in the document and lasts to the end of the paragraph."""
    from dataclasses import replace

    from .prose import conditional, conditions, counterfactual, opens_block, size_condition
    from .read import hypothetical, scope

    paragraph = p.sentence or ""
    clause = p.clause or paragraph
    if opens_block(clause):  # "For $n = 1024$, $d = 512$:" sets the sizes of what follows, not of its own words
        return doc, {}
    sizes = {k: v for k, v in scope(clause).items() if k in _LOCAL_SIZES}
    parts = [x.strip() for x in p.text.split("=")]
    own = {dim_name(x): int(parts[-1]) for x in parts[:-1]} if len(parts) > 1 and parts[-1].isdigit() else {}
    written = re.search(r"\$\s*" + re.escape(p.text.strip()) + r"\s*\$", clause)
    before = clause[:written.start()] if written else None  # the words of its clause before it
    if own and None not in own:  # "for n = 3 ...; for n = 4 ...": the condition it is part of
        name, value = next(iter(own.items()))
        found = conditions(clause)
        mine = [c for c in found if c.get(name or "") == value]
        if mine:
            sizes = {k: v for k, v in mine[0].items() if k in _LOCAL_SIZES}
        elif len(own) > 1 and not found and hypothetical(clause):  # "at the other extreme, g = h = 8" (no other
            # condition: with one, "with h = 1 we would have d_k = d_model = 2" is a claim in that condition)
            sizes = {k: v for k, v in own.items() if k in _LOCAL_SIZES}
        elif not found and before is not None and (size_condition(before, alone=True) or (
                _restated_here(doc, own) or _derived_elsewhere(doc, own)) and size_condition(before)):
            # "With $n_{kv} = 1$ the cache is ...", and "... sind es bei $n = 2048$ bereits ..." in a paragraph that
            # bound n = 8192 before: a condition of its clause (not a second binding of the paragraph)
            sizes = {k: v for k, v in own.items() if k in _LOCAL_SIZES}  # "With $n_{kv} = 1$ the cache is ..."
        elif not found and before is not None and conditional(before) and \
                any(doc.known_dims().get(k or "") not in (None, v) and doc.scope_of(k or "")[0] == doc.paragraph[0]
                    for k, v in own.items()):
            # "With $n = 512$ ... If we double the sequence to $n = 1024$, ...": another value than its own paragraph's
            # in a conditional clause is that clause's condition (from another paragraph, it starts another example)
            sizes = {k: v for k, v in own.items() if k in _LOCAL_SIZES}
        elif not found and before is not None and counterfactual(before):
            # "a single head spanning the whole model would have $d_k = 512$": a counterfactual binds nothing, even
            # where the document has not given the size yet (its own example follows)
            sizes = {k: v for k, v in own.items() if k in _LOCAL_SIZES}
        elif not found and (re.match(r"\s*(?:suppose|assume|imagine|consider|say)\b", clause, re.I)
                            or hypothetical(clause)) and \
                any(doc.known_dims().get(k or "") not in (None, v) for k, v in own.items()):
            sizes = {k: v for k, v in own.items() if k in _LOCAL_SIZES}  # "Suppose ... $n = 4$", "Toy example with"
    solved = {dim_name(parts[0]): int(parts[-1])} if len(parts) > 2 and parts[-1].isdigit() else {}
    at = re.search(r"\b(?:at|bei)\s+\$\s*" + re.escape(p.text.strip()), clause) if p.kind == "math" else None
    if not sizes and solved and None not in solved and (conditional(clause) or at) and \
            any(scopes.model_sizes(doc).get(k or "") not in (None, v) for k, v in solved.items()):
        sizes = {k: v for k, v in solved.items() if k in _LOCAL_SIZES}  # "... catches up when $4n^2d = 8nd^2$,
        # i.e. at $n = 2d = 1536$", "... are equal at $n = 2 d_{model} = 1536$": the size that solves the
        # sentence's condition (or where its two sides meet), computed there
    known = scopes.model_sizes(doc)  # stated, and the head width the model derives from them
    substituted = scopes.substituted_sizes(clause) if not sizes else {}
    if substituted and all(known.get(k) not in (None, v) for k, v in substituted.items()):
        sizes = substituted  # "for comparison, BERT-base has d_k = d_model/h = 768/12 = 64": every size it
        # substitutes differs from the model's: the clause's own configuration (one that agrees in part is a slip)
    else:
        substituted = {}
    if not sizes and doc.section_sizes:  # a section whose heading set its own example
        sizes = dict(doc.section_sizes)
    if "n_kv" in sizes and not doc.cross:  # the key/value heads in a document that is not about cross-attention
        sizes["g"] = sizes.pop("n_kv")
    if doc.local is not None and doc.local[0] == paragraph and paragraph and (not sizes or sizes == doc.local[2]) \
            and doc.local_clause in (None, clause):
        return doc.local[1], doc.local[2]
    labelled = _labelled_variant(doc, p, clause) if not sizes and not own else None  # (g = 1 under "MQA:" is
    # judged against the variant by _variant_label)
    if labelled:  # "MQA: $W_K \\in ...$": judged in the variant its clause is labelled with
        sizes = labelled
    local = bool(labelled) or hypothetical(clause) or conditional(clause) or any(known.get(k) not in (None, v)
                                                               for k, v in sizes.items()) \
        or any(k in doc.constrained for k in sizes)
    if not sizes or not local:
        return doc, {}
    for name, value in _size_bindings(clause):  # every size this example sets (a head width its d_model and h
        if name in _LOCAL_SIZES and not (name in ("d_k", "d_v") and {"d_model", "h"} <= set(sizes)):  # derive: a
            sizes.setdefault(name, value)  # result: "with d_model = 1024 and h = 16 one gets d_k = 64")
    copy = replace(doc, dims={k: v for k, v in doc.dims.items() if k not in ("d_k", "d_v")} | sizes,
                   values={k: v for k, v in doc.values.items() if k == "X"} if "h" not in sizes else
                   _resplit(doc, sizes["h"]),
                   assumed={}, definitions=dict(doc.definitions), declared=dict(doc.declared), local=None,
                   _model=None, _table=None)
    doc.local = (paragraph, copy, sizes)
    # an example the paragraph opens ("Suppose n = 4. Then ...") lasts to its end; a condition or a counterfactual
    # ("If we had d_k = 8 the bound would be 6.") binds only its own clause: the next sentence is the document's
    doc.local_clause = clause if conditional(clause) or counterfactual(clause) or labelled or substituted else None
    return copy, sizes


def _labelled_variant(doc: DocumentModel, p: Any, clause: str) -> dict[str, int] | None:
    r"""The key/value heads of the variant a clause is labelled with, when it is not the document's own: the one
    variant named before the piece, among the first words of its clause ("MHA: $W_K \in ...$", "- **MQA** (one KV
    head): ...", "GQA-4：..."): g = h for multi-head, 1 for multi-query, the stated or the document's number for
    grouped-query attention.  None when no such label, or nothing differs."""
    h, g = scopes.model_sizes(doc).get("h"), scopes.model_sizes(doc).get("g")
    named = _variants_before(p, clause)[1]
    if h is None or len(named) != 1 or named[0][0] > 12:  # a label opens its clause; one named in passing is not
        return None
    v = named[0][1]
    stated = doc.memory.get("variant_g", {}).get("gqa") or (g if g is not None and 1 < g < h else None)
    heads = h if v.kind == "mha" else 1 if v.kind == "mqa" else v.kv_heads or stated
    return {"g": heads} if heads is not None else None


def _own_size(doc: DocumentModel, c: Any) -> str | None:
    """``name = value`` where the value is the document's own binding of that size (read inside a local example
    that binds it otherwise): the size and value, else None."""
    if len(c.sides) != 2 or c.ops != ("eq",) or not c.sides[1].strip().isdigit():
        return None
    name = dim_name(c.sides[0])
    own = scopes.model_sizes(doc).get(name) if name is not None else None
    return f"{name} = {own}" if own is not None and own == int(c.sides[1]) else None


def _sentence_sizes(sentence: str) -> dict[str, int]:
    """The sizes a sentence states with a number, ``$h = 3$`` or a tuple ``$(B, h, n) = (2, 3, 5)$``, by name (the
    first value of each)."""
    from .read import chains, components

    found: dict[str, int] = {}
    for tex in re.findall(r"\$([^$]+)\$", sentence):
        for c in (part for whole in chains(tex) for part in components(whole)):
            name = dim_name(c.sides[0]) if len(c.sides) == 2 and c.ops == ("eq",) else None
            if name is not None and c.sides[1].strip().isdigit():
                found.setdefault(name, int(c.sides[1]))
    return found


def _plain_sizes(text: str) -> dict[str, int]:
    """The sizes a line of plain prose states (``dₖ = 64``, "d_model = 768"), by the grammar: the first value of
    each."""
    from .read import settings

    found: dict[str, int] = {}
    for s in settings(text) if "$" not in text else []:
        found.setdefault(s.name, s.value)
    return found


def _written_bindings(text: str) -> list[tuple[str, int]]:
    """Each ``$name = number$`` of a sentence, as (the name as written, the number), in order."""
    return [(name, int(value)) for name, value in re.findall(r"\$\s*([^$=]+?)\s*=\s*(\d+)\s*\$", text)]


def _size_bindings(text: str) -> list[tuple[str, int]]:
    """Each ``$size = number$`` of a sentence, as (the size's name, the number), in order."""
    found = [(dim_name(name), value) for name, value in _written_bindings(text)]
    return [(name, value) for name, value in found if name is not None]


def _sizes_only(c: Any) -> bool:
    """Every side of the chain is a size or arithmetic of sizes (``d_k = n``, ``d_k \\ge 2 n``), none a value."""
    sides = [re.sub(r"\\(?:text|mathrm|operatorname)\{(\w+)\}", r"\1", side) for side in c.sides]  # d_{\text{model}}
    names = [x for side in sides for x in re.findall(r"\\?[A-Za-z]+(?:_\{[^{}]*\}|_\w+)?", side)]
    return bool(names) and all(dim_name(x) is not None or x in ("\\min", "\\max", "\\cdot", "\\times")
                               for x in names) and not any(re.search(r"[(\[,]", s) for s in sides)


def _regime(p: Any) -> bool:
    """Whether the words right before the piece open a range of sizes (:func:`.prose.regime`): "when $n > 2d$"."""
    from .prose import regime

    clause = p.clause or p.sentence or ""
    at = clause.find("$" + p.text.strip())
    return at >= 0 and regime(clause[:at])


def _disowned(p: Any) -> bool:
    """Whether the words of its clause before the piece quote it as a mistake (:func:`.prose.disowned`)."""
    from .prose import disowned

    clause = p.clause or p.sentence or ""
    at = clause.find("$" + p.text.strip()) if p.text.strip() else -1
    return at >= 0 and disowned(clause[:at])


def _chosen(p: Any) -> bool:
    """Whether the clause makes the piece's relation of sizes a choice or a requirement (:func:`.prose.chosen`)."""
    from .prose import chosen

    clause = p.clause or p.sentence or ""
    at = clause.find("$" + p.text.strip()) if p.text.strip() else -1
    if at < 0:
        at = clause.find(p.text.strip())
    if at < 0:
        return False
    return chosen(clause[:at], clause[at + len(p.text.strip()) + 1:])


#: the scores of a document whose tokens are columns: K^T Q (a query per column) or Q^T K (a query per row)
_TRANSPOSED = r"(?:_\{?\w+\}?|\^\{?\(\w+\)\}?)?\s*\^\s*\{?\s*(?:\(\w+\)\s*)?(?:T|\\top|\\intercal)\s*\}?\s*"
_KEYS_FIRST = re.compile(r"(?<![A-Za-z\\])K" + _TRANSPOSED + r"Q(?![A-Za-z])")
_QUERIES_FIRST = re.compile(r"(?<![A-Za-z\\])Q" + _TRANSPOSED + r"K(?![A-Za-z])")


def _query_axis(pieces: list[Any]) -> str | None:
    """Where a column-convention document's scores put the queries, from the formulas it writes for them: ``K^T Q``
    (queries in columns, so each column of the weights sums to one) or ``Q^T K`` (in rows), whichever it writes
    more often ("$S = K^T Q$ (not $Q^T K$)"); None when it writes neither, or both as often."""
    count = {"column": 0, "row": 0}
    for p in pieces:
        if p.kind == "math":
            count["column"] += len(_KEYS_FIRST.findall(p.text))
            count["row"] += len(_QUERIES_FIRST.findall(p.text))
    return None if count["column"] == count["row"] else max(count, key=lambda k: count[k])


def _is_binding(c: Any, sizes: dict[str, int]) -> bool:
    from .model import dim_name

    return len(c.sides) == 2 and c.ops == ("eq",) and dim_name(c.sides[0]) in sizes and \
        c.sides[1].strip() == str(sizes[dim_name(c.sides[0]) or ""])
