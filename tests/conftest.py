"""Shared fixtures: the seed documents' location (a test needing them fails when they are absent)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SEEDS = Path(__file__).resolve().parents[2] / "shared" / "seeds"


#: Set to 1 to let the real-seed tests skip (loudly) when the seed documents are absent.
ALLOW_MISSING_SEEDS = "MHA_ALLOW_MISSING_SEEDS"


def locate_seeds(path: Path = SEEDS) -> Path:
    """``path`` if it is a directory; otherwise fail the calling test (skip only with the opt-out)."""
    if path.is_dir():
        return path
    message = f"seed documents not present at {path}"
    if os.environ.get(ALLOW_MISSING_SEEDS) == "1":
        pytest.skip(f"{message} ({ALLOW_MISSING_SEEDS}=1)")
    pytest.fail(f"{message}; provide them there, or set {ALLOW_MISSING_SEEDS}=1 to skip the real-seed tests "
                "deliberately", pytrace=False)


@pytest.fixture
def seeds_dir() -> Path:
    """The directory of the seed documents (``../shared/seeds`` next to the repository).

    Tests never skip silently: when the directory is missing the requesting test FAILS with
    a message saying where the seeds were looked for, unless the environment variable
    ``MHA_ALLOW_MISSING_SEEDS=1`` is set, in which case it is skipped with that reason
    (an explicit opt-out, visible in the run's skip summary).
    """
    return locate_seeds(SEEDS)


#: Filled by tests that want a line in the terminal summary (e.g. how many files pdflatex compiled).
SUMMARY: list[str] = []


def pytest_terminal_summary(terminalreporter):  # pragma: no cover - reporting only
    for line in SUMMARY:
        terminalreporter.write_line(line)
