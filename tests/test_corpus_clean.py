"""Correct documents in new notations (tests/corpus_clean/): no false alarm, and a planted error is still flagged."""

from __future__ import annotations

from pathlib import Path

import pytest

from mha_symbolic import check_text

CLEAN = Path(__file__).resolve().parent / "corpus_clean"

# (document, the text of a correct statement, the same statement made wrong)
PLANTED = [
    ("a_gqa.md", r"$W_K \in \mathbb{R}^{256 \times 64}$", r"$W_K \in \mathbb{R}^{256 \times 48}$"),
    ("b_cross.md", r"{\sqrt{d_k}} \in \mathbb{R}^{5 \times 7}", r"{\sqrt{d_k}} \in \mathbb{R}^{5 \times 5}"),
    ("c_mask.md", r"(1, 1, 1) = (1/3, 1/3, 1/3)$", r"(1, 1, 1) = (1/3, 1/3, 1/4)$"),
    ("d_basics.md", r"3 \cdot 64 \cdot 512 = 98304", r"3 \cdot 64 \cdot 512 = 98314"),
    ("e_kv_cache.md", r"= 4096 \text{ MiB} = 4 \text{ GiB}", r"= 4295 \text{ MiB} = 4 \text{ GiB}"),
    ("f_worked_example.md", r"0.7041 & 1.4359 \end{pmatrix}", r"0.7041 & 1.4539 \end{pmatrix}"),
    ("g_lecture_notes.md", r"4d^2 + 4d = 2{,}362{,}368", r"4d^2 + 4d = 2{,}360{,}064"),
    ("h_cross_masks.md", r"2 \cdot 8 \cdot 5 \cdot 7 = 560", r"2 \cdot 8 \cdot 5 \cdot 7 = 570"),
]


def _alarms(text: str) -> list[tuple[int, str, str]]:
    report = check_text(text, isolate=False)
    return [(f.line, f.latex, f.message) for f in report.findings if f.status in ("wrong", "inconsistent", "assumed")]


@pytest.mark.parametrize("name, right, wrong", PLANTED, ids=[p[0] for p in PLANTED])
def test_no_false_alarm_and_the_planted_error_is_flagged(name, right, wrong):
    text = (CLEAN / name).read_text(encoding="utf-8")
    assert _alarms(text) == []
    assert text.count(right) == 1
    line = text[:text.index(right)].count("\n") + 1
    assert [a[0] for a in _alarms(text.replace(right, wrong))] == [line]
