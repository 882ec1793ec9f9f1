"""Every Python snippet in the README runs and prints what the README says."""

from __future__ import annotations

import doctest
from pathlib import Path

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
