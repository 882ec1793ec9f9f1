"""The checker's pipeline on small documents written for these tests, in several notations: every verdict is
computed, and changing the mathematics of the document changes it (asymmetric scores, per-head values)."""

from __future__ import annotations

import json

import pytest

from mha_symbolic.document import check_text

# Two heads, n = 2, d_model = 4: Q_1 K_1^T = [[0, 2], [-1, 3]] is not symmetric.
TABLE_DOC = """# Weights in tables

Number of heads (h): 2
d_model is 4
Sequence length (n): 2

The rows of $X$:

| token | x1 | x2 | x3 | x4 |
| --- | --- | --- | --- | --- |
| the | 1 | 1 | 0 | 0 |
| cat | 1 | 2 | 0 | 1 |

Head 1:

| feature | W_Q^1[:,1] | W_Q^1[:,2] | W_K^1[:,1] | W_K^1[:,2] | W_V^1[:,1] | W_V^1[:,2] |
| --- | --- | --- | --- | --- | --- | --- |
| x1 | 0 | 0 | -1 | 0 | -1 | 0 |
| x2 | 0 | 2 | 0 | 0 | 1 | 2 |
| x3 | 0 | 0 | 0 | 2 | 0 | 2 |
| x4 | 1 | 0 | 0 | 1 | 0 | 0 |

$$Q_1K_1^\\top = \\begin{bmatrix} 0 & 2 \\\\ -1 & 3 \\end{bmatrix}$$

Attention weights

| head | query | weight on 'the' | weight on 'cat' |
| --- | --- | --- | --- |
| 1 | the | 0.196 | 0.804 |
| 1 | cat | 0.056 | 0.944 |
"""


def findings(text, name="<text>"):
    return check_text(text, name).findings


def at(text, line, name="<text>"):
    return [f for f in findings(text, name) if f.line == line]


def test_tables_bind_inputs_and_compare_rows():
    rows = {f.line: f for f in findings(TABLE_DOC) if f.kind == "number" and f.status != "given"}
    assert rows[23].status == "correct"  # Q_1 K_1^T from the tables' X and weights
    assert rows[29].status == "correct" and rows[30].status == "correct"
    wrong_row = TABLE_DOC.replace("| 1 | cat | 0.056 | 0.944 |", "| 1 | cat | 0.065 | 0.944 |")
    assert at(wrong_row, 30)[0].status == "wrong" and "0.05581" in at(wrong_row, 30)[0].message
    # the transpose is another matrix: the scores are asymmetric
    transposed = TABLE_DOC.replace("0 & 2 \\\\ -1 & 3", "0 & -1 \\\\ 2 & 3")
    assert at(transposed, 23)[0].status == "wrong"


@pytest.mark.parametrize("statement, status", [
    (r"$$\mathrm{Var}(q \cdot k) = d_k$$", "correct"),
    (r"$$\mathrm{Var}(q \cdot k) = 1$$", "wrong"),
    (r"$$\mathrm{Var}\left(\frac{q \cdot k}{\sqrt{d_k}}\right) = 1$$", "correct"),
    (r"$$\mathrm{Var}\left(\frac{q \cdot k}{d_k}\right) = \frac{1}{d_k}$$", "correct"),
    (r"$$\mathrm{Var}\left(\frac{q \cdot k}{d_k}\right) = 1$$", "wrong"),
    (r"$$\mathbb{E}[q \cdot k] = 0$$", "correct"),
    (r"$$\mathrm{sd}(q \cdot k) = \sqrt{d_k}$$", "correct"),
    (r"$$\mathrm{Var}(q_j) = 1$$", "given"),
])
def test_statistics_come_from_the_engines_moments(statement, status):
    f = findings(statement)[0]
    assert (f.kind, f.status) == ("statistic", status), f.message


def test_statistics_at_a_fixed_width():
    doc = ("With $d_{model} = 512$ and $h = 8$, each head has $d_k = 512 / 8 = 64$.\n\n"
           "$$\\mathrm{sd}(q \\cdot k) = 8$$\n")
    assert [f.status for f in findings(doc) if f.kind == "statistic"] == ["correct"]
    assert [f.status for f in findings(doc.replace("= 8$$", "= 64$$")) if f.kind == "statistic"] == ["wrong"]


