"""Tests written against surviving mutants of mha_symbolic/claims.py (issue 11).

Each test pins a behaviour of claims.py that a mutant changed without any other test noticing:
the model a claim is decided on, the id lookup and its error, the keys of ``as_dict``, the
Markdown table, the ``claims`` and ``source`` filters of ``run_claims`` and the refusal path.
"""

from __future__ import annotations

import pytest

from mha_symbolic import InputError, MultiHeadAttention
from mha_symbolic.claims import CLAIMS, Claim, ClaimResult, ClaimResults, claim, run_claims
from mha_symbolic.statements import ShapeStatement, Verdict

# a non-square model whose steps differ from every registered claim's model
_M = MultiHeadAttention(n=3, d_model=6, h=2)


def test_decide_uses_the_claims_model_unless_another_is_given():
    c = claim("000-dk")  # d_k = 4/2 = 2 in the claim's model
    assert c.decide() == Verdict("true", "d_k = 2; the statement's [2] agrees", expected="2")
    other = c.decide(MultiHeadAttention(n=5, d_model=12, h=4, d_k=5))
    assert other.verdict == "false"
    assert other.expected == "5"


def test_claim_finds_the_id_asked_for():
    assert claim("003-head2-output").id == "003-head2-output"
    assert claim("000-X-shape").text == r"X \in \mathbb{R}^{2 \times 4}"


def test_claim_unknown_id_lists_every_id():
    with pytest.raises(InputError) as e:
        claim("no-such-claim")
    assert str(e.value) == "no claim 'no-such-claim'; ids are " + ", ".join(c.id for c in CLAIMS)
    assert "000-dk, 000-X-shape, 000-head1-input" in str(e.value)


def test_as_dict_keys_and_values():
    r = run_claims([claim("004-scaling")])[0]
    assert r.as_dict() == {
        "id": "004-scaling",
        "statement": "Scaling keeps the scores' variance independent of d_k, so the softmax does not saturate",
        "source": "004_b4f091a53bd4c6f6.txt:158",
        "kind": "proof",
        "verdict": "true",
        "scope": "",
        "detail": "Var(S'_ij) = sigma**4 (independent entries, mean 0, variance sigma^2): independent of d_k",
        "expected": "sigma**4",
    }
    d = ClaimResult(claim("000-dk"), Verdict("true", "d", "proof", scope="n >= 3", expected="7")).as_dict()
    assert (d["scope"], d["detail"], d["expected"], d["kind"]) == ("n >= 3", "d", "7", "proof")


def test_wo_left_reading_names_its_text_when_shapes_do_not_multiply():
    # d_v = 3: W_O is 6 x 4 and Concat^T is 6 x 2, so W_O [f_1(x); f_2(x)] cannot be formed
    v = claim("002-wo-left").decide(MultiHeadAttention(n=2, d_model=4, h=2, d_v=3))
    assert v.verdict == "inconsistent"
    assert v.detail == ("f(x) = W_O [f_1(x), ..., f_h(x)] cannot be formed: step f(x) = W_O [f_1(x), ..., f_h(x)]: "
                        "(6, 4) x (6, 2) — inner dimensions 4 and 6 differ")


def test_markdown_table_exact():
    c = claim("000-dk")
    rows = ClaimResults([
        ClaimResult(c, Verdict("true", "a | b\nc", "proof", scope="d_k <= n - 2")),
        ClaimResult(claim("000-X-shape"), Verdict("false", "plain", "exact computation")),
    ])
    assert rows._repr_markdown_() == (
        "| id | claim | source | basis | verdict | why |\n"
        "|---|---|---|---|---|---|\n"
        "| 000-dk | $d_k = \\frac{d_{model}}{h} = \\frac{4}{2} = 2$ | `000_63e12a797975a9b2.txt:15` | proof "
        "| **true** ($d_{k}$ <= n - 2) | a \\| b c |\n"
        "| 000-X-shape | $X \\in \\mathbb{R}^{2 \\times 4}$ | `000_63e12a797975a9b2.txt:34` | exact computation "
        "| **false** | plain |"
    )


def test_run_claims_keeps_only_the_claims_given():
    r = run_claims([claim("000-dk"), claim("001-dk")])
    assert [x.claim.id for x in r] == ["000-dk", "001-dk"]
    assert [x.verdict for x in r] == ["true", "true"]


def test_run_claims_unknown_source_lists_the_sources():
    with pytest.raises(InputError) as e:
        run_claims(source="no-such-source")
    sources = sorted({c.source.split(":")[0] for c in CLAIMS})
    assert str(e.value) == f"no claim has a source matching 'no-such-source'; sources are {sources}"
    assert "'Vaswani et al. 2017, footnote 4'" in str(e.value)
    assert "'000_63e12a797975a9b2.txt'" in str(e.value)


def test_refused_statement_is_undecided_with_the_error():
    c = Claim("t-refused", "a shape of a step the model lacks", "test:1", _M, ShapeStatement("Nope", (3, 6)))
    r = run_claims([c])[0]
    assert r.verdict == "undecided" and r.basis == "none" and not r.reached
    assert r.detail.startswith("the engine refused the statement: the model has no step 'Nope'; steps are ['Q_1',")
