"""Every Python snippet in the README runs and prints what the README says."""

from __future__ import annotations

import doctest
from pathlib import Path

import numpy as np

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_examples():
    result = doctest.testfile(str(README), module_relative=False, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 8
    assert result.failed == 0


def test_readme_opens_with_two_commands_matching_ci():
    lines = README.read_text(encoding="utf-8").splitlines()
    block = lines[lines.index("```bash") + 1: lines.index("```bash") + 3]
    assert block == ["pip install . && mha-symbolic derive", "pip install -e '.[test]' && pytest"]
    ci = (README.parent / ".ci" / "run").read_text(encoding="utf-8")
    assert block[1] in ci and "set -euo pipefail" in ci


def test_every_readme_command_runs(tmp_path, capsys, monkeypatch):
    import re
    import shlex
    import shutil

    from mha_symbolic.cli import main

    text = README.read_text(encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # derive --all writes derivations/ here, not into the repository
    tutorial = tmp_path / "tutorial.md"
    tutorial.write_text("$$d_k = \\dfrac{d_{model}}{h} = \\dfrac{4}{2} = 2$$\n", encoding="utf-8")
    from safetensors.numpy import save_file  # `ranks --weights model.safetensors`: a small BERT-layout checkpoint

    rng = np.random.default_rng(0)
    save_file({f"encoder.layer.{L}.attention.{m}.weight": rng.normal(size=(8, 8)).astype(np.float32)
               for L in range(4) for m in ("self.query", "self.key", "self.value", "output.dense")},
              str(tmp_path / "model.safetensors"))
    (tmp_path / "config.json").write_text('{"num_attention_heads": 2}')
    commands = sorted(set(re.findall(r"`(mha-symbolic [^`]*)`", text)))
    assert len(commands) >= 10
    errors_shown_on_purpose = {"mha-symbolic shapes --d-model 4 --heads 3"}
    for command in commands:
        args = []
        for a in shlex.split(command.replace("\\|", "|"))[1:]:
            a = a.strip("[]").split("|")[0]  # a synopsis: its first alternative
            args.append({"tutorial.md": str(tutorial), "FILE...": str(tutorial), "out/": str(tmp_path / "out")}
                        .get(a, a))
        code = main(args)
        out = capsys.readouterr()
        assert "Traceback" not in out.err
        if command in errors_shown_on_purpose:
            assert code == 2 and out.err.startswith("mha-symbolic: error: h=3 does not divide d_model=4")
        elif "--format pdf" in command and shutil.which("pdflatex") is None:
            assert code == 2 and "pdflatex not found" in out.err
        else:
            assert code in (0, 1), (command, out.err)
            assert out.out.strip(), command
