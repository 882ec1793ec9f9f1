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
