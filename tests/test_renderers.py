"""Every result object renders for Jupyter, and its LaTeX is valid (pdflatex, or the reader)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from mha_symbolic import MultiHeadAttention, example
from mha_symbolic.claims import run_claims
from mha_symbolic.derivation import Derivation
from mha_symbolic.document import check_text
from mha_symbolic.parse import SymbolTable, read_formula
from mha_symbolic.proofs import split_equals_projection, two_heads_not_one
from mha_symbolic.rank import rank_bound, rank_report, softmax_rank_counterexample


def latex_objects():
    M = MultiHeadAttention()
    return [M, M.dims, M.steps["A_i"], M.steps["Concat"], rank_bound(M.steps["Output"].expr, M.dims),
            split_equals_projection(max_h=2), two_heads_not_one(), example("seed003").evaluate()]


def markdown_objects():
    return [Derivation.from_example(example("seed003")), check_text("$$d_k = \\frac{4}{2} = 2$$"),
            run_claims(source="003_"), rank_report(4, 4, 2), softmax_rank_counterexample(), example("seed000")]


@pytest.mark.parametrize("obj", latex_objects(), ids=lambda o: type(o).__name__)
def test_repr_latex(obj):
    text = obj._repr_latex_()
    assert text.startswith("$") and text.endswith("$") and text.count("{") == text.count("}")


@pytest.mark.parametrize("obj", markdown_objects(), ids=lambda o: type(o).__name__)
def test_repr_markdown(obj):
    text = obj._repr_markdown_()
    assert text.strip() and ("|" in text or "$" in text or "**" in text)


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex not installed")
def test_all_latex_renders_compile(tmp_path):
    body = "\n\n".join(obj._repr_latex_() for obj in latex_objects())
    doc = "\\documentclass{article}\\usepackage{amsmath,amssymb}\\setcounter{MaxMatrixCols}{20}\n" \
          "\\begin{document}\n" + body + "\n\\end{document}\n"
    (tmp_path / "r.tex").write_text(doc, encoding="utf-8")
    run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "r.tex"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-2000:]


def test_model_renderings_read_back():
    M = MultiHeadAttention()
    table = SymbolTable.for_model(M)
    text = M.steps["A_i"]._repr_latex_().removeprefix(r"$\displaystyle ").removesuffix("$")
    r = read_formula(text, table)[0]
    assert r.lhs == M.steps["A_i"].symbol and r.rhs == M.steps["A_i"].definition
