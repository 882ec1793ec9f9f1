"""Regression cases of the second reliability round: hostile or careless input at the public surfaces.

Each test failed before its fix (a wrong verdict, a bare exception, a hang or a silent wrong answer)."""

from __future__ import annotations

import numpy as np
import pytest

from mha_symbolic import MultiHeadAttention
from mha_symbolic.document import check_text
from mha_symbolic.errors import InputError, MHASymbolicError


def statuses(text: str) -> list[tuple[str, str]]:
    return [(f.latex, f.status) for f in check_text(text, isolate=False).findings]


# ----- \log is the natural logarithm --------------------------------------------------------------------------
def test_log_without_a_base_is_natural_and_a_base_is_read_as_written():
    """`$\\log(e) = 1$` and `$\\log 10 \\approx 2.303$` were `wrong` (latex2sympy reads \\log as base 10)."""
    got = statuses(r"We use $\log(e) = 1$, $\log 10 \approx 2.303$, $\ln 2 \approx 0.693$, $\log_{10} 1000 = 3$, "
                   r"$\log_2 8 = 3$, $\operatorname{log} 1 = 0$ and $\log(e) = 2$." "\n")
    assert got == [(r"\log(e) = 1", "correct"), (r"\log 10 \approx 2.303", "correct"),
                   (r"\ln 2 \approx 0.693", "correct"), (r"\log_{10} 1000 = 3", "correct"),
                   (r"\log_2 8 = 3", "correct"), (r"\operatorname{log} 1 = 0", "correct"),
                   (r"\log(e) = 2", "wrong")]


def test_a_bare_log_that_holds_in_base_2_or_10_is_not_called_wrong():
    """`\\log 8 = 3` (bits) holds in base 2: the notation has that reading too, so it is unchecked with the
    reason; a relation that holds in no base is still wrong."""
    findings = check_text(r"The entropy is $\log 8 = 3$ bits; $\log 1000 = 3$; $\log 8 = 5$." "\n",
                          isolate=False).findings
    assert [f.status for f in findings] == ["unchecked", "unchecked", "wrong"]
    assert "holds if \\log is base 2" in findings[0].message and "base 10" in findings[1].message


# ----- wrong types at public calls: the package's error, naming the parameter ----------------------------------
def _public_calls():
    from mha_symbolic import Derivation, Dims, example, stable_softmax
    from mha_symbolic.evaluation import estimate_terms, evaluate
    from mha_symbolic.plots import singular_value_spectra
    from mha_symbolic.proofs import (
        gqa_equals_repeated_kv,
        head_decomposition,
        parameter_and_flop_counts,
        two_heads_not_one,
    )
    from mha_symbolic.pytorch import from_layer
    from mha_symbolic.rank import bottleneck_theorem
    from mha_symbolic.rank.circuits import layer_ranks
    from mha_symbolic.statements import generic_instance, score_moments

    return {
        "evaluate's model": lambda bad: evaluate(bad),
        "example's name": lambda bad: example(bad),
        "Dims relations": lambda bad: Dims(relations=bad),
        "stable_softmax's x": lambda bad: stable_softmax(bad),
        "Derivation.general's model": lambda bad: Derivation.general(bad),
        "Derivation.from_example's example": lambda bad: Derivation.from_example(bad),
        "gqa_equals_repeated_kv's model": lambda bad: gqa_equals_repeated_kv(bad),
        "head_decomposition's model": lambda bad: head_decomposition(bad),
        "parameter_and_flop_counts's model": lambda bad: parameter_and_flop_counts(bad),
        "two_heads_not_one's model": lambda bad: two_heads_not_one(bad),
        "bottleneck_theorem's model": lambda bad: bottleneck_theorem(bad),
        "generic_instance's model": lambda bad: generic_instance(bad),
        "score_moments's model": lambda bad: score_moments(bad),
        "singular_value_spectra's E": lambda bad: singular_value_spectra(bad),
        "layer_ranks's w": lambda bad: layer_ranks(bad),
        "from_layer's layer": lambda bad: from_layer(bad),
        "estimate_terms's dims": lambda bad: estimate_terms(bad),
    }


