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
