"""The claims registry: every verdict comes from the engine, and changes when the mathematics does."""

from __future__ import annotations

import ast
import inspect
import json

import pytest
from sympy import Rational

import mha_symbolic.claims as claims_module
from mha_symbolic import InputError, MultiHeadAttention
from mha_symbolic.claims import CLAIMS, Claim, claim, run_claims
from mha_symbolic.cli import main
from mha_symbolic.statements import (
    VERDICTS,
    CostStatement,
    HeadsDiffer,
    Informal,
    RankOf,
    RankStatement,
    ReadingsAgree,
    StatedShapes,
    Statement,
    ValueStatement,
)
from mha_symbolic.statements.formulas import product

I2 = [[1, 0], [0, 1]]

#: What the engine answers on the sources' statements as written (kept here, never in the registry).
EXPECTED = {
    "000-Z2": "assumed", "000-concat": "true", "001-WQ-shape": "inconsistent", "001-cost": "false",
    "002-wo-left": "inconsistent", "002-higher-rank": "false", "002-rank-single": "true", "002-rank-multi": "true",
    "002-rank-by-attention": "true", "002-not-equivalent": "true", "002-softmax-differ": "true",
    "003-head1-output": "false", "003-head2-output": "false", "004-scaling": "true", "vaswani-fn4": "true",
    "vaswani-scaled": "true", "elhage-decomposition": "true", "bhojanapalli-thm1": "true",
    "gqa-kv-cache": "true", "gqa-kv-saving": "true", "gqa-parameters": "true", "gqa-repeated-kv": "true",
    "mqa-kv-cache": "true", "cross-scores-shape": "true", "cross-concat-rank": "true", "mask-padded-zero": "true",
    "mask-row-sums": "true",
}


@pytest.fixture(scope="module")
def results():
    return {r.claim.id: r for r in run_claims()}


def test_every_claim_is_decided(results):
    assert len(results) == len(CLAIMS) >= 50
    assert [i for i, r in results.items() if not r.reached] == []
    for i, r in results.items():
        assert (r.verdict == "informal") == claim(i).informal, i


@pytest.mark.parametrize("claim_id, verdict", sorted(EXPECTED.items()))
def test_verdicts_as_written(results, claim_id, verdict):
    assert results[claim_id].verdict == verdict, results[claim_id].detail


def test_details_name_the_mathematics(results):
    assert "[4, 11]" in results["003-head1-output"].detail and results["003-head1-output"].outcome.expected == "[4, 11]"
    assert "[6, 9]" in results["003-head2-output"].detail
    assert "(8, 2) x (4, 2)" in results["001-WQ-shape"].detail
    assert "W_K^2, W_Q^2, W_V^2" in results["000-Z2"].detail
    assert "4*h*n**2" in results["001-cost"].detail
    assert results["bhojanapalli-thm1"].scope.startswith("d_k <= n - 2")
    assert "undecided at d_k = n - 1" in results["bhojanapalli-thm1"].scope
    assert results["002-wo-left"].basis == "certified counterexample"


# ----- no verdict is written down --------------------------------------------------------------------
def test_registry_holds_no_literal_verdict():
    """No string constant of the registry's code is a verdict word (docstrings aside)."""
    tree = ast.parse(inspect.getsource(claims_module))
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef)) and n.body
                  and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    words = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
             and id(n) not in docstrings and n.value.strip() in VERDICTS]
    assert words == []


def test_every_claim_is_a_statement_decided_on_the_model_it_is_given(monkeypatch):
    seen: list[tuple[str, object]] = []
    for cls in {type(c.statement) for c in CLAIMS}:
        assert issubclass(cls, Statement)
        original = cls.decide
        monkeypatch.setattr(cls, "decide",
                            lambda self, model, _o=original: seen.append((self, model)) or _o(self, model))
    other = MultiHeadAttention(n=2, d_model=4, h=2, scale=Rational(1, 3))
    for c in CLAIMS:
        if not c.informal:
            try:
                c.decide(other)
            except Exception:  # noqa: BLE001 -- a statement may not apply to another model; it still received it
                pass
            assert seen[-1] == (c.statement, other), c.id
    assert all(not isinstance(c.statement, Informal) for c in CLAIMS if not c.informal)


