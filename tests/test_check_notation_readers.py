"""Readers per notation found on a blind set once it was scored (then opened): inline code holding a formula, a
block of comments, shape products written in comments, MATLAB rows in a block that is not Python, a condition that
opens the block after it, the row of an aligned chain that breaks it, the document's own name for a step.  Each
with a correct form judged or left alone and a wrong form flagged; documents written here, small."""

from __future__ import annotations

import pytest

from mha_symbolic import check_text
from mha_symbolic.check.inline_code import code_formula
from mha_symbolic.check.prose_amounts import judge_prose_amounts


def statuses(text: str, line: int) -> list[str]:
    return [f.status for f in check_text(text, isolate=False).findings if f.line == line]


@pytest.mark.parametrize("source, tex", [
    ("q·k_2 = 1*0 + 2*2 = 4", r"q \cdot k_{2} = 1 \cdot 0 + 2 \cdot 2 = 4"),
    ("sqrt(8) ≈ 2.83", r"\sqrt{8} \approx 2.83"),
    ("0.50*[2, 0] = [1.00, 0]", r"0.50 \cdot \begin{bmatrix}2 & 0\end{bmatrix} = \begin{bmatrix}1.00 & 0\end{bmatrix}"),
    ("softmax([2, 1]) = [1/(1 + e^-1), ...] ≈ [0.7311, 0.2689]",
     r"\mathrm{softmax}\left(\begin{bmatrix}2 & 1\end{bmatrix}\right) \approx "
     r"\begin{bmatrix}0.7311 & 0.2689\end{bmatrix}"),
    ("1,600 * 4 = 6,400", r"1600 \cdot 4 = 6400"),
    ("d_model = 512", "d_{model} = 512"),
    ("scores = Q @ K.T", None),  # a program's name: code, not a formula
    ("x.sum()", None), ("(2, 8, 10, 64) @ (2, 8, 64, 10) -> (2, 8, 10, 10)", None), ("np.sqrt(d_k)", None),
])
def test_inline_code_as_a_formula(source, tex):
    assert code_formula(source) == tex


@pytest.mark.parametrize("score, status", [("4", "correct"), ("2", "wrong")])
def test_arithmetic_in_inline_code_is_judged_like_math(score, status):
    doc = f"Take `q = [1, 2]` and `k_2 = [0, 2]`.\n\n1. scores: `q·k_2 = 1*0 + 2*2 = {score}`\n"
    assert statuses(doc, 3) == [status]


@pytest.mark.parametrize("output, status", [("[1.3396, 1.3208]", "correct"), ("[1.3395, 1.3210]", "correct"),
                                            ("[1.3395, 0.6604]", "wrong")])
def test_a_weighted_sum_of_vectors_in_inline_code(output, status):
    doc = f"The output is `0.6698*[2, 0] + 0.3302*[0, 4] ≈ {output}`.\n"
    assert statuses(doc, 1) == [status]


@pytest.mark.parametrize("quotient, status", [("3.5355", "correct"), ("3.6", "wrong")])
def test_a_quotient_by_a_rounded_divisor_at_the_divisor_precision(quotient, status):
    # 5 / 1.4142 = 3.53557; the writer divided by sqrt(2) = 1.41421... and wrote 1.4142: 3.5355 is right
    assert [v[0] for v in judge_prose_amounts(f"so 5 / 1.4142 ≈ {quotient} here")] == [status]


TINY_THEN_MAIN = ("# Slide 1\n\nRunning example: $d = 512$, $h = 8$, so $d_k = 64$.\n\n"
                  "Tiny check ($h = 2$, $d_v = 1$, $d = 2$, $n = 1$).\n\n# Slide 2\n\n"
                  "For $n = 1024$, $d = 512$:\n\n$$\n2n^2 d = {value}\n$$\n")


@pytest.mark.parametrize("value, status", [("1{,}073{,}741{,}824", "correct"), ("536{,}870{,}912", "wrong")])
def test_a_sentence_that_is_only_a_condition_and_a_colon_sets_the_sizes_of_what_follows(value, status):
    doc = TINY_THEN_MAIN.replace("{value}", value)
    assert statuses(doc, 12) == [status]  # judged with n = 1024, d = 512 (the tiny check's n = 1, d = 2 before)


