from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from mha_symbolic.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_shapes_symbolic(capsys):
    code, out, _ = run(capsys, "shapes")
    assert code == 0
    assert "where d_k = d_model/h" in out
    assert "Concat = Concat(head_1, ..., head_h)  (n, d_model)" in out
    assert "S_i = Q_i K_i^T" in out and "(n, n)" in out


def test_shapes_concrete_split(capsys):
    code, out, _ = run(capsys, "shapes", "--n", "8", "--d-model", "4", "--heads", "2", "--convention", "split")
    assert code == 0
    assert "X_head2 = X[:, 2:4]" in out and "Output = Concat W_O" in out
    assert out.count("(8, 8)") == 6  # S, S', A for two heads


def test_derive_default_example_prints_exact_steps(capsys):
    code, out, _ = run(capsys, "derive")
    assert code == 0
    assert "Example seed000" in out
    assert "A_1 = softmax(S'_1)" in out
    assert "[exp(sqrt(2)/2)/(1 + exp(sqrt(2)/2)), 1/(1 + exp(sqrt(2)/2))]" in out
    assert "≈ [0.6698, 0.3302]" in out
    assert "S'_1 = S_1 / sqrt(2)" in out and "[sqrt(2)/2, 0]" in out


def test_derive_seed003(capsys):
    code, out, _ = run(capsys, "derive", "--example", "seed003")
    assert code == 0
    assert "head_1 = A_1 V_1    shape (1, 2)\n    [4, 11]" in out
    assert "head_2 = A_2 V_2    shape (1, 2)\n    [6, 9]" in out


def test_examples_listing(capsys):
    code, out, _ = run(capsys, "examples")
    assert code == 0 and "seed001" in out and "split" in out


