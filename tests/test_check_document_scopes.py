"""Classes of false alarm found by a blind set of documents (set34 b), each fixed where it arises and each with its
wrong case: Euler's e beside a number (``2e+1`` is 2e + 1, not scientific notation, in a formula that writes e); a
list whose entries are written with the decimal comma and separated by semicolons is a list, not a MATLAB column;
a list of numbers is a vector without an orientation of its own; a combination of rows of the document's V with
rounded weights is held at the places written; a sentence that names another labelled part ("Problem 2") is about
that part's sizes, and a part whose opening names one works in its sizes; a sentence that states its own sizes
states its groups in them; a number that opens an expression states the expression's result; "each of" distributes a
count over the parts it names; a chain that substitutes other numbers for every size it names is another
configuration (a partial substitution is a slip)."""

from __future__ import annotations

import re

from mha_symbolic import check_text
from mha_symbolic.check.numerals import as_points


def joined(text: str) -> str:
    """A fixture whose long lines are cut at a lone backslash (not LaTeX's ``\\\\``), joined again."""
    return re.sub(r"(?<!\\)\\\n", "", text)


def verdicts(text: str, line: int) -> list[str]:
    return [f.status for f in check_text(text, isolate=False).findings if f.line == line]


# ----- Euler's e beside a number -------------------------------------------------------------------------------
EULER = r"""# Softmax

The third entry is $x = \tfrac{2e+1}{e+2} \approx VALUE$.
"""


def test_a_number_before_eulers_e_is_a_product_not_scientific_notation():
    assert verdicts(EULER.replace("VALUE", "1.3642"), 3) == ["correct"]  # was wrong: 2e+1 read as 20
    assert verdicts(EULER.replace("VALUE", "4.2388"), 3) == ["wrong"]  # 20 / (e + 2): not what it writes


def test_scientific_notation_stays_where_the_formula_writes_no_e():
    assert verdicts("# Scale\n\nThe step is $s = 2e-3 \\cdot 500 = 1$.\n", 3) == ["correct"]


# ----- lists written with the decimal comma ----------------------------------------------------------------------
def test_semicolons_between_comma_decimals_in_brackets_separate_a_list():
    assert as_points(r"$[0{,}7311;\ 0{,}2689;\ 0]$ e 0,75 GiB") == r"$[0.7311  ,\ 0.2689  ,\ 0]$ e 0.75 GiB"
    assert as_points("[0,5; 0,25] e 0,75 GiB") == "[0.5, 0.25] e 0.75 GiB"
    assert as_points("[1 0; 0 1] e [1; 2] e 0,75 GiB") == "[1 0; 0 1] e [1; 2] e 0.75 GiB"  # MATLAB rows stay


SEMICOLONS = joined(r"""# Notas

Com a máscara, $\alpha_2 = \operatorname{softmax}(1, 0, -\infty) = \left[\tfrac{e}{e+1},\ \tfrac{1}{e+1},\ 0\right] \
\approx [0{,}7311;\ 0{,}2689;\ 0]$.

Sem a máscara, $\operatorname{softmax}(1, 2, 0) \approx [0{,}2447;\ 0{,}6652;\ LAST]$.
""")


def test_a_decimal_comma_list_is_compared_as_a_vector():
    assert verdicts(SEMICOLONS.replace("LAST", "0{,}0900"), 3) == ["correct"]  # was wrong: 1 x 3 against 3 x 1
    assert verdicts(SEMICOLONS.replace("LAST", "0{,}0900"), 5) == ["correct"]
    assert verdicts(SEMICOLONS.replace("LAST", "0{,}1900"), 5) == ["wrong"]


# ----- rounded weights of the rows of V ------------------------------------------------------------------------
ROWS = joined(r"""# One head by hand

*One head with $d_k = d_v = 4$ receives two tokens. After projection,*

$$Q = \begin{pmatrix} 2 & 0 & 2 & 0 \\ 0 & 1 & 0 & 1 \end{pmatrix}, \qquad \
K = \begin{pmatrix} 1 & 0 & 1 & 0 \\ 0 & 1 & 0 & 1 \end{pmatrix}, \qquad \
V = \begin{pmatrix} 1 & 0 & 2 & 0 \\ 0 & 1 & 0 & 2 \end{pmatrix}.$$

The output rows combine the rows $v_1 = (1,0,2,0)$ and $v_2 = (0,1,0,2)$ of $V$:

\begin{align}
o_2 &= 0.2689\, v_1 + 0.7311\, v_2 \\
&= (0.2689,\ 0.7311,\ THIRD,\ 1.4621).
\end{align}
""")