def test_a_row_that_differs_from_both_its_neighbours_is_the_one_flagged():
    doc = ("Let $n = 2$, $d_k = 2$, $Q = \\begin{pmatrix}1 & 0\\\\ 1 & 1\\end{pmatrix}$ and "
           "$K = \\begin{pmatrix}2 & 0\\\\ 0 & 2\\end{pmatrix}$.\n\n"
           "\\begin{align}\nS &= \\frac{QK^\\top}{\\sqrt{2}} \\\\\n"
           "  &= \\frac{1}{\\sqrt{2}}\\begin{pmatrix}2 & 0\\\\ 2 & 0\\end{pmatrix} \\\\\n"
           "  &= \\begin{pmatrix}\\sqrt{2} & 0\\\\ \\sqrt{2} & \\sqrt{2}\\end{pmatrix}\n\\end{align}\n")
    found = {f.line: f.status for f in check_text(doc, isolate=False).findings if f.status == "wrong"}
    assert found == {5: "wrong"}  # the middle row, not the last (which agrees with the first)


CODE = ("Settings: batch = 2, n = 10, d_model = 512, h = 8, so d_k = 64.\n\n```python\nimport numpy as np\n"
        "batch, n, d_model, h, d_k = 2, 10, 512, 8, 64\nQ = split_heads(X @ W_Q)   # (2, 8, 10, 64)\n"
        "K = split_heads(X @ W_K)   # (2, 8, 10, 64)\n"
        "scores = Q @ K.transpose(0, 1, 3, 2)   # (2, 8, 10, 64) @ (2, 8, 64, 10) -> {result}\n"
        "A = scores   # {after}\n```\n\n`A` is `{said}`.\n")


@pytest.mark.parametrize("result, status", [("(2, 8, 10, 10)", "correct"), ("(2, 8, 64, 64)", "wrong"),
                                            ("(2, 8, 10, 64)", "wrong")])
def test_a_product_of_shapes_written_in_a_comment(result, status):
    doc = CODE.format(result=result, after="(2, 8, 10, 10)", said="(2, 8, 10, 10)")
    assert status in statuses(doc, 8)
    assert statuses(doc, 9) == ["correct"]  # the product of the shapes, not the result written, flows on


@pytest.mark.parametrize("said, status", [("(2, 8, 10, 10)", "correct"), ("(2, 8, 10, 64)", "wrong")])
def test_a_shape_of_four_sizes_said_of_a_traced_name_is_compared_whole(said, status):
    doc = CODE.format(result="(2, 8, 10, 10)", after="", said=said)
    assert statuses(doc, 12) == [status]


@pytest.mark.parametrize("total, status", [("6,400", "correct"), ("12,800", "wrong")])
def test_a_block_of_comments_has_its_arithmetic_judged(total, status):
    doc = (f"Memory:\n\n```python\n# weights kept: 2 * 8 * 10 * 10 = 1,600 floats\n"
           f"#   in float32: 1,600 * 4 bytes = {total} bytes\n```\n")
    assert statuses(doc, 5) == [status]


MATLAB = ("Sequence length n = 3, d_model = 3, one head (h = 1) with d_k = d_v = 2.\n\n"
          "    X = [1 0 1; 0 1 1; 1 1 0]            % size(X) = [3 3]\n"
          "    W_Q = [1 0; 0 1; 1 1]                % 3 x 2\n    W_K = [1 0; 1 1; 0 1]                % 3 x 2\n\n"
          "    Q = X * W_Q = [2 1; 1 2; 1 1]        % 3 x 2\n    K = X * W_K = [1 1; 1 2; 2 1]        % 3 x 2\n"
          "    S = Q * K' = {scores}   % 3 x 3\n\n"
          "    A = S / sqrt(2) = [2.1213 2.8284 3.5355; 2.1213 3.5355 2.8284; 1.4142 2.1213 2.1213]\n")


@pytest.mark.parametrize("scores, status", [("[3 4 5; 3 5 4; 2 3 3]", "correct"), ("[3 4 5; 3 5 4; 2 3 4]", "wrong")])
def test_matlab_rows_and_comments_in_a_block_that_is_not_python(scores, status):
    doc = MATLAB.format(scores=scores)
    assert status in statuses(doc, 9)
    if status == "correct":  # sqrt(2) in a plain formula is the root (not s·q·r·t): A = S / sqrt(2) holds
        assert "correct" in statuses(doc, 11) and "wrong" not in statuses(doc, 11)
        assert "correct" in statuses(doc, 7)  # X * W_Q: code's product, of the one head's weights


