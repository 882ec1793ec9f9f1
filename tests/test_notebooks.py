"""The committed notebooks run, and are what the generator writes (so they cannot rot)."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

from mha_symbolic.notebooks import NOTEBOOKS, execute_notebook  # noqa: E402

DIR = Path(__file__).resolve().parents[1] / "derivations" / "notebooks"


@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_notebook_executes_and_is_current(name, tmp_path):
    nb = nbformat.read(DIR / f"{name}.ipynb", as_version=4)
    sources = [(c.cell_type, c.source) for c in nb.cells]
    assert sources == [(kind, src) for kind, src in NOTEBOOKS[name]], "regenerate: python -m mha_symbolic.notebooks"
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.outputs for c in code[-1:]), "committed with outputs"
    executed = execute_notebook(nb, cwd=tmp_path)
    errors = [o for c in executed.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert errors == []


def test_rich_outputs_are_rendered():
    nb = nbformat.read(DIR / "seed002_rank_claims.ipynb", as_version=4)
    data = [o.get("data", {}) for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert any("text/latex" in d for d in data) and any("text/markdown" in d for d in data)
    nb = nbformat.read(DIR / "seed000_worked_example.ipynb", as_version=4)
    data = [o.get("data", {}) for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert any("image/png" in d for d in data)
