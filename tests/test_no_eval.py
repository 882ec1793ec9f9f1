"""Issue 13: no text from a user or a document is ever evaluated as code.

The package is scanned (``ast``) for every call that can turn a string into code or into a SymPy object by
parsing it: ``sympify``/``S(...)``/``parse_expr``, ``eval``/``exec``/``compile``/``__import__``, and the
functions that compile or parse on our behalf (``lambdify``, ``latex2sympy``, ``ast.literal_eval``).  Every
call site is listed below with why it is safe; a new call site fails this test until it is justified here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from mha_symbolic import Dims, InputError, rank_bound
from mha_symbolic._convert import as_sympy

PACKAGE = Path(__file__).resolve().parents[1] / "mha_symbolic"
DANGEROUS = {"sympify", "S", "parse_expr", "eval", "exec", "compile", "__import__", "_sympify", "lambdify",
             "latex2sympy", "literal_eval", "parse_latex"}

#: (file, function called) -> why the call cannot run text from a user or a document
ALLOWED = {
    ("_convert.py", "_sympify"): "SymPy's strict conversion: refuses str (as_sympy raises InputError first)",
    ("numeric.py", "lambdify"): "compiles code printed from the model's own step expressions (SymPy objects "
                                "built by the package), never from a string a user gave",
    ("numeric.py", "compile"): "compiles the fused source that _fused_source generates from the model: input "
                               "names checked as identifiers, numbers printed by repr, the model's own text "
                               "(symbol names) only inside a string literal printed by repr",
    ("numeric.py", "exec"): "runs that compiled source once, to define the function (nothing else runs)",
    ("parse/latex.py", "latex2sympy"): "the LaTeX parser (antlr grammar): builds SymPy objects from the tokens, "
                                       "no eval; its input is checked for length, nesting and huge numbers first",
    ("check/_statements.py", "literal_eval"): "ast.literal_eval: Python literals only (numbers, lists), no names "
                                              "or calls; the node was parsed by ast.parse, never executed",
    ("check/plain.py", "literal_eval"): "ast.literal_eval on a printed list: literals only, never code",
    ("check/tracing.py", "literal_eval"): "ast.literal_eval on a list node of a document's code: the numbers of a "
                                          "literal, never a name or a call",
}


def call_sites() -> set[tuple[str, str]]:
    found = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "re":
                continue  # re.compile: a regular expression, not code
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if name in DANGEROUS:
                found.add((path.relative_to(PACKAGE).as_posix(), name))
    return found


def test_every_call_that_could_evaluate_text_is_justified():
    found = call_sites()
    unjustified = sorted(found - ALLOWED.keys())
    assert not unjustified, f"justify these in ALLOWED or remove them: {unjustified}"
    stale = sorted(ALLOWED.keys() - found)
    assert not stale, f"no longer called (remove from ALLOWED): {stale}"


def test_the_scan_finds_a_planted_sympify(tmp_path, monkeypatch):
    planted = tmp_path / "mha_symbolic"
    planted.mkdir()
    (planted / "bad.py").write_text("from sympy import sympify\n\ndef f(s):\n    return sympify(s)\n")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", planted)
    assert call_sites() == {("bad.py", "sympify")}


@pytest.mark.parametrize("value", ["x + 1", b"1", "__import__('os')"])
def test_as_sympy_refuses_text(value):
    with pytest.raises(InputError, match="strings are never evaluated"):
        as_sympy(value, "the argument")


def test_public_calls_refuse_text():
    with pytest.raises(InputError):
        rank_bound("X")
    with pytest.raises(InputError):
        Dims(relations=["d_k - 2"])
