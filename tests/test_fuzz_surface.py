"""Issue 13: the fuzzed surface -- LaTeX, Markdown documents, CLI argument vectors and API arguments.

The property everywhere: a result or the package's own error (:class:`MHASymbolicError`, or argparse's exit
status 2 for the CLI), within the time budget, never anything else.  These tests are marked ``slow`` (10,000
examples together: 1,500 formulas, 1,000 documents, 2,500 argument vectors, 5,000 API calls); ``.ci/run``
runs them with a fixed seed after the default suite:

    pytest -m slow --hypothesis-seed=0

The default ``pytest`` skips them (``-m "not slow"`` in pyproject.toml); a smaller number of the same
examples runs there through ``test_document_fuzz.py``.
"""

from __future__ import annotations

import os
import time
from contextlib import redirect_stderr, redirect_stdout
from io import StringIO
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mha_symbolic import MHASymbolicError, MultiHeadAttention, check_text, example, from_pytorch, rank_bound
from mha_symbolic.cli import main
from mha_symbolic.dims import Dims
from mha_symbolic.parse import read_expression, read_formula
from mha_symbolic.rank import certify_rank_at_least, exact_rank, numerical_rank, rank_report
from mha_symbolic.values import to_matrix

pytestmark = pytest.mark.slow

#: MHA_FUZZ_SCALE=0.1 runs a tenth of the examples (a quick local run); CI runs them all
SCALE = float(os.environ.get("MHA_FUZZ_SCALE", "1"))
SECONDS = 15.0  # any single call (a document's pieces have 2 s each here)
FUZZ = settings(deadline=None, derandomize=False, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])


def scaled(examples: int) -> int:
    return max(1, int(examples * SCALE))


#: surface -> [examples, examples that got past validation] (a result, not the package's error)
REACH: dict[str, list[int]] = {}


def within_budget(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """The call's result or error, and its CPU seconds in this process bounded (work, not wall time)."""
    start = time.process_time()
    surface = REACH.setdefault(getattr(fn, "__name__", "call"), [0, 0])
    surface[0] += 1
    try:
        result = fn(*args, **kwargs)
        surface[1] += 1
    except MHASymbolicError as e:
        result = e
    elapsed = time.process_time() - start
    assert elapsed < SECONDS, f"{getattr(fn, '__name__', fn)} took {elapsed:.1f} s"
    return result


# ----- LaTeX ---------------------------------------------------------------------------------------------
ATOMS = ["x", "d_k", "d_{model}", "h", "n", "Q", "K", "V", "X", "W_i^Q", "W^O", r"\mathrm{head}_1", "2", "0.5",
         "-3", r"\pi", "e", "'", "1/3", r"\infty", r"\alpha", "é", "注意", "\u2212", "\u00d7", "\u221a"]
OPS = ["+", "-", r"\cdot", r"\times", "=", r"\approx", r"\le", r"\ge", r"\ne", "<", ">", "^", "_", "!", ",", "&",
       r"\\", " "]
OPENERS = [("(", ")"), ("[", "]"), ("{", "}"), (r"\left(", r"\right)"), (r"\frac{", "}{2}"), (r"\sqrt{", "}"),
           (r"\mathrm{softmax}(", ")"), (r"\mathrm{Concat}(", ")"), (r"\begin{bmatrix}", r"\end{bmatrix}"),
           ("10^{", "}"), ("e^{", "}"), (r"\mathrm{rank}(", ")"), (r"\text{", "}")]


@st.composite
def latex(draw: Any, depth: int = 0) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.integers(0, 9))
        if kind < 4 or depth > 3:
            parts.append(draw(st.sampled_from(ATOMS)))
        elif kind < 7:
            parts.append(draw(st.sampled_from(OPS)))
        else:
            opener, closer = draw(st.sampled_from(OPENERS))
            inner = draw(latex(depth + 1))
            unterminated = draw(st.integers(0, 7)) == 0
            parts.append(opener + inner + ("" if unterminated else closer))
    return " ".join(parts)


