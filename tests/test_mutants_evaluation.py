"""Tests written against surviving mutants of mha_symbolic/evaluation.py (issue 11).

``Evaluation._repr_latex_`` shows a step exactly when its LaTeX has at most 400 characters or it has
symbolic entries, else to four decimals; ``repr`` names the model and the steps.
"""

from __future__ import annotations

import pytest
from sympy import ImmutableMatrix, Rational

from mha_symbolic import InputError, MultiHeadAttention, ShapeError
from mha_symbolic.errors import DimensionError, SizeLimitError
from mha_symbolic.evaluation import Evaluation
from mha_symbolic.latex import latex

# two tokens, d_model 3, one head; non-symmetric weights, no two alike
_X = [[1, 0, 2], [0, 1, 1]]
_WQ = [[[1, 0, 1], [0, 1, 0], [1, 1, 0]]]
_WK = [[[0, 1, 0], [1, 0, 1], [0, 0, 1]]]
_WV = [[[1, 2, 0], [0, 1, 1], [2, 0, 1]]]
_WO = [[1, 0, 0], [0, 2, 0], [1, 0, 1]]
_A1 = (r"\begin{bmatrix}\frac{e^{\frac{4 \sqrt{3}}{3}}}{e^{\frac{4 \sqrt{3}}{3}} + e^{\frac{5 \sqrt{3}}{3}}} & "
       r"\frac{e^{\frac{5 \sqrt{3}}{3}}}{e^{\frac{4 \sqrt{3}}{3}} + e^{\frac{5 \sqrt{3}}{3}}}\\"
       r"\frac{e^{\frac{2 \sqrt{3}}{3}}}{e^{\frac{\sqrt{3}}{3}} + e^{\frac{2 \sqrt{3}}{3}}} & "
       r"\frac{e^{\frac{\sqrt{3}}{3}}}{e^{\frac{\sqrt{3}}{3}} + e^{\frac{2 \sqrt{3}}{3}}}\end{bmatrix}")


def _evaluation(**weights):
    return MultiHeadAttention(n=2, d_model=3, h=1).evaluate(X=_X, W_Q=_WQ, W_K=_WK, W_V=_WV, **weights)


def test_repr_latex_exact_when_short_decimals_when_long():
    E = _evaluation(W_O=_WO)
    assert len(latex(E["A_1"])) == 366 and len(latex(E["head_1"])) == 1070
    assert E._repr_latex_() == (
        r"$\displaystyle \begin{aligned}"
        r"Q_1 &= \begin{bmatrix}3 & 2 & 1\\1 & 2 & 0\end{bmatrix} \\ "
        r"K_1 &= \begin{bmatrix}0 & 1 & 2\\1 & 0 & 2\end{bmatrix} \\ "
        r"V_1 &= \begin{bmatrix}5 & 2 & 2\\2 & 1 & 2\end{bmatrix} \\ "
        r"S_1 &= \begin{bmatrix}4 & 5\\2 & 1\end{bmatrix} \\ "
        r"S'_1 &= \begin{bmatrix}\frac{4 \sqrt{3}}{3} & \frac{5 \sqrt{3}}{3}\\"
        r"\frac{2 \sqrt{3}}{3} & \frac{\sqrt{3}}{3}\end{bmatrix} \\ "
        r"A_1 &= " + _A1 + r" \\ "
        r"\mathrm{head}_1 &\approx \begin{bmatrix}3.0786 & 1.3595 & 2.0000 \\ 3.9214 & 1.6405 & 2.0000\end{bmatrix} \\ "
        r"\mathrm{Concat} &\approx \begin{bmatrix}3.0786 & 1.3595 & 2.0000 \\ 3.9214 & 1.6405 & 2.0000\end{bmatrix} \\ "
        r"\mathrm{Output} &\approx \begin{bmatrix}5.0786 & 2.7191 & 2.0000 \\ 5.9214 & 3.2809 & 2.0000\end{bmatrix}"
        r"\end{aligned}$")


def test_repr_latex_keeps_symbolic_steps_exact_however_long():
    E = _evaluation()  # W_O left symbolic: Output has 3648 characters of exact LaTeX, all shown
    out = latex(E["Output"])
    assert len(out) == 3648 and E["Output"].free_symbols
    assert E._repr_latex_().endswith(r"\mathrm{Output} &= " + out + r"\end{aligned}$")


