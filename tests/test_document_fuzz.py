"""Fuzzing the reader and the checker: random and mutated LaTeX / Markdown never crash or hang.

Every input must give a report (any verdicts) or the package's own error; a per-fragment
time limit turns a slow fragment into an ``unchecked`` finding.
"""

from __future__ import annotations

import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mha_symbolic import MHASymbolicError
from mha_symbolic.document import STATUSES, check_text
from mha_symbolic.parse import read_formula

PIECES = [r"\frac{", "}", "{", r"\sqrt{", r"d_k", r"d_{model}", "QK^{\\top}", r"\mathrm{softmax}(", ")", "(", "=",
          r"\approx", r"\le", "[", "]", ",", r"\dots", r"\begin{bmatrix}", r"\end{bmatrix}", "&", r"\\", "0.67", "2",
          "-", "X", "W_i^Q", r"\mathrm{head}_1", r"\mathrm{Concat}(", r"\rightarrow", "(8, 2)", r"\times", "h",
          r"\text{rank}(Z)", "^", "_", "$", "$$", "\n", "```", "X = [1, 2]", "token 1: [0.5]", "Shape: (2, 4)",
          "# Head 1", r"\left(", r"\right)", "e^{", "'", r"\cdot", "x"]

SEEDS = [r"d_k = \dfrac{d_{model}}{h} = \dfrac{4}{2} = 2", r"S = QK^{\top} = \begin{bmatrix}1 & 0\\0 & 1\end{bmatrix}",
         r"\mathrm{softmax}(0.707,0) \approx (0.67,\;0.33)", r"\mathrm{rank}(Z) \le h \cdot d_k",
         r"f(x) = W_O [f_1(x),\; f_2(x),\; \dots,\; f_h(x)]", r"(8, 2) \times (2, 8) = (8, 8)"]

mutations = st.builds(lambda s, i, j, piece: s[:i] + piece + s[j:], st.sampled_from(SEEDS), st.integers(0, 60),
                      st.integers(0, 60), st.sampled_from(PIECES))
random_latex = st.lists(st.sampled_from(PIECES), max_size=12).map("".join)
documents = st.one_of(
    st.text(max_size=60),
    random_latex,
    mutations.map(lambda s: f"$${s}$$"),
    st.lists(st.one_of(random_latex, mutations), max_size=3).map(lambda xs: "\n".join(f"$ {x} $" for x in xs)),
)


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(documents)
def test_checker_gives_verdicts_or_our_error(doc):
    # in this process and with no clock: the bound is on CPU seconds (the work), so a busy machine cannot change
    # a verdict or the test's outcome
    start = time.process_time()
    try:
        report = check_text(doc, seconds_per_fragment=None, timeout=None, isolate=False)
    except MHASymbolicError:
        return
    assert all(f.status in STATUSES for f in report.findings)
    assert all(f.status != "unchecked" or f.message for f in report.findings)
    assert time.process_time() - start < 2.0 * max(1, report.math_fragments + 4) + 5


@settings(max_examples=300, deadline=None)
@given(st.one_of(random_latex, mutations))
def test_reader_raises_only_parse_errors(text):
    try:
        relations = read_formula(text, strict=False)
    except MHASymbolicError:
        return
    assert relations and all(r.op in ("expr", "eq", "approx", "le", "ge", "ne", "lt", "gt") for r in relations)