@pytest.mark.parametrize("product, status", [("3 x 2", "correct"), ("3 x 3", "wrong")])
def test_a_product_of_shapes_in_a_matlab_comment(product, status):
    doc = f"One head, n = 3.\n\n    O = P * V                % (3 x 3) * (3 x 2) = {product}\n"
    assert status in statuses(doc, 3)


@pytest.mark.parametrize("ratio, status", [("a quarter of", "correct"), ("an eighth of", "wrong"),
                                           ("roughly an eighth of", None)])
def test_a_ratio_of_two_amounts_written_beside_it(ratio, status):
    doc = (f"Storing it in factored form costs $2 \\cdot 512 \\cdot 64 = 65{{,}}536$ numbers, {ratio} the "
           "$512^2 = 262{,}144$ a full form would need.\n")
    got = [f.status for f in check_text(doc, isolate=False).findings if f.line == 1 and f.kind == "number"
           and "/" in f.message]
    assert got == ([status] if status else [])


@pytest.mark.parametrize("values, status", [("4 \\times 3 \\times 3", "correct"), ("4 \\times 3 \\times 2", "wrong")])
def test_a_set_of_batched_shapes_written_by_name_and_by_value(values, status):
    doc = ("We use $h = 4$ heads, $n = 3$ tokens and $d_k = 2$.\n\n"
           f"$$S \\in \\mathbb{{R}}^{{h \\times n \\times n}} = \\mathbb{{R}}^{{{values}}}.$$\n")
    assert statuses(doc, 3) == [status]


@pytest.mark.parametrize("width, status", [("64", "correct"), ("128", "wrong")])
def test_a_head_width_stated_with_the_sizes_of_its_condition_is_their_result(width, status):
    doc = (f"We use `d_model = 6` and `n_heads = 2`.\n\nWith `d_model = 1024` and `n_heads = 16` one gets "
           f"`dk = {width}`.\n")
    assert statuses(doc, 3)[-1] == status


@pytest.mark.parametrize("cell, status", [("307,200", "correct"), ("153,600", "wrong")])
def test_a_table_column_a_unit_factor_of_others(cell, status):
    doc = ("| Model | L | d_model | fp16 bytes/token | fp16 KiB |\n|---|--:|--:|--:|--:|\n"
           "| small | 12 | 768 | 36,864 | 36 |\n| medium | 24 | 1024 | 98,304 | 96 |\n"
           f"| xl | 48 | 1600 | {cell} | 300 |\n| 7B | 32 | 4096 | 524,288 | 512 |\n"
           "| 13B | 40 | 5120 | 819,200 | 800 |\n")
    assert statuses(doc, 5) == [status]


def test_small_counts_teach_no_unit_factor():
    # query heads and key/value heads: four times as many in three models, eight in one; no relation to teach
    doc = ("| Model | query heads | KV heads |\n|---|--:|--:|\n| a | 32 | 8 |\n| b | 64 | 16 |\n| c | 16 | 4 |\n"
           "| d | 64 | 8 |\n")
    assert not [f for f in check_text(doc, isolate=False).findings if f.status == "wrong"]


@pytest.mark.parametrize("comment, status", [("(2, 8, 10, 64)", "correct"), ("(2, 10, 8, 64)", "wrong")])
def test_a_reshape_of_an_argument_and_the_shape_a_function_returns(comment, status):
    doc = ("Settings: batch = 2, n = 10, d_model = 512, h = 8.\n\n```python\nbatch, n, d_model, h = 2, 10, 512, 8\n"
           "d_k = d_model // h\n\ndef split_heads(T):\n    T = T.reshape(batch, n, h, d_k)        # (2, 10, 8, 64)\n"
           f"    return T.transpose(0, 2, 1, 3)         # {comment}\n```\n")
    assert statuses(doc, 8) == ["correct"]  # the shape the reshape asks for, whatever T was
    assert statuses(doc, 9) == [status]


@pytest.mark.parametrize("block, status", [("64\\times 512", "given"), ("512\\times 64", "inconsistent")])
def test_a_matrix_declared_in_sizes_then_stated_in_numbers(block, status):
    doc = ("We take $d = 512$ and $h = 8$. Split $W_O$ into $h$ row blocks "
           "$W_O^{(i)} \\in \\mathbb{R}^{d_v\\times d}$.\n\n"
           f"So each block $W_O^{{(i)}}$ is ${block}$.\n")
    assert status in statuses(doc, 3) and ("inconsistent" in statuses(doc, 3)) == (status == "inconsistent")


