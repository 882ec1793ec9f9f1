r"""The claims registry: every mathematical claim of the seed tutorials, settled.

Explanation
===========

A :class:`Claim` has an id, a statement (LaTeX), its source (seed file and line, or a
paper), the *kind* of settlement (``proof``, ``certified counterexample``, ``exact
computation``, ``evidence``, or ``informal`` -- not a mathematical statement), the verdict
we expect, and a check that computes the verdict with the engine, the proofs and the rank
explorer.  :func:`run_claims` runs them; ``mha-symbolic claims`` prints the table.

Verdicts: ``true``, ``false``, ``assumed`` (stated without the inputs needed to derive it),
``inconsistent`` (the document contradicts itself) and ``informal``.  A check that cannot
decide returns ``undecided`` -- never a guess.

Examples
========

>>> from mha_symbolic.claims import CLAIMS, run_claims
>>> r = run_claims([c for c in CLAIMS if c.id == "003-head1-output"])[0]
>>> r.verdict, r.detail
('false', 'head_1 = X W_V^1 = [4, 11] (softmax of one token is exactly 1), not [0.5, 1.2]')
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from sympy import Float, ImmutableMatrix, N, Rational, sqrt

from .attention import MultiHeadAttention
from .dims import Dims
from .errors import InputError, ShapeError
from .examples import example, seed001_as_stated

__all__ = ["Claim", "ClaimResult", "ClaimResults", "CLAIMS", "run_claims", "SEED_FILES"]

SEED_FILES = {"000": "000_63e12a797975a9b2.txt", "001": "001_63009bb1ec9a24fa.txt",
              "002": "002_8a4160f16a92c9f5.txt", "003": "003_5b6b5185d11461ee.txt",
              "004": "004_b4f091a53bd4c6f6.txt"}
KINDS = ("proof", "certified counterexample", "exact computation", "evidence", "informal")


@dataclass(frozen=True)
class Claim:
    """A claim and how to settle it; ``check()`` returns ``(verdict, detail)``."""

    id: str
    statement: str
    source: str
    kind: str
    expected: str
    check: Callable[[], tuple[str, str]]


@dataclass(frozen=True)
class ClaimResult:
    """The outcome of running one claim."""

    claim: Claim
    verdict: str
    detail: str

    @property
    def reached(self) -> bool:
        """A verdict was reached (anything but ``undecided``)."""
        return self.verdict != "undecided"

    def as_dict(self) -> dict[str, Any]:
        c = self.claim
        return {"id": c.id, "statement": c.statement, "source": c.source, "kind": c.kind,
                "verdict": self.verdict, "detail": self.detail}


def _src(seed: str, line: int) -> str:
    return f"{SEED_FILES[seed]}:{line}"


def _rounds(value: Any, stated: Any, places: int) -> bool:
    return all(round(float(N(v, 30)), places) == float(s) for v, s in zip(value, stated, strict=True))


@cache
def _eval(name: str) -> Any:
    return example(name).evaluate()


def _informal(why: str) -> Callable[[], tuple[str, str]]:
    return lambda: ("informal", why)


# ----- checks -----------------------------------------------------------------------------------------
def _dk(d_model: int, h: int, stated: int) -> Callable[[], tuple[str, str]]:
    def check() -> tuple[str, str]:
        d = Dims(None, d_model, h).d_k
        return ("true" if d == stated else "false", f"d_k = d_model / h = {d_model}/{h} = {d}")
    return check


def _seed000_matrix(step: str, stated: list[list[float]], places: int) -> Callable[[], tuple[str, str]]:
    def check() -> tuple[str, str]:
        M = _eval("seed000")[step]
        ok = _rounds(list(M), [x for r in stated for x in r], places)
        return ("true" if ok else "false", f"{step} = {M.tolist()} rounds to {stated} at {places} decimals")
    return check


def _seed000_z2() -> tuple[str, str]:
    E = _eval("seed000")
    computed = [round(float(N(x, 20)), 2) for x in E["head_2"]]
    return ("assumed", f"Z_2 = [[0.60, 0.40], [0.40, 0.60]] is stated, not derived (the document says 'assume'); "
                       f"its own data (X_2 = I, Q = K = V = X_2) give {computed}")


def _seed000_concat() -> tuple[str, str]:
    E = _eval("seed000")
    concat = ImmutableMatrix.hstack(E["head_1"], ImmutableMatrix([[Rational(3, 5), Rational(2, 5)],
                                                                  [Rational(2, 5), Rational(3, 5)]]))
    ok = _rounds(list(concat), [0.67, 0.33, 0.60, 0.40, 0.33, 0.67, 0.40, 0.60], 2)
    return ("true" if ok else "false", "Concat(Z_1, Z_2) with the assumed Z_2 rounds to the stated rows")


def _seed001_inconsistent() -> tuple[str, str]:
    try:
        MultiHeadAttention(8, 4, 2, convention="split").evaluate(**seed001_as_stated())
    except ShapeError as e:
        return "inconsistent", str(e)
    return "undecided", "the stated shapes evaluated without error"


def _shape_chain(sizes: tuple[int, int, int], step: str, shape: tuple[int, int]) -> Callable[[], tuple[str, str]]:
    def check() -> tuple[str, str]:
        M = MultiHeadAttention(*sizes, convention="split")
        got = tuple(int(x) for x in M.steps[step].shape)
        return ("true" if got == shape else "false", f"{M.steps[step].text}: shape {got}")
    return check


def _seed003_head(k: int, stated: list[float]) -> Callable[[], tuple[str, str]]:
    def check() -> tuple[str, str]:
        value = _eval("seed003")[f"head_{k}"]
        wrong = value != ImmutableMatrix([[Float(x) for x in stated]]) and not _rounds(list(value), stated, 1)
        shown = ", ".join(str(x) for x in value)
        return ("false" if wrong else "true",
                f"head_{k} = X W_V^{k} = [{shown}] (softmax of one token is exactly 1), not "
                f"[{', '.join(str(x) for x in stated)}]")
    return check


def _proof(fn_name: str, verdict_if_verified: str = "true") -> Callable[[], tuple[str, str]]:
    def check() -> tuple[str, str]:
        from . import proofs

        p = getattr(proofs, fn_name)()
        return (verdict_if_verified if p.verified else "undecided", p.statement)
    return check


def _rank(fn_name: str) -> Callable[[], tuple[str, str]]:
    def check() -> tuple[str, str]:
        from . import rank

        c = getattr(rank, fn_name)()
        verdict = "false" if c.verdict.startswith("false") else "true" if c.verdict.startswith("true") else "undecided"
        return verdict, " ".join(c.reasoning)
    return check


def _rank_bound(step: str, expected: str) -> Callable[[], tuple[str, str]]:
    def check() -> tuple[str, str]:
        from .rank import rank_bound

        M = MultiHeadAttention()
        b = rank_bound(M.steps[step].expr, M.dims).bound
        return ("true" if str(b) == expected else "undecided", f"proven: rank({step}) <= {b}")
    return check


def _formula(tex: str) -> Callable[[], tuple[str, str]]:
    """The right-hand side of a tutorial's formula reads (with the LaTeX reader) as the right-hand
    side of one of the model's standard formulas, possibly in self-attention form (Q = K = V = X)."""
    def check() -> tuple[str, str]:
        from sympy import MatrixSymbol

        from .formulas import standard_formulas
        from .parse import SymbolTable, equivalent, read_formula

        M = MultiHeadAttention()
        table = SymbolTable.for_model(M)
        rel = read_formula(tex, table, strict=False)[0]  # the document's own name on the left (Z) may be new
        self_attention = {MatrixSymbol(c, *M.X.shape): M.X for c in "QKV"}
        for f in standard_formulas(M):
            if equivalent(rel.rhs, f.rhs) or equivalent(rel.rhs, f.rhs.xreplace(self_attention)):
                return "true", f"the right-hand side reads as that of the standard formula {f}"
        return "undecided", f"read as {rel.lhs} = {rel.rhs}, matching no standard formula"
    return check


