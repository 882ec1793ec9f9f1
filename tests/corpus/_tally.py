"""Tally the answer keys of the checker corpus (stdlib only).

Usage: python tests/corpus/_tally.py

Prints, per kind, how many statements are `correct` and how many are planted errors
(`wrong`, `assumed`, `inconsistent`), plus the `given` lines; then checks that every key entry
points at an existing line (for .ipynb: an existing cell, and a line of its source or, with
"output": true, of its printed output). Exits with status 1 if a key is malformed.
"""
import json
import pathlib
import sys
from collections import Counter

HERE = pathlib.Path(__file__).resolve().parent
KINDS = ["number", "shape", "rank", "statistic", "formula", "setting"]
STATUSES = {"correct", "wrong", "assumed", "inconsistent", "given", "unchecked"}
PLANTED = {"wrong", "assumed", "inconsistent"}


def text_lines(path):
    data = path.read_bytes().decode("utf-8")
    n = data.count("\n") + (0 if data.endswith("\n") or not data else 1)
    return n, ("crlf" if "\r\n" in data else "lf")


def output_text(output):
    if "data" in output:
        return "".join(output["data"].get("text/plain", []))
    return "".join(output.get("text", []))


def main():
    correct, planted, given, by_status = Counter(), Counter(), Counter(), Counter()
    per_doc = []
    errors = []
    keys = sorted(HERE.glob("*.key.json"))
    for key_path in keys:
        key = json.loads(key_path.read_text(encoding="utf-8"))
        doc = HERE / key["document"]
        if not doc.exists():
            errors.append(f"{key_path.name}: document {key['document']} missing")
            continue
        c = p = 0
        if doc.suffix == ".ipynb":
            nb = json.loads(doc.read_text(encoding="utf-8"))
            if nb.get("nbformat") != 4:
                errors.append(f"{doc.name}: not nbformat 4")
            cells = nb["cells"]
        else:
            nlines, endings = text_lines(doc)
            if endings != key.get("line_endings", "lf"):
                errors.append(f"{doc.name}: line endings {endings}, key says {key.get('line_endings')}")
        seen = set()
        for s in key["statements"]:
            where = f"{key_path.name} line {s.get('line')}" + (f" cell {s['cell']}" if "cell" in s else "")
            if s.get("status") not in STATUSES or s.get("kind") not in KINDS:
                errors.append(f"{where}: bad status/kind {s.get('status')}/{s.get('kind')}")
                continue
            if s["status"] in PLANTED and not s.get("planted"):
                errors.append(f"{where}: {s['status']} without planted: true")
            ident = (s.get("cell"), s.get("output", False), s["line"])
            if ident in seen:
                errors.append(f"{where}: two entries for one line")
            seen.add(ident)
            if doc.suffix == ".ipynb":
                k = s.get("cell")
                if not isinstance(k, int) or not 0 <= k < len(cells):
                    errors.append(f"{where}: no such cell")
                    continue
                cell = cells[k]
                if s.get("output"):
                    outs = cell.get("outputs", [])
                    if not outs:
                        errors.append(f"{where}: cell has no output")
                        continue
                    n = len("".join(output_text(o) for o in outs).split("\n"))
                else:
                    n = len("".join(cell["source"]).split("\n"))
                if not 1 <= s["line"] <= n:
                    errors.append(f"{where}: line outside 1..{n}")
            elif not 1 <= s["line"] <= nlines:
                errors.append(f"{where}: line outside 1..{nlines}")
            by_status[s["status"]] += 1
            if s["status"] == "correct":
                correct[s["kind"]] += 1
                c += 1
            elif s["status"] in PLANTED:
                planted[s["kind"]] += 1
                p += 1
            elif s["status"] == "given":
                given[s["kind"]] += 1
        per_doc.append((key["document"], key.get("notation", ""), key.get("language", ""),
                        key.get("line_endings", ""), c, p))

    print(f"{'document':40s} {'notation':28s} {'lang':4s} {'eol':4s} {'correct':>7s} {'planted':>7s}")
    for row in per_doc:
        print(f"{row[0]:40s} {row[1]:28s} {row[2]:4s} {row[3]:4s} {row[4]:7d} {row[5]:7d}")
    print()
    print(f"{'kind':10s} {'correct':>8s} {'planted':>8s} {'given':>6s}")
    for k in KINDS:
        print(f"{k:10s} {correct[k]:8d} {planted[k]:8d} {given[k]:6d}")
    print(f"{'total':10s} {sum(correct.values()):8d} {sum(planted.values()):8d} {sum(given.values()):6d}")
    print()
    print("planted by status:", ", ".join(f"{s} {by_status[s]}" for s in ("wrong", "assumed", "inconsistent")))
    print(f"documents: {len(per_doc)}; key problems: {len(errors)}")
    for e in errors:
        print("  ERROR", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