@pytest.mark.parametrize("shape, status", [("1024×768", "correct"), ("1024×512", "inconsistent")])
def test_a_plain_size_after_a_condition_word_is_its_sentence_s(shape, status):
    doc = ("- d_model = 768\n- h = 12 heads\n- sequence length n = 1024\n\nOne head: 1024 × 1024 scores.\n\n"
           f"At n = 4096 the matrix is 16× bigger.\n\n| step | shape |\n|---|---|\n| X | {shape} |\n")
    assert not {"wrong", "inconsistent"} & set(statuses(doc, 7))  # a condition of that sentence: n stays 1024
    assert statuses(doc, 11)[-1] == status


@pytest.mark.parametrize("gflop, status", [("1.61", "correct"), ("1.71", "wrong")])
def test_an_amount_of_work_in_a_prose_chain(gflop, status):
    doc = f"All 12 heads: 12 × 134,217,728 = 1,610,612,736 ≈ {gflop} GFLOP.\n"
    assert [s for s in statuses(doc, 1) if s != "given"] == [status]


@pytest.mark.parametrize("approx, status", [("1{,}34", "correct"), ("1{,}54", "wrong")])
def test_scientific_notation_with_cdot_at_its_significant_digits(approx, status):
    doc = (f"Nas 32 camadas: $32 \\cdot 41\\,943\\,040 = 1\\,342\\,177\\,280 \\approx {approx} \\cdot 10^9$ "
           "parâmetros.\n")
    assert statuses(doc, 1) == [status]


@pytest.mark.parametrize("variance, status", [("64", "correct"), ("32", "wrong")])
def test_a_moment_against_a_number_where_the_head_width_is_not_fixed_is_not_refuted(variance, status):
    # a block of plain formulas: d_k = 64 is read after the moment beside it, so Var(q·k) = d_k against 64 is no
    # refutation there (unchecked); once d_k is fixed the same moment is judged
    block = (f"Numbers:\n\n    d_k = 64:   Var(q·k) = {variance},    std = 8\n\n"
             f"So $\\operatorname{{Var}}(q \\cdot k) = {variance}$.\n")
    assert "wrong" not in statuses(block, 3)
    assert statuses(block, 5) == [status]


def test_a_size_after_an_operator_is_not_set():
    from mha_symbolic.check.read import settings

    assert settings("The two are equal when 4n²d_model = 8n·d_model², i.e. n = 2·d_model = 1536.") == []
    assert [s.value for s in settings("We use d_model = 768 and h = 12.")] == [768, 12]


def test_hostile_inline_code_is_left_as_code_quickly():
    deep = "(" * 5000 + "1" + ")" * 5000 + " = 1"
    assert code_formula(deep) is None and code_formula("x = " + "1 + " * 2000 + "1") is None
    assert code_formula("((((1)))) = 1") == "1 = 1"
    statuses(f"Look: `{deep}` and `{'[' * 300}`.\n", 1)  # no exception, whatever the verdicts


def test_inline_code_keeps_the_grouping_of_a_quotient():
    assert code_formula("1/(2*4) = 0.125") == r"1 / \left(2 \cdot 4\right) = 0.125"
    assert code_formula("(1/2)*4 = 2") == r"1 / 2 \cdot 4 = 2"


def test_a_comment_multiplying_shapes_whose_inner_sizes_differ():
    doc = ("```python\nimport numpy as np\nA = np.zeros((4, 3))\nB = np.zeros((2, 4))\n"
           "# (4, 3) @ (2, 4) -> (4, 4)\n```\n")
    found = [f for f in check_text(doc, isolate=False).findings if f.line == 5]
    assert [f.status for f in found] == ["wrong"] and "cannot be multiplied" in found[0].message


