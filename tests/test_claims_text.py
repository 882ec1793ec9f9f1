"""Every registered claim's decision as the CLI prints it (verdict, basis, scope, detail, expected), pinned.

The verdicts are tested one by one elsewhere (flipped by changing the mathematics); this pins what the engine
says about each, so that a changed count, bound, certificate or value in a detail shows up as a difference.
Regenerate after a deliberate change with ``MHA_UPDATE_SNAPSHOTS=1 pytest tests/test_claims_text.py`` and
review the diff of ``tests/snapshots/claims.json``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from mha_symbolic.claims import run_claims

SNAPSHOT = Path(__file__).parent / "snapshots" / "claims.json"


def test_every_claims_decision_is_unchanged():
    now = {r.claim.id: {k: v for k, v in r.as_dict().items() if k not in ("statement", "source")}
           for r in run_claims()}
    if os.environ.get("MHA_UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.write_text(json.dumps(now, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    stored = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    assert sorted(now) == sorted(stored)
    changed = {k: (stored[k], now[k]) for k in now if now[k] != stored[k]}
    assert not changed, json.dumps(changed, indent=1, ensure_ascii=False)[:3000]
