from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import SUMMARY
from sympy import ImmutableMatrix, MatrixSymbol

from mha_symbolic import InputError, MultiHeadAttention, example
from mha_symbolic.cli import main
from mha_symbolic.derivation import (
    MAX_COLUMNS,
    Derivation,
    DerivationStep,
    compile_pdf,
    standard_documents,
    write_documents,
)
from mha_symbolic.parse import SymbolTable, equivalent, read_expression, read_formula

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = ROOT / "derivations"


def test_committed_documents_are_current(tmp_path):
    paths = write_documents(tmp_path)
    assert len(paths) == 16
    stale = [p.name for p in paths if not (COMMITTED / p.name).exists()
             or (COMMITTED / p.name).read_text(encoding="utf-8") != p.read_text(encoding="utf-8")]
    assert stale == [], f"regenerate with `mha-symbolic derive --all`: {stale}"


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex not installed (CI installs texlive-latex-base)")
def test_every_committed_tex_compiles_cleanly(tmp_path):
    files = sorted(COMMITTED.glob("*.tex"))
    assert len(files) == 8
    for f in files:
        shutil.copy(f, tmp_path / f.name)
        result = compile_pdf(tmp_path / f.name)
        assert result.pdf is not None and result.pdf.stat().st_size > 1000, f.name
        assert result.errors == () and result.overfull == (), (f.name, result.errors, result.overfull)
    SUMMARY.append(f"pdflatex compiled {len(files)} files in derivations/: 0 errors, 0 overfull boxes")


def test_general_derivation_content():
    d = Derivation.general(MultiHeadAttention())
    titles = [s.title for s in d.steps]
    assert titles[0] == "Queries of head $i$" and titles[-1] == "Output projection"
    shapes = {s.title: s.shape_latex() for s in d.steps}
    assert shapes["Concatenation of the heads"] == r"n \times d_{model}"
    assert shapes["Scores of head $i$"] == r"n \times n"
    tex = d.to_latex()
    assert r"d_k = \frac{d_{model}}{h}" in tex and tex.count(r"d_k = \frac{d_{model}}{h}") == 1
    assert r"S'_i &= \frac{S_i}{\sqrt{d_k}}" in tex
    assert r"h\,d_v = d_{model}" in tex


def test_example_derivation_shows_every_matrix():
    d = Derivation.from_example(example("seed000"))
    E = example("seed000").evaluate()
    by_title = {s.title: s for s in d.steps}
    a1 = by_title["Attention weights of head 1 (row-wise softmax)"]
    assert a1.value == E["A_1"]
    lines = a1.latex_lines()
    assert lines[0] == r"A_1 = \mathrm{softmax}\left(S'_1\right)"
    assert lines[1].startswith(r"= \begin{bmatrix}\frac{e^{\frac{\sqrt{2}}{2}}}")
    assert lines[2] == r"\approx \begin{bmatrix}0.6698 & 0.3302 \\ 0.3302 & 0.6698\end{bmatrix}"
    assert sum(s.value is not None for s in d.steps) == len(E) + 8  # every step and every input


def test_wide_exact_matrices_fall_back_to_decimals():
    d = Derivation.from_example(example("seed001"))
    a1 = next(s for s in d.steps if s.title.startswith("Attention weights of head 1"))
    lines = a1.latex_lines()
    assert len(lines) == 2 and lines[1].startswith(r"\approx \begin{bmatrix}")
    x = next(s for s in d.steps if s.title == "Input $X$")
    assert x.latex_lines()[1].startswith(r"= \begin{bmatrix}0.2 & 0.5 & 0.1 & 0.8")  # decimals as typed


def test_matrices_wider_than_the_page_are_split():
    M = ImmutableMatrix(2, 12, list(range(24)))
    step = DerivationStep("wide", MatrixSymbol("M", 2, 12), (2, 12), M)
    lines = step.latex_lines()
    assert len(lines) == 3 and MAX_COLUMNS == 8
    assert r"\text{columns 1--8: }" in lines[1] and r"\text{columns 9--12: }" in lines[2]


