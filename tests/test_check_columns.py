"""Documents whose tokens are columns (``X`` is d_model x n, ``Q = W_Q X``, scores ``K^T Q``) are judged in their own
orientation: the model's row-convention matrices are read transposed, a softmax normalises the document's query
axis, and ``[a; b]`` stacks blocks as rows.  Also the shape tables, the bare ``\\mathrm{rank} S_1`` and macros whose
argument is one character (``\\sqrt 2``, ``\\frac12``), read the same way in either convention."""

from __future__ import annotations

import pytest

from mha_symbolic import check_text
from mha_symbolic.check.model import DocumentModel, written_transposed
from mha_symbolic.errors import ParseError

#: a one-head example with tokens as columns (d_model = 2, n = 3, d_k = 2); every value below is right
COLUMNS = r"""# One head, tokens as columns

Each token is a column: $X \in \mathbb{R}^{d_{model} \times n}$ and $Q = W_Q X$, $K = W_K X$, $V = W_V X$.
The scores are $S = K^\top Q$, and the softmax normalises each column of $S/\sqrt{d_k}$.

Take $d_{model} = 2$, $n = 3$, $h = 1$ and $d_k = 2$, with
$$X = \begin{bmatrix}1&0&1\\0&1&1\end{bmatrix},\quad W_Q = \begin{bmatrix}1&1\\0&1\end{bmatrix},\quad
W_K = \begin{bmatrix}1&0\\1&1\end{bmatrix},\quad W_V = \begin{bmatrix}2&0\\0&1\end{bmatrix}.$$
Then $Q = \begin{bmatrix}1&1&2\\0&1&1\end{bmatrix}$ and $K = \begin{bmatrix}1&0&1\\1&1&2\end{bmatrix}$,
so $Q \in \mathbb{R}^{2 \times 3}$.

The scores are $S = K^\top Q = \begin{bmatrix}1&2&3\\0&1&1\\1&3&4\end{bmatrix}$.

The weights are
$$A = \mathrm{softmax}(S/\sqrt{2}) \approx
\begin{bmatrix}0.4011&0.2840&0.3057\\0.1978&0.1400&0.0743\\0.4011&0.5760&0.6200\end{bmatrix}.$$

The head output is $H = V A \approx \begin{bmatrix}1.6044&1.7199&1.8514\\0.5989&0.7160&0.6943\end{bmatrix}$.
"""


def findings(text: str) -> dict[int, set[str]]:
    found: dict[int, set[str]] = {}
    for f in check_text(text, "doc.md").findings:
        found.setdefault(f.line, set()).add(f.status)
    return found


def test_a_column_document_is_judged_in_its_own_orientation() -> None:
    got = findings(COLUMNS)
    assert not any(s & {"wrong", "inconsistent", "assumed"} for s in got.values()), got
    # the values of Q and K, the shape of Q, the scores, the column softmax and the head output are compared
    assert {9, 10, 12, 16, 18} <= {line for line, s in got.items() if "correct" in s}


@pytest.mark.parametrize(("old", "new", "line"), [
    ("Q = \\begin{bmatrix}1&1&2", "Q = \\begin{bmatrix}1&1&3", 9),  # a value of Q
    ("Q \\in \\mathbb{R}^{2 \\times 3}", "Q \\in \\mathbb{R}^{3 \\times 2}", 10),  # Q as the rows have it
    ("0.4011&0.2840", "0.4011&0.2940", 16),  # a weight: the columns no longer sum to one
    ("1.6044&1.7199", "1.6044&1.7299", 18),  # the head output
])
def test_a_planted_error_in_a_column_document_is_found(old: str, new: str, line: int) -> None:
    assert old in COLUMNS
    assert "wrong" in findings(COLUMNS.replace(old, new)).get(line, set())


def test_the_softmax_of_a_column_document_follows_its_scores() -> None:
    """Row-normalised weights (the softmax of each row of S) are wrong where the document's scores are K^T Q."""
    rows = COLUMNS.replace("0.4011&0.2840&0.3057\\\\0.1978&0.1400&0.0743\\\\0.4011&0.5760&0.6200",
                           "0.1863&0.3072&0.5065\\\\0.2483&0.5035&0.2483\\\\0.0670&0.2741&0.6589")
    assert "wrong" in findings(rows)[16]


