"""The LaTeX parser's prediction cache kept between runs (mha_symbolic.parse.prediction_cache).

The cache must change nothing but the time: every parse and every report is the same with a cold parser, with a
cache saved by another process (under another hash seed), and with the cache off.  A file that is damaged,
foreign, planted or writable by others is never loaded.  Each case runs in fresh interpreters, since the cache is
loaded once per process."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "corpus"

#: formulas of the kinds documents hold; the first half warms the cache, the second is new to it
FORMULAS = [
    r"d_k = d_{model} / h = 64", r"\frac{512}{8} = 64", r"\sqrt{64} = 8", r"2 \times 3 + 4", r"(1 + 2)^{3}",
    r"Q K^T", r"\frac{Q K^T}{\sqrt{d_k}}", r"x^2 + 2 x + 1", r"\sum_{i=1}^{n} i", r"e^{-x} \cdot 3",
    r"0.5 \cdot 1.25 - \frac{3}{4}", r"\log(e) + \ln 2", r"a_{ij} b_{jk}", r"\max(1, 2, 3)", r"\exp(0.1)",
    r"3 \cdot 4 \cdot 5 = 60", r"\frac{\sqrt{2}}{2}", r"12 \times 64 = 768", r"(a + b)(a - b)", r"\min(n, d_k)",
]

PARSE = r"""
import json, sys
from sympy import srepr
from latex2sympy2_extended import latex2sympy
from mha_symbolic.parse import prediction_cache as pc
loaded = pc.warm()
formulas = json.loads(sys.argv[1])
before = pc.state_count()
out = []
for f in formulas:
    try:
        out.append(srepr(latex2sympy(f)))
    except Exception as e:  # the parse error is part of the result to compare
        out.append("error: " + type(e).__name__)
grown = pc.state_count() - before
saved = pc.save()
print(json.dumps({"loaded": loaded, "grown": grown, "saved": saved, "parses": out, "states": pc.state_count()}))
"""

CHECK = r"""
import json, sys
from mha_symbolic.document import check_file
from mha_symbolic.parse import prediction_cache as pc
reports = [repr(check_file(p, isolate=False).findings) for p in sys.argv[1:]]
print(json.dumps({"reports": reports, "states": pc.state_count()}))
"""


def run(script: str, *args: str, cache: str, seed: int = 0) -> dict:
    env = {**os.environ, "MHA_CACHE_DIR": cache, "PYTHONHASHSEED": str(seed)}
    env.pop("MHA_CHECK_IN_PROCESS", None)
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, env=env,
                          cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def private_dir(tmp_path: Path) -> Path:
    d = tmp_path / "cache"
    d.mkdir(mode=0o700)
    return d


def test_parses_are_the_same_cold_warm_and_off(tmp_path):
    cache = private_dir(tmp_path)
    half = len(FORMULAS) // 2
    first = run(PARSE, json.dumps(FORMULAS[:half]), cache=str(cache), seed=1)
    assert first["loaded"] is False and first["saved"] is True and first["grown"] > 0
    files = list(cache.iterdir())
    assert len(files) == 1 and files[0].name.startswith("antlr-") and files[0].stat().st_mode & 0o077 == 0
    warm = run(PARSE, json.dumps(FORMULAS), cache=str(cache), seed=2)  # another hash seed: hashes are rebuilt
    off = run(PARSE, json.dumps(FORMULAS), cache="off", seed=3)
    assert warm["loaded"] is True and off["loaded"] is False
    assert warm["parses"] == off["parses"]
    # and the same DFA: the loaded states are found again by new formulas' decisions, not duplicated beside them
    assert warm["states"] == off["states"]
    assert off["parses"][0].startswith("And(Equality(Symbol('d_k')") and "Integer(64)" in off["parses"][0]
    # the formulas of the first run are answered from the loaded cache: re-parsing them adds no DFA state
    again = run(PARSE, json.dumps(FORMULAS[:half]), cache=str(cache), seed=4)
    assert again["loaded"] is True and again["grown"] == 0 and again["saved"] is False
    assert again["parses"] == off["parses"][:half]


def test_reports_are_the_same_with_a_cache_from_other_documents(tmp_path):
    documents = sorted(str(p) for p in CORPUS.glob("*.md"))
    assert len(documents) >= 8
    warmers, checked = documents[:4], documents[4:8]
    cache = private_dir(tmp_path)
    run(CHECK, *warmers, cache=str(cache), seed=5)  # check_file saves the cache after each document
    assert any(cache.glob("antlr-*.pickle"))
    warm = run(CHECK, *checked, cache=str(cache), seed=6)
    cold = run(CHECK, *checked, cache="off", seed=7)
    assert warm["reports"] == cold["reports"]
    assert warm["states"] > cold["states"]  # the warm run did start from the other documents' cache


def _saved_cache(tmp_path: Path) -> Path:
    cache = private_dir(tmp_path)
    run(PARSE, json.dumps(FORMULAS[:4]), cache=str(cache))
    (file,) = cache.glob("antlr-*.pickle")
    return file


def test_a_file_writable_by_others_is_not_loaded(tmp_path):
    file = _saved_cache(tmp_path)
    file.chmod(0o666)
    assert run(PARSE, json.dumps(FORMULAS[:1]), cache=str(file.parent))["loaded"] is False
    file.chmod(0o600)
    file.parent.chmod(0o777)  # nor one in a directory others may write to
    assert run(PARSE, json.dumps(FORMULAS[:1]), cache=str(file.parent))["loaded"] is False
    file.parent.chmod(0o700)
    assert run(PARSE, json.dumps(FORMULAS[:1]), cache=str(file.parent))["loaded"] is True


class _Planted:
    def __reduce__(self):
        return (os.system, ("touch planted-ran",))


def test_a_planted_or_damaged_file_starts_cold(tmp_path):
    file = _saved_cache(tmp_path)
    expected = run(PARSE, json.dumps(FORMULAS), cache="off")["parses"]
    marker = ROOT / "planted-ran"
    for content in (pickle.dumps(_Planted()), b"not a pickle", file.read_bytes()[:1000],
                    pickle.dumps(("another key", [], None, []))):
        file.write_bytes(content)
        file.chmod(0o600)
        result = run(PARSE, json.dumps(FORMULAS), cache=str(file.parent))
        assert result["loaded"] is False and result["parses"] == expected
        assert not marker.exists()


def test_the_cache_can_be_turned_off_and_never_leaves_temporary_files(tmp_path):
    off = run(PARSE, json.dumps(FORMULAS[:3]), cache="off")
    assert off == {**off, "loaded": False, "saved": False}
    cache = private_dir(tmp_path)
    run(PARSE, json.dumps(FORMULAS), cache=str(cache))
    assert [p.name.startswith("antlr-") for p in cache.iterdir()] == [True]


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX file ownership")
def test_the_suite_itself_runs_with_the_cache_off():
    assert os.environ.get("MHA_CACHE_DIR") == "off"  # set by conftest: no test writes to the user's cache
