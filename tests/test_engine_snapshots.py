"""What the engine says, pinned: rank claims, rank reports, proof traces and a battery of statements on several models.

Each entry is computed by the engine from the mathematics (nothing here is typed as an answer); the text is pinned in
``tests/snapshots/engine.txt`` so that a change to any verdict, bound, trace, certificate, reasoning or message
fails here and shows the difference.  After a deliberate change, regenerate with
``MHA_UPDATE_SNAPSHOTS=1 pytest tests/test_engine_snapshots.py`` and review the diff.  (Mutation testing found that
the texts and the less travelled branches of rank/ and statements/ were read by no test.)

Alongside the snapshot, ``test_battery_contains_every_verdict`` asserts facts a reader can check by hand, so the
snapshot cannot silently pin a wrong answer for those.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sympy import Min, ZeroMatrix

from mha_symbolic import MultiHeadAttention
from mha_symbolic.proofs import causal_breaks_equivariance, parameter_and_flop_counts
from mha_symbolic.rank import rank_bound
from mha_symbolic.rank.counterexamples import (
    bottleneck_theorem,
    low_rank_bottleneck,
    multihead_rank_comparison,
    softmax_rank_counterexample,
)
from mha_symbolic.rank.variants import variant_rank_bounds
from mha_symbolic.rank.witness import rank_report
from mha_symbolic.statements.proofs import CostStatement, Informal, ProofStatement
from mha_symbolic.statements.ranks import RankComparison, RankOf, RankStatement
from mha_symbolic.statements.statistics import ScoreStatistic
from mha_symbolic.statements.values import (
    DimensionStatement,
    HeadsDiffer,
    ReadsWholeInput,
    ShapeStatement,
    ValueStatement,
)

SNAPSHOT = Path(__file__).parent / "snapshots" / "engine.txt"

MODELS = {
    "symbolic": MultiHeadAttention(),
    "2x4x2": MultiHeadAttention(n=2, d_model=4, h=2),
    "3x6x3 causal": MultiHeadAttention(n=3, d_model=6, h=3, causal=True),
    "unscaled": MultiHeadAttention(scale=1),
    "split 2x4x2": MultiHeadAttention(n=2, d_model=4, h=2, convention="split"),
    "bias 2x2x1": MultiHeadAttention(n=2, d_model=2, h=1, bias=True),
}

#: The variants of issue 15: their steps, shapes, rank traces, counts and certified rank bounds are pinned too.
VARIANTS = {
    "gqa symbolic h, g": MultiHeadAttention(kv_heads="g"),
    "mqa 3x8x4": MultiHeadAttention(n=3, d_model=8, h=4, kv_heads=1),
    "cross symbolic, key padding": MultiHeadAttention(cross=True, mask="key_padding"),
    "cross 7x8x4 g=2 n_kv=2": MultiHeadAttention(n=7, d_model=8, h=4, kv_heads=2, n_kv=2),
    "cross 5x4x2 additive bias n_kv=2": MultiHeadAttention(n=5, d_model=4, h=2, n_kv=2, mask="additive", bias=True),
    "split cross causal 4x8x4 n_kv=3": MultiHeadAttention(n=4, d_model=8, h=4, n_kv=3, convention="split", causal=True),
}

I2 = [[1, 0], [0, 1]]
GIVENS = {"X": [[1, 2, 0, 1], [0, 1, 1, 2]], "W_Q": [[[1, 0], [0, 1], [1, 1], [0, 0]]] * 2,
          "W_K": [[[1, 0], [1, 1], [0, 1], [1, 0]], [[0, 1], [1, 0], [0, 0], [1, 1]]],
          "W_V": [[[1, 1], [0, 1], [1, 0], [0, 0]], [[0, 0], [1, 0], [0, 1], [1, 1]]], "W_O": [[1, 0, 0, 0]] * 4}

STATEMENTS: list[tuple[str, Any, list[str]]] = [
    ("d_k = 64", DimensionStatement("d_k", lambda D: D.d_k, 64), ["symbolic", "2x4x2"]),
    ("d_k = 2", DimensionStatement("d_k", lambda D: D.d_k, 2), ["2x4x2", "3x6x3 causal"]),
    ("h d_k = d_model", DimensionStatement("h d_k", lambda D: D.h * D.d_k - D.d_model, 0), ["symbolic"]),
    ("sqrt(d_k) = 1.4142", DimensionStatement("sqrt(d_k)", lambda D: D.d_k ** 0.5, 1.4142, 4), ["2x4x2"]),
    ("Q_1 is n x d_k", ShapeStatement("Q_1", lambda D: (D.n, D.d_k)), ["symbolic", "2x4x2", "split 2x4x2"]),
    ("S_1 is n x d_k", ShapeStatement("S_1", lambda D: (D.n, D.d_k)), ["symbolic", "2x4x2"]),
    ("W_O is d_model x d_model", ShapeStatement("W_O", lambda D: (D.d_model, D.d_model)), ["symbolic"]),
    ("X is 3 x 4", ShapeStatement("X", (3, 4)), ["2x4x2"]),
    ("head_1 on the givens", ValueStatement("head_1", [[1, 1], [1, 1]], 2, GIVENS), ["2x4x2"]),
    ("Concat without W_V", ValueStatement("Concat", [[0] * 4] * 2, None,
                                         {k: v for k, v in GIVENS.items() if k != "W_V"}), ["2x4x2"]),
    ("A_1 reads all of X", ReadsWholeInput("S_1"), ["2x4x2", "split 2x4x2"]),
    ("heads differ", HeadsDiffer("A", (1, 2)), ["2x4x2"]),
    ("heads differ with equal weights", HeadsDiffer("A", (1, 2), {**GIVENS, "W_K": [GIVENS["W_K"][0]] * 2}),
     ["2x4x2"]),
    ("rank S_i <= d_k", RankStatement("S_i", "le", lambda D: D.d_k), ["symbolic", "2x4x2"]),
    ("rank S_i < d_k", RankStatement("S_i", "lt", lambda D: D.d_k), ["symbolic"]),
    ("rank A_i <= d_k", RankStatement("A_i", "le", lambda D: D.d_k), ["symbolic", "unscaled"]),
    ("rank A_i = n", RankStatement("A_i", "eq", lambda D: D.n), ["symbolic"]),
    ("rank S_i = min(d_k, n)", RankStatement("S_i", "eq", lambda D: Min(D.d_k, D.n)), ["symbolic", "3x6x3 causal"]),
    ("rank Concat <= h d_k", RankStatement("Concat", "le", lambda D: D.h * D.d_k), ["symbolic"]),
    ("rank Concat <= d_k", RankStatement("Concat", "le", lambda D: D.d_k), ["symbolic"]),
    ("rank head_i <= rank A_i", RankStatement("head_i", "le", RankOf("A_i")), ["symbolic"]),
    ("rank A_i <= rank head_i", RankStatement("A_i", "le", RankOf("head_i")), ["symbolic"]),
    ("rank 0 = n", RankStatement(lambda m: ZeroMatrix(m.dims.n, m.dims.n), "eq", lambda D: D.n), ["symbolic"]),
    ("4 heads vs 1 on Concat", RankComparison("Concat", 8), ["2x4x2"]),
    ("causal equivariance", ProofStatement(lambda m: causal_breaks_equivariance()), ["symbolic"]),
    ("softmax counterexample", ProofStatement(lambda m: softmax_rank_counterexample()), ["symbolic"]),
    ("bottleneck theorem", ProofStatement(bottleneck_theorem), ["symbolic"]),
    ("parameters shared", CostStatement("parameters"), ["symbolic", "2x4x2"]),
    ("element-wise shared", CostStatement("elementwise_flops"), ["symbolic"]),
    ("total shared", CostStatement("total_flops"), ["symbolic", "bias 2x2x1"]),
    ("E(S') = 0", ScoreStatistic("E", stated=lambda d, s: 0), ["symbolic"]),
    ("Var(S') = sigma^4", ScoreStatistic("Var", stated=lambda d, s: s**4), ["symbolic", "unscaled"]),
    ("Var(S) = d_k sigma^4", ScoreStatistic("Var", "S", stated=lambda d, s: d * s**4), ["symbolic"]),
    ("Var(S') independent of d_k", ScoreStatistic("Var", independent_of="d_k"), ["symbolic", "unscaled"]),
    ("heads learn features", Informal("what heads learn is not a statement about the model's mathematics"),
     ["symbolic"]),
]


def _claims() -> list[tuple[str, Callable[[], Any]]]:
    return [("softmax_rank_counterexample()", softmax_rank_counterexample),
            ("multihead_rank_comparison(16, 16, (1, 4))", lambda: multihead_rank_comparison(16, 16, (1, 4))),
            ("multihead_rank_comparison(8, 8, (2, 2))", lambda: multihead_rank_comparison(8, 8, (2, 2))),
            *[(f"low_rank_bottleneck({n}, {k})", lambda n=n, k=k: low_rank_bottleneck(n, k))
              for n, k in ((3, 3), (4, 2), (2, 5), (5, 3), (4, 3))],
            ("bottleneck_theorem()", bottleneck_theorem),
            ("bottleneck_theorem(2x4x2)", lambda: bottleneck_theorem(MultiHeadAttention(n=2, d_model=4, h=2)))]


def render_claim(c: Any) -> str:
    lines = [f"statement: {c.statement}", f"verdict: {c.verdict}", f"kind: {c.kind}"]
    lines += [f"reasoning: {r}" for r in c.reasoning]
    lines += [f"instance {k}: {v}" for k, v in c.instance.items()]
    lines.append(f"certificate: {c.certificate}")
    lines.append(f"markdown: {c._repr_markdown_()!r}")
    return "\n".join(lines)


def sections() -> dict[str, str]:
    out: dict[str, str] = {}
    for name, make in _claims():
        out[f"claim {name}"] = render_claim(make())
    for sizes in ((4, 4, 2), (8, 4, 2), (3, 6, 3), (2, 2, 1)):
        report = rank_report(*sizes)
        out[f"rank_report{sizes}"] = "\n".join(
            f"{r.quantity} | {r.bound_expr} | {r.bound} | {r.attained} | {r.certificate} | {r.verdict} | "
            f"seed {r.seed} | {r.detail}" for r in report) + "\n" + report._repr_markdown_()
    for label, model in MODELS.items():
        traces = []
        for step_name, step in model.steps.items():
            b = rank_bound(step.expr, model.dims)
            traces.append(f"{step_name}: {b.bound} <- " + "; ".join(f"{a.rule}: {a.bound}" for a in b.trace))
        out[f"rank traces {label}"] = "\n".join(traces)
    for label, model in VARIANTS.items():
        out[f"variant steps {label}"] = "\n".join(f"{s.text} | {s.shape} | {s.expr}" for s in model.steps.values())
        counts = parameter_and_flop_counts(model).result
        out[f"variant counts {label}"] = "\n".join(f"{k}: {counts[k]}" for k in (
            "parameters", "biases", "matmul_flops", "elementwise_flops", "kv_cache_per_token"))
        proof = variant_rank_bounds(model)
        out[f"variant ranks {label}"] = "\n".join(
            [f"{name}: {rb.bound} <- " + "; ".join(f"{a.rule}: {a.bound}" for a in rb.trace)
             for name, rb in proof.result["traces"].items()] +
            [f"{r.quantity} | {r.bound} | {r.attained} | {r.certificate} | {r.verdict} | seed {r.seed}"
             for r in proof.result["rows"]] + [f"verified: {proof.verified}"])
    for text, statement, models in STATEMENTS:
        rows = []
        for label in models:
            try:
                v = statement.decide(MODELS[label])
                rows.append(f"{label}: {v.verdict} | {v.basis} | {v.scope} | {v.expected} | {v.detail}")
            except Exception as e:  # noqa: BLE001  (an engine refusal is part of what is pinned)
                rows.append(f"{label}: raised {type(e).__name__}: {e}")
        out[f"statement {text}"] = "\n".join(rows)
    return out


def stored() -> dict[str, str]:
    text = SNAPSHOT.read_text(encoding="utf-8")
    blocks = {}
    for block in text.split("\n=== ")[1:]:
        head, _, body = block.partition("\n")
        blocks[head] = body.rstrip("\n")
    return blocks


def write(blocks: dict[str, str]) -> None:
    SNAPSHOT.write_text("".join(f"\n=== {k}\n{v}\n" for k, v in blocks.items()), encoding="utf-8")


@pytest.fixture(scope="module")
def now() -> dict[str, str]:
    current = sections()
    if os.environ.get("MHA_UPDATE_SNAPSHOTS") == "1":
        write(current)
    return current


def test_engine_outputs_are_unchanged(now):
    before = stored()
    assert list(now) == list(before)
    changed = [k for k in now if now[k] != before[k]]
    for k in changed:  # show the first difference of each changed section
        assert now[k] == before[k], k


def test_battery_contains_every_verdict(now):
    text = "\n".join(now.values())
    line = {k: v for k, v in now.items()}
    assert "raised" not in text
    assert line["statement d_k = 2"].startswith("2x4x2: true |")
    assert line["statement d_k = 64"].startswith("symbolic: undecided | none")
    assert line["statement S_1 is n x d_k"].startswith("symbolic: undecided | none")  # (n, n) vs (n, d_k)
    assert line["statement X is 3 x 4"].startswith("2x4x2: false | proof |  | (2, 4)")
    assert line["statement A_1 reads all of X"].splitlines()[1].startswith("split 2x4x2: false")
    # the softmax is entry-wise: a Vandermonde instance has full rank (a proof at every size, its instance
    # certified exactly at the size shown)
    assert line["statement rank A_i <= d_k"].startswith("symbolic: false | proof | fails whenever n > d_k")
    assert line["statement rank Concat <= h d_k"].startswith("symbolic: true | proof")
    assert line["statement Var(S') independent of d_k"].splitlines()[1].startswith("unscaled: false")
    assert line["statement element-wise shared"].startswith("symbolic: false | exact computation")
    assert line["statement Concat without W_V"].startswith("2x4x2: assumed")
    assert line["statement heads learn features"].startswith("symbolic: informal | informal")
    assert line["claim multihead_rank_comparison(8, 8, (2, 2))"].splitlines()[1] == "verdict: undecided"
    for verdict in ("true", "false", "assumed", "informal", "undecided"):
        assert f": {verdict} |" in text, verdict