def test_repr_latex_threshold_is_400_characters_inclusive():
    M = MultiHeadAttention(n=1, d_model=25, h=1)
    at_400 = ImmutableMatrix([[Rational(10, 3)] * 25])
    at_401 = ImmutableMatrix([[Rational(10, 3)] * 24 + [Rational(100, 3)]])
    assert (len(latex(at_400)), len(latex(at_401))) == (400, 401)
    values = {name: ImmutableMatrix([[Rational(1, 7)]]) for name in M.steps}
    values["Q_1"], values["K_1"] = at_400, at_401
    shown = Evaluation(M, {}, values)._repr_latex_()
    assert r"Q_1 &= " + latex(at_400) + r" \\ " in shown
    assert r"K_1 &\approx \begin{bmatrix}" + " & ".join(["3.3333"] * 24 + ["33.3333"]) + r"\end{bmatrix} \\ " in shown
    assert r"S_1 &= \begin{bmatrix}\frac{1}{7}\end{bmatrix} \\ " in shown


def test_repr_names_model_and_steps():
    E = MultiHeadAttention(n=2, d_model=4, h=2, d_v=3).evaluate(X=[[1, 0, 2, 1], [0, 3, 1, 1]])
    assert repr(E) == ("Evaluation(MultiHeadAttention(n=2, d_model=4, h=2, d_k=2, d_v=3, convention='projection'), "
                       "steps=['Q_1', 'K_1', 'V_1', 'S_1', \"S'_1\", 'A_1', 'head_1', "
                       "'Q_2', 'K_2', 'V_2', 'S_2', \"S'_2\", 'A_2', 'head_2', 'Concat', 'Output'])")


def test_numeric_rounds_the_exact_value_correctly():
    # Output[0, 0] = -9 + 17 e^{-14 sqrt 2} / (1 + ...): about -9 + 9e-16, so 15 digits would give -9.0
    M = MultiHeadAttention(n=2, d_model=2, h=1)
    W = [[[-1, 2], [1, 0]]]
    E = M.evaluate(X=[[-2, 1], [2, -2]], W_Q=W, W_K=W, W_V=W, W_O=[[1, 0], [3, 2]])
    assert float(E["Output"][0, 0].evalf(60)) == -8.999999999999998
    assert E.numeric().tolist() == [[-8.999999999999998, -7.999999999999999], [8.0, 8.0]]
    assert E.numeric("A_1")[0, 1] == float(E["A_1"][0, 1].evalf(60))


def test_numeric_of_a_symbolic_step_names_three_symbols():
    E = MultiHeadAttention(n=2, d_model=3, h=1).evaluate(X=_X)  # weights left symbolic
    with pytest.raises(InputError) as e:
        E.numeric()
    assert str(e.value) == ("step Output has symbolic entries ['W_K^1', 'W_O', 'W_Q^1']...; "
                            "give numbers for every input to get floats")


# ----- evaluate(): sizes read off the inputs, the size estimate, the refusals ----------------------
_X4 = [[1, 0, 2, 1], [0, 3, 1, 1]]
_WQ4 = [[[1, 0], [0, 1], [1, 1], [0, 2]], [[0, 1], [1, 0], [2, 0], [1, 1]]]
_WK4 = [[[0, 1], [1, 1], [0, 0], [1, 0]], [[1, 1], [0, 1], [1, 0], [0, 0]]]
_WO4 = [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 2, 0], [0, 0, 0, 3]]
_WV4 = [[[1, 0, 1], [0, 2, 0], [1, 1, 0], [0, 0, 1]], [[0, 1, 1], [1, 0, 0], [2, 0, 1], [1, 1, 0]]]


def test_free_head_widths_are_read_off_the_weights():
    M = MultiHeadAttention(n=None, d_model=None, h=None, d_k="d_k", d_v="d_v")  # d_k, d_v not tied to d_model / h
    E = M.evaluate(X=_X4, W_Q=_WQ4, W_K=_WK4, W_V=_WV4)
    assert str(E.model) == "MultiHeadAttention(n=2, d_model=4, h=2, d_k=2, d_v=3, convention='projection')"
    assert E["head_2"].shape == (2, 3) and E["S_1"] == ImmutableMatrix([[7, 24], [7, 22]])
    # d_k from W_K when W_Q is not given, and from a later head when the first is unknown
    E2 = M.evaluate(X=_X4, W_K=[None, _WK4[1]], W_V=_WV4)
    assert str(E2.model) == "MultiHeadAttention(n=2, d_model=4, h=2, d_k=2, d_v=3, convention='projection')"
    assert E2["K_2"] == ImmutableMatrix([[3, 1], [1, 3]])


