"""The example notebooks in ``derivations/notebooks/``: their cells, and building them with outputs.

Run ``python -m mha_symbolic.notebooks [OUT_DIR]`` to regenerate and execute them (needs
nbformat, nbclient and ipykernel: ``pip install 'mha-symbolic[test]'``).  The test suite
executes the committed notebooks, so they cannot rot.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from .errors import InputError, require

__all__ = ["NOTEBOOKS", "build_notebook", "write_notebooks", "execute_notebook"]

_MD, _PY = "markdown", "code"

NOTEBOOKS: dict[str, list[tuple[str, str]]] = {
    "seed000_worked_example": [
        (_MD, "# Seed 000 end to end\n\nTwo tokens, $d_{model} = 4$, two heads, split convention, "
              "$Q = K = V = X_i$. Every step exactly, then in pictures."),
        (_PY, "from mha_symbolic import MultiHeadAttention, example\n"
              "ex = example('seed000')\nex.model"),
        (_PY, "E = ex.evaluate()\nE['A_1']"),
        (_PY, "E.numeric('A_1').round(4)"),
        (_PY, "ex.model.steps[\"S'_1\"]"),
        (_PY, "from mha_symbolic.derivation import Derivation\nDerivation.from_example(ex)"),
        (_PY, "from mha_symbolic.plots import attention_heatmaps\n"
              "fig = attention_heatmaps(E, tokens=['token 1', 'token 2'])"),
    ],
    "seed002_rank_claims": [
        (_MD, "# The rank claims of seed 002, adjudicated\n\nProven bounds, exact witnesses, certified "
              "counterexamples."),
        (_PY, "from mha_symbolic import MultiHeadAttention\nfrom mha_symbolic.rank import rank_bound\n"
              "M = MultiHeadAttention()\nrank_bound(M.steps['head_i'].expr, M.dims)"),
        (_PY, "rank_bound(M.steps['Concat'].expr, M.dims).bound"),
        (_PY, "from mha_symbolic.rank import multihead_rank_comparison\nc = multihead_rank_comparison()\n"
              "print(c.verdict)\nfor line in c.reasoning:\n    print(' -', line)"),
        (_PY, "from mha_symbolic.rank import softmax_rank_counterexample\nc = softmax_rank_counterexample()\n"
              "print(c.verdict, c.certificate.det)"),
        (_PY, "from mha_symbolic.claims import run_claims\nrun_claims(source='002_')"),
        (_MD, "Verdicts are the engine's answer on the model: with values as wide as the model "
              "($d_v = d_{model}$) the bound $\\mathrm{rank}(Z) \\le d_k$ no longer holds."),
        (_PY, "from mha_symbolic.claims import claim\nc = claim('002-rank-single')\n"
              "c.decide(MultiHeadAttention(d_v=M.dims.d_model, d_k=None)).verdict"),
    ],
    "sqrt_dk_scaling": [
        (_MD, "# Why divide by $\\sqrt{d_k}$\n\nThe variance argument, proven with `sympy.stats`, with "
              "Monte Carlo points as evidence."),
        (_PY, "from mha_symbolic.proofs import sqrt_dk_scaling, softmax_saturation\n"
              "p = sqrt_dk_scaling(full_check_up_to=3, monte_carlo_samples=20_000)\np"),
        (_PY, "p.result['variance'], p.result['scaled_variance']"),
        (_PY, "softmax_saturation()"),
        (_PY, "from mha_symbolic.plots import scaling_variance_plot\nfig = scaling_variance_plot(samples=20_000)"),
    ],
    "checking_a_document": [
        (_MD, "# Checking a tutorial\n\nA small document with one wrong number; the checker finds it."),
        (_PY, "from mha_symbolic.document import check_text\n"
              "doc = '''* Only one token\n* Model dimension = 4\n```\nX = [1, 2, 3, 4]\n"
              "WQ1 = [[1,0],[0,1],[0,0],[1,0]]\nWK1 = [[1,1],[0,1],[1,0],[0,1]]\nWV1 = [[1,0],[0,2],[1,1],[0,1]]\n"
              "Q1 = X @ WQ1\nK1 = X @ WK1\nV1 = X @ WV1\nhead1_output = [0.5, 1.2]\n```\n'''\n"
              "report = check_text(doc, name='example.md')\nreport"),
        (_PY, "[(f.line, f.status, f.expected) for f in report.findings if f.status != 'correct']"),
    ],
}


def build_notebook(cells: list[tuple[str, str]]) -> Any:
    """A notebook of ``(kind, source)`` cells, markdown or code."""
    import nbformat

    if not isinstance(cells, (list, tuple)) or not all(isinstance(c, (list, tuple)) and len(c) == 2 for c in cells):
        raise InputError("build_notebook's cells must be a list of (kind, source) pairs")

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell(src) if kind == _MD else nbformat.v4.new_code_cell(src)
                for kind, src in cells]
    return nb


def execute_notebook(nb: Any, cwd: Any = None, timeout: int = 300) -> Any:
    """Run every cell (raises ``nbclient.exceptions.CellExecutionError`` on the first failure)."""
    from nbclient import NotebookClient

    notebook: Any = nb
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list) or not isinstance(nb.get("metadata"), dict):
        raise InputError(f"execute_notebook's nb must be a notebook (nbformat.NotebookNode with cells and "
                         f"metadata), got {type(nb).__name__}")
    NotebookClient(notebook, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(cwd or ".")}}).execute()
    return nb


def write_notebooks(out_dir: Any, execute: bool = True) -> list[Path]:
    import nbformat

    require(out_dir, (str, os.PathLike), "write_notebooks' out_dir", "a path")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, cells in NOTEBOOKS.items():
        nb = build_notebook(cells)
        if execute:
            execute_notebook(nb, cwd=out)
        path = out / f"{name}.ipynb"
        nbformat.write(nb, path)
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> int:
    """``python -m mha_symbolic.notebooks [FOLDER]``: write and execute the example notebooks."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m mha_symbolic.notebooks",
                                     description="write and execute the example notebooks into FOLDER")
    parser.add_argument("folder", nargs="?", default="derivations/notebooks",
                        help="where to write them (default derivations/notebooks)")
    args = parser.parse_args(argv)
    for p in write_notebooks(args.folder):
        print(p)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
