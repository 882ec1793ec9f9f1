"""Score the document checker on public texts (kept out of the repository; provenance in public_texts.md).

Each text ``NN_name.md`` has ``NN_name.errors.json`` listing the statements a person recomputed, each
``correct`` or ``error`` (a real error verified by computation).  Printed: every wrong/inconsistent finding,
whether it sits on a keyed real error, a keyed correct statement or an unkeyed line (to be verified by hand),
and how many of the real errors were found.

Run:  python benchmarks/score_public.py FOLDER [-v]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mha_symbolic import check_file  # noqa: E402


def main(argv: list[str]) -> int:
    folder, verbose = Path(argv[0]), "-v" in argv
    tp = fp = unkeyed = errors = found = 0
    lines = []
    for keyfile in sorted(folder.glob("*.errors.json")):
        key = json.loads(keyfile.read_text(encoding="utf-8"))
        doc = folder / key["document"]
        report = check_file(str(doc))
        keyed = {c["line"]: c["verdict"] for c in key["checked"]}
        wrong_lines = {f.line for f in report.findings if f.status in ("wrong", "inconsistent")}
        real = {line for line, verdict in keyed.items() if verdict == "error"}
        errors += len(real)
        found += len(real & wrong_lines)
        for f in report.findings:
            if f.status not in ("wrong", "inconsistent"):
                continue
            tag = {"error": "REAL", "correct": "FALSE"}.get(keyed.get(f.line, ""), "UNKEYED")
            tp += tag == "REAL"
            fp += tag == "FALSE"
            unkeyed += tag == "UNKEYED"
            lines.append(f"{tag} {doc.name}:{f.line} {f.status}: {f.message[:150]}")
    print(f"wrong/inconsistent findings: {tp + fp + unkeyed} (on keyed real errors {tp}, on keyed correct "
          f"statements {fp}, on unkeyed lines {unkeyed})")
    print(f"real errors found: {found}/{errors}")
    if verbose:
        print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