def test_tied_widths_follow_d_model_and_h():
    E = MultiHeadAttention().evaluate(X=_X4, W_Q=_WQ4, W_K=_WK4, W_V=_WQ4)
    assert str(E.model) == "MultiHeadAttention(n=2, d_model=4, h=2, d_k=2, d_v=2, convention='projection')"


def test_size_estimate_counts_symbolic_entries():
    full = {"X": [[1] * 8] * 4, "W_Q": [[[1] * 4] * 8] * 2, "W_K": [[[1] * 4] * 8] * 2, "W_V": [[[1] * 4] * 8] * 2,
            "W_O": [[1] * 8] * 8}
    M = MultiHeadAttention(n=4, d_model=8, h=2)
    msg = ("exact evaluation of n=4, d_model=8, h=2 would build about {:,} terms (limit 10); use numeric evaluation "
           "instead, or pass max_terms={} to insist")
    for inputs, terms in [(full, 4608), ({**full, "W_O": None}, 147456), ({**full, "X": None}, 147456),
                          ({**full, "W_K": [full["W_K"][0], None]}, 147456)]:
        with pytest.raises(SizeLimitError) as e:
            M.evaluate(**inputs, max_terms=10)
        assert str(e.value) == msg.format(terms, terms)
    assert M.evaluate(**full, max_terms=4608).output.shape == (4, 8)


def test_size_estimate_of_a_bias_model_counts_missing_biases():
    M = MultiHeadAttention(n=2, d_model=4, h=2, bias=True)
    given = {"X": _X4, "W_Q": _WQ4, "W_K": _WK4, "W_V": _WQ4, "W_O": _WO4}
    biases = {"b_Q": [[1, 0], [0, 1]], "b_K": [[0, 2], [1, 1]], "b_V": [[1, 1], [2, 0]], "b_O": [1, 0, 2, 0]}
    E = M.evaluate(**given, **biases, max_terms=160)  # 2^3 * 2 * 2 * 5 = 160 with every bias
    assert not E.output.free_symbols
    with pytest.raises(SizeLimitError, match="about 1,280 terms"):
        M.evaluate(**given, **{**biases, "b_O": None}, max_terms=160)


@pytest.mark.parametrize("call, error, message", [
    (lambda: MultiHeadAttention(n=2, d_model=4, h=2).evaluate(X=_X4, b_Q=[[1, 2], [3, 4]], b_O=[1, 2, 3, 4]),
     InputError,
     "b_Q, b_O given, but the model has no biases; build it with MultiHeadAttention(..., bias=True)"),
    (lambda: MultiHeadAttention(n=None, d_model=4, h=2).evaluate(W_O=[[1, 0, 0, 0]] * 4), DimensionError,
     "cannot evaluate with symbolic dimensions ['n']: build the model with concrete sizes or pass X and the "
     "per-head weights"),
    (lambda: MultiHeadAttention(n=2, d_model=4, h=2).evaluate(X=[[1, 2, 3], [4, 5, 6]]), ShapeError,
     "X has shape (2, 3); the model expects (n, d_model) = (2, 4)"),
    (lambda: MultiHeadAttention(n=1, d_model=2, h=1).evaluate(X=[[1, 2]], given_steps={"Z": [[1]], "head_1": [[1, 2]]}),
     InputError, "given_steps names no step of the model: ['Z']; steps are ['Q_1', 'K_1', 'V_1', 'S_1', \"S'_1\", "
     "'A_1', 'head_1', 'Concat', 'Output']"),
])
def test_evaluate_refusals(call, error, message):
    with pytest.raises(error) as e:
        call()
    assert type(e.value) is error and str(e.value) == message


