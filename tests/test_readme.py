"""Every Python snippet in the README and the docs runs and prints what the page says; every command runs."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_page_examples(page):
    """Each page's ``>>>`` examples, in a namespace of their own (a page cannot lean on another's imports)."""
    result = doctest.testfile(str(page), module_relative=False,
                              optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    assert result.failed == 0, page
    if page == README or page.parent.name == "guide":
        assert result.attempted >= 1 or page.stem in {"checking", "model", "variants", "notebooks"}, page


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

    text = "\n".join(p.read_text(encoding="utf-8") for p in PAGES)
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
        if "--help" in args:  # argparse prints the help and exits 0
            with pytest.raises(SystemExit) as stop:
                main(args)
            assert stop.value.code == 0 and "usage: mha-symbolic" in capsys.readouterr().out
            continue
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


def test_readme_is_a_front_door():
    """The README stays short: measurements and reference live in docs/, which it links."""
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 150
    for link in re.findall(r"\]\((docs/[^)#]+)", text):
        assert (ROOT / link).is_file(), link


def test_architecture_names_every_module():
    """docs/architecture.md (and the README's short map) stay true to the package's files."""
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    package = ROOT / "mha_symbolic"
    for path in sorted(package.rglob("*.py")):
        if path.name == "__init__.py" and path.parent != package:
            continue
        assert path.name in page, f"{path.relative_to(ROOT)} is not in docs/architecture.md"
    readme = README.read_text(encoding="utf-8")
    block = readme[readme.index("    mha_symbolic/\n"):readme.index("## Why latex2sympy2_extended")]
    names = re.findall(r"\b([a-z_]+\.py|[a-z_]+/)", block.replace("mha_symbolic/\n", ""))
    assert len(names) >= 20
    for name in names:
        assert (package / name).exists(), f"README names {name}, which does not exist"
