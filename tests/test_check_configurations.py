"""Tables of configurations, one per row, and tables the engine cannot compute (blind set 13's false alarms).

A row of a configuration table is a scope of its own: its sizes are judged against each other, never against the
document's example, and bind nothing outside the row.  A table whose matrix the engine cannot compute gets no
verdict (it was `inconsistent`, with the engine's error as the reason)."""

from __future__ import annotations

from mha_symbolic.document import check_text

CONFIGS = """Three configurations; the head width is $d_k = d_{model} / h$ in every case.

| Config | layers L | d_model | h | g (KV heads) | d_k |
|---|---:|---:|---:|---:|---:|
| big | 32 | 4096 | 32 | 8 | 128 |
| small | 12 | 768 | 12 | 4 | %s |
| odd | 12 | 768 | 12 | %s | 64 |
"""


def _rows(text: str) -> list[tuple[int, str]]:
    return [(f.line, f.status) for f in check_text(text, isolate=False).findings if 5 <= f.line <= 7]


def test_each_row_of_a_configuration_table_is_judged_on_its_own():
    assert _rows(CONFIGS % (64, 1)) == [(5, "correct"), (6, "correct"), (7, "correct")]
    got = check_text(CONFIGS % (48, 5), isolate=False).findings
    assert [(f.line, f.status, f.expected) for f in got if f.status == "wrong"] == \
        [(6, "wrong", "64"), (7, "wrong", None)]
    assert "g = 5 key/value heads cannot be shared evenly by h = 12" in [f for f in got if f.line == 7][0].message


def test_a_configuration_row_binds_nothing_outside_it():
    """After the table, the document's own example (h = 2) is judged with its own sizes, not a row's."""
    text = CONFIGS % (64, 1) + "\nOur example: $d_{model} = 8$ and $h = 2$, so $d_k = 4$.\n"
    got = check_text(text, isolate=False).findings
    assert [f.status for f in got if f.line == 9 and f.latex == "d_k = 4"] == ["correct"]
    assert not [f for f in got if f.status in ("wrong", "inconsistent")]


def test_a_width_of_its_own_is_not_judged_as_d_model_over_h():
    """Where the document never writes d_k = d_model / h, a row's d_k is a size of its own."""
    text = CONFIGS.replace("; the head width is $d_k = d_{model} / h$ in every case", "") % (48, 4)
    assert [s for _, s in _rows(text)] == ["correct", "correct", "correct"]  # g divides h, nothing else claimed


def test_a_table_the_engine_cannot_compute_gets_no_verdict():
    """The output of a model with symbolic sizes: `inconsistent` with "cannot evaluate with symbolic dimensions"."""
    text = "The output of multi-head attention for our input:\n\n| token | 1 | 2 |\n|---|---|---|\n| a | 0.5 | 1.5 |\n"
    got = check_text(text, isolate=False).findings
    assert not [f for f in got if f.status in ("wrong", "inconsistent")]


def _statuses(text: str, line: int) -> list[str]:
    return [f.status for f in check_text(text, isolate=False).findings if f.line == line]


def test_a_condition_binds_only_its_own_sentence():
    """`If we had d_k = 8 ...` then `... we still have d_k = 3` in the next sentence: judged against 8 (wrong)."""
    text = ("Example: $n = 6$ tokens and $d_k = 3$.\n\n"
            "If we had $d_k = 8$ the bound would be $\\min(6, 8) = 6$.\n"
            "In the example we still have $d_k = 3$.\n"
            "If we had $d_k = 2$ instead, it would be $\\min(6, 2) = 3$.\n")
    assert "wrong" not in _statuses(text, 4)
    assert _statuses(text, 5)[-1] == "wrong"  # a condition is still judged inside its own sentence
    had = ("Example: $n = 6$ tokens and $d_k = 3$.\n\n"
           "Had we used $d_k = 8$, the bound would be $\\min(6, 8) = 6$.\nIn the example we still have $d_k = 3$.\n")
    assert "wrong" not in _statuses(had, 4)  # a counterfactual without "if" binds its clause only, too
    suppose = "We take $n = 6$.\n\nSuppose $n = 2$. Then $n^2 = 4$.\n"
    assert _statuses(suppose, 3) == ["given", "correct"]  # an example the paragraph opens lasts past its sentence


def test_a_relation_of_sizes_that_is_a_choice_or_a_requirement_is_not_a_claim():
    text = ("Example: $n = 6$ tokens and $d_k = 3$.\n\n"
            "Some propose setting the head size to the sequence length, $d_k = n$, instead.\n"
            "A head with $d_k \\ge n$ is needed before full rank is possible.\n"
            "Here $d_k \\ge n$ holds.\n")
    assert _statuses(text, 3) == ["given"] and _statuses(text, 4) == ["given"]
    assert _statuses(text, 5) == ["wrong"]  # asserted of the example: judged