@pytest.mark.parametrize("where", list(_public_calls()))
@pytest.mark.parametrize("bad", [5, {}, object()], ids=["int", "dict", "object"])
def test_a_wrong_type_is_the_packages_error_naming_the_parameter(where, bad):
    """These raised AttributeError, TypeError or IndexError from deep inside (`evaluate(None)`: "'NoneType' object
    has no attribute 'dims'")."""
    with pytest.raises(MHASymbolicError) as error:
        _public_calls()[where](bad)
    assert str(error.value).startswith(where)


def test_stable_softmax_of_nothing_and_of_a_list():
    from mha_symbolic import stable_softmax

    with pytest.raises(InputError, match="stable_softmax's x has dtype object"):
        stable_softmax(None)
    with pytest.raises(InputError, match="no entries along its last axis"):
        stable_softmax([])
    with pytest.raises(InputError, match="at least one axis"):
        stable_softmax(5)
    assert stable_softmax([[0.0, 0.0]]).tolist() == [[0.5, 0.5]]


def test_lambdify_with_no_heads_names_the_weights():
    """`MultiHeadAttention().lambdify()(X, [], [], [], W_O)` was a bare IndexError."""
    f = MultiHeadAttention().lambdify()
    with pytest.raises(InputError, match=r"W_Q has no heads: give one matrix per head"):
        f(np.ones((8, 4)), [], [], [], np.ones((4, 4)))
    with pytest.raises(InputError, match=r"W_K has no heads"):
        f(np.ones((8, 4)), np.ones((2, 4, 2)), np.ones((0, 4, 2)), np.ones((2, 4, 2)), np.ones((4, 4)))


# ----- a document costs time linear in its length; one not checked to its end never passes as clean ---------------
def _paragraph(lines: int, planted_at: int | None = None) -> str:
    rows = []
    for k in range(lines):
        a, b = 2 + k % 89, 3 + k % 71
        rows.append(f"Step {k}: we have ${a} \\times {b} = {a * b + (k == planted_at)}$ and")
    return "\n".join(rows) + "\n"


def test_reading_a_paragraph_is_linear_in_its_length(monkeypatch):
    """A paragraph of n statements normalised its whole text for every statement (1,000 formula lines: 761 judged
    in 51 s). Counted in characters normalised, not timed: 4x the lines must cost about 4x the work."""
    from mha_symbolic.check import normalise as normalise_module
    from mha_symbolic.check import prose

    work = [0]
    real = normalise_module.normalise

    def counting(text: str, *args, **kwargs):
        work[0] += len(text)
        return real(text, *args, **kwargs)

    monkeypatch.setattr(prose, "normalise", counting)
    costs = []
    for lines in (100, 400):
        prose._plain.cache_clear()
        work[0] = 0
        report = check_text(_paragraph(lines), isolate=False, timeout=None)
        assert report.counts()["correct"] == lines and report.exit_code == 0
        costs.append(work[0])
    assert costs[1] <= 5 * costs[0], costs  # linear: 4x (quadratic was 16x)


def test_every_piece_of_a_long_sentence_sees_a_bounded_clause():
    from mha_symbolic.check.extract import _LONGEST_CLAUSE, extract

    pieces = [p for p in extract(_paragraph(600), "a.md") if p.kind == "math"]
    assert len(pieces) == 600
    assert max(len(p.clause) for p in pieces) <= _LONGEST_CLAUSE + 200
    assert all(p.text in p.clause for p in pieces)


def test_a_document_not_checked_to_its_end_exits_3_and_says_so(monkeypatch):
    """A 10^5-formula document judged 22 formulas and exited 0: a planted error after the budget passed as clean.
    The clock is injected (each reading one second later), so the budget runs out after a fixed number of pieces."""
    from mha_symbolic import budget as budget_module

    class Stepping:
        now = 0.0

        def __call__(self) -> float:
            self.now += 1.0
            return self.now

    monkeypatch.setattr(budget_module, "clock", Stepping())
    report = check_text(_paragraph(40, planted_at=39), isolate=False, timeout=10)
    assert report.stopped.startswith("the document's time budget of 10 s ran out at line")
    assert report.exit_code == 3 and report.counts()["wrong"] == 0
    assert "NOT CHECKED TO THE END" in report.to_table().splitlines()[1]
    assert report.as_dict()["stopped"] == report.stopped
    whole = check_text(_paragraph(40, planted_at=39), isolate=False, timeout=None)
    assert whole.stopped == "" and whole.exit_code == 1  # with the time, the planted error is found