def test_rounded_weights_of_the_rows_of_v_are_held_at_their_places():
    assert verdicts(ROWS.replace("THIRD", "0.5379"), 11) == ["correct"]  # was wrong: 2 * 0.2689 = 0.5378 exactly
    assert verdicts(ROWS.replace("THIRD", "0.5479"), 11) == ["wrong"]


# ----- labelled parts --------------------------------------------------------------------------------------------
PARTS = r"""# Exam

### Problem 1 — Shapes

A sequence of $n = 100$ tokens enters a layer with $d_{\text{model}} = 512$ and $h = 8$ heads, so $d_k = 512/8 = 64$.

### Problem 2 — By hand

One head with $d_k = 2$ receives two tokens: $n = 2$.

### Problem 3 — A tiny check

Take $n = 3$, $h = 1$ and $d_{\text{model}} = 1$.

### Problem 4 — Ranks

*For the layer of Problem 1, bound the ranks.*

The scores of one head have $\operatorname{rank}(Q_iK_i^\top) \le \min(n, d_k) = BOUND$.

In Problem 2, $\operatorname{rank}(QK^\top) = 2$.
"""


def test_a_part_that_names_another_works_in_its_sizes():
    assert set(verdicts(PARTS.replace("BOUND", "64"), 19)) == {"correct"}  # in Problem 1's sizes, not Problem 3's
    assert "wrong" in verdicts(PARTS.replace("BOUND", "1"), 19)  # (was correct: min(3, 1) = 1 in Problem 3's)


def test_a_sentence_that_names_another_part_is_not_judged_in_this_ones():
    assert verdicts(PARTS.replace("BOUND", "64"), 21) == ["unchecked"]  # was wrong: rank <= 1 with d_k = 1


# ----- groups stated with the sentence's own sizes ---------------------------------------------------------------
GROUPS = r"""# GQA

A toy layer: $d_{model} = 512$, $h = 8$ query heads and $h_{kv} = 2$ key/value heads.

Now a real one: $d_{model} = 8192$, $h = 64$, $h_{kv} = 8$ (group size SIZE), $d_k = 128$.
"""


def test_a_group_size_is_computed_from_the_sizes_its_sentence_states():
    assert "wrong" not in verdicts(GROUPS.replace("SIZE", "8"), 5)  # was wrong: 8 / 2 = 4 of the toy layer
    assert "wrong" in verdicts(GROUPS.replace("SIZE", "4"), 5)


# ----- a number that opens an expression ---------------------------------------------------------------------------
READS = r"""# GQA

A layer with $h = 8$ query heads and $h_{kv} = 2$ key/value heads: heads 0–3 read K/V head 0, heads 4–7 K/V head 1.
For example, query head 5 uses K/V head $5 \,//\, 4 = RESULT$.
"""


def test_a_number_that_opens_an_expression_states_its_result():
    assert verdicts(READS.replace("RESULT", "1"), 4)[0] == "correct"  # was wrong: K/V head 5
    assert verdicts(READS.replace("RESULT", "0"), 4)[0] == "wrong"


# ----- each of the parts -------------------------------------------------------------------------------------------
EACH = r"""# Llama-like

A layer with $d_{model} = 8192$, $h = 64$ query heads and $h_{kv} = 8$ key/value heads, $d_k = 128$.

Each of its K and V projections is $8192 \times 1024 = 8{,}388{,}608$ parameters, COUNT parameters together.
"""


def test_each_of_two_parts_counts_one_of_them():
    assert verdicts(EACH.replace(", COUNT parameters together", ""), 5)[0] == "correct"  # was wrong: both = 16.8M
    assert verdicts(EACH.replace("Each of its", "The").replace(", COUNT parameters together", ""), 5)[0] == "wrong"
    each_after = EACH.replace("Each of its", "Its").replace("projections is", "projections each hold")
    assert verdicts(each_after.replace(", COUNT parameters together", ""), 5)[0] == "correct"


# ----- a substitution of other sizes ------------------------------------------------------------------------------
COMPARISON = joined(r"""# Notes

In our toy example $d_{\text{model}} = 16$ and $h = 4$. \
For comparison, BERT-base has $d_k = d_{\text{model}}/h = SUBST = RESULT$ and so $\sqrt{d_k} = ROOT$.
""")


def test_a_chain_that_substitutes_other_values_for_every_size_is_another_configuration():
    text = COMPARISON.replace("SUBST", "768/12").replace("RESULT", "64").replace("ROOT", "8")
    assert verdicts(text, 3)[-2:] == ["correct", "correct"]  # were wrong: d_model / h = 4 in the toy example
    text = COMPARISON.replace("SUBST", "768/12").replace("RESULT", "48").replace("ROOT", "8")
    assert "wrong" in verdicts(text, 3)  # its own arithmetic is still judged