def test_code_counts_from_zero_without_renumbering_the_prose():
    """`Qs[0]` in code made every `Q_1` of the prose head 2."""
    text = ("Two heads, $n = 2$, $d_{model} = 4$, $h = 2$; head $i$ counts from 1.\n\n"
            "$$X = \\begin{bmatrix} 1 & 0 & 0 & 0 \\\\ 0 & 1 & 0 & 0 \\end{bmatrix}$$\n\n"
            "```python\nWQ0 = [[1, 0], [0, 1], [0, 0], [0, 0]]\nQs = [X @ W for W in Wq]\nprint(Qs[0])\n```\n\n"
            "$$Q_1 = \\begin{bmatrix} 1 & 0 \\\\ 0 & 1 \\end{bmatrix}$$\n")
    got = [f for f in check_text(text, isolate=False).findings if f.line == 11]
    assert [f.status for f in got] == ["correct"]


def test_a_code_name_given_a_value_of_its_own_is_not_the_models_step():
    """`S0 = raw0 / np.sqrt(d_k)` (not read) made `S0` the model's unscaled S_1: `A0 = softmax(S0)` was wrong."""
    text = ("One head: $n = 2$, $d_{model} = 2$, $h = 1$.\n\n"
            "```python\nraw0 = Q @ K.T\nS0 = raw0 / np.sqrt(d_k)\nA0 = softmax(S0)\nprint(S0)\n```\n")
    got = check_text(text, isolate=False).findings
    assert not [f for f in got if f.status in ("wrong", "inconsistent", "assumed")]
    assert [f.status for f in got if f.line == 6] == ["unchecked"]


def test_a_table_with_other_columns_than_sizes_is_not_a_configuration_table():
    """A cheat sheet of sizes with a bytes column keeps its other readers (its rows were all `given` once the
    configuration reader took it); a label and sizes only is a configuration table."""
    text = ("Sizes; the head width is $d_k = d_{model} / h$.\n\n| Model | layers | d_model | h | d_k | KV bytes |\n"
            "|---|---|---|---|---|---|\n| a | 12 | 768 | 12 | 64 | 3,072 B |\n| b | 24 | 1024 | 16 | 64 | 4,096 B |\n")
    got = check_text(text, isolate=False).findings
    assert not [f for f in got if "a configuration of its own" in f.message]
    pure = text.replace(" KV bytes |", "").replace("---|---|\n", "---|\n", 1).replace(" 3,072 B |", "") \
        .replace(" 4,096 B |", "")
    assert [f.status for f in check_text(pure, isolate=False).findings if f.line in (5, 6)] == ["correct", "correct"]


def test_an_input_drawn_at_random_is_still_the_input_its_print_gives():
    """`X = rng.integers(...)` is not read (never run), yet X is the layer's input: its printout gives its value, and
    a step computed from it is judged (only a step the code computes its own way loses the model's name)."""
    import json

    def cell(kind, source, output=None):
        c = {"cell_type": kind, "metadata": {}, "source": source}
        if kind == "code":
            c |= {"execution_count": 1, "outputs": [{"output_type": "stream", "name": "stdout", "text": output}]}
        return c

    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        cell("markdown", "One head: $n = 2$, $d_{model} = 2$, $h = 1$."),
        cell("code", "X = rng.integers(0, 2, size=(2, 2))\nprint(X)", "[[1 0]\n [0 1]]\n"),
        cell("markdown", "$$W_Q = \\begin{bmatrix} 1 & 2 \\\\ 3 & 4 \\end{bmatrix}, "
                         "Q = \\begin{bmatrix} 1 & 2 \\\\ 3 & 4 \\end{bmatrix}$$")]}
    got = check_text(json.dumps(nb), name="drawn.ipynb", isolate=False).findings
    assert [f.status for f in got if f.latex.startswith("Q =")] == ["correct"]


CACHE = """All caches are stored in fp16.

| model | layers `L` | KV heads `g` | `d_head` | context | bytes / token | KiB / token | MiB / seq | GiB / seq |
|---|---|---|---|---|---|---|---|---|
| small | 24 | 4 | 64 | 2,048 | 24,576 | 24 | 48 | %s |
| large | 40 | 8 | 128 | 4,096 | %s | 160 | 640 | 0.625 |
"""


def test_a_table_of_cache_amounts_is_computed_row_by_row():
    """Each row: 2 L g d_head values of 2 bytes a token, the same amount in every unit, a context's tokens."""
    assert _cache(CACHE % ("0.05", "163,840")) == [(5, "correct"), (6, "correct")]  # 0.05: 48 MiB, as written
    assert _cache(CACHE % ("0.5", "163,840")) == [(5, "wrong"), (6, "correct")]  # 48 MiB is not half a GiB
    assert _cache(CACHE % ("0.05", "327,680")) == [(5, "correct"), (6, "wrong")]  # not 2 * 40 * 8 * 128 * 2 bytes


def _cache(text: str) -> list[tuple[int, str]]:
    return [(f.line, f.status) for f in check_text(text, isolate=False).findings if f.line in (5, 6)]


