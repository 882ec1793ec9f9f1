"""Every public callable, given a value of the wrong type, answers with a result or the package's error.

A sweep, not a list: each name in the ``__all__`` of the package's public modules is called with ``None``, a
list, a number, a string, a dict and a bare object as its first argument, then (where every parameter has a
default) with each of those for each keyword; the public methods of a model, an evaluation and ``Dims`` get
the same.  Python's own ``TypeError``/``AttributeError``/``KeyError`` from deep inside is a failure: the
package's error names the parameter.  Before this sweep 209 of these calls raised Python's errors."""

from __future__ import annotations

import importlib
import inspect
import warnings

import numpy as np
import pytest
from sympy import Rational, oo

import mha_symbolic
from mha_symbolic.errors import InputError, MHASymbolicError

MODULES = ["mha_symbolic", "mha_symbolic.rank", "mha_symbolic.statements", "mha_symbolic.parse",
           "mha_symbolic.claims", "mha_symbolic.weights", "mha_symbolic.numeric", "mha_symbolic.evaluation",
           "mha_symbolic.derivation", "mha_symbolic.latex", "mha_symbolic.proofs", "mha_symbolic.examples",
           "mha_symbolic.pytorch", "mha_symbolic.rank.circuits", "mha_symbolic.budget", "mha_symbolic.document",
           "mha_symbolic.plots", "mha_symbolic.notebooks", "mha_symbolic.softmax", "mha_symbolic.dims",
           "mha_symbolic.attention"]
#: a string is a valid path for these, and writing or executing everything is their job (tested elsewhere)
WRITES = {"write_documents", "write_notebooks"}
BAD = [None, [], 5, "x", {}, object()]


def _callables():
    seen, out = set(), []
    for module in MODULES:
        mod = importlib.import_module(module)
        for name in mod.__all__:
            obj = getattr(mod, name)
            if callable(obj) and id(obj) not in seen:
                seen.add(id(obj))
                out.append((f"{module}.{name}", obj))
    return out


CALLABLES = _callables()