@pytest.mark.parametrize("statement, status", [
    (r"$$\mathrm{softmax}(S)_{ij} = \frac{\exp(S_{ij})}{\sum_{l=1}^{n} \exp(S_{il})}$$", "correct"),
    (r"$$\mathrm{softmax}(S)_{ij} = \frac{\exp(S_{ij})}{\sum_{l=1}^{n} \exp(S_{lj})}$$", "wrong"),
    (r"$$\mathrm{softmax}(s + c\mathbf{1}) = \mathrm{softmax}(s)$$", "correct"),
    (r"$$\mathrm{softmax}(2s) = \mathrm{softmax}(s)$$", "wrong"),
    (r"$$\mathrm{softmax}(3, 0) \approx (0.953, 0.047)$$", "correct"),
    (r"$$\mathrm{softmax}(3, 0) \approx (0.924, 0.047)$$", "wrong"),
])
def test_softmax_axis_and_identities(statement, status):
    assert findings(statement)[0].status == status


def test_softmax_axis_is_the_engines():
    from mha_symbolic.check.softmax_forms import engine_axis

    assert engine_axis() == "row"


SIZES = "We use $h = 2$ heads, $d_{model} = 4$ and $n = 3$ tokens.\n\n"


@pytest.mark.parametrize("claim, status", [
    (r"\mathrm{rank}(Q_1K_1^T) \le d_k", "correct"),
    (r"\mathrm{rank}(A_1) \le d_k", "wrong"),
    (r"\mathrm{rank}\left(\mathrm{softmax}\left(\frac{Q_1K_1^T}{\sqrt{d_k}}\right)\right) \le d_k", "wrong"),
    (r"\mathrm{rank}(\mathrm{head}_1) \le d_v", "correct"),
    (r"\mathrm{rank}(\mathrm{Concat}(\mathrm{head}_1, \mathrm{head}_2) W^O) \le d_k", "wrong"),
    (r"\mathrm{rank}(\mathrm{Concat}(\mathrm{head}_1, \mathrm{head}_2) W^O) \le n", "correct"),
    (r"\mathrm{rank}(Q_1K_1^T) = \mathrm{rank}(K_1Q_1^T)", "correct"),
    (r"\mathrm{rank}(Q_1K_1^T) \ne \mathrm{rank}\left((Q_1K_1^T)^T\right)", "wrong"),
])
def test_rank_claims_of_every_form(claim, status):
    f = [x for x in findings(SIZES + f"$${claim}$$\n") if x.kind == "rank"][0]
    assert f.status == status, f.message
    if status == "wrong" and "rank(" in claim.split("\\le")[0] and "\\ne" not in claim:
        assert "certified" in f.basis or "fails at" in f.message


def test_general_concat_rank_uses_every_head():
    """rank(Concat(head_1, ..., head_h) W^O) <= d_k is false: a certified instance with two different heads."""
    claim = r"\mathrm{rank}\left(\mathrm{Concat}(\mathrm{head}_1, \ldots, \mathrm{head}_h)W^O\right) \le d_k"
    f = findings(f"$${claim}$$")[0]
    assert f.status == "wrong" and f.basis == "certified counterexample" and "h = 2" in f.message


def test_ne_between_equal_matrices_is_wrong():
    doc = SIZES + "$$Q_2K_2^T \\ne \\left(K_2Q_2^T\\right)^T$$\n"
    assert [f.status for f in findings(doc) if f.kind == "formula"] == ["wrong"]


def test_a_condition_binds_only_its_sentence():
    doc = SIZES + ("$$d_k = d_{model}/h = 2$$\n\n(With $h = 1$ we would instead have $d_k = d_{model} = 4$.)\n\n"
                   "$$d_k = 2$$\n")
    got = [(f.line, f.status) for f in findings(doc) if f.kind == "setting" and f.status != "given"]
    assert got == [(3, "correct"), (5, "correct")]  # line 7 restates d_k = 2: given (issue 25), not "correct"
    assert [f.status for f in at(doc, 7)] == ["given"]
    wrong = doc.replace("d_k = d_{model} = 4", "d_k = d_{model} = 2")
    assert ("wrong" in [f.status for f in at(wrong, 5)])


