"""Shared fixtures: the seed documents' location (tests restate what they need when absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

SEEDS = Path(__file__).resolve().parents[2] / "shared" / "seeds"


@pytest.fixture
def seeds_dir() -> Path:
    if not SEEDS.is_dir():
        pytest.skip(f"seed documents not present at {SEEDS}")
    return SEEDS


#: Filled by tests that want a line in the terminal summary (e.g. how many files pdflatex compiled).
SUMMARY: list[str] = []


def pytest_terminal_summary(terminalreporter):  # pragma: no cover - reporting only
    for line in SUMMARY:
        terminalreporter.write_line(line)
