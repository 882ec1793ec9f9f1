"""The checker's first room: every checkable piece of a document, at its exact location."""

from __future__ import annotations

import json
import math
from pathlib import Path

import nbformat
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from mha_symbolic.check.extract import Piece, extract
from mha_symbolic.errors import ParseError

CORPUS = Path(__file__).resolve().parent / "corpus"
KINDS = {"math", "code", "output", "table", "prose", "heading", "unclosed"}


def where(pieces: list[Piece], kind: str | None = None) -> list[tuple[int, str]]:
    return [(p.line, p.text) for p in pieces if kind is None or p.kind == kind]


def one(pieces: list[Piece], kind: str, line: int, cell: int | None = None, output: bool = False) -> Piece:
    found = [p for p in pieces if (p.kind, p.line, p.cell, p.output) == (kind, line, cell, output)]
    assert len(found) == 1, (kind, line, cell, output, [(p.kind, p.line, p.text) for p in pieces])
    return found[0]


def notebook(*cells: object) -> str:
    return nbformat.writes(new_notebook(cells=list(cells)))


# ----------------------------------------------------------------------------------------------- math


def test_inline_and_display_dollar_math_with_lines():
    doc = "We use $h = 2$ and $ n = 3 $ here.\n\n$$d_k = 2$$\n\n$$\nX =\n\\begin{bmatrix} 1 \\end{bmatrix}\n$$\n"
    pieces = extract(doc)
    assert where(pieces, "math") == [(1, "h = 2"), (1, "n = 3"), (3, "d_k = 2"),
                                     (6, "X =\n\\begin{bmatrix} 1 \\end{bmatrix}")]
    assert [p.display for p in pieces if p.kind == "math"] == [False, False, True, True]


def test_double_dollar_inside_a_paragraph_is_display_math_on_its_own_line():
    doc = "Take q with\n$$E[q_j] = 0$$\nfor $j = 1$.\nThen\n$$\na = 1\n$$\ndone."
    math_pieces = [p for p in extract(doc) if p.kind == "math"]
    assert [(p.line, p.text, p.display) for p in math_pieces] == [
        (2, "E[q_j] = 0", True), (3, "j = 1", False), (6, "a = 1", True)]


def test_brackets_and_parentheses():
    doc = "\\[\nA = 1\n\\]\n\nsee \\(b = 2\\) and \\[c = 3\\] inline\n\n\\[ D = 4 \\]"
    assert [(p.line, p.text, p.display) for p in extract(doc) if p.kind == "math"] == [
        (2, "A = 1", True), (5, "b = 2", False), (5, "c = 3", True), (7, "D = 4", True)]


def test_bare_environments_are_one_piece_with_their_rows():
    doc = ("\\begin{align*}\n\\mathrm{rank}(S) &\\le \\min(n, d_k) \\\\\n&= d_k\n\\end{align*}\n\n"
           "\\begin{aligned} a &= \\begin{bmatrix} 1 & 2 \\\\ 3 & 4 \\end{bmatrix} \\\\ b &= 2 \\end{aligned}\n\n"
           "so \\begin{equation} x = 1 \\end{equation} holds")
    math_pieces = [p for p in extract(doc) if p.kind == "math"]
    assert [(p.line, p.display) for p in math_pieces] == [(1, True), (6, True), (8, True)]
    align, aligned, equation = math_pieces
    assert align.text.startswith("\\begin{align*}") and align.text.endswith("\\end{align*}")
    assert align.rows == ((2, "\\mathrm{rank}(S) &\\le \\min(n, d_k)"), (3, "&= d_k"))
    # the matrix's \\ is not a row break of the alignment
    assert aligned.rows == ((6, "a &= \\begin{bmatrix} 1 & 2 \\\\ 3 & 4 \\end{bmatrix}"), (6, "b &= 2"))
    assert equation.text == "\\begin{equation} x = 1 \\end{equation}" and equation.rows == ()


