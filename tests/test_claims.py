from __future__ import annotations

import json

import pytest

from mha_symbolic import InputError
from mha_symbolic.claims import CLAIMS, KINDS, SEED_FILES, run_claims
from mha_symbolic.cli import main


@pytest.fixture(scope="module")
def results():
    return run_claims()


def test_every_claim_reaches_its_expected_verdict(results):
    wrong = [(r.claim.id, r.verdict, r.claim.expected, r.detail) for r in results if r.verdict != r.claim.expected]
    assert wrong == []
    assert all(r.reached for r in results)


def test_registry_shape():
    ids = [c.id for c in CLAIMS]
    assert len(ids) == len(set(ids)) and len(ids) >= 45
    assert {c.kind for c in CLAIMS} <= set(KINDS)
    for seed, name in SEED_FILES.items():
        assert sum(c.source.startswith(name) for c in CLAIMS) >= 5, seed
    assert all(c.kind == "informal" for c in CLAIMS if c.expected == "informal")


@pytest.mark.parametrize("claim_id, verdict", [
    ("000-Z2", "assumed"), ("001-WQ-shape", "inconsistent"), ("002-wo-left", "inconsistent"),
    ("002-higher-rank", "false"), ("002-rank-single", "true"), ("002-rank-multi", "true"),
    ("003-head1-output", "false"), ("003-head2-output", "false"), ("001-cost", "true"),
    ("002-not-equivalent", "true"), ("002-rank-by-attention", "false"),
])
def test_key_verdicts(results, claim_id, verdict):
    assert next(r for r in results if r.claim.id == claim_id).verdict == verdict


def test_details_say_why(results):
    by_id = {r.claim.id: r for r in results}
    assert "[4, 11]" in by_id["003-head1-output"].detail
    assert "(8, 2) x (4, 2)" in by_id["001-WQ-shape"].detail
    assert "mixes the two conventions" in by_id["002-wo-left"].detail


def test_source_filter_and_cli(capsys):
    assert [r.claim.id for r in run_claims(source="004_")][:2] == ["004-head", "004-multihead"]
    with pytest.raises(InputError, match="no claim has a source matching"):
        run_claims(source="999_")
    assert main(["claims", "--source", "001_", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {d["id"] for d in data} >= {"001-dk", "001-WQ-shape"} and all(d["source"].startswith("001_") for d in data)
    assert main(["claims", "--source", "003_"]) == 0
    out = capsys.readouterr().out
    assert "003-head1-output" in out and "false: 2" in out