def _wo_on_the_left() -> tuple[str, str]:
    from ._shape import check_matmul

    D = Dims(None, 64, 4)
    try:  # row convention: [f_1(x), ..., f_h(x)] is 1 x h d_v, W_O is h d_v x d_model
        check_matmul("f(x) = W_O [f_1(x), ..., f_h(x)]", (int(D.h * D.d_v), int(D.d_model)), (1, int(D.h * D.d_v)))
    except ShapeError as e:
        return "inconsistent", (f"{e}. With rows (as in Concat(head_1, ..., head_h) W_O) W_O multiplies on the "
                                "right; W_O on the left needs column vectors and the transposed W_O^T: the "
                                "formula mixes the two conventions")
    return "undecided", "the shapes fit"


def _softmax_differs() -> tuple[str, str]:
    E = MultiHeadAttention(2, 2, 2).evaluate(X=[[1, 0], [0, 1]], W_Q=[[[1], [0]], [[0], [1]]],
                                             W_K=[[[1], [0]], [[0], [1]]], W_V=[[[1], [0]], [[0], [1]]],
                                             W_O=[[1, 0], [0, 1]])
    differ = E["A_1"] != E["A_2"]
    return ("true" if differ else "undecided",
            f"exact instance: A_1 = {E['A_1'].tolist()} and A_2 = {E['A_2'].tolist()} differ (for other weights "
            "they may coincide: the statement holds for some, not all, weights)")


