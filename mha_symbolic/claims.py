r"""The claims registry: mathematical claims of tutorials and papers, each decided by the engine.

Explanation
===========

A :class:`Claim` is data: an id, the statement as written (LaTeX or prose), where it was
made, the model it speaks about (sizes, convention, scale) and the statement in structured
form (:mod:`mha_symbolic.statements`).  Its verdict is never written down: :meth:`Claim.decide`
hands the model to the statement, and the engine (exact evaluation, shape rules, proven rank
bounds, certified witnesses, proofs built from the model's steps) answers.  Give it another
model -- no ``1/sqrt(d_k)``, another convention, another head width -- and the answer follows
the mathematics.

Verdicts: ``true``, ``false``, ``assumed`` (it depends on an input the source does not
state), ``inconsistent`` (it contradicts the model or the source's other statements),
``informal`` (not a mathematical statement, and it says why) and ``undecided`` (the engine
could neither prove nor refute it; the detail says why).  Each verdict has a basis (proof,
exact computation, certified counterexample or witness, evidence) and, where a ``true`` holds
for less than every size, a scope.

Examples
========

>>> from mha_symbolic import MultiHeadAttention
>>> from mha_symbolic.claims import claim, run_claims
>>> r = run_claims([claim("003-head1-output")])[0]
>>> r.verdict, r.basis
('false', 'exact computation')
>>> r.detail
"head_1 = [4, 11] computed exactly; the statement's [0.5, 1.2] differs at 1 decimal place"
>>> c = claim("004-scaling")
>>> c.decide().verdict, c.decide(c.model.replace_options(scale=1)).verdict
('true', 'false')
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sympy import sqrt

from .attention import MultiHeadAttention
from .errors import InputError, MHASymbolicError, require
from .latex import prose_markdown, statement_markdown
from .proofs import head_decomposition, two_heads_not_one
from .proofs.grouped import gqa_equals_repeated_kv
from .rank import bottleneck_theorem
from .statements import (
    CostStatement,
    CountStatement,
    DimensionStatement,
    FormulaStatement,
    HeadsDiffer,
    Informal,
    MaskedWeights,
    ProofStatement,
    RankComparison,
    RankOf,
    RankStatement,
    ReadingsAgree,
    ReadsWholeInput,
    ScoreStatistic,
    ShapeStatement,
    StatedShapes,
    Statement,
    ValueStatement,
    VariantRankStatement,
    Verdict,
)
from .statements.formulas import product

__all__ = ["Claim", "ClaimResult", "ClaimResults", "CLAIMS", "run_claims", "claim"]


@dataclass(frozen=True)
class Claim:
    """A claim as written, where it was made, the model it speaks about and the statement to decide."""

    id: str
    text: str
    source: str
    model: MultiHeadAttention
    statement: Statement

    @property
    def informal(self) -> bool:
        return self.statement.informal

    def decide(self, model: MultiHeadAttention | None = None) -> Verdict:
        """The engine's verdict on the statement, for this claim's model or another one."""
        return self.statement.decide(self.model if model is None else model)


@dataclass(frozen=True)
class ClaimResult:
    """The outcome of deciding one claim."""

    claim: Claim
    outcome: Verdict

    verdict = property(lambda self: self.outcome.verdict)
    detail = property(lambda self: self.outcome.detail)
    basis = property(lambda self: self.outcome.basis)
    scope = property(lambda self: self.outcome.scope)

    @property
    def reached(self) -> bool:
        """A verdict was reached (anything but ``undecided``)."""
        return self.outcome.reached

    def _repr_markdown_(self) -> str:
        scope = f"; {self.scope}" if self.scope else ""
        return (f"**{self.verdict}** ({self.basis}{prose_markdown(scope)}): {statement_markdown(self.claim.text)}  \n"
                f"{prose_markdown(self.detail)}  \nsource: `{self.claim.source}`")

    def as_dict(self) -> dict[str, Any]:
        c = self.claim
        return {"id": c.id, "statement": c.text, "source": c.source, "kind": self.basis, "verdict": self.verdict,
                "scope": self.scope, "detail": self.detail, "expected": self.outcome.expected}


# ----- the sources' data -----------------------------------------------------------------------------
_I2 = [[1, 0], [0, 1]]
_SRC = {"000": "000_63e12a797975a9b2.txt", "001": "001_63009bb1ec9a24fa.txt", "002": "002_8a4160f16a92c9f5.txt",
        "003": "003_5b6b5185d11461ee.txt", "004": "004_b4f091a53bd4c6f6.txt"}


def _src(doc: str, line: int) -> str:
    return f"{_SRC[doc]}:{line}"


# two tokens, d_model 4, two heads reading column blocks; head 1 has Q = K = V = X_1, head 2's
# projection is left unstated ("a different projection"), W_O is not given
_M000 = MultiHeadAttention(n=2, d_model=4, h=2, convention="split")
_G000 = {"X": [[1, 0, 1, 0], [0, 1, 0, 1]], "W_Q": [_I2, None], "W_K": [_I2, None], "W_V": [_I2, None]}
_Z2 = [[0.60, 0.40], [0.40, 0.60]]
# eight tokens, d_model 4, two heads (split); and the headline configuration d_model 512, h 8
_M001 = MultiHeadAttention(n=8, d_model=4, h=2, convention="split")
_M001_WIDE = MultiHeadAttention(n=None, d_model=512, h=8)
# one token, d_model 4, two heads with the stated per-head weights; W_O is not given
_M003 = MultiHeadAttention(n=1, d_model=4, h=2)
_G003 = {"X": [[1, 2, 3, 4]],
         "W_Q": [[[1, 0], [0, 1], [0, 0], [1, 0]], [[0, 1], [1, 0], [1, 0], [0, 1]]],
         "W_K": [[[1, 1], [0, 1], [1, 0], [0, 1]], [[0, 1], [1, 1], [0, 0], [1, 0]]],
         "W_V": [[[1, 0], [0, 2], [1, 1], [0, 1]], [[0, 1], [1, 1], [0, 2], [1, 0]]]}
_GENERAL = MultiHeadAttention()
# grouped-query attention at LLaMA-style sizes (h = 32 query heads, g = 8 key/value heads, d_k = 128), a small
# grouped model for the symbolic proof, and multi-query attention (g = 1)
_GQA = MultiHeadAttention(n=None, d_model=4096, h=32, kv_heads=8)
_GQA_SMALL = MultiHeadAttention(n=3, d_model=8, h=4, kv_heads=2)
_MQA = MultiHeadAttention(n=None, d_model=1024, h=16, kv_heads=1)
# cross-attention (3 decoder queries, 5 encoder keys/values), one with n_kv = 2 < n where the row-stochastic
# bound 1 + h (n_kv - 1) is the binding one, and key padding
_CROSS = MultiHeadAttention(n=3, d_model=8, h=2, n_kv=5)
_CROSS_FEW_KEYS = MultiHeadAttention(n=4, d_model=4, h=2, n_kv=2)
_PADDED = MultiHeadAttention(n=2, d_model=4, h=2, n_kv=3, mask="key_padding")
_ATTENTION = r"Z = \mathrm{softmax}\left(\frac{QK^{\top}}{\sqrt{d_k}}\right)V"


def _dk(D: Any) -> Any:
    return D.d_k


def _column_reading(M: MultiHeadAttention) -> Any:
    """``W_O [f_1(x); ...; f_h(x)]``: the head outputs stacked as a column, W_O on the left."""
    return product("f(x) = W_O [f_1(x), ..., f_h(x)]", M.W_O, M.steps["Concat"].symbol.T)


CLAIMS: list[Claim] = [
    Claim("000-dk", r"d_k = \frac{d_{model}}{h} = \frac{4}{2} = 2", _src("000", 15), _M000,
          DimensionStatement("d_k", _dk, 2)),
    Claim("000-X-shape", r"X \in \mathbb{R}^{2 \times 4}", _src("000", 34), _M000, ShapeStatement("X", (2, 4))),
    Claim("000-head1-input", r"X_1 = I_2", _src("000", 50), _M000, ValueStatement("X_head1", _I2, givens=_G000)),
    Claim("000-head2-input", r"X_2 = I_2", _src("000", 62), _M000, ValueStatement("X_head2", _I2, givens=_G000)),
    Claim("000-scores", r"S = QK^{\top} = I_2", _src("000", 92), _M000, ValueStatement("S_1", _I2, givens=_G000)),
    Claim("000-sqrt2", r"\sqrt{d_k} = \sqrt{2} \approx 1.414", _src("000", 104), _M000,
          DimensionStatement("sqrt(d_k)", lambda D: sqrt(D.d_k), 1.414, places=3)),
    Claim("000-scaled", r"S' = \begin{bmatrix}0.707 & 0\\0 & 0.707\end{bmatrix}", _src("000", 108), _M000,
          ValueStatement("S'_1", [[0.707, 0], [0, 0.707]], 3, _G000)),
    Claim("000-softmax", r"A_1 = \begin{bmatrix}0.67 & 0.33\\0.33 & 0.67\end{bmatrix}", _src("000", 126), _M000,
          ValueStatement("A_1", [[0.67, 0.33], [0.33, 0.67]], 2, _G000)),
    Claim("000-Z1", r"Z_1 = A_1 V_1 = \begin{bmatrix}0.67 & 0.33\\0.33 & 0.67\end{bmatrix}", _src("000", 144), _M000,
          ValueStatement("head_1", [[0.67, 0.33], [0.33, 0.67]], 2, _G000)),
    Claim("000-Z2", r"Z_2 = \begin{bmatrix}0.60 & 0.40\\0.40 & 0.60\end{bmatrix}", _src("000", 162), _M000,
          ValueStatement("head_2", _Z2, 2, _G000)),
    Claim("000-concat", r"[0.67, 0.33, 0.60, 0.40],\ [0.33, 0.67, 0.40, 0.60]", _src("000", 181), _M000,
          ValueStatement("Concat", [[0.67, 0.33, 0.60, 0.40], [0.33, 0.67, 0.40, 0.60]], 2, _G000,
                         assume={"head_2": _Z2})),
    Claim("000-output", r"\mathrm{Output} = \mathrm{Concat}(Z_1, Z_2) W_O \in \mathbb{R}^{2 \times 4}",
          _src("000", 197), _M000, ShapeStatement("Output", (2, 4))),
    Claim("000-roles", "Head 1 captures syntax, head 2 semantic similarity", _src("000", 216), _M000,
          Informal("a statement about what trained heads learn, not about the mathematics")),
    Claim("000-stable", "Multi-head attention gives more stable training", _src("000", 231), _M000,
          Informal("an empirical statement about training")),
    Claim("001-dk", r"d_{model} = 512,\ h = 8 \Rightarrow d_k = 64", _src("001", 6), _M001_WIDE,
          DimensionStatement("d_k", _dk, 64)),
    Claim("001-width", r"8 \times 64 = 512", _src("001", 10), _M001_WIDE,
          DimensionStatement("h d_k", lambda D: D.h * D.d_k, 512)),
    Claim("001-cost", "Computational cost distributed across heads", _src("001", 19), _GENERAL,
          CostStatement("total_flops")),
    Claim("001-dk-small", r"d_{model} = 4,\ h = 2 \Rightarrow d_k = 2", _src("001", 32), _M001,
          DimensionStatement("d_k", _dk, 2)),
    Claim("001-WQ-shape", r"W_Q \in \mathbb{R}^{4 \times 2}\ \text{with}\ Q_1 = X_{\text{head1}} W_{Q1}",
          _src("001", 53), _M001, StatedShapes({"W_Q": (4, 2)})),
    Claim("001-split", r"X_{\text{head1}} = X[:, 0:2] \rightarrow (8, 2)", _src("001", 67), _M001,
          ShapeStatement("X_head1", (8, 2))),
    Claim("001-Q1", r"(8, 2) \times (2, 2) = (8, 2)", _src("001", 75), _M001, ShapeStatement("Q_1", (8, 2))),
    Claim("001-scores", r"(8, 2) \times (2, 8) / \sqrt{2} = (8, 8)", _src("001", 85), _M001,
          ShapeStatement("S'_1", (8, 8))),
    Claim("001-head", r"(8, 8) \times (8, 2) = (8, 2)", _src("001", 91), _M001, ShapeStatement("head_1", (8, 2))),
    Claim("001-concat", r"\mathrm{Concat}[(8, 2), (8, 2)] = (8, 4)", _src("001", 97), _M001,
          ShapeStatement("Concat", (8, 4))),
    Claim("001-output", r"(8, 4) \times (4, 4) = (8, 4)", _src("001", 103), _M001, ShapeStatement("Output", (8, 4))),
    Claim("001-parallel", "Parallelized efficiently on modern hardware", _src("001", 26), _M001,
          Informal("a statement about hardware, not mathematics")),
    Claim("002-attention", _ATTENTION, _src("002", 9), _GENERAL, FormulaStatement(_ATTENTION, "Attention")),
    Claim("002-head", r"\mathrm{head}_i = \mathrm{Attention}(QW_i^Q,\; KW_i^K,\; VW_i^V)", _src("002", 29), _GENERAL,
          FormulaStatement(r"\mathrm{head}_i = \mathrm{Attention}(QW_i^Q,\; KW_i^K,\; VW_i^V)", "head")),
    Claim("002-multihead", r"\mathrm{MultiHead}(Q, K, V) = \mathrm{Concat}(\mathrm{head}_1,\dots,\mathrm{head}_h)W_O",
          _src("002", 35), _GENERAL, FormulaStatement(
              r"\mathrm{MultiHead}(Q, K, V) = \mathrm{Concat}(\mathrm{head}_1,\dots,\mathrm{head}_h)W_O", "MultiHead")),
    Claim("002-not-equivalent", "Multi-head attention is not mathematically equivalent to single-head",
          _src("002", 101), MultiHeadAttention(n=2, d_model=2, h=2), ProofStatement(two_heads_not_one)),
    Claim("002-softmax-differ", r"\mathrm{softmax}(Q_1K_1^{\top}) \neq \mathrm{softmax}(Q_2K_2^{\top})",
          _src("002", 124), MultiHeadAttention(n=3, d_model=4, h=2), HeadsDiffer("A")),
    Claim("002-higher-rank", "Multi-head has a higher rank representation than single-head", _src("002", 160),
          MultiHeadAttention(n=None, d_model=64, h=4), RankComparison("Concat", n=8)),
    Claim("002-rank-by-attention", r"\mathrm{rank}(Z) \le \mathrm{rank}(A)\ \text{(output rank limited by the "
          r"attention matrix)}", _src("002", 187), _GENERAL, RankStatement("head_i", "le", RankOf("A_i"))),
    Claim("002-rank-single", r"\mathrm{rank}(Z) \le d_k", _src("002", 193), _GENERAL,
          RankStatement("head_i", "le", _dk)),
    Claim("002-rank-multi", r"\mathrm{rank}(Z) \le h \cdot d_k", _src("002", 202), _GENERAL,
          RankStatement("Concat", "le", lambda D: D.h * D.d_k)),
    Claim("002-wo-left", r"f(x) = W_O [f_1(x), f_2(x), \dots, f_h(x)]\ \text{beside}\ "
          r"\mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_h) W_O", _src("002", 223),
          MultiHeadAttention(n=None, d_model=64, h=4), ReadingsAgree("f(x) = W_O [f_1(x), ..., f_h(x)]",
                                                                     _column_reading)),
    Claim("002-deeper", "Multi-head attention is effectively a deeper function class", _src("002", 149), _GENERAL,
          Informal("'deeper' is not defined; see the proof that two heads are not one for what holds")),
    Claim("002-empirical", "Single-head performance drops; multi-head improves significantly", _src("002", 234),
          _GENERAL, Informal("an empirical statement about benchmarks")),
    Claim("003-head1-output", "head1_output = [0.5, 1.2]", _src("003", 138), _M003,
          ValueStatement("head_1", [[0.5, 1.2]], 1, _G003)),
    Claim("003-head2-output", "head2_output = [-0.4, 2.3]", _src("003", 164), _M003,
          ValueStatement("head_2", [[-0.4, 2.3]], 1, _G003)),
    Claim("003-head", r"\mathrm{head}_i = \mathrm{Attention}(XW_Q^i, XW_K^i, XW_V^i)", _src("003", 56), _GENERAL,
          FormulaStatement(r"\text{head}_i = \text{Attention}(XW_Q^i, XW_K^i, XW_V^i)", "head")),
    Claim("003-full-input", "All heads see the full input", _src("003", 195), _GENERAL, ReadsWholeInput("Q_i")),
    Claim("003-one-relation", "One attention head can only learn one type of relation", _src("003", 23), _GENERAL,
          Informal("'type of relation' is not a mathematical notion")),
    Claim("003-coreference", "Head 3 learns coreference", _src("003", 14), _GENERAL,
          Informal("a statement about trained behaviour")),
    Claim("004-head", r"\mathrm{head}_h = \mathrm{Attention}(QW_Q^h, KW_K^h, VW_V^h)", _src("004", 55), _GENERAL,
          FormulaStatement(r"\text{head}_h = \text{Attention}(QW_Q^h, KW_K^h, VW_V^h)", "head")),
    Claim("004-multihead", r"\mathrm{MultiHead}(Q, K, V) = \mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_h)W_O",
          _src("004", 73), _GENERAL, FormulaStatement(
              r"\text{MultiHead}(Q, K, V) = \text{Concat}(\text{head}_1, \dots, \text{head}_h)W_O", "MultiHead")),
    Claim("004-back-to-model", "Concatenation along the feature dimension, projected back to the model dimension",
          _src("004", 81), MultiHeadAttention(n=None, d_model=512, h=8),
          ShapeStatement("Output", lambda D: (D.n, D.d_model))),
    Claim("004-scaling", "Scaling keeps the scores' variance independent of d_k, so the softmax does not saturate",
          _src("004", 158), _GENERAL, ScoreStatistic("Var", "S'", independent_of="d_k")),
    Claim("004-8-heads", "Transformers commonly use 8 heads; each specialises", _src("004", 91), _GENERAL,
          Informal("a statement about practice and trained behaviour")),
    Claim("vaswani-fn4", r"\operatorname{Var}(q \cdot k) = d_k \sigma^4", "Vaswani et al. 2017, footnote 4", _GENERAL,
          ScoreStatistic("Var", "S", stated=lambda d_k, sigma: d_k * sigma**4)),
    Claim("vaswani-scaled", r"\operatorname{Var}\left(\frac{q \cdot k}{\sqrt{d_k}}\right) = \sigma^4",
          "Vaswani et al. 2017, section 3.2.1", _GENERAL,
          ScoreStatistic("Var", "S'", stated=lambda d_k, sigma: sigma**4)),
    Claim("elhage-decomposition", r"\mathrm{Concat}(\mathrm{head}_i) W_O = \sum_i \mathrm{head}_i W_O^{(i)}",
          "Elhage et al. 2021", _GENERAL, ProofStatement(lambda M: head_decomposition(M, max_h=4, engine_up_to=2))),
    Claim("bhojanapalli-thm1", "d_k < n: some row-stochastic P is attained by no weights",
          "Bhojanapalli et al. 2020, Theorem 1", _GENERAL, ProofStatement(bottleneck_theorem)),
    Claim("gqa-kv-cache", r"\text{KV cache per token and layer} = 2 g d_k", "Ainslie et al. 2023 (GQA)", _GQA,
          CountStatement("kv_cache_per_token", lambda D, g: 2 * g * D.d_k)),
    Claim("gqa-kv-saving", r"\text{the KV cache is } h/g \text{ times smaller than multi-head attention's}",
          "Ainslie et al. 2023 (GQA)", _GQA,
          CountStatement("kv_cache_per_token", lambda D, g: D.h / g, versus_mha=True)),
    Claim("gqa-parameters", r"\#\text{weights} = d_{model} h d_k + 2 d_{model} g d_k + d_{model}^2",
          "Ainslie et al. 2023 (GQA)", _GQA, CountStatement(
              "parameters", lambda D, g: D.d_model * D.h * D.d_k + 2 * D.d_model * g * D.d_k + D.d_model ** 2)),
    Claim("gqa-repeated-kv", "GQA with g key/value heads equals MHA with each key/value head repeated h/g times",
          "Ainslie et al. 2023 (GQA), section 2", _GQA_SMALL, ProofStatement(gqa_equals_repeated_kv)),
    Claim("mqa-kv-cache", r"\text{multi-query attention caches } 2 d_k \text{ values per token and layer}",
          "Shazeer 2019 (MQA)", _MQA, CountStatement("kv_cache_per_token", lambda D, g: 2 * D.d_k)),
    Claim("cross-scores-shape", r"S_i = Q_i K_i^\top \in \mathbb{R}^{n_q \times n_{kv}} = \mathbb{R}^{3 \times 5}",
          "Vaswani et al. 2017, encoder-decoder attention", _CROSS, ShapeStatement("S_1", (3, 5))),
    Claim("cross-concat-rank", r"\mathrm{rank}(\mathrm{Concat}) = 1 + h (n_{kv} - 1) \text{ when it is the smallest "
          r"bound (attained)}", "cross-attention, row-stochastic bound", _CROSS_FEW_KEYS,
          VariantRankStatement("Concat", "eq", lambda D, n_kv: 1 + D.h * (n_kv - 1))),
    Claim("mask-padded-zero", "a padded key gets attention weight exactly 0", "PyTorch key_padding_mask",
          _PADDED, MaskedWeights("masked", 0)),
    Claim("mask-row-sums", "every row of a masked softmax still sums to 1", "PyTorch key_padding_mask", _PADDED,
          MaskedWeights("row sums", 1)),
]


def claim(claim_id: str) -> Claim:
    """The registered claim with this id; the error lists the ids."""
    for c in CLAIMS:
        if c.id == claim_id:
            return c
    raise InputError(f"no claim {claim_id!r}; ids are {', '.join(c.id for c in CLAIMS)}")


class ClaimResults(list):  # type: ignore[type-arg]
    """A list of :class:`ClaimResult` that renders as a Markdown table in Jupyter."""

    def __init__(self, results: Iterable[ClaimResult] = ()):
        require(results, Iterable, "ClaimResults' results", "an iterable of ClaimResult")
        items = list(results)
        for k, r in enumerate(items):
            require(r, ClaimResult, f"ClaimResults' results[{k}]", "a ClaimResult")
        super().__init__(items)

    def _repr_markdown_(self) -> str:
        rows = ["| id | claim | source | basis | verdict | why |", "|---|---|---|---|---|---|"]
        for r in self:
            verdict = f"**{r.verdict}**" + (f" ({prose_markdown(r.scope)})" if r.scope else "")
            cells = [r.claim.id, statement_markdown(r.claim.text), f"`{r.claim.source}`", r.basis, verdict,
                     prose_markdown(r.detail)]
            rows.append("| " + " | ".join(c.replace("\n", " ") for c in cells) + " |")
        return "\n".join(rows)


def run_claims(claims: list[Claim] | None = None, source: str | None = None) -> ClaimResults:
    """Decide the claims (all by default; ``source`` keeps those whose source contains it).

    A statement the engine refuses (a package error) leaves its claim ``undecided``, with the error.
    """
    require(claims, (list, tuple, type(None)), "run_claims' claims", "a list of Claim or None")
    require(source, (str, type(None)), "run_claims' source", "a str or None")
    chosen = CLAIMS if claims is None else claims
    if source is not None:
        chosen = [c for c in chosen if source in c.source]
        if not chosen:
            raise InputError(f"no claim has a source matching {source!r}; sources are "
                             f"{sorted({c.source.split(':')[0] for c in CLAIMS})}")
    results = ClaimResults()
    for c in chosen:
        try:
            outcome = c.decide()
        except MHASymbolicError as e:
            outcome = Verdict.refused(e)
        results.append(ClaimResult(c, outcome))
    return results
