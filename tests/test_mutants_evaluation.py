"""Tests written against surviving mutants of mha_symbolic/evaluation.py (issue 11).

``Evaluation._repr_latex_`` shows a step exactly when its LaTeX has at most 400 characters or it has
symbolic entries, else to four decimals; ``repr`` names the model and the steps.
"""

from __future__ import annotations

import pytest
from sympy import ImmutableMatrix, Rational

from mha_symbolic import InputError, MultiHeadAttention
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
    return MultiHeadAttention(2, 3, 1).evaluate(X=_X, W_Q=_WQ, W_K=_WK, W_V=_WV, **weights)


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
        r"\mathrm{head}_1 &= \begin{bmatrix}3.0786 & 1.3595 & 2.0000 \\ 3.9214 & 1.6405 & 2.0000\end{bmatrix} \\ "
        r"\mathrm{Concat} &= \begin{bmatrix}3.0786 & 1.3595 & 2.0000 \\ 3.9214 & 1.6405 & 2.0000\end{bmatrix} \\ "
        r"\mathrm{Output} &= \begin{bmatrix}5.0786 & 2.7191 & 2.0000 \\ 5.9214 & 3.2809 & 2.0000\end{bmatrix}"
        r"\end{aligned}$")


def test_repr_latex_keeps_symbolic_steps_exact_however_long():
    E = _evaluation()  # W_O left symbolic: Output has 3648 characters of exact LaTeX, all shown
    out = latex(E["Output"])
    assert len(out) == 3648 and E["Output"].free_symbols
    assert E._repr_latex_().endswith(r"\mathrm{Output} &= " + out + r"\end{aligned}$")


def test_repr_latex_threshold_is_400_characters_inclusive():
    M = MultiHeadAttention(1, 25, 1)
    at_400 = ImmutableMatrix([[Rational(10, 3)] * 25])
    at_401 = ImmutableMatrix([[Rational(10, 3)] * 24 + [Rational(100, 3)]])
    assert (len(latex(at_400)), len(latex(at_401))) == (400, 401)
    values = {name: ImmutableMatrix([[Rational(1, 7)]]) for name in M.steps}
    values["Q_1"], values["K_1"] = at_400, at_401
    shown = Evaluation(M, {}, values)._repr_latex_()
    assert r"Q_1 &= " + latex(at_400) + r" \\ " in shown
    assert r"K_1 &= \begin{bmatrix}" + " & ".join(["3.3333"] * 24 + ["33.3333"]) + r"\end{bmatrix} \\ " in shown
    assert r"S_1 &= \begin{bmatrix}\frac{1}{7}\end{bmatrix} \\ " in shown


def test_repr_names_model_and_steps():
    E = MultiHeadAttention(2, 4, 2, d_v=3).evaluate(X=[[1, 0, 2, 1], [0, 3, 1, 1]])
    assert repr(E) == ("Evaluation(MultiHeadAttention(n=2, d_model=4, h=2, d_k=2, d_v=3, convention='projection'), "
                       "steps=['Q_1', 'K_1', 'V_1', 'S_1', \"S'_1\", 'A_1', 'head_1', "
                       "'Q_2', 'K_2', 'V_2', 'S_2', \"S'_2\", 'A_2', 'head_2', 'Concat', 'Output'])")


def test_numeric_rounds_the_exact_value_correctly():
    # Output[0, 0] = -9 + 17 e^{-14 sqrt 2} / (1 + ...): about -9 + 9e-16, so 15 digits would give -9.0
    M = MultiHeadAttention(2, 2, 1)
    W = [[[-1, 2], [1, 0]]]
    E = M.evaluate(X=[[-2, 1], [2, -2]], W_Q=W, W_K=W, W_V=W, W_O=[[1, 0], [3, 2]])
    assert float(E["Output"][0, 0].evalf(60)) == -8.999999999999998
    assert E.numeric().tolist() == [[-8.999999999999998, -7.999999999999999], [8.0, 8.0]]
    assert E.numeric("A_1")[0, 1] == float(E["A_1"][0, 1].evalf(60))


def test_numeric_of_a_symbolic_step_names_three_symbols():
    E = MultiHeadAttention(2, 3, 1).evaluate(X=_X)  # weights left symbolic
    with pytest.raises(InputError) as e:
        E.numeric()
    assert str(e.value) == ("step Output has symbolic entries ['W_K^1', 'W_O', 'W_Q^1']...; "
                            "give numbers for every input to get floats")