def _sqrt_approx() -> tuple[str, str]:
    ok = round(float(sqrt(2)), 3) == 1.414
    return ("true" if ok else "false", "sqrt(2) = 1.41421... rounds to 1.414")


def _concat_shape(n: int, d_model: int, h: int) -> Callable[[], tuple[str, str]]:
    def check() -> tuple[str, str]:
        M = MultiHeadAttention(n, d_model, h)
        shapes = [tuple(int(x) for x in M.steps[s].shape) for s in ("Concat", "Output")]
        ok = shapes == [(n, d_model), (n, d_model)]
        return ("true" if ok else "false", f"Concat and Output have shapes {shapes}")
    return check


def _full_input() -> tuple[str, str]:
    M = MultiHeadAttention(convention="projection")
    q = M.steps["Q_i"].definition
    return ("true" if M.X in q.atoms(type(M.X)) else "undecided",
            f"projection convention: {M.steps['Q_i'].text} reads all of X")


CLAIMS: list[Claim] = [
    # seed 000
    Claim("000-dk", r"d_k = \frac{d_{model}}{h} = \frac{4}{2} = 2", _src("000", 15), "exact computation", "true",
          _dk(4, 2, 2)),
    Claim("000-X-shape", r"X \in \mathbb{R}^{2 \times 4}", _src("000", 34), "exact computation", "true",
          lambda: ("true" if _eval("seed000").inputs["X"].shape == (2, 4) else "false", "X has 2 rows, 4 columns")),
    Claim("000-head-inputs", r"X_1 = X_2 = I_2", _src("000", 50), "exact computation", "true",
          _seed000_matrix("X_head2", [[1, 0], [0, 1]], 0)),
    Claim("000-scores", r"S = QK^{\top} = I_2", _src("000", 92), "exact computation", "true",
          _seed000_matrix("S_1", [[1, 0], [0, 1]], 0)),
    Claim("000-sqrt2", r"\sqrt{d_k} = \sqrt{2} \approx 1.414", _src("000", 104), "exact computation", "true",
          _sqrt_approx),
    Claim("000-scaled", r"S' = \begin{bmatrix}0.707 & 0\\0 & 0.707\end{bmatrix}", _src("000", 108),
          "exact computation", "true", _seed000_matrix("S'_1", [[0.707, 0], [0, 0.707]], 3)),
    Claim("000-softmax", r"\mathrm{softmax}(0.707, 0) \approx (0.67, 0.33)", _src("000", 119),
          "exact computation", "true", _seed000_matrix("A_1", [[0.67, 0.33], [0.33, 0.67]], 2)),
    Claim("000-Z1", r"Z_1 = A_1 V_1 = \begin{bmatrix}0.67 & 0.33\\0.33 & 0.67\end{bmatrix}", _src("000", 144),
          "exact computation", "true", _seed000_matrix("head_1", [[0.67, 0.33], [0.33, 0.67]], 2)),
    Claim("000-Z2", r"Z_2 = \begin{bmatrix}0.60 & 0.40\\0.40 & 0.60\end{bmatrix}", _src("000", 162),
          "exact computation", "assumed", _seed000_z2),
    Claim("000-concat", r"[0.67, 0.33, 0.60, 0.40],\ [0.33, 0.67, 0.40, 0.60]", _src("000", 181),
          "exact computation", "true", _seed000_concat),
    Claim("000-output", r"\mathrm{Output} = \mathrm{Concat}(Z_1, Z_2) W_O \in \mathbb{R}^{2 \times 4}",
          _src("000", 197), "exact computation", "true", _concat_shape(2, 4, 2)),
    Claim("000-roles", "Head 1 captures syntax, head 2 semantic similarity", _src("000", 216), "informal", "informal",
          _informal("a statement about what trained heads learn, not about the mathematics")),
    Claim("000-stable", "Multi-head attention gives more stable training", _src("000", 231), "informal", "informal",
          _informal("an empirical statement about training")),
    # seed 001
    Claim("001-dk", r"d_{model} = 512,\ h = 8 \Rightarrow d_k = 64", _src("001", 6), "exact computation", "true",
          _dk(512, 8, 64)),
    Claim("001-width", r"8 \times 64 = 512", _src("001", 10), "exact computation", "true",
          lambda: ("true" if 8 * 64 == 512 else "false", "8 x 64 = 512")),
    Claim("001-cost", "Computational cost distributed across heads", _src("001", 19), "exact computation", "true",
          _proof("parameter_and_flop_counts")),
    Claim("001-dk-small", r"d_{model} = 4,\ h = 2 \Rightarrow d_k = 2", _src("001", 32), "exact computation", "true",
          _dk(4, 2, 2)),
    Claim("001-WQ-shape", r"W_Q \in \mathbb{R}^{4 \times 2}\ \text{but}\ Q_1 = X_{\text{head1}} W_{Q1}: (8,2)(2,2)",
          _src("001", 53), "exact computation", "inconsistent", _seed001_inconsistent),
    Claim("001-split", r"X_{\text{head1}} = X[:, 0:2] \rightarrow (8, 2)", _src("001", 67), "exact computation",
          "true", _shape_chain((8, 4, 2), "X_head1", (8, 2))),
    Claim("001-Q1", r"(8, 2) \times (2, 2) = (8, 2)", _src("001", 75), "exact computation", "true",
          _shape_chain((8, 4, 2), "Q_1", (8, 2))),
    Claim("001-scores", r"(8, 2) \times (2, 8) / \sqrt{2} = (8, 8)", _src("001", 85), "exact computation", "true",
          _shape_chain((8, 4, 2), "S'_1", (8, 8))),
    Claim("001-head", r"(8, 8) \times (8, 2) = (8, 2)", _src("001", 91), "exact computation", "true",
          _shape_chain((8, 4, 2), "head_1", (8, 2))),
    Claim("001-concat", r"\mathrm{Concat}[(8, 2), (8, 2)] = (8, 4)", _src("001", 97), "exact computation", "true",
          _shape_chain((8, 4, 2), "Concat", (8, 4))),
    Claim("001-output", r"(8, 4) \times (4, 4) = (8, 4)", _src("001", 103), "exact computation", "true",
          _shape_chain((8, 4, 2), "Output", (8, 4))),
    Claim("001-parallel", "Parallelized efficiently on modern hardware", _src("001", 26), "informal", "informal",
          _informal("a statement about hardware, not mathematics")),
    # seed 002
    Claim("002-attention", r"Z = \mathrm{softmax}\left(\frac{QK^{\top}}{\sqrt{d_k}}\right)V", _src("002", 9), "proof",
          "true", _formula(r"Z = \mathrm{softmax}\left(\frac{QK^{\top}}{\sqrt{d_k}}\right)V")),
    Claim("002-head", r"\mathrm{head}_i = \mathrm{Attention}(QW_i^Q, KW_i^K, VW_i^V)", _src("002", 29), "proof", "true",
          _formula(r"\mathrm{head}_i = \mathrm{Attention}(QW_i^Q,\; KW_i^K,\; VW_i^V)")),
    Claim("002-multihead", r"\mathrm{MultiHead} = \mathrm{Concat}(\mathrm{head}_1,\dots,\mathrm{head}_h)W_O",
          _src("002", 35), "proof", "true",
          _formula(r"\mathrm{MultiHead}(Q, K, V) = \mathrm{Concat}(\mathrm{head}_1,\dots,\mathrm{head}_h)W_O")),
    Claim("002-not-equivalent", "Multi-head attention is not mathematically equivalent to single-head",
          _src("002", 101), "proof", "true", _proof("two_heads_not_one")),
    Claim("002-softmax-differ", r"\mathrm{softmax}(Q_1K_1^{\top}) \neq \mathrm{softmax}(Q_2K_2^{\top})",
          _src("002", 124), "exact computation", "true", _softmax_differs),
    Claim("002-higher-rank", "Multi-head has a higher rank representation than single-head", _src("002", 160),
          "proof", "false", _rank("multihead_rank_comparison")),
    Claim("002-rank-by-attention", "Attention output rank is limited by the attention matrix", _src("002", 187),
          "certified counterexample", "false", _rank("softmax_rank_counterexample")),
    Claim("002-rank-single", r"\mathrm{rank}(Z) \le d_k", _src("002", 193), "proof", "true",
          _rank_bound("head_i", "Min(d_v, n)")),
    Claim("002-rank-multi", r"\mathrm{rank}(Z) \le h \cdot d_k", _src("002", 202), "proof", "true",
          _rank_bound("Concat", "Min(d_model, n)")),
    Claim("002-wo-left", r"f(x) = W_O [f_1(x), f_2(x), \dots, f_h(x)]", _src("002", 223), "exact computation",
          "inconsistent", _wo_on_the_left),
    Claim("002-deeper", "Multi-head attention is effectively a deeper function class", _src("002", 149), "informal",
          "informal", _informal("'deeper' is not defined; see the proof that two heads are not one for what holds")),
    Claim("002-empirical", "Single-head performance drops; multi-head improves significantly", _src("002", 234),
          "informal", "informal", _informal("an empirical statement about benchmarks")),
    # seed 003
    Claim("003-head1-output", "head1_output = [0.5, 1.2]", _src("003", 138), "exact computation", "false",
          _seed003_head(1, [0.5, 1.2])),
    Claim("003-head2-output", "head2_output = [-0.4, 2.3]", _src("003", 164), "exact computation", "false",
          _seed003_head(2, [-0.4, 2.3])),
    Claim("003-head", r"\mathrm{head}_i = \mathrm{Attention}(XW_Q^i, XW_K^i, XW_V^i)", _src("003", 56), "proof", "true",
          _formula(r"\text{head}_i = \text{Attention}(XW_Q^i, XW_K^i, XW_V^i)")),
    Claim("003-full-input", "All heads see the full input", _src("003", 195), "proof", "true", _full_input),
    Claim("003-one-relation", "One attention head can only learn one type of relation", _src("003", 23), "informal",
          "informal", _informal("'type of relation' is not a mathematical notion")),
    Claim("003-coreference", "Head 3 learns coreference", _src("003", 14), "informal", "informal",
          _informal("a statement about trained behaviour")),
    # seed 004
    Claim("004-head", r"\mathrm{head}_h = \mathrm{Attention}(QW_Q^h, KW_K^h, VW_V^h)", _src("004", 55), "proof", "true",
          _formula(r"\text{head}_h = \text{Attention}(QW_Q^h, KW_K^h, VW_V^h)")),
    Claim("004-multihead", r"\mathrm{MultiHead}(Q, K, V) = \mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_h)W_O",
          _src("004", 73), "proof", "true",
          _formula(r"\text{MultiHead}(Q, K, V) = \text{Concat}(\text{head}_1, \dots, \text{head}_h)W_O")),
    Claim("004-back-to-model", "Concatenation along the feature dimension, projected back to the model dimension",
          _src("004", 81), "exact computation", "true", _concat_shape(8, 512, 8)),
    Claim("004-scaling", "Scaling and softmax stabilise gradients", _src("004", 158), "proof", "true",
          _proof("softmax_saturation")),
    Claim("004-8-heads", "Transformers commonly use 8 heads; each specialises", _src("004", 91), "informal", "informal",
          _informal("a statement about practice and trained behaviour")),
    # papers
    Claim("vaswani-fn4", r"\operatorname{Var}(q \cdot k) = d_k \sigma^4", "Vaswani et al. 2017, footnote 4", "proof",
          "true", lambda: _scaling_light()),
    Claim("elhage-decomposition", r"\mathrm{Concat}(\mathrm{head}_i) W_O = \sum_i \mathrm{head}_i W_O^{(i)}",
          "Elhage et al. 2021", "proof", "true", _proof("head_decomposition")),
    Claim("bhojanapalli-thm1", "d_k < n: some row-stochastic P is attained by no weights",
          "Bhojanapalli et al. 2020, Theorem 1", "proof", "true",
          lambda: _bottleneck()),
]