def test_split_heads_read_column_blocks():
    doc = ("$n = 3$, $d_{model} = 4$, $h = 2$, $d_k = 2$.\n\n"
           "$$X = \\begin{bmatrix} 1 & 0 & 2 & 1 \\\\ 0 & 1 & 1 & 0 \\\\ 2 & 1 & 0 & 1 \\end{bmatrix}$$\n"
           "$$W_Q^1 = \\begin{bmatrix} 1 & 0 \\\\ -1 & 1 \\end{bmatrix}$$\n"
           "$$Q_1 = X_1W_Q^1 = \\begin{bmatrix} 1 & 0 \\\\ -1 & 1 \\\\ 1 & 1 \\end{bmatrix}$$\n"
           "$$X_1 \\in \\mathbb{R}^{3 \\times 2}$$\n")
    assert [f.status for f in findings(doc) if f.kind in ("number", "shape") and f.status != "given"] == [
        "correct", "correct"]  # X_1 = X[:, 0:2] in the split convention
    assert at(doc.replace("-1 & 1 \\\\ 1 & 1", "1 & 1 \\\\ 1 & 1"), 5)[0].status == "wrong"


def test_code_quoted_in_prose():
    doc = ("```python\nX = np.array([[1, 0, 1, 0], [0, 1, 1, 0]])\n"
           "WQ1 = np.array([[1, 0], [0, 1], [1, 1], [0, 0]])\n```\n"
           "- `Q1 = X @ WQ1` = [[2, 1], [1, 2]]\n- `Q1.shape` is `(2, 2)`\n- `Q1.shape` is `(2, 3)`\n")
    got = [(f.line, f.status) for f in findings(doc) if f.status != "given"]
    assert got == [(5, "correct"), (6, "correct"), (7, "wrong")]


def test_plain_text_formulas_with_unicode():
    doc = ("h = 1 heads\nd_model = 2\nn = 2 tokens\nX = [[1, 0], [0, 2]]\nWQ₁ = [[1, 1], [0, 1]]\n"
           "WK₁ = [[1, 0], [1, 1]]\nQ₁K₁ᵀ = [[1, 4], [0, 4]]\nQ₁K₁ᵀ / √2 ≈ [[0.707, 2.828], [0.000, 2.828]]\n")
    got = [(f.line, f.status) for f in findings(doc, "doc.txt") if f.kind == "number" and f.status != "given"]
    assert got == [(7, "correct"), (8, "correct")]
    wrong = doc.replace("[[1, 4], [0, 4]]", "[[1, 0], [4, 4]]")  # the transpose
    assert [f.status for f in at(wrong, 7, "doc.txt")] == ["wrong"]


def test_notebook_stacked_heads_counted_from_zero():
    source = ("import torch\nX = torch.tensor([[1., 0., 0., 1.], [0., 1., 1., 0.]])\n"
              "W_q = torch.tensor([[[1., 0.], [0., 1.], [0., 0.], [0., 0.]],\n"
              "                    [[0., 1.], [1., 0.], [0., 0.], [0., 0.]]])\n"
              "W_k = torch.tensor([[[1., 1.], [0., 1.], [0., 0.], [0., 0.]],\n"
              "                    [[1., 0.], [0., 1.], [0., 0.], [0., 0.]]])\n"
              "S = X @ W_q @ (X @ W_k).transpose(-2, -1)\nS[1]")
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "markdown", "metadata": {}, "id": "a",
         "source": "Heads $H_0$ and $H_1$; $n = 2$, $d_{model} = 4$, $h = 2$."},
        {"cell_type": "code", "metadata": {}, "id": "b", "execution_count": 1, "source": source, "outputs": [
            {"output_type": "execute_result", "execution_count": 1, "metadata": {},
             "data": {"text/plain": "tensor([[0., 1.],\n        [1., 0.]])"}}]}]}
    # head 1 (0-based): X W_q[1] = [[0, 1], [1, 0]], X W_k[1] = I, so S[1] = [[0, 1], [1, 0]]
    out = [f for f in findings(json.dumps(nb), "nb.ipynb") if f.output]
    # the printout is what the code's trace computes, line by line (what the names would suggest is not asked)
    assert [(f.line, f.status, f.basis) for f in out] == [(1, "correct", "traced"), (2, "correct", "traced")]
    nb["cells"][1]["outputs"][0]["data"]["text/plain"] = "tensor([[1., 0.],\n        [1., 1.]])"  # that is S[0]
    out = [f for f in findings(json.dumps(nb), "nb.ipynb") if f.output]
    assert {f.status for f in out} == {"wrong"} and {(f.line, f.basis) for f in out} >= {(1, "traced"), (2, "traced")}