# ----- flips: the same statement on other mathematics, or another statement on the same model --------
def test_002_wo_left_consistent_when_the_conventions_agree():
    c = claim("002-wo-left")
    agree = ReadingsAgree("f(x) = W_O^T [f_1; ...; f_h]",
                          lambda M: product("f(x)", M.W_O.T, M.steps["Concat"].symbol.T))
    assert agree.decide(c.model).verdict == "true"
    # W_O is 32 x 64: the column reading cannot form
    narrow = c.decide(MultiHeadAttention(n=None, d_model=64, h=4, d_v=8))
    assert narrow.verdict == "inconsistent" and "inner dimensions 64 and 32 differ" in narrow.detail


def test_000_z2_derived_once_head_2_is_stated():
    c = claim("000-Z2")
    assert isinstance(c.statement, ValueStatement)
    stated = ValueStatement("head_2", c.statement.stated, 2, {**c.statement.givens, "W_Q": [I2, I2], "W_K": [I2, I2],
                                                             "W_V": [I2, I2]})
    v = stated.decide(c.model)
    assert v.verdict == "false" and v.expected == "[[0.6698, 0.3302], [0.3302, 0.6698]]"
    concat = claim("000-concat").statement
    assert ValueStatement("Concat", concat.stated, 2, concat.givens).decide(c.model).verdict == "assumed"


def test_rank_bound_must_imply_the_claim():
    single = claim("002-rank-single")
    wide_values = MultiHeadAttention(d_k=None, d_v=MultiHeadAttention().dims.d_model)
    v = single.decide(wide_values)  # d_v = d_model > d_k: rank(head) <= d_k fails
    assert v.verdict == "false" and v.basis == "certified counterexample"
    assert claim("002-rank-multi").decide(wide_values).verdict == "false"  # Concat is h d_v = h d_model wide
    assert RankStatement("Concat", "le", lambda D: D.d_k).decide(MultiHeadAttention()).verdict == "false"


def test_rank_by_attention_as_written_and_reversed():
    M = MultiHeadAttention()
    assert claim("002-rank-by-attention").decide(M).verdict == "true"
    reverse = RankStatement("A_i", "le", RankOf("head_i")).decide(M)
    assert reverse.verdict == "false" and reverse.basis == "certified counterexample"


def test_cost_follows_the_counts():
    assert CostStatement("matmul_flops").decide(MultiHeadAttention()).verdict == "true"
    assert CostStatement("parameters").decide(MultiHeadAttention()).verdict == "true"
    assert claim("001-cost").decide().verdict == "false"
    wide = MultiHeadAttention(d_k=MultiHeadAttention().dims.d_model)  # heads as wide as the model: work grows with h
    assert CostStatement("matmul_flops").decide(wide).verdict == "false"


@pytest.mark.parametrize("claim_id", ["004-scaling", "vaswani-scaled", "002-attention"])
@pytest.mark.parametrize("scale", [1, "1/d_k"])
def test_dropping_or_changing_the_scale_flips(claim_id, scale):
    c = claim(claim_id)
    factor = 1 / MultiHeadAttention().dims.d_k if scale == "1/d_k" else scale
    assert c.decide().verdict == "true"
    assert c.decide(c.model.replace_options(scale=factor)).verdict == "false"


def test_unscaled_variance_does_not_depend_on_the_scale():
    c = claim("vaswani-fn4")  # Var(q . k) is about the unscaled scores S
    assert c.decide(c.model.replace_options(scale=1)).verdict == "true"


def test_attention_formula_against_a_causal_model():
    c = claim("002-attention")
    v = c.decide(c.model.replace_options(causal=True))
    assert v.verdict == "false" and "causal" in v.expected


def test_bottleneck_needs_low_rank_scores(monkeypatch):
    import mha_symbolic.rank.counterexamples as ce
    from mha_symbolic.rank.bounds import RankBound

    c = claim("bhojanapalli-thm1")
    assert c.decide().verdict == "true"
    monkeypatch.setattr(ce, "rank_bound", lambda expr, dims=None: RankBound(expr, dims.n))
    assert c.decide().verdict == "undecided"


def test_values_flip_with_the_statement_and_the_weights():
    c = claim("003-head1-output")
    s = c.statement
    assert ValueStatement("head_1", [[4, 11]], None, s.givens).decide(c.model).verdict == "true"
    other_v = {**s.givens, "W_V": [[[1, 0], [0, 1], [0, 0], [0, 0]], s.givens["W_V"][1]]}
    assert ValueStatement("head_1", [[4, 11]], None, other_v).decide(c.model).verdict == "false"