def test_unclosed_double_dollar_is_reported_with_its_line():
    pieces = extract("Intro $a$.\n\n$$\nx = 1\n\nmore $b$ text")
    assert where(pieces, "unclosed") == [(3, "$$")]
    assert where(pieces, "math") == [(1, "a"), (6, "b")]
    assert where(extract("ok $$ then"), "unclosed") == [(1, "$$")]


def test_code_spans_comments_code_blocks_and_escapes_are_not_math():
    doc = ("Price \\$5 and \\$\\$ here, `$x$` and <!-- $y$ --> and $z$.\n\n"
           "<!--\n$$w$$\n-->\n\n```\nprice = 5  # $a$\n```\n\n    $b$ = 4\n")
    pieces = extract(doc)
    assert where(pieces, "math") == [(1, "z")]
    assert not [p for p in pieces if p.kind == "unclosed"]


# ----------------------------------------------------------------------------------------------- code


def test_one_code_piece_per_statement_with_multiline_literals():
    doc = ("```python\nimport numpy as np\nX = [[1, 0],\n     [0, 2]]\nW_q = np.array([[1, -2]], dtype=float)\n"
           "t = torch.tensor([[1., 0.5]])\nQ1 = X @ WQ1\nWQ[0] = [3, 4]\nh, d = 2, 8\nX\n```")
    code = [p for p in extract(doc) if p.kind == "code"]
    assert [(p.line, p.name, p.value) for p in code] == [
        (3, "X", [[1, 0], [0, 2]]), (5, "W_q", [[1, -2]]), (6, "t", [[1.0, 0.5]]), (7, "Q1", None),
        (8, "WQ[0]", [3, 4]), (9, "h, d", [2, 8]), (10, None, None)]
    assert code[0].text == "X = [[1, 0],\n     [0, 2]]"
    assert code[3].text == "Q1 = X @ WQ1"


def test_values_are_literals_only_never_evaluated():
    doc = "```python\na = 2 ** 3\nb = __import__('os').getcwd()\nc = np.array(range(3))\nd = -0.5\ne = True\n```"
    assert [(p.name, p.value) for p in extract(doc) if p.kind == "code"] == [
        ("a", None), ("b", None), ("c", None), ("d", -0.5), ("e", None)]


def test_tilde_and_indented_code_blocks():
    doc = "~~~\nA = [1, 2]\n~~~\n\nText.\n\n    B = [[1],\n         [2]]\n"
    assert [(p.line, p.name, p.value) for p in extract(doc) if p.kind == "code"] == [
        (2, "A", [1, 2]), (7, "B", [[1], [2]])]


def test_code_that_does_not_parse_falls_back_to_lines():
    doc = ("```\ntoken 1: [0.2, 0.5]\nToken2: [0.3, 0.7]\nhead2_output = [\u22120.4, 2.3]\nQ1 = X @ WQ1  so\n"
           "A1 = [[0.1 0.2]\n      [0.3 0.4]]\n%% not python\n```")
    code = [p for p in extract(doc) if p.kind == "code"]
    assert [(p.line, p.name, p.value) for p in code] == [
        (2, "token 1", [0.2, 0.5]), (3, "Token2", [0.3, 0.7]), (4, "head2_output", [-0.4, 2.3]),
        (6, "A1", [[0.1, 0.2], [0.3, 0.4]])]  # (line 5 is no Python and holds no numbers: no code of the block)
    assert code[0].text == "token 1: [0.2, 0.5]"


def test_an_output_listing_in_markdown_is_read_as_printed_values():
    doc = "```text\nA1 =\n[[0.1 0.2]\n [0.3 0.4]]\n```"
    (piece,) = extract(doc)
    assert (piece.kind, piece.line, piece.name, piece.value) == ("output", 2, "A1", [[0.1, 0.2], [0.3, 0.4]])


def test_math_fence():
    (piece,) = extract("```math\nd_k = 64\n```")
    assert (piece.kind, piece.line, piece.text, piece.display) == ("math", 2, "d_k = 64", True)


# ---------------------------------------------------------------------------------------------- tables