VARIANT_TABLE = """# KV cache

| Setting | MHA | GQA-8 | MQA |
|---|---|---|---|
| layers | 32 | 32 | 32 |
| query heads `h` | 32 | 32 | 32 |
| head dimension `d_head` | 128 | 128 | 128 |
| cache dtype | fp16 (2 bytes) | fp16 (2 bytes) | fp16 (2 bytes) |

| Context | MHA | GQA-8 | MQA |
|---|---|---|---|
| 2,048 tokens | 1,073,741,824 B = 1 GiB | 268,435,456 B = 256 MiB | 33,554,432 B = 32 MiB |
| 32,768 tokens | 17,179,869,184 B = 16 GiB | 4,294,967,296 B = 4 GiB | MQA_CELL |
"""


@pytest.mark.parametrize("cell, status", [("536,870,912 B = 512 MiB", "correct"),
                                          ("268,435,456 B = 256 MiB", "wrong"), ("536,870,912 B = 256 MiB", "wrong")])
def test_a_table_whose_columns_are_variants_holds_each_variants_cache_for_its_rows_tokens(cell, status):
    """Each cell is 2 g d_k values per token and layer (g = h, 8, 1), the layers and the data type of the settings
    table, times the row's tokens: a column that is a ratio of another in two rows is not enough to judge it."""
    found = check_text(VARIANT_TABLE.replace("MQA_CELL", cell), isolate=False).findings
    assert "wrong" not in {f.status for f in found if f.line == 12}
    assert status in {f.status for f in found if f.line == 13}
    assert ("wrong" in {f.status for f in found if f.line == 13}) == (status == "wrong")


NAMED_ROW = """# Scores

$$S = \\begin{bmatrix} 2 & 1 \\\\ 1 & 3 \\end{bmatrix}$$

- Row 2 of $S/\\sqrt{2}$: $[ROW]$
"""


@pytest.mark.parametrize("row, status", [("0.7071,\\ 2.1213", "correct"), ("0.7071,\\ 2.1231", "wrong"),
                                         ("1.4142,\\ 0.7071", "wrong")])
def test_a_row_of_a_matrix_named_in_math_is_that_row_of_its_value(row, status):
    found = [f.status for f in check_text(NAMED_ROW.replace("ROW", row), isolate=False).findings if f.line == 5]
    assert found == [status]


@pytest.mark.parametrize("implied, status", [("\\mathbb{R}^{512 \\times 128}", "correct"),
                                             ("\\mathbb{R}^{512 \\times 64}", "wrong"),
                                             ("S \\in \\mathbb{R}^{128 \\times 512}", "wrong")])
def test_a_product_of_shapes_implies_the_shape_written_after_it(implied, status):
    text = f"# Shapes\n\n- Scores: $(512 \\times 64)(64 \\times 128) \\Rightarrow {implied}$\n"
    found = [f for f in check_text(text, isolate=False).findings if f.line == 3]
    assert [f.status for f in found if f.latex.startswith("(512")] == [status]


@pytest.mark.parametrize("line, expected", [("- `W_o`: 768² = 589,824", ["correct"]),
                                            ("- `W_o`: 768² = 589,842", ["wrong"]), ("Figure 2 = 4", [])])
def test_a_power_written_in_prose_is_a_computation(line, expected):
    assert [v[0] for v in judge_prose_amounts(line)] == expected


@pytest.mark.parametrize("total, status", [("528", "correct"), ("582", "wrong")])
def test_an_underbrace_is_the_term_it_labels(total, status):
    text = ("# FLOPs\n\nWith $d = 4$ and $n = 3$:\n\n$$\\text{FLOPs} = \\underbrace{3 \\cdot 2 d^2 n}_{Q,K,V} + "
            "\\underbrace{4 d n^2}_{\\text{scores}, AV} + \\overbrace{2 d^2 n}^{W_O} = TOTAL$$\n")
    text = text.replace("TOTAL", total)
    assert [f.status for f in check_text(text, isolate=False).findings if f.line == 5] == [status]


@pytest.mark.parametrize("weights, status", [("0.6698,\\ 0.3302", "correct"), ("0.7311,\\ 0.2689", "wrong")])
def test_the_softmax_of_the_row_the_line_before_states(weights, status):
    text = NAMED_ROW.replace("Row 2", "Row 1").replace("ROW", "1.4142,\\ 0.7071") + \
        f"- Softmax of row 1: $[{weights}]$\n"
    assert [f.status for f in check_text(text, isolate=False).findings if f.line == 6] == [status]
    other = text.replace("Softmax of row 1", "Softmax of row 2")  # another row than the one stated: not judged
    assert [f.status for f in check_text(other, isolate=False).findings if f.line == 6] == []