@pytest.mark.parametrize("name", ["general", "seed000", "seed003"])
def test_document_formulas_read_back(name):
    doc = standard_documents()[name]
    table = SymbolTable.for_model(doc.model)
    for step in doc.steps:
        lines = step.latex_lines()
        if hasattr(step.formula, "definition"):  # a step of the model (inputs have no definition)
            first = read_formula(lines[0], table)[0]
            assert first.lhs == step.formula.symbol and first.rhs == step.formula.definition
        for line in lines[1:]:
            op, body = line.split(" ", 1)
            value = read_expression(body)
            if op == "=":
                assert equivalent(value, step.value), (step.title, line)
            else:
                assert all(abs(float(a) - float(b.evalf(20))) <= 5e-5 for a, b in zip(value, step.value, strict=True))


def test_markdown_and_notebook():
    d = Derivation.from_example(example("seed003"))
    md = d.to_markdown()
    assert md.startswith("# One token, two heads") and "$$\n\\begin{aligned}\n" in md
    assert r"\mathrm{head}_1 &= A_1 V_1 \\" in md and "4 & 11" in md
    nb = json.loads(d.to_ipynb())
    assert nb["nbformat"] == 4 and all(c["cell_type"] == "markdown" for c in nb["cells"])
    assert d._repr_markdown_() == md