def test_table_rows_with_labels_values_header_and_caption():
    doc = ("Output projection $W^O$:\n\n|  | out1 | out2 |\n| --- | --- | --- |\n| concat1 | 0 | -1 |\n"
           "| concat2 | 1.5 | \u22122 |\n\n| head | query | w1 | w2 |\n|---|---|---|---|\n| 1 | the | 0.196 | 0.804 |\n"
           "\n| a | b |\n|---|---|\n| 1 | 2 |\n| $3$ | x |\n")
    rows = [p for p in extract(doc) if p.kind == "table"]
    assert [(p.line, p.text, p.name, p.value) for p in rows] == [
        (5, "concat1 | 0 | -1", "concat1", [0, -1]), (6, "concat2 | 1.5 | \u22122", "concat2", [1.5, -2]),
        (10, "1 | the | 0.196 | 0.804", "1 | the", [0.196, 0.804]),
        (14, "1 | 2", None, [1, 2]), (15, "$3$ | x", "$3$ | x", None)]
    assert rows[0].columns == ("", "out1", "out2") and rows[0].sentence == "Output projection $W^O$:"
    assert rows[2].columns == ("head", "query", "w1", "w2")
    assert (15, "3") in where(extract(doc), "math")  # math in a cell is still math


def test_weights_in_tables_document_reaches_every_row():
    pieces = extract((CORPUS / "07_weights_in_tables.md").read_text(encoding="utf-8"))
    x = one(pieces, "table", 15)
    assert (x.name, x.value, x.columns[0], x.sentence) == ("the", [1, 1, 0, 0], "token", "Token embeddings (the "
                                                                                          "rows of $X$)")
    w = one(pieces, "table", 36)
    assert w.columns[1:3] == ("W_Q^2[:,1]", "W_Q^2[:,2]") and w.sentence == "Head 2:" and w.value[3] == 2
    assert one(pieces, "table", 65).value == [0.893, 0.107]
    assert one(pieces, "table", 81).value == [3.21, 0.679, 2.781, -3.837]


# ----------------------------------------------------------------------------------------- prose, headings


def test_prose_settings_lines_and_headings():
    doc = ("Setup\n-----\nd_model is 6\nNumber of heads (h): 2\nsequence length of 3 tokens\n\nOnly one token\n\n"
           "$x = 1$\n\n- tokens: $n = 3$\n\n## Head $H_0$\n")
    pieces = extract(doc)
    assert where(pieces, "heading") == [(1, "Setup"), (13, "Head $H_0$")]
    assert where(pieces, "prose") == [(3, "d_model is 6"), (4, "Number of heads (h): 2"),
                                      (5, "sequence length of 3 tokens"), (7, "Only one token"),
                                      (11, "tokens: $n = 3$")]
    assert (13, "H_0") in where(pieces, "math")


def test_sentence_is_the_paragraph_and_clause_the_sentence_holding_the_piece():
    doc = "We use $h = 2$ heads.\nThe width is $d = 4$.\n(With $h = 1$ we would have $d_k = 4$.)\n\nOther."
    pieces = extract(doc)
    last = [p for p in pieces if p.kind == "math"][-1]
    assert last.text == "d_k = 4" and last.line == 3
    assert last.sentence == doc.split("\n\n")[0]
    assert last.clause == "(With $h = 1$ we would have $d_k = 4$.)"
    assert [p for p in pieces if p.kind == "math"][0].clause == "We use $h = 2$ heads."
    assert one(pieces, "prose", 2).clause == "The width is $d = 4$."


def test_corpus_one_sentence_with_a_local_condition():
    pieces = extract((CORPUS / "01_vaswani_three_tokens.md").read_text(encoding="utf-8"))
    at12 = [p for p in pieces if p.line == 12 and p.kind == "math"]
    assert [p.text for p in at12] == ["h = 1", "d_k = d_{model} = 4"]
    assert all(p.clause.startswith("(With $h = 1$") for p in at12)
    assert [p.clause for p in pieces if p.line == 8 and p.kind == "math"] == ["We use $h = 2$ heads."]


# ------------------------------------------------------------------------------------------- notebooks