@pytest.mark.parametrize(
    "argv, message",
    [
        pytest.param(["shapes", "--d-model", "4", "--heads", "3"], "h=3 does not divide d_model=4", id="h"),
        pytest.param(["shapes", "--d-model", "0"], "d_model must be a positive integer, got d_model=0", id="zero"),
        pytest.param(["shapes", "--n", "-1"], "n must be a positive integer, got n=-1", id="negative"),
        pytest.param(["shapes", "--n", "2x"], "n must be a positive integer or a symbol name, got '2x'", id="name"),
    ],
)
def test_errors_are_one_line(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err == f"mha-symbolic: error: {message}\n"


def test_console_script_installed():
    exe = shutil.which("mha-symbolic")
    if exe is None:
        pytest.skip("console script not on PATH (package not installed)")
    r = subprocess.run([exe, "shapes", "--d-model", "4", "--heads", "3"], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.strip() == "mha-symbolic: error: h=3 does not divide d_model=4"
    assert "Traceback" not in r.stderr


def test_module_entry_point():
    r = subprocess.run([sys.executable, "-m", "mha_symbolic.cli", "derive", "--example", "seed003",
                        "--decimals-only"], capture_output=True, text=True)
    assert r.returncode == 0 and "[4, 11]" in r.stdout


def test_output_path_errors_are_one_line(tmp_path, capsys):
    blocker = tmp_path / "file.txt"
    blocker.write_text("x", encoding="utf-8")
    assert main(["derive", "--format", "md", "--out", str(blocker)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mha-symbolic: error: File exists") and "Traceback" not in err


def test_derive_refuses_example_with_sizes(capsys):
    assert main(["derive", "--example", "seed000", "--n", "5"]) == 2
    assert "--example fixes the model" in capsys.readouterr().err


def test_check_directory_is_refused(tmp_path, capsys):
    assert main(["check", str(tmp_path)]) == 2
    assert f"the document {tmp_path} is a directory, not a regular file" in capsys.readouterr().err
    good = tmp_path / "ok.md"
    good.write_text("We take $n = 2$.\n", encoding="utf-8")
    assert main(["check", str(good), str(tmp_path)]) == 2  # every file is checked before the first is read
    out = capsys.readouterr()
    assert out.out == "" and "is a directory, not a regular file" in out.err


def test_check_explain_prints_the_evidence_of_each_verdict(tmp_path, capsys):
    doc = tmp_path / "doc.md"
    doc.write_text("We use $n = 3$, $d_{model} = 4$, $h = 2$.\nSo $Q_1 \\in \\mathbb{R}^{3 \\times 4}$.\n",
                   encoding="utf-8")
    assert main(["check", "--explain", str(doc)]) == 1
    out = capsys.readouterr().out
    assert "the evidence of each verdict" in out and "judged with h = 2 (line 1)" in out
    assert main(["check", str(doc)]) == 1 and "judged with" not in capsys.readouterr().out


def test_the_choices_named_before_sympy_is_imported_match_the_objects():
    """The command line offers mha_symbolic.names as choices; each list is the objects' own."""
    from mha_symbolic import names
    from mha_symbolic.attention import MultiHeadAttention
    from mha_symbolic.examples import DEFAULT_EXAMPLE, EXAMPLES
    from mha_symbolic.latex import NOTATIONS
    from mha_symbolic.weights import ANCHORS

    assert set(names.NOTATION_NAMES) == set(NOTATIONS)
    assert set(names.EXAMPLE_NAMES) == set(EXAMPLES) and names.DEFAULT_EXAMPLE == DEFAULT_EXAMPLE
    assert names.LAYOUTS == tuple(ANCHORS)
    for convention in names.CONVENTIONS:
        assert MultiHeadAttention(d_model=4, h=2, convention=convention).convention == convention
    for mask in names.MASKS:
        assert MultiHeadAttention(d_model=4, h=2, mask=mask).mask == mask


def test_help_and_usage_errors_import_no_sympy():
    """`mha-symbolic --help` and an argument error answer without importing SymPy or NumPy (counted in
    sys.modules, not timed)."""
    import subprocess
    import sys

    probe = ("import sys\nfrom mha_symbolic.cli import main\n"
             "for argv in (['--help'], ['ranks', '--help'], ['derive', '--decimals', '99']):\n"
             "    try:\n        main(argv)\n    except SystemExit:\n        pass\n"
             "print(sorted(m for m in ('sympy', 'numpy', 'flint') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_the_package_imports_lazily_and_its_star_import_shadows_no_sympy_name():
    import subprocess
    import sys

    import sympy

    import mha_symbolic

    assert not set(mha_symbolic.__all__) & set(dir(sympy))
    probe = ("import sys, mha_symbolic\nassert 'sympy' not in sys.modules\n"
             "from mha_symbolic import MultiHeadAttention\n"
             "print(sorted(m for m in ('sympy', 'numpy', 'mha_symbolic.document', 'mha_symbolic.numeric', "
             "'mha_symbolic.weights', 'matplotlib') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['sympy']"
    import types

    assert isinstance(mha_symbolic.latex, types.ModuleType) and isinstance(mha_symbolic.softmax, types.ModuleType)


def test_checking_a_markdown_paragraph_imports_only_what_it_uses():
    """`check` of a short ASCII Markdown document imports no notebook reader (nbformat), no mojibake repair (ftfy)
    and none of the rank engine's sweeps, proofs of rank or plots (counted in sys.modules, not timed)."""
    import subprocess
    import sys

    probe = ("import sys\nfrom mha_symbolic.document import check_text\n"
             "r = check_text('With $n = 2$ and $d_k = 4 / 2 = 2$.\\n', name='a.md', isolate=False)\n"
             "assert [f.status for f in r.findings] == ['given', 'correct'], r.findings\n"
             "print(sorted(m for m in ('nbformat', 'ftfy', 'mha_symbolic.rank.sweep', 'mha_symbolic.rank.witness', "
             "'mha_symbolic.statements.ranks', 'matplotlib') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_ranks_json_has_one_schema_for_plain_and_variant_models(capsys):
    """`ranks --causal --json` printed other top-level keys than `ranks --json`; both now start with the model,
    its sizes and its options, and their rows have the same keys."""
    import json

    from mha_symbolic.cli import main

    assert main(["ranks", "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main(["ranks", "--n", "8", "--d-model", "4", "--heads", "2", "--causal", "--json"]) == 0
    causal = json.loads(capsys.readouterr().out)
    core = ["model", "n", "d_model", "h", "kv_heads", "n_kv", "mask", "causal"]
    assert list(plain)[:8] == core == list(causal)[:8]
    assert (plain["causal"], causal["causal"], causal["n"], causal["kv_heads"]) == (False, True, 8, None)
    assert set(plain["rows"][0]) == set(causal["rows"][0])


def test_sweep_progress_is_never_written_into_a_log(capsys):
    from mha_symbolic.cli import main

    assert main(["ranks", "--sweep", "--workers", "1"]) == 0
    err = capsys.readouterr().err
    assert "\r" not in err and "[#" not in err