def test_a_second_example_starts_afresh():
    doc = ("# Big model\n$d_{model} = 512$, $h = 8$, $d_k = 64$\n\n# Small example\n"
           "$d_{model} = 4$, $h = 2$, so $d_k = 2$.\n")
    got = [(f.line, f.status) for f in findings(doc) if f.status != "given"]
    assert got == [(2, "correct"), (5, "correct")]
    assert at(doc.replace("so $d_k = 2$", "so $d_k = 64$"), 5)[-1].status == "wrong"


def test_entries_of_computed_matrices():
    doc = SIZES.replace("$n = 3$", "$n = 2$") + (
        "$$X = \\begin{bmatrix} 1 & 0 & 1 & 0 \\\\ 0 & 2 & 0 & 1 \\end{bmatrix}$$\n"
        "$$W_1^Q = \\begin{bmatrix} 1 & 0 \\\\ 0 & 1 \\\\ 1 & 0 \\\\ 0 & 1 \\end{bmatrix}$$\n"
        "$$W_1^K = \\begin{bmatrix} 0 & 1 \\\\ 1 & 0 \\\\ 1 & 0 \\\\ 0 & 1 \\end{bmatrix}$$\n"
        "$(Q_1K_1^T)_{12} = 4$ and $(Q_1K_1^T)_{21} = 2$\n")
    assert [f.status for f in findings(doc) if f.line == 6] == ["correct", "wrong"]  # Q_1 K_1^T = [[2, 4], [3, 3]]


@pytest.mark.parametrize("formula, reason", [
    (r"10^{10^{10}} = 5", "a tower of exponents"),
    (r"(10^{9})! = 1", "the factorial of a large number"),
    (r"2^{100000} = 3", "an exponent of 100000"),
])
def test_huge_numbers_are_refused_before_evaluation(formula, reason):
    f = findings(f"$${formula}$$\n")[0]
    assert f.status == "unchecked" and reason in f.message


def test_contradictory_sizes_are_reported_once_and_numbers_still_checked():
    r = findings("Number of heads = 3\nModel dimension = 4\n$$\\sqrt{2} \\approx 1.41$$\n")
    assert [f.status for f in r] == ["given", "given", "inconsistent", "correct"]


def test_a_false_inequality_of_a_computed_value_is_wrong():
    open_doc = ("Let $n = 2$, $d_{model} = 2$ and $h = 1$, with $X = \\begin{bmatrix} 1 & 0 \\\\ 0 & 1 "
                      "\\end{bmatrix}$, $W^Q = \\begin{bmatrix} 1 & 2 \\\\ 2 & 4 \\end{bmatrix}$ and "
                      "$W^K = \\begin{bmatrix} 1 & 0 \\\\ 0 & 1 \\end{bmatrix}$.\n\n"
                      "$$\\det S_1 = 0$$\n\n$$\\det S_1 \\neq 0$$\n")
    report = check_text(open_doc, isolate=False)
    assert [(f.line, f.status) for f in report.findings if f.status in ("wrong", "correct")] == [(3, "correct"),
                                                                                                 (5, "wrong")]
    assert not report.stopped


def test_an_internal_error_costs_one_piece_not_the_document(monkeypatch):
    from mha_symbolic.check import pipeline

    real = pipeline._sizes_agree

    def broken(doc, p, emit):
        if "7" in p.text:
            raise StopIteration  # a bug the per-piece guard does not name
        return real(doc, p, emit)

    monkeypatch.setattr(pipeline, "_sizes_agree", broken)
    report = check_text("$$2 + 5 = 7$$\n\n$$2 + 2 = 5$$\n", isolate=False)
    assert not report.stopped
    assert [(f.line, f.status) for f in report.findings if f.status != "correct"] == [(1, "unchecked"), (3, "wrong")]
    assert "internal error" in next(f.message for f in report.findings if f.status == "unchecked")


def test_tex_control_space_between_arguments_is_a_space():
    doc = "$$\\mathrm{softmax}(0,\\ 2.8284,\\ 1.4142) \\approx (0.0454,\\ 0.7679,\\ 0.1867)$$\n"
    assert [f.status for f in check_text(doc, isolate=False).findings] == ["correct"]
    assert [f.status for f in check_text(doc.replace("0.7679", "0.7279"), isolate=False).findings] == ["wrong"]