def test_notebook_cells_code_and_outputs():
    text = notebook(
        new_markdown_cell("# T\n\nWe use $h = 2$.\r\n$$\nd_k = 2\n$$"),
        new_code_cell("A1 = softmax(S)\nprint(A1)\nprint('A2 =', A2)\ndisplay(A3)\nA4", outputs=[
            new_output("stream", name="stdout", text="[[0.1 0.2]\n [0.3 "),
            new_output("stream", name="stdout", text="0.4]]\nA2 = [[1.e-03 nan]\n [inf -inf]]\n"),
            new_output("stream", name="stderr", text="Warning: x = 3\n"),
            new_output("display_data", data={"text/plain": "tensor([[0.5000, 0.5000]], grad_fn=<SoftmaxBackward0>)"}),
            new_output("execute_result", data={"text/plain": "array([1.5e+00, 2.0e-01])"}, execution_count=1)]),
        new_code_cell("%matplotlib inline\nx = [1, 2]", outputs=[
            new_output("stream", name="stdout", text="Q.shape: torch.Size([2, 3])\nA1:\n[[1 2]\n [3 4]]\nhello\n")]))
    pieces = extract(text, "lesson.ipynb")
    assert [(p.cell, p.kind, p.line) for p in pieces if p.cell == 0] == [
        (0, "heading", 1), (0, "prose", 3), (0, "math", 3), (0, "math", 5)]
    assert [(p.line, p.name) for p in pieces if p.cell == 1 and p.kind == "code"] == [
        (1, "A1"), (2, None), (3, None), (4, None), (5, None)]
    outputs = [p for p in pieces if p.output]
    assert all(p.kind == "output" for p in outputs)
    assert [(p.cell, p.line, p.name) for p in outputs] == [
        (1, 1, "A1"), (1, 3, "A2"), (1, 5, "A3"), (1, 6, "A4"), (2, 1, "Q.shape"), (2, 2, "A1"), (2, 5, None)]
    assert outputs[0].value == [[0.1, 0.2], [0.3, 0.4]] and outputs[0].text == "[[0.1 0.2]\n [0.3 0.4]]"
    a2 = outputs[1].value
    assert a2[0][0] == 0.001 and math.isnan(a2[0][1]) and a2[1] == [math.inf, -math.inf]
    assert [p.value for p in outputs[2:6]] == [[[0.5, 0.5]], [1.5, 0.2], [2, 3], [[1, 2], [3, 4]]]
    assert one(pieces, "code", 2, cell=2).value == [1, 2]  # the magic line is blanked, lines stay
    # a notebook is recognised by its JSON, too
    assert [(p.cell, p.kind, p.line, p.text) for p in extract(text)] == [(p.cell, p.kind, p.line, p.text)
                                                                      for p in pieces]


@pytest.mark.parametrize("printed, value", [
    ("array([[ 0,  2, -2],\n       [ 1,  2, -1]])", [[0, 2, -2], [1, 2, -1]]),
    ("tensor([[ 4., -3.],\n        [ 1., -2.]])", [[4.0, -3.0], [1.0, -2.0]]),
    ("tensor([[0.1, 0.9]], grad_fn=<SoftmaxBackward0>)", [[0.1, 0.9]]),
    ("tensor(3)", 3), ("torch.Size([2, 3, 2])", [2, 3, 2]), ("(3, 4)", [3, 4]), ("np.float64(0.25)", 0.25),
    ("[[1.5e-01 2.0e+00]\n [3.  -4.e-1]]", [[0.15, 2.0], [3.0, -0.4]]),
    ("array([0.1, ..., 0.3])", None), ("(1+2j)", None)])
def test_printed_values_in_execute_results(printed, value):
    text = notebook(new_code_cell("S[0]", outputs=[
        new_output("execute_result", data={"text/plain": printed}, execution_count=1)]))
    (code, out) = extract(text, "nb.ipynb")
    assert (code.kind, out.kind, out.line, out.output, out.cell, out.value) == ("code", "output", 1, True, 0, value)
    assert out.name == "S[0]" and out.text == printed