def _raw(call) -> str | None:
    """None if ``call()`` returns or raises the package's error; else the raw exception, named."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call()
    except MHASymbolicError:
        return None
    except TypeError as e:  # Python's own arity errors are the caller's, not a wrong type
        if "argument" in str(e) and any(w in str(e) for w in ("missing", "takes", "positional")):
            return None
        return f"TypeError: {e}"
    except Exception as e:  # noqa: BLE001 -- what the sweep looks for
        return f"{type(e).__name__}: {e}"
    return None


def _first_parameter_default(obj):
    try:
        params = [p for p in inspect.signature(obj).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return inspect.Parameter.empty
    return params[0].default if params else inspect.Parameter.empty


def test_the_sweep_covers_the_public_surface():
    names = {n.rsplit(".", 1)[1] for n, _ in CALLABLES}
    assert len(CALLABLES) >= 150
    assert {"evaluate", "explicit_softmax", "exact_dyadic", "rank_sweep", "circuits", "TensorSource",
            "SymbolTable", "MHALatexPrinter", "ClaimResults", "compile_pdf"} <= names


@pytest.mark.parametrize("name, obj", CALLABLES, ids=[n for n, _ in CALLABLES])
def test_a_wrong_first_argument_is_a_result_or_the_packages_error(name, obj, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a callable that takes "x" as a path writes here
    default = _first_parameter_default(obj)
    raw = []
    for bad in BAD:
        if bad is None and default is None:
            continue  # None is the documented default: it runs the whole job
        if isinstance(bad, str) and name.rsplit(".", 1)[1] in WRITES:
            continue
        got = _raw(lambda: obj(bad))  # noqa: B023 -- called at once
        if got:
            raw.append(f"{name}({bad!r}) -> {got[:120]}")
    assert not raw, "\n".join(raw)


KEYWORD_CASES = []
for _name, _obj in CALLABLES:
    try:
        _params = [p for p in inspect.signature(_obj).parameters.values()
                   if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    except (TypeError, ValueError):
        continue
    if _params and all(p.default is not p.empty for p in _params) and \
            _name.rsplit(".", 1)[1] not in WRITES | {"run_claims", "rank_sweep", "compile_pdf"}:
        KEYWORD_CASES.append((_name, _obj, [p.name for p in _params]))


@pytest.mark.parametrize("name, obj, params", KEYWORD_CASES, ids=[c[0] for c in KEYWORD_CASES])
def test_a_wrong_keyword_is_a_result_or_the_packages_error(name, obj, params, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    defaults = {p.name: p.default for p in inspect.signature(obj).parameters.values()}
    raw = []
    for param in params:
        for bad in ([], "x", {}, object(), -3):
            if defaults[param] is not None and type(defaults[param]) is type(bad):
                continue  # a value of the default's own type is a value, not a wrong type
            got = _raw(lambda: obj(**{param: bad}))  # noqa: B023 -- called at once
            if got:
                raw.append(f"{name}({param}={bad!r}) -> {got[:120]}")
    assert not raw, "\n".join(raw)


def _objects():
    model = mha_symbolic.MultiHeadAttention()
    ex = mha_symbolic.example("seed003")
    return {"model": model, "numeric model": mha_symbolic.MultiHeadAttention(n=2, d_model=4, h=2),
            "example": ex, "evaluation": ex.evaluate(), "derivation": mha_symbolic.Derivation.general(model),
            "dims": model.dims}


def test_the_public_methods_of_the_main_objects_answer_a_wrong_type_with_the_packages_error(tmp_path, monkeypatch):
    """Methods the package defines (SymPy's inherited ``subs``, ``xreplace``... keep SymPy's own errors)."""
    monkeypatch.chdir(tmp_path)
    raw, calls = [], 0
    for label, o in _objects().items():
        for attr in dir(o):
            if attr.startswith("_"):
                continue
            with warnings.catch_warnings():  # SymPy's deprecated properties warn when read
                warnings.simplefilter("ignore")
                meth = getattr(o, attr)
            if not callable(meth) or isinstance(meth, type) or \
                    not (getattr(meth, "__module__", "") or "").startswith("mha_symbolic"):
                continue
            params = [p for p in inspect.signature(meth).parameters.values()
                      if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
            required = [p for p in params if p.default is p.empty]
            if len(required) > 1:
                continue
            for p in params:
                if required and required[0].name != p.name:
                    continue
                for bad in BAD:
                    if p.default is not p.empty and (p.default is bad or type(p.default) is type(bad)):
                        continue
                    calls += 1
                    got = _raw(lambda: meth(**{p.name: bad}))  # noqa: B023 -- called at once
                    if got:
                        raw.append(f"{label}.{attr}({p.name}={bad!r}) -> {got[:120]}")
    assert calls >= 100
    assert not raw, "\n".join(raw)


def test_explicit_softmax_never_reads_a_string_entry_as_code():
    """SymPy's ``Matrix([["x + 1"]])`` sympifies (evaluates) the text; the scores are built entry by entry."""
    from mha_symbolic.softmax import explicit_softmax

    with pytest.raises(InputError, match=r"scores entry \(1, 1\).*strings are never evaluated"):
        explicit_softmax([["__import__('os').getcwd()", 0]])
    with pytest.raises(InputError, match="key-padding row entry"):
        explicit_softmax([[0, 1]], keep=[["1", 1]])
    with pytest.raises(InputError, match="rows of equal length"):
        explicit_softmax([[0, 1], [2]])
    half = Rational(1, 2)
    assert explicit_softmax([[0, 0]]).tolist() == [[half, half]]
    assert explicit_softmax(np.array([[0, 0], [0, 0]])).tolist() == [[half, half], [half, half]]
    assert explicit_softmax(((0, -oo),)).tolist() == [[1, 0]]


def test_values_inside_a_well_typed_argument_are_checked_too(tmp_path):
    import numpy as np

    from mha_symbolic.claims import ClaimResults
    from mha_symbolic.rank import rank_sweep
    from mha_symbolic.rank.certify import exact_dyadic

    with pytest.raises(InputError, match=r"rank_sweep's grid\[1\] d_model must be a whole number from 1, got '8'"):
        rank_sweep([(2, 4, 2), (4, "8", 2)], workers=1)
    with pytest.raises(InputError, match=r"rank_sweep's grid\[0\] must be a triple"):
        rank_sweep([(2, 4)], workers=1)
    with pytest.raises(InputError, match=r"ClaimResults' results\[0\] must be a ClaimResult, got int"):
        ClaimResults([5])
    assert ClaimResults() == []
    with pytest.raises(InputError, match="exact_dyadic's A has a NaN or infinite entry"):
        exact_dyadic(np.array([[1.0, np.nan]]))
    with pytest.raises(InputError, match="2-D NumPy float array, got shape"):
        exact_dyadic(np.ones(3))
    ev = mha_symbolic.example("seed003").evaluate()
    with pytest.raises(InputError, match="Evaluation.numeric: no step 'Outptu'; steps are"):
        ev.numeric("Outptu")
    assert ev.numeric("Output").shape == ev["Output"].shape