def _scaling_light() -> tuple[str, str]:
    from .proofs import sqrt_dk_scaling

    p = sqrt_dk_scaling(full_check_up_to=3, monte_carlo_samples=0)
    return ("true" if p.verified else "undecided", p.statement)


def _bottleneck() -> tuple[str, str]:
    from .rank import low_rank_bottleneck

    a, b = low_rank_bottleneck(3, 3), low_rank_bottleneck(4, 2)
    ok = a.verdict.startswith("true") and b.verdict.startswith("true")
    return ("true" if ok else "undecided", f"{a.statement}: {a.verdict}; {b.statement}: {b.verdict}")


class ClaimResults(list):  # type: ignore[type-arg]
    """A list of :class:`ClaimResult` that renders as a Markdown table in Jupyter."""

    def _repr_markdown_(self) -> str:
        rows = ["| id | source | kind | verdict | why |", "|---|---|---|---|---|"]
        for r in self:
            cells = [r.claim.id, r.claim.source, r.claim.kind, f"**{r.verdict}**", r.detail]
            rows.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
        return "\n".join(rows)


def run_claims(claims: list[Claim] | None = None, source: str | None = None) -> ClaimResults:
    """Run the claims (all by default; ``source`` keeps those whose source contains it)."""
    chosen = CLAIMS if claims is None else claims
    if source is not None:
        chosen = [c for c in chosen if source in c.source]
        if not chosen:
            raise InputError(f"no claim has a source matching {source!r}; sources are "
                             f"{sorted({c.source.split(':')[0] for c in CLAIMS})}")
    results = ClaimResults()
    for c in chosen:
        try:
            verdict, detail = c.check()
        except Exception as e:  # a check that fails to run leaves the claim undecided, visibly
            verdict, detail = "undecided", f"check failed: {type(e).__name__}: {e}"
        results.append(ClaimResult(c, verdict, detail))
    return results