def test_a_chain_that_agrees_with_the_model_in_part_is_a_slip():
    text = COMPARISON.replace("SUBST", "16/8").replace("RESULT", "2").replace("ROOT", "2")
    assert "wrong" in verdicts(text, 3)  # d_model = 16 as in the model, h = 8 against h = 4


# ----- shapes noted in a column of an align ---------------------------------------------------------------------
NOTES = r"""# Shapes

The input is $X \in \mathbb{R}^{100 \times 512}$ with $h = 8$ heads, $d_{\text{model}} = 512$ and $d_k = 64$.

\begin{align}
Q_i &= X W_Q^{(i)} &&: (100 \times 512)(512 \times 64) \to 100 \times 64, \\
K_i &= X W_K^{(i)} &&: 100 \times 64, \qquad V_i = X W_V^{(i)} : 100 \times 64, \\
S_i &= Q_i K_i^\top &&: (100 \times 64)(64 \times 100) \to SHAPE, \\
\mathrm{head}_i &= A_i V_i &&: (100 \times 100)(100 \times 64) \to 100 \times 64 .
\end{align}

\begin{align}
A_i &= \operatorname{softmax}(S_i / 8) &&: 100 \times 100, \\
&= \operatorname{softmax}(Q_i K_i^\top / 8) &&: 100 \times 100
\end{align}
"""


def test_a_column_of_shape_notes_states_each_rows_shape():
    text = NOTES.replace("SHAPE", "100 \\times 100")
    assert set(verdicts(text, 8)) == {"correct"} and len(verdicts(text, 8)) == 3  # the formula, its shape, the product
    assert verdicts(NOTES.replace("SHAPE", "100 \\times 64"), 8).count("wrong") == 2  # was not read
    assert verdicts(text, 9) == ["correct"] * 3  # (a statement of row 7 too large to evaluate costs only itself)
    assert verdicts(text, 13) == ["correct"] * 2  # a shape noted without a product: the formula and its shape
    assert "wrong" not in verdicts(text, 14)  # a continuation row names no subject: its note is not read


# ----- a moment stated in another language ------------------------------------------------------------------------
MOMENT = r"""# Notas

Cada $q_i k_i$ tem variância 1. Com $d_k = 4$, a variância do produto escalar é $VAR$ e o desvio padrão é $2$.
"""


def test_a_moment_in_portuguese_is_read_as_in_english():
    assert "correct" in verdicts(MOMENT.replace("VAR", "4"), 3)
    assert "wrong" in verdicts(MOMENT.replace("VAR", "2"), 3)  # was given: the words were not read


# ----- code: a layer's sizes in and out, and a table of the code's shapes --------------------------------------------
CODE = '''# GQA in PyTorch

```python
import torch
import torch.nn as nn

B, n, d_model = 2, 16, 512
h, h_kv = 8, 2
d_k = d_model // h

x = torch.randn(B, n, d_model)
W_q = nn.Linear(d_model, h * d_k, bias=False)       # 512 -> 512
W_k = nn.Linear(d_model, h_kv * d_k, bias=False)    # 512 -> FAN_OUT
q = W_q(x).view(B, n, h, d_k).transpose(1, 2)
k = W_k(x).view(B, n, h_kv, d_k).transpose(1, 2)
k = k.repeat_interleave(h // h_kv, dim=1)
```

| Step | Code | Shape |
|---|---|---|
| split K/V heads | `k` | `(2, 2, 16, 64)` |
| after `repeat_interleave` | `k` | `(2, 8, 16, 64)` |
| scores | `q @ k.transpose(-2, -1)` | `SCORES` |
| weights | `attn` | n × n |
'''


def test_a_layers_comment_states_its_sizes_in_and_out():
    assert verdicts(CODE.replace("FAN_OUT", "128").replace("SCORES", "(2, 8, 16, 16)"), 13) == ["correct"]
    assert verdicts(CODE.replace("FAN_OUT", "256").replace("SCORES", "(2, 8, 16, 16)"), 13) == ["wrong"]  # not read


def test_a_table_of_the_codes_shapes_is_judged_by_its_trace_with_each_value_a_name_had():
    text = CODE.replace("FAN_OUT", "128")
    assert verdicts(text.replace("SCORES", "(2, 8, 16, 16)"), 21) == ["correct"]  # k before the repeat
    assert verdicts(text.replace("SCORES", "(2, 8, 16, 16)"), 22) == ["correct"]  # and after it
    assert verdicts(text.replace("SCORES", "(2, 8, 16, 16)"), 23) == ["correct"]
    wrong = [f for f in check_text(text.replace("SCORES", "(2, 8, 16, 64)"), isolate=False).findings if f.line == 23]
    assert [f.status for f in wrong] == ["wrong"]  # was not read
    assert wrong[0].expected == "(2, 8, 16, 16)" and "q @ k.transpose(-2, -1)" in wrong[0].message