CALCULATOR = """# A KV-cache calculator

KV cache bytes = 2 × L × G × D × T × 2, with L layers, G key/value heads, D the head size and T tokens.

Model X (L=24, G=4, D=64)

| Context | KV cache |
|---|---|
| 2K tokens | 48 MB |
| 16K tokens | %s |

For Model X (L=24, G=4, D=64) at other lengths:
- 8K context: %s
- A 24 GB card holds the weights and 16K tokens of cache.
- 32K context on a second card: 1.5 GB
"""


def test_the_documents_own_formula_for_its_amounts():
    """Rows and items of token counts and amounts are the document's formula with its caption's values."""
    def got(row: str, item: str) -> dict[int, str]:
        return {f.line: f.status for f in check_text(CALCULATOR % (row, item), isolate=False).findings
                if f.line in (9, 10, 13, 14, 15)}  # 14 and 15 say more than a count and an amount: not judged
    assert got("384 MB", "~192 MB") == {9: "correct", 10: "correct", 13: "correct"}  # 2 * 24 * 4 * 64 * T * 2 bytes
    assert got("400 MB", "~192 MB")[10] == "wrong"
    assert got("384 MB", "~210 MB")[13] == "wrong"
    unbound = (CALCULATOR % ("384 MB", "~192 MB")).replace("Model X (L=24, G=4, D=64)", "Model X (L=24, G=4)")
    assert {f.line: f.status for f in check_text(unbound, isolate=False).findings if f.line == 9} == {9: "unchecked"}


LEGEND = """The cache in one line:

    M = 2 · L · H · d · T · b

- M: total KV-cache memory in bytes
- T: context length in tokens

All tables use b = 2 (fp16).

Model Y: L = 16, H = 2, d = 64.

| Context | KV cache (MiB) |
|---|---|
| 4K | %s |
"""


def test_a_formula_named_in_a_legend_and_a_table_with_units_in_its_headers():
    """M is the KV cache by the legend; "4K" and "(MiB)" come from the headers; L, H, d, b from the lines above."""
    def row(value: str) -> str:
        return next(f.status for f in check_text(LEGEND % value, isolate=False).findings if f.line == 14)
    assert row("32") == "correct"  # 2 * 16 * 2 * 64 * 4096 * 2 bytes = 32 MiB
    assert row("64") == "wrong"


def test_a_conversion_written_between_two_units_and_a_variant_named_in_a_list():
    doc = ("Grouped-query attention with h = 32 query heads, g = 8 KV heads, d_k = 128 and 32 layers in fp16.\n\n"
           "- MQA: n_kv = 1, all 32 query heads share one KV head\n"
           "- per token: 2 · 32 · 8 · 128 · 2 = 131,072 bytes = 131,072 / 1024 = 128 KiB\n")
    def got(text: str) -> set[tuple[int, str]]:
        return {(f.line, f.status) for f in check_text(text, isolate=False).findings if f.line in (3, 4)}
    assert got(doc) == {(3, "correct"), (4, "correct")}  # every finding on the two lines
    planted = doc.replace("all 32 query heads", "all 4 query heads").replace("= 128 KiB", "= 256 KiB")
    assert {line for line, status in got(planted) if status == "wrong"} == {3, 4}


def test_a_product_written_with_a_middle_dot_in_prose_binds_nothing():
    """"d_model = 32 · 128 = 4096" derives d_model; it does not set d_model = 32."""
    doc = "We take h = 32 heads of width d_k = 128, so d_model = 32 · 128 = 4096.\n"
    assert not [f for f in check_text(doc, isolate=False).findings if "d_model = 32" in f.message]


def test_prose_arithmetic_that_defines_a_name_and_a_capacity_written_about():
    """ "m = 2 · 28 · 4 · 128 · 2 = 57,344 bytes" is read whole; "54e9 / 163,840 = about 329,589" is a capacity cut
    off to whole tokens."""
    from mha_symbolic.check.prose_amounts import judge_prose_amounts

    assert [v[0] for v in judge_prose_amounts("Per token: m = 2 · 28 · 4 · 128 · 2 = 57,344 bytes = 56 KiB.")] == \
        ["correct"]
    assert [v[0] for v in judge_prose_amounts("Per token: m = 2 · 28 · 4 · 128 · 2 = 65,536 bytes.")] == ["wrong"]
    assert [v[0] for v in judge_prose_amounts("That holds 54e9 / 163,840 = about 329,589 tokens.")] == ["correct"]
    assert [v[0] for v in judge_prose_amounts("That holds 54e9 / 163,840 = about 164,794 tokens.")] == ["wrong"]
    # what is evaluated may be written in names, and a name may stand inside a product: "4 · d² = 4 · 36 = 144"
    assert [v[0] for v in judge_prose_amounts("Projection weights: 4 · d² = 4 · 36 = 144 numbers.")] == ["correct"]
    assert [v[0] for v in judge_prose_amounts("It costs n * n * d_k = 10 * 10 * 64 = 640 MACs.")] == ["wrong"]