def test_what_a_column_document_writes_transposed() -> None:
    assert written_transposed("X", None) and written_transposed("W_Q^1", "row") and written_transposed("head_2", None)
    assert written_transposed("A_1", "column") is True and written_transposed("S'_1", "row") is False
    assert written_transposed("S_1", None) is None and written_transposed("m", "column") is False


def test_softmax_axis_in_a_column_document() -> None:
    doc = DocumentModel(columns=True)
    for size, value in (("n", 3), ("d_model", 4), ("h", 2)):
        doc.bind_dim(size, value)
    with pytest.raises(ParseError, match="which axis"):  # neither K^T Q nor Q^T K written: not known
        doc.read(r"\mathrm{softmax}(K_1^T Q_1)")
    doc.memory["query_axis"] = "column"
    doc._table = None
    assert str(doc.read(r"\mathrm{softmax}(K_1^T Q_1)")) == "softmax(Q_1*K_1.T).T"
    # the softmax of each row of the document's K^T Q, as its subscript says (that matrix is K Q^T of the rows)
    assert str(doc.read(r"\mathrm{softmax}_{\text{row}}(K_1^T Q_1)").doit()) == "softmax(K_1*Q_1.T)"
    with pytest.raises(ParseError, match="subscript"):  # softmax_col of a document of rows is not taken on trust
        DocumentModel().read(r"\mathrm{softmax}_{col}(A)")


def test_blocks_stacked_as_rows_or_side_by_side() -> None:
    cols = DocumentModel(columns=True)
    rows = DocumentModel()
    for doc in (cols, rows):
        for size, value in (("n", 3), ("d_model", 4), ("h", 2)):
            doc.bind_dim(size, value)
    assert cols.read("W^O [H_1; H_2]").shape == (4, 3)  # the heads stacked: the concatenation of columns
    assert cols.read(r"\mathrm{Concat}(H_1, H_2)").shape == (4, 3)
    assert rows.read("[H_1, H_2] W^O").shape == (3, 4)  # side by side: the concatenation of rows
    assert rows.read("[H_1; H_2]").shape == (6, 2)  # stacked in a document of rows: not its concatenation


SHAPES = r"""Take $n = 5$, $d_{model} = 8$ and $h = 2$.

| step | object | shape |
|---|---|---|
| input | $X$ | $5 \times 8$ |
| projections | $Q_i, K_i, V_i$ | $5\times 4$ |
| scores | $S_i = Q_i K_i^\top$ | $(5, 5)$ |
| batched | $Q$ | $(B, h, n, d_k)$ |
| concatenation | $\mathrm{Concat}(\mathrm{head}_1, \mathrm{head}_2)$ | $5 \times 8$ |
"""


def test_a_table_of_shapes() -> None:
    shapes = {f.line: f.status for f in check_text(SHAPES, "doc.md").findings if f.kind == "shape"}
    assert shapes == {5: "correct", 6: "correct", 7: "correct", 9: "correct"}  # the batched row is passed over
    planted = {f.line: f.status for f in check_text(SHAPES.replace("$5\\times 4$", "$4\\times 5$"), "doc.md").findings
               if f.kind == "shape"}
    assert planted[6] == "wrong"


def test_a_rank_of_one_name_needs_no_parentheses() -> None:
    """... and a matrix of the document's own numbers is its own instance (no model needed)."""
    doc = "Take $P = \\begin{bmatrix}1&0&1\\\\0&1&1\\\\1&1&2\\end{bmatrix}$, so $\\operatorname{rank} P = 2$.\n"
    assert findings(doc)[1] >= {"correct"}
    assert "wrong" in findings(doc.replace("rank} P = 2", "rank} P = 3"))[1]


def test_a_macro_argument_of_one_character() -> None:
    got = findings("We get $e^{\\sqrt 2} \\approx 4.1133$ and $\\frac12 + \\frac 1{\\sqrt 4} = 1$.\n")
    assert got[1] == {"correct"}
    assert "wrong" in findings("We get $e^{\\sqrt 2} \\approx 4.3133$.\n")[1]


def test_a_name_not_yet_defined_is_not_a_counterexample() -> None:
    """S = X^T M X with M defined only later in the sentence: M is not known there, so nothing is refuted."""
    doc = ("Take $n = 3$, $d_{model} = 4$ and $h = 2$. Equivalently $S_i = X M_i X^\\top$ with "
           "$M_i = W_i^Q (W_i^K)^\\top$.\n")
    assert not {"wrong", "inconsistent"} & set().union(*findings(doc).values())