# ----- a factor of a formula is no amount ----------------------------------------------------------------------------
FACTOR = r"""# From MHA to MQA

The model: $d_{model} = 2048$, $h = 16$ query heads, $d_k = d_{model}/h = 128$, $L = 24$ layers, fp16 cache.
In this post, GQA means $g = 4$ key/value heads.

The cache per token is $2 \cdot g \cdot d_k \cdot L \cdot 2$ bytes, that is AMOUNT bytes.
"""


def test_the_last_factor_of_a_formula_before_a_unit_is_not_the_amount():
    assert "wrong" not in verdicts(FACTOR.replace(", that is AMOUNT bytes", ""), 6)  # was wrong: "not 2 bytes"
    assert "wrong" in verdicts(FACTOR.replace("AMOUNT", "98,304"), 6)  # the amount it states is still judged
    assert "correct" in verdicts(FACTOR.replace("AMOUNT", "49,152"), 6)


# ----- a counterfactual binds nothing, even before the document's own sizes -----------------------------------------
WOULD = r"""# Heads versus one wide head

A single attention head spanning the whole model would have $d_k = 512$.

Our model uses $h = 8$ heads, $d_{model} = 512$ and $n = 10$ tokens.
Each head's queries $Q_i = X W_i^Q$ are $10 \times WIDTH$.
"""


def test_a_counterfactual_before_the_documents_sizes_binds_nothing():
    assert "wrong" not in verdicts(WOULD.replace("WIDTH", "64"), 6)  # was wrong: d_k = 512 bound by "would have"
    assert "wrong" in verdicts(WOULD.replace("WIDTH", "512"), 6)


# ----- a variant that opens the clause of a count ------------------------------------------------------------------
OPENED = r"""# Projections

The layer: $d_{model} = 2048$, $h = 16$ query heads, $d_k = 128$; GQA with $h_{kv} = 4$.

With MQA, $W^K$ and $W^V$ are $2048 \times 128$ (COUNT weights each).
"""


def test_a_count_in_a_clause_opened_by_a_variant_is_that_variants():
    assert "wrong" not in verdicts(OPENED.replace("COUNT", "262,144"), 5)  # was wrong: counted with g = 16
    assert "wrong" in verdicts(OPENED.replace("COUNT", "524,288"), 5)


def test_a_substitution_must_match_the_formula_term_by_term():
    from mha_symbolic.check.scopes import substituted_sizes

    assert substituted_sizes(r"$\frac{d_{\text{model}}}{h} = \frac{768}{12}$") == {"d_model": 768, "h": 12}
    assert substituted_sizes(r"$2 n d = 2 \cdot 3 \cdot 4$") == {"n": 3, "d_model": 4}
    assert substituted_sizes(r"$2 n d = 3 \cdot 3 \cdot 4$") == {}  # a constant of the formula is not its own
    assert substituted_sizes(r"$d_{model}/h = 768/h$") == {}  # a side with a name is no substitution
    assert substituted_sizes(r"$\sqrt{d_k} = 8$, $n / h = 12 / 3 + 1$") == {}  # other structures
    assert substituted_sizes(r"$x n d = 3 \cdot 4 \cdot 5$") == {}  # x is no size: not a substitution of sizes
    assert substituted_sizes(r"$\sqrt{n d} = 3 \cdot 4$") == {}  # a function on one side only
    assert substituted_sizes(r"$n d = 2.5 \cdot 4$") == {}  # a size is a whole number
    assert substituted_sizes(r"$n n d = 3 \cdot 4 \cdot 5$") == {}  # one size, two numbers
    assert substituted_sizes(r"$n d = 3 \cdot 4$ and $n h = 5 \cdot 2$") == {"n": 3, "d_model": 4}  # (not n = 5)


# ----- a sentence over two lines names a variant on each ------------------------------------------------------------
LINES = r"""# Cache sizes

Our model has $L = 32$ layers, $d_{model} = 4096$ and $h = 32$ heads, so $d_k = 128$; keys and values in bf16 (2 bytes).

Grouped-query attention with $g = 8$ KV groups keeps 8 key heads and 8 value heads per layer.

Per token, GQA caches AMOUNT bytes (128 KiB) per token,
and MQA 16,384 bytes (16 KiB).
"""


def test_the_first_line_of_a_sentence_is_about_the_variant_it_names_not_the_next_lines():
    assert "wrong" not in verdicts(LINES.replace("AMOUNT", "131,072"), 7)  # was wrong: judged as MQA's cache
    assert "wrong" in verdicts(LINES.replace("AMOUNT", "262,144").replace("(128 KiB)", "(256 KiB)"), 7)