def test_corpus_notebook_outputs():
    nb06 = extract((CORPUS / "06_numpy_notebook.ipynb").read_text(encoding="utf-8"), "06_numpy_notebook.ipynb")
    a1 = one(nb06, "output", 1, cell=4, output=True)
    assert (a1.name, a1.value[1]) == ("A1", [0.3057, 0.62, 0.0743])
    assert one(nb06, "output", 1, cell=10, output=True).value == [3, 4]
    assert one(nb06, "code", 4, cell=1).value == [[1, 0, 1, 0], [1, 1, 0, 0], [0, 1, 1, 2]]
    nb18 = extract((CORPUS / "18_torch_notebook_zero_based.ipynb").read_text(encoding="utf-8"), "18.ipynb")
    assert one(nb18, "output", 1, cell=2, output=True).value == [2, 3, 2]
    assert one(nb18, "output", 1, cell=11, output=True).value == 3
    assert one(nb18, "output", 1, cell=10, output=True).value[0] == [10.7051, -1.545, 2.4043, 2.0803]
    assert one(nb18, "code", 5, cell=1).name == "W_q"


def test_invalid_notebook_json_is_a_parse_error_naming_the_line():
    with pytest.raises(ParseError, match=r"bad\.ipynb.*line 2"):
        extract('{"cells": [\n  oops]}', "bad.ipynb")
    for text, name in (("[1, 2]", "list.ipynb"), ("{}", "empty.ipynb")):  # JSON, but no notebook: an error
        with pytest.raises(ParseError, match=rf"{name}: not a notebook: valid JSON"):
            extract(text, name)
    assert [p.kind for p in extract('{"a": 1} is $x$')] == ["prose", "math"]  # not a notebook: Markdown


def test_a_malformed_but_valid_json_notebook_is_read_leniently():
    text = json.dumps({"cells": [{"cell_type": "markdown", "source": ["$a$\n", "b $c$"]},
                                 {"cell_type": "code", "source": "x = 1", "outputs": [{"output_type": "stream",
                                                                                      "text": ["1\n"]}]},
                                 "junk", {"cell_type": "code", "source": 5, "outputs": "x"}]})
    pieces = extract(text, "odd.ipynb")
    assert [(p.cell, p.kind, p.line, p.output) for p in pieces] == [
        (0, "math", 1, False), (0, "prose", 2, False), (0, "math", 2, False), (1, "code", 1, False),
        (1, "output", 1, True)]


# ------------------------------------------------------------------------------------ encodings, endings


def test_line_endings_bom_and_unicode():
    lf = "# \u00dcber K\u00f6pfe\n\nAnzahl: $h = 2$\n\u098f\u0987 $n = 3$ \u0964\n\n$$\nd_k = 2\n$$\n"
    expected = [(p.kind, p.line, p.text) for p in extract(lf)]
    assert ("heading", 1, "\u00dcber K\u00f6pfe") in expected and ("math", 7, "d_k = 2") in expected
    for variant in (lf.replace("\n", "\r\n"), lf.replace("\n", "\r"), "\ufeff" + lf.replace("\n", "\r\n")):
        assert [(p.kind, p.line, p.text) for p in extract(variant)] == expected
    crlf = (CORPUS / "09_espanol_crlf.txt").read_bytes().decode("utf-8")
    assert "\r\n" in crlf
    assert one(extract(crlf), "math", 63).text == "(2.245, -2.249)"


def test_real_seeds_extract(seeds_dir):
    for path in sorted(seeds_dir.glob("*.txt")):
        pieces = extract(path.read_text(encoding="utf-8", errors="replace"), path.name)
        assert pieces and all(p.kind in KINDS for p in pieces), path.name
    seed001 = extract((seeds_dir / "001_63009bb1ec9a24fa.txt").read_text(encoding="utf-8"))
    assert [(p.line, p.name, p.value) for p in seed001 if p.kind == "code"][0] == (39, "token 1",
                                                                                  [0.2, 0.5, 0.1, 0.8])
    seed003 = extract((seeds_dir / "003_5b6b5185d11461ee.txt").read_text(encoding="utf-8"))
    assert [p.value for p in seed003 if p.name == "head2_output"] == [[-0.4, 2.3]]


# -------------------------------------------------------------------------------------------- the corpus