def test_a_head_the_model_does_not_have() -> None:
    """K_3 where the document has one key/value head is wrong; a name it never defined is only not known."""
    doc = ("Multi-query attention with $h = 4$ heads, $d_{model} = 8$, $n = 2$ and $g = 1$ key/value head:\n"
           "$$\\mathrm{head}_3 = \\mathrm{softmax}\\left(\\frac{Q_3 K_1^\\top}{\\sqrt{d_k}}\\right) V_1$$\n")
    assert findings(doc)[2] == {"correct"}
    assert findings(doc.replace("K_1^\\top", "K_3^\\top"))[2] == {"wrong"}
    assert findings(doc.replace("K_1^\\top", "M^\\top"))[2] == {"unchecked"}


def test_a_shape_declared_for_a_name_of_the_document() -> None:
    """W_Q in R^{d x d_k} of a one-head text is a matrix of that shape (not the model's heads side by side, and not
    a number); a size's letter declared a matrix is not read as the size in a product."""
    doc = ("Tokens are rows of $X \\in \\mathbb{R}^{n \\times d}$ and one head has\n"
           "$W_Q \\in \\mathbb{R}^{d \\times d_k}$.\n"
           "So $Q = X W_Q \\in \\mathbb{R}^{n \\times d_k}$.\n")
    assert not {"wrong", "inconsistent"} & set().union(*findings(doc).values())
    assert "wrong" in findings(doc.replace("n \\times d_k}$.", "d_k \\times n}$."))[3]
    sizes = ("Take $n = 3$, $d_{model} = 4$, $h = 2$ and $W_O = I_4$.\n\n"
             "Stack the heads as $h \\in \\mathbb{R}^{4 \\times 3}$, so\n"
             "$Y = W_O h = \\begin{bmatrix}1&0&0\\\\0&1&0\\\\0&0&1\\\\1&1&1\\end{bmatrix}$.\n")
    assert not {"wrong", "inconsistent"} & set().union(*findings(sizes).values())


def test_a_table_of_shapes_written_in_plain_text():
    doc = ("We take n = 16, d_model = 768 and h = 12.\n\n| step | expression | shape |\n|---|---|---|\n"
           "| queries | Q_i = X W_i^Q | 16 × 64 |\n| scores | Q_i K_iᵀ / √64 | %s |\n"
           "| weights | A_i = softmax(scores), rows sum to 1 | 16 × 16 |\n")
    shapes = {f.line: f.status for f in check_text(doc % "16 × 16", "doc.md").findings if f.kind == "shape"}
    assert shapes == {5: "correct", 6: "correct"}  # the weights' cell names "scores", a word: not read
    assert {f.line: f.status for f in check_text(doc % "16 × 64", "doc.md").findings if f.kind == "shape"}[6] == \
        "wrong"


def test_a_numeric_shape_where_the_document_fixes_no_sizes():
    """Q_i in R^{16 x 64} with d_model and h never given: it holds for d_model / h = 64, so it is not refuted."""
    doc = "The queries are $Q_i \\in \\mathbb{R}^{16 \\times 64}$.\n"
    assert findings(doc)[1] == {"unchecked"}
    assert findings("Take $d_{model} = 768$ and $h = 12$.\n\n" + doc.replace("16 \\times 64", "16 \\times 32"))[3] == \
        {"wrong"}


def test_a_remark_on_the_other_convention_does_not_undo_the_documents_own() -> None:
    doc = ("Tokens are columns: $X \\in \\mathbb{R}^{d \\times n}$, $Q = W_Q X \\in \\mathbb{R}^{d_k \\times n}$ and "
           "$K = W_K X$.\n\n"
           "*Remark.* In the row convention of papers ($X \\in \\mathbb{R}^{n \\times d}$, $Q = X W_Q$) one writes "
           "the transpose.\n\n"
           "Example: $d = 512$, $H = 8$, so $d_k = 64$, and for $n = 10$ tokens "
           "$Q \\in \\mathbb{R}^{64 \\times 10}$.\n")
    flagged = {line for line, statuses in findings(doc).items() if statuses & {"wrong", "inconsistent"}}
    assert flagged == set()
    planted = findings(doc.replace("\\mathbb{R}^{64 \\times 10}", "\\mathbb{R}^{10 \\times 64}"))
    assert planted[5] & {"wrong", "inconsistent"}  # in its own convention, the queries are d_k x n
