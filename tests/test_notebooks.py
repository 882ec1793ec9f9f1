"""The committed notebooks run, are what the generator writes, and print what they were committed with.

A re-execution must reproduce every committed text output (``text/plain``, ``text/latex``,
``text/markdown`` and printed streams) of every code cell, so a change in the mathematics
that changes a printed result fails here.  Execution counts, images and metadata are
ignored; memory addresses (``at 0x7f...``) and timings (``1.2 s``, ``35 ms``) are
normalised before comparing.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

from mha_symbolic.notebooks import NOTEBOOKS, execute_notebook  # noqa: E402

DIR = Path(__file__).resolve().parents[1] / "derivations" / "notebooks"

#: Output kinds compared (images are binary renderings: not compared).
TEXT_KINDS = ("text/plain", "text/latex", "text/markdown")

_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_TIMING = re.compile(r"\b\d+(?:\.\d+)?(?:e[-+]?\d+)?\s*(?:ns|µs|us|ms|s|sec|seconds|min)\b")


def normalise(text: str) -> str:
    """Text with the non-deterministic parts (addresses, timings, trailing spaces) replaced."""
    text = _ADDRESS.sub("0x<address>", text)
    text = _TIMING.sub("<time>", text)
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def text_outputs(nb) -> list[list[tuple[str, str]]]:
    """For each code cell, its outputs as (kind, normalised text): errors, streams and TEXT_KINDS."""
    cells = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        outs: list[tuple[str, str]] = []
        for o in cell.outputs:
            if o.output_type == "stream":
                outs.append((f"stream:{o.name}", normalise(o.text)))
            elif o.output_type == "error":
                outs.append(("error", f"{o.ename}: {o.evalue}"))
            else:  # execute_result, display_data
                data = o.get("data", {})
                outs += [(kind, normalise(data[kind])) for kind in TEXT_KINDS if kind in data]
        cells.append(outs)
    return cells


def test_normalise_removes_only_the_nondeterministic_parts():
    assert normalise("<function f at 0x7f1ebc0687c0>") == normalise("<function f at 0x55aa00>")
    assert normalise("took 1.25 s ") == normalise("took 30 ms")
    assert normalise("[0.02443072713 +/- 2.08e-12]") != normalise("[0.02443072714 +/- 2.08e-12]")
    assert normalise("Min(d_model, n)") != normalise("Min(d_k, n)")


@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_notebook_executes_and_is_current(name, tmp_path):
    nb = nbformat.read(DIR / f"{name}.ipynb", as_version=4)
    sources = [(c.cell_type, c.source) for c in nb.cells]
    assert sources == [(kind, src) for kind, src in NOTEBOOKS[name]], "regenerate: python -m mha_symbolic.notebooks"
    committed = text_outputs(nb)
    assert all(committed[-1:]), "committed with outputs"
    executed = execute_notebook(copy.deepcopy(nb), cwd=tmp_path)
    fresh = text_outputs(executed)
    assert [o for cell in fresh for o in cell if o[0] == "error"] == []
    assert len(fresh) == len(committed)
    for k, (now, then) in enumerate(zip(fresh, committed, strict=True)):
        assert now == then, (f"{name}: code cell {k} prints something else than the committed notebook "
                             "(if the change is intended, regenerate: python -m mha_symbolic.notebooks)")


def test_rich_outputs_are_rendered():
    nb = nbformat.read(DIR / "seed002_rank_claims.ipynb", as_version=4)
    data = [o.get("data", {}) for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert any("text/latex" in d for d in data) and any("text/markdown" in d for d in data)
    nb = nbformat.read(DIR / "seed000_worked_example.ipynb", as_version=4)
    data = [o.get("data", {}) for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert any("image/png" in d for d in data)


def test_module_help_prints_usage_and_writes_nothing(tmp_path, monkeypatch, capsys):
    from mha_symbolic.notebooks import main

    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        main(["--help"])
    assert stop.value.code == 0 and "FOLDER" in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == []  # it once created a directory named --help


def test_notebooks_help_creates_nothing(tmp_path, monkeypatch, capsys):
    """`python -m mha_symbolic.notebooks --help` once created a directory named --help."""
    from mha_symbolic.notebooks import main

    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        main(["--help"])
    assert stop.value.code == 0 and "FOLDER" in capsys.readouterr().out and list(tmp_path.iterdir()) == []
