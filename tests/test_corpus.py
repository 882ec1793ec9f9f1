"""The checker against answer keys (a few documents of tests/corpus/ and tests/corpus_holdout/; the whole of
both is scored by benchmarks/score_corpus.py): no false alarm, every planted error flagged."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("score_corpus", ROOT / "benchmarks" / "score_corpus.py")
assert _spec is not None and _spec.loader is not None
score_corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(score_corpus)

DOCUMENTS = ["corpus/14_one_token", "corpus/16_shape_walkthrough", "corpus/05_zero_based_heads",
             "corpus/13_formula_conventions", "corpus_holdout/01_bold_four_tokens",
             "corpus_holdout/06_tables_and_aligned",
             # grouped-query and multi-query attention (#15): LaTeX h = 8, g = 2; plain Unicode text h = 32, g = 8;
             # code and prose with n_kv_heads = 1
             "corpus/19_gqa_two_groups", "corpus/20_llama_style_gqa", "corpus/21_mqa_code",
             # cross-attention and masks (#15): LaTeX n_q = 3, n_kv = 5 with a padding mask; plain Unicode text
             "corpus/22_cross_attention_masks", "corpus/23_cross_unicode_padding"]


@pytest.mark.parametrize("name", DOCUMENTS)
def test_no_false_alarm_and_every_planted_error_flagged(name):
    key_path = ROOT / "tests" / f"{name}.key.json"
    key = json.loads(key_path.read_text(encoding="utf-8"))
    result = score_corpus.score_document(key_path.parent / key["document"], key)
    flags = score_corpus.FLAGS
    alarms = [r for r in result["rows"] if r["expected"] in ("correct", "given") and r["got"] in flags]
    missed = [r for r in result["rows"] if r["expected"] in flags and r["got"] not in flags]
    assert not alarms and not result["stray"], (alarms, result["stray"])
    assert not missed, missed
    assert any(r["expected"] in flags for r in result["rows"])  # the document has planted errors