def test_given_steps_replace_computed_values():
    M = MultiHeadAttention(n=2, d_model=4, h=2)
    E = M.evaluate(X=_X4, W_Q=_WQ4, W_K=_WK4, W_V=_WQ4, W_O=_WO4, given_steps={"head_2": [[1, 2], [3, 4]]})
    assert E["Concat"][:, 2:] == ImmutableMatrix([[1, 2], [3, 4]])
    assert E["Output"][:, 2:] == ImmutableMatrix([[2, 6], [6, 12]])


def test_evaluation_keeps_the_inputs_used():
    E = MultiHeadAttention(n=2, d_model=4, h=2).evaluate(X=_X4, W_Q=_WQ4, W_K=_WK4, W_V=_WQ4, W_O=_WO4)
    assert E.inputs["X"] == ImmutableMatrix(_X4)
    assert [m.tolist() for m in E.inputs["W_K"]] == _WK4 and E.inputs["W_O"] == ImmutableMatrix(_WO4)


def test_estimate_terms_counts_numeric_entries_by_default():
    from mha_symbolic.dims import Dims
    from mha_symbolic.evaluation import estimate_terms

    assert estimate_terms(Dims(3, 4, 2)) == 3**3 * 2 * 2 * 5
    assert estimate_terms(Dims(3, 4, 2), symbolic_entries=True) == 3**3 * 2 * 2 * 5 * 4 * 2


def test_integer_h_is_not_read_off_the_weights():
    # h = 2 in the model: a list of two heads is used as is; no second h is inferred
    E = MultiHeadAttention(n=None, d_model=4, h=2).evaluate(X=_X4, W_Q=_WQ4, W_K=_WK4, W_V=_WQ4, W_O=_WO4)
    assert str(E.model) == "MultiHeadAttention(n=2, d_model=4, h=2, d_k=2, d_v=2, convention='projection')"
    # h symbolic and no per-head weights: h cannot be read off anything
    with pytest.raises(DimensionError) as e:
        MultiHeadAttention(n=None, d_model=4, h=None).evaluate(X=_X4, W_O=_WO4)
    assert str(e.value) == ("cannot evaluate with symbolic dimensions ['h', 'd_k', 'd_v']: build the model with "
                            "concrete sizes or pass X and the per-head weights")


# ----- _explicit names the step and the block in every nested error (survivors of the second run) ---------
def _explicit_cases():
    from sympy import ImmutableMatrix, MatAdd, MatMul, MatrixSymbol, Transpose

    from mha_symbolic.concat import Concat
    from mha_symbolic.scaling import ScaledScores
    from mha_symbolic.softmax import Softmax

    A, B, C, D = (MatrixSymbol(n, r, 2) for n, r in (("A", 2), ("B", 2), ("C", 2), ("D", 3)))
    values = {A: ImmutableMatrix([[1, 2, 3], [4, 5, 6]]), B: ImmutableMatrix([[1, 0], [0, 1]]),
              C: ImmutableMatrix([[1, 0], [0, 1], [1, 1]]), D: ImmutableMatrix([[1, 0], [0, 1]])}
    bad = MatMul(A, B)  # the value of A is 2 x 3: the product cannot be formed
    inner = "step S_7: (2, 3) x (2, 2) — inner dimensions 3 and 2 differ"
    return values, [(Transpose(bad), inner), (ScaledScores(bad, 4), inner), (Softmax(bad), inner),
                    (Concat(bad, B), inner), (MatAdd(bad, B), inner), (bad[0:1, 0:1], inner),
                    (Concat(B, C), "step S_7: block 1 has shape (2, 2) but block 2 has (3, 2) — row counts differ"),
                    (Concat(B, B, C), "step S_7: block 1 has shape (2, 2) but block 3 has (3, 2) — row counts differ"),
                    (MatAdd(B, C), "step S_7: cannot add (2, 2) and (3, 2)"),
                    (D[0:3, 0:1], "step S_7: slice rows 0:3, columns 0:1 of a (2, 2) matrix")]


def test_explicit_errors_name_the_step_through_every_wrapper():
    from mha_symbolic.errors import ShapeError
    from mha_symbolic.evaluation import _explicit

    values, cases = _explicit_cases()
    for expr, message in cases:
        with pytest.raises(ShapeError) as e:
            _explicit(expr, values, "S_7")
        assert str(e.value) == message, expr