def _key_locations() -> list[tuple[str, int | None, bool, int, str]]:
    out = []
    for key_path in sorted(CORPUS.glob("*.key.json")):
        key = json.loads(key_path.read_text(encoding="utf-8"))
        for s in key["statements"]:
            out.append((key["document"], s.get("cell"), bool(s.get("output", False)), s["line"], s["text"]))
    return out


def test_every_keyed_statement_of_the_corpus_has_a_piece_at_its_location():
    keys = _key_locations()
    assert len({k[0] for k in keys}) == 25
    reached: dict[str, set[tuple[int | None, bool, int]]] = {}
    for document in {k[0] for k in keys}:
        pieces = extract((CORPUS / document).read_bytes().decode("utf-8"), document)
        assert all(p.kind in KINDS for p in pieces)
        # a row of a multi-row environment counts as reached at its own line
        reached[document] = ({(p.cell, p.output, p.line) for p in pieces}
                             | {(p.cell, p.output, line) for p in pieces for line, _ in p.rows})
    misses = [k for k in keys if k[1:4] not in reached[k[0]]]
    assert not misses, f"{len(keys) - len(misses)}/{len(keys)} keyed statements reached; missed: {misses}"


def test_pieces_are_in_document_order():
    for path in sorted(CORPUS.glob("*.md")) + sorted(CORPUS.glob("*.txt")):
        lines = [p.line for p in extract(path.read_text(encoding="utf-8"))]
        assert lines == sorted(lines), path.name
    nb = extract((CORPUS / "06_numpy_notebook.ipynb").read_text(encoding="utf-8"), "06.ipynb")
    assert [p.cell for p in nb] == sorted(p.cell for p in nb)


def test_pieces_are_hashable():
    assert len(set(extract("$a$ and $b$\n\n```\nX = [1]\n```"))) == 4


# ---------------------------------------------------------------------------------------------- fuzzing

_FRAGMENTS = st.sampled_from([
    "$", "$$", "\\$", "`", "```", "~~~", "```python\n", "\n", "\r\n", "\r", " ", "    ", "# ", "- ", "> ", "| a | b |",
    "|---|---|", "x = [[1, 0],", " [0, 1]]", "np.array([1, 2])", "\\[", "\\]", "\\(", "\\)", "\\begin{align*}",
    "\\end{align*}", "\\begin{aligned}", "\\end{aligned}", "&", "\\\\", "<!--", "-->", "{", "}", "token 1: [0.1]",
    "A1 =", "[[0.1 0.2]", "tensor(", ")", "h = 2", "\ufeff", "\u00fc", "\u0995", "\u2212", "\x00", "[", "]", "==",
    "{\"cells\": [", "'", "\"", "1e-3", "nan", "\t", "---", "===", "*", "_"])
_DOCUMENTS = st.one_of(st.text(max_size=300), st.lists(_FRAGMENTS, max_size=60).map("".join),
                       st.lists(st.one_of(_FRAGMENTS, st.text(max_size=5)), max_size=40).map("".join))


def _line_count(text: str) -> int:
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n").count("\n") + 1


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_DOCUMENTS)
def test_extract_never_raises_and_lines_stay_in_the_document(text):
    pieces = extract(text)
    for p in pieces:
        assert p.kind in KINDS and 1 <= p.line <= _line_count(text), p
        assert all(1 <= line <= _line_count(text) for line, _ in p.rows)


_CELLS = st.lists(st.tuples(st.sampled_from(["markdown", "code", "raw"]), _DOCUMENTS, _DOCUMENTS), max_size=4)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_CELLS)
def test_notebooks_never_raise_and_lines_stay_in_their_cell(cells):
    data = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": kind, "metadata": {}, "source": source}
        | ({"outputs": [{"output_type": "stream", "name": "stdout", "text": printed}], "execution_count": None}
           if kind == "code" else {}) for kind, source, printed in cells]}
    for p in extract(json.dumps(data), "fuzz.ipynb"):
        assert p.cell is not None and p.kind in KINDS
        kind, source, printed = cells[p.cell]
        assert 1 <= p.line <= _line_count(printed if p.output else source), p