towers = st.builds(lambda k, base: "".join(f"{base}^{{" for _ in range(k)) + "9" + "}" * k + " = 1",
                   st.integers(1, 6), st.sampled_from(["10", "2", "9", "x"]))
# nesting: shallow, just past the reader's limit of 12, and far past it (the parser is exponential in depth)
deep = st.builds(lambda k, o: o[0] * k + "x" + o[1] * k, st.sampled_from([1, 2, 3, 13, 64, 1000, 3000]),
                 st.sampled_from([("(", ")"), ("{", "}"), (r"\mathrm{softmax}(", ")"), (r"\sqrt{", "}")]))
latex_inputs = st.one_of(latex(), towers, deep, st.text(max_size=40))


@settings(FUZZ, max_examples=scaled(1500))
@given(latex_inputs, st.booleans())
def test_latex_reader_reads_or_refuses(text, strict):
    for fn in (read_formula, read_expression):
        within_budget(fn, text, strict=strict)


# ----- Markdown documents ---------------------------------------------------------------------------------
BLOCKS = [
    "Let $n = 2$, $d_{model} = 4$ and $h = 2$.", "so $d_k = 2$", "$$d_k = \\frac{d_{model}}{h} = 2$$",
    "```python\nX = [[1, 0, 1, 0], [0, 1, 0, 1]]\n```", "```\ntoken 1: [1, 2]\ntoken 2: [1]\n```",
    "| head | W |\n|---|---|\n| 1 | [1, 0] |", "# Head 1", "> quoted $x = 1$", "- item $h = 3$",
    "<!-- unclosed comment", "\\[ S = QK^\\top", "$$\n\\begin{bmatrix}1 & 2\\\\3\\end{bmatrix}\n$$", "$x = [1, 1, 1",
    "$$\\mathrm{rank}(A_1) \\le 2$$", "$$\\mathrm{softmax}(0.5, 0.5) \\approx (0.5, 0.5)$$", "**bold** _em_ `code`",
    "\\begin{align*} a &= 1 \\\\ b &= 2 \\end{align*}", "$$10^{10^{10}} = 1$$", "Spalte $W_Q^1$ ist $4 \\times 2$.",
]


@st.composite
def documents(draw: Any) -> str:
    blocks = draw(st.lists(st.one_of(st.sampled_from(BLOCKS), latex().map(lambda s: f"$${s}$$"),
                                     latex().map(lambda s: f"$ {s} $"), st.text(max_size=30)), max_size=6))
    sep = draw(st.sampled_from(["\n\n", "\n", "\r\n", " "]))
    return sep.join(blocks)


@settings(FUZZ, max_examples=scaled(1000))
@given(documents())
def test_documents_get_a_report(text):
    report = within_budget(check_text, text, seconds_per_fragment=2.0, timeout=10.0, isolate=False)
    assert not isinstance(report, MHASymbolicError) or "check_text" not in str(report)
    if not isinstance(report, MHASymbolicError):
        assert all(f.status in ("correct", "wrong", "assumed", "inconsistent", "given", "unchecked")
                   for f in report.findings)
        assert not any("internal error" in f.message for f in report.findings)


# ----- CLI argument vectors ----------------------------------------------------------------------------------
FLAGS = ["--n", "--d-model", "--heads", "--d-k", "--d-v", "--convention", "--causal", "--example", "--format",
         "--notation", "--transpose", "--decimals", "--decimals-only", "--json", "--timeout", "--memory-mb",
         "--workers", "--source", "--all", "--sweep", "--help-not", "-x", "--"]
VALUES = ["2", "4", "0", "-1", "3", "abc", "1e9", "99999999999999999999", "split", "projection", "seed000",
          "seed003", "tex", "md", "pdf", "text", "json", "markdown", "vaswani", "T", "", "\u2248", "nan"]