def test_shapes_heads_and_inputs_flip():
    assert StatedShapes({"W_Q": (2, 2)}).decide(claim("001-WQ-shape").model).verdict == "true"
    same = {"X": [[1, 0, 2, 1], [0, 1, -1, 2], [2, 2, 0, 1]], **{k: [[[1, 0], [0, 1], [1, 1], [0, 2]]] * 2
                                                                   for k in ("W_Q", "W_K", "W_V")}}
    assert HeadsDiffer("A", givens=same).decide(MultiHeadAttention(n=3, d_model=4, h=2)).verdict == "false"
    assert claim("003-full-input").decide(MultiHeadAttention(convention="split")).verdict == "false"
    # h d_k = d_model always
    assert claim("001-width").decide(MultiHeadAttention(n=None, d_model=512, h=4)).verdict == "true"
    assert claim("001-dk").decide(MultiHeadAttention(n=None, d_model=512, h=4)).verdict == "false"


def test_claim_lookup_and_source_filter(capsys):
    with pytest.raises(InputError, match="no claim 'nope'"):
        claim("nope")
    assert [r.claim.id for r in run_claims(source="004_")][:2] == ["004-head", "004-multihead"]
    with pytest.raises(InputError, match="no claim has a source matching"):
        run_claims(source="999_")
    assert main(["claims", "--source", "001_", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {d["id"] for d in data} >= {"001-dk", "001-WQ-shape"} and all(d["source"].startswith("001_") for d in data)
    assert next(d for d in data if d["id"] == "001-WQ-shape")["verdict"] == "inconsistent"
    assert main(["claims", "--source", "003_"]) == 0
    out = capsys.readouterr().out
    assert "003-head1-output" in out and "false: 2" in out


def test_rank_equality_is_proven_bound_plus_a_certified_instance():
    from sympy import Min, ZeroMatrix

    M = MultiHeadAttention()
    v = RankStatement("S_i", "eq", lambda D: Min(D.d_k, D.n)).decide(M)
    assert (v.verdict, v.basis, v.scope) == ("true", "proof", "the maximum over weights (zero weights give less)")
    assert v.detail == ("rank(S_i) = Min(d_k, n): the proven bound Min(d_k, n) is the claimed value and a generic "
                        "exact instance at n = 2, d_model = 1, h = 1, d_k = 1, d_v = 1 attains 1 (certified)")
    wrong = RankStatement("S_i", "eq", lambda D: D.d_k).decide(M)  # d_k > n: the bound min(d_k, n) is smaller
    assert (wrong.verdict, wrong.basis) == ("false", "proof") and "rank <= 2 < 3 is proven" in wrong.detail
    never = RankStatement(lambda m: ZeroMatrix(m.dims.n, m.dims.n), "eq", lambda D: D.n).decide(M)
    assert (never.verdict, never.basis) == ("undecided", "none")
    assert never.detail == "rank(<lambda>) = n: rank <= n is proven, but no instance attaining n was certified"


def test_verdict_as_dict():
    from mha_symbolic.statements import Verdict

    v = Verdict("true", "d_k = 2", "proof", scope="d_k <= n - 2", expected="2")
    assert v.as_dict() == {"verdict": "true", "detail": "d_k = 2", "basis": "proof", "scope": "d_k <= n - 2",
                           "expected": "2"}


# ----- grouped-query and multi-query attention (#15) ------------------------------------------------------
def test_grouped_claims_follow_the_models_steps():
    """The counts come from the model decided on: other value widths, other g, no grouping change them."""
    wide_values = MultiHeadAttention(n=None, d_model=4096, h=32, d_k=128, d_v=64, kv_heads=8)  # caches g (d_k + d_v)
    assert claim("gqa-kv-cache").decide(wide_values).verdict == "false"
    assert claim("gqa-kv-cache").decide(wide_values).expected == "1536"
    assert claim("gqa-parameters").decide(wide_values).verdict == "false"
    assert claim("mqa-kv-cache").decide(MultiHeadAttention(n=None, d_model=1024, h=16, kv_heads=2)).verdict == "false"
    saving = claim("gqa-kv-saving")
    assert saving.decide(MultiHeadAttention(n=None, d_model=4096, h=32, kv_heads=4)).verdict == "true"  # h/g follows g
    assert "8192 / 2048 = 4" in saving.decide().detail
    repeated = claim("gqa-repeated-kv")
    assert repeated.decide().verdict == "true"
    assert [repeated.model.kv_index(i) for i in repeated.model.head_indices] == [1, 1, 2, 2]
    small = MultiHeadAttention(n=3, d_model=8, h=4)
    assert run_claims([Claim("x", "", "", small, repeated.statement)])[0].verdict == "undecided"