def test_cli_derive_formats(tmp_path, capsys):
    assert main(["derive", "--format", "tex", "--example", "seed003", "--notation", "per-head"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(r"\documentclass[11pt]{article}") and r"W_V^{1}" in out
    assert main(["derive", "--format", "md", "--n", "4", "--d-model", "8", "--heads", "2", "--out",
                 str(tmp_path)]) == 0
    written = tmp_path / "derivation.md"
    assert capsys.readouterr().out.strip() == str(written)
    text = written.read_text(encoding="utf-8")  # a general head i, written once, at these sizes
    assert r"\mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_h)" in text and "Shape $4 \\times 4$." in text
    assert main(["derive", "--all", "--out", str(tmp_path / "all")]) == 0
    assert len(list((tmp_path / "all").iterdir())) == 16


def test_cli_pdf_without_pdflatex(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert main(["derive", "--format", "pdf", "--out", str(tmp_path)]) == 2
    assert "pdflatex not found: install TeX Live" in capsys.readouterr().err


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex not installed")
def test_cli_pdf(tmp_path, capsys):
    assert main(["derive", "--format", "pdf", "--example", "seed001", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "seed001.pdf").stat().st_size > 10_000


def test_bad_settings():
    with pytest.raises(InputError, match="notation must be one of"):
        Derivation.general(MultiHeadAttention(), notation="tensor")
    with pytest.raises(InputError, match="transpose must be 'top' or 'T'"):
        Derivation.from_example(example("seed000"), transpose="t")


def test_committed_grouped_query_derivation_shows_the_shared_heads():
    text = (COMMITTED / "general-gqa.md").read_text(encoding="utf-8")
    # one general query head i reads key/value head j = ceil(i g / h); which heads share one is said once
    assert r"S_i = Q_i K_{\left\lceil{\frac{g i}{h}}\right\rceil}^{\top}" in text and "K_j = X W_j^{K}" in text
    assert "Query heads $1$--$4$ read $K_{1}, V_{1}$, $5$--$8$ read $K_{2}, V_{2}$." in text
    assert "S_2 =" not in text and "K_2 =" not in text


def test_committed_cross_attention_derivation_reads_keys_from_y():
    text = (COMMITTED / "general-cross.md").read_text(encoding="utf-8")
    assert "# Multi-head cross-attention, projection convention" in text
    assert "K_i = Y W_i^{K}" in text and "Q_i = X W_i^{Q}" in text
    assert r"Shape $n \times n_{kv}$." in text and r"A_i = \mathrm{softmax}_{m}\left(S'_i\right)" in text
    # the grouped document says how many query heads share a key/value head, from h = 8 and g = 2
    assert r"each shared by $h/g = 4$ query heads" in (COMMITTED / "general-gqa.md").read_text(encoding="utf-8")


def test_cli_derive_cross_and_grouped_options(capsys):
    assert main(["derive", "--cross", "--n-kv", "5", "--n", "3", "--d-model", "8", "--heads", "4",
                 "--kv-heads", "2", "--mask", "additive"]) == 0
    out = capsys.readouterr().out
    assert "K_2     K_2 = Y W_K^2" in out and "A_4     A_4 = softmax(S'_4 + M)" in out and "(3, 5)" in out
    assert main(["derive", "--cross", "--format", "md"]) == 0
    assert "# Multi-head cross-attention" in capsys.readouterr().out
    assert main(["derive", "--example", "seed000", "--mask", "key_padding"]) == 2
    assert "--example fixes the model" in capsys.readouterr().err


REAL_SIZES = {"768/12": MultiHeadAttention(d_model=768, h=12),
              "4096/32, 8 kv heads": MultiHeadAttention(d_model=4096, h=32, kv_heads=8),
              "h = 64": MultiHeadAttention(n=70, d_model=4096, h=64)}


@pytest.mark.parametrize("name", sorted(REAL_SIZES))
def test_a_derivation_at_real_sizes_writes_a_general_head_once(name):
    """d_model 768 / h 12 gave 13 pages (every head written out) and 32 query heads a Concat line 742 pt past the
    margin; the heads are now one general head i (and key/value head j), with Concat(head_1, ..., head_h)."""
    model = REAL_SIZES[name]
    doc = Derivation.general(model)
    tex = doc.to_latex()
    assert [s.formula.name for s in doc.steps][:3] in (["Q_i", "K_i", "V_i"], ["Q_i", "K_j", "V_j"])
    assert "Q_2" not in tex and "Q_{2}" not in tex and r"\mathrm{head}_{12}" not in tex
    assert r"\mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_h)" in tex
    d_k, n = int(model.dims.d_k), model.dims.n
    assert f"Shape ${n} \\times {d_k}$." in tex  # the general head's shape at this model's sizes
    assert r"\sqrt{d_k} = 8" in tex if d_k == 64 else r"\sqrt{d_k} = 8 \sqrt{2} \approx 11.3137" in tex


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
@pytest.mark.parametrize("name", sorted(REAL_SIZES))
def test_a_derivation_at_real_sizes_compiles_without_overfull_boxes_in_a_few_pages(name, tmp_path):
    import re

    path = tmp_path / "doc.tex"
    path.write_text(Derivation.general(REAL_SIZES[name], notation="per-head").to_latex(), encoding="utf-8")
    result = compile_pdf(path)
    assert result.pdf is not None and result.errors == () and result.overfull == ()
    pages = int(re.search(r"Output written on .*\((\d+) pages?", path.with_suffix(".log").read_text(
        errors="replace")).group(1))
    assert pages <= 3


def test_each_index_letter_means_one_thing_and_the_notation_is_honoured():
    gqa = Derivation.general(MultiHeadAttention(d_model=64, h=8, kv_heads=2), notation="per-head").to_latex()
    assert "K_j = X W_K^{j}" in gqa and "W_j^{K}" not in gqa
    assert "K_j = X W_j^{K}" in Derivation.general(MultiHeadAttention(d_model=64, h=8, kv_heads=2)).to_latex()
    causal = Derivation.general(MultiHeadAttention(causal=True)).to_latex()
    assert "$b > a$" in causal and "$j > i$" not in causal  # i and j are head indices


def test_derive_fails_when_a_line_runs_past_the_margin(tmp_path, monkeypatch, capsys):
    from mha_symbolic import derivation
    from mha_symbolic.cli import main

    def overfull(path):
        return derivation.CompileResult(path.with_suffix(".pdf"), (), ("Overfull \\hbox (742.0pt too wide) in "
                                                                       "paragraph at lines 40--41",))

    monkeypatch.setattr(derivation, "compile_pdf", overfull)
    assert main(["derive", "--format", "pdf", "--heads", "8", "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "1 line(s) run past the margin (Overfull \\hbox (742.0pt too wide)" in err