@st.composite
def argv(draw: Any) -> list[str]:
    command = draw(st.sampled_from(["shapes", "derive", "check", "examples", "ranks", "bogus", ""]))
    rest = draw(st.lists(st.one_of(st.sampled_from(FLAGS), st.sampled_from(VALUES)), max_size=6))
    return [c for c in [command, *rest] if c or draw(st.booleans())]


def _cheap(args: list[str]) -> bool:
    """Leave out vectors that would start long legitimate work (a sweep, every document, pdflatex)."""
    return not any(a in ("--sweep", "--all", "pdf") for a in args) and not (args[:1] == ["ranks"])


@settings(FUZZ, max_examples=scaled(2500))
@given(argv().filter(_cheap))
def test_cli_exits_cleanly(tmp_path_factory, args):
    if args[:1] == ["check"]:
        doc = tmp_path_factory.mktemp("doc") / "doc.md"
        doc.write_text("Let $n = 2$ and $h = 2$.\n", encoding="utf-8")
        args = [*args, str(doc)]
    out, err = StringIO(), StringIO()
    start = time.process_time()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(args)
        except SystemExit as e:  # argparse: 0 for --help, 2 for a usage error
            code = e.code
    assert time.process_time() - start < SECONDS
    assert code in (0, 1, 2), (args, code)
    assert "Traceback" not in err.getvalue()


# ----- API arguments -------------------------------------------------------------------------------------------
scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 10), st.integers(10**6, 10**30),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8), st.just([]),
                    st.just(np.float32(2.0)), st.just(np.int64(4)))
matrices = st.one_of(
    st.lists(st.lists(st.integers(-3, 3), min_size=1, max_size=3), max_size=3),
    st.lists(st.lists(st.floats(allow_nan=True, width=32), min_size=1, max_size=3), max_size=3),
    st.lists(st.one_of(st.integers(-3, 3), st.text(max_size=3)), max_size=3),
    st.builds(lambda r, c, seed: np.random.default_rng(seed).normal(size=(r, c)), st.integers(0, 4),
              st.integers(0, 4), st.integers(0, 9)),
    scalars,
)


def _calls(a: Any, b: Any, m: Any) -> list[Any]:
    return [
        lambda: MultiHeadAttention(n=a, d_model=b, h=m if not isinstance(m, list) else None),
        lambda: Dims(n=a, d_model=b),
        lambda: Dims().simplify(a),
        lambda: rank_bound(m),
        lambda: exact_rank(m),
        lambda: numerical_rank(m, tol=1e-10 if a is None else a),
        lambda: certify_rank_at_least(m, a, precisions=(64,)),
        lambda: to_matrix(m, "M"),
        lambda: example("seed003").evaluate(X=m),
        lambda: example("seed000").evaluate(max_terms=a),
        lambda: from_pytorch(m, None, m, None, a),
        lambda: rank_report(a, b, 1, tries=1) if all(isinstance(x, int) and x < 6 for x in (a, b)) else None,
        lambda: read_expression(a),
        lambda: check_text(a, isolate=False),
    ]


@settings(FUZZ, max_examples=scaled(5000))
@given(scalars, scalars, matrices, st.integers(0, 13))
def test_api_returns_or_raises_the_package_error(a, b, m, which):
    call = _calls(a, b, m)[which]
    call.__name__ = "API calls of every type"
    within_budget(call)


def test_the_share_of_examples_past_validation_is_reported():
    """Runs last in this file: per surface, how many examples were computed rather than refused (this fuzz feeds
    junk on purpose, so a low share is expected; tests/test_fuzz_compare.py is the one that must reach)."""
    from conftest import SUMMARY

    assert REACH, "the fuzz tests above did not run"
    for name, (tried, computed) in sorted(REACH.items()):
        SUMMARY.append(f"surface fuzz: {name}: {computed} of {tried} examples past validation ({computed / tried:.0%})")
