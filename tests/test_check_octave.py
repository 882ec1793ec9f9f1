"""An Octave/MATLAB session traced: the grids it displays judged against its commands (never run)."""

from mha_symbolic import check_text
from mha_symbolic.check.octave import python, transcript
from mha_symbolic.check.tracing import Tracer

DOC = ("```matlab\nX = [1 0 1; 0 1 1];\nW = [1 0; 0 1; 1 1];\n```\n\n"
       "```\n>> Q = X*W\nQ =\n   2   1\n   1   2\n>> size(Q)\nans =\n   2   2\n"
       ">> A = exp(Q) ./ sum(exp(Q), 2)\nA =\n   0.7311   0.2689\n   0.2689   0.7311\n"
       ">> M = triu(-Inf(2), 1)\nM =\n     0  -Inf\n     0     0\n>> sum(A, 2)\nans =\n   1\n   1\n```\n")


def traced(text: str) -> list[tuple[int, str]]:
    return [(f.line, f.status) for f in check_text(text, isolate=False).findings if f.basis == "traced"]


def test_a_session_and_the_script_before_it() -> None:
    assert traced(DOC) == [(9, "correct"), (10, "correct"), (13, "correct"), (16, "correct"), (17, "correct"),
                           (20, "correct"), (21, "correct"), (24, "correct"), (25, "correct")]


def test_an_edited_display_is_wrong_where_it_differs() -> None:
    assert (17, "wrong") in traced(DOC.replace("0.2689   0.7311\n>> M", "0.2698   0.7311\n>> M"))
    assert (13, "wrong") in traced(DOC.replace("ans =\n   2   2", "ans =\n   2   3"))
    assert (21, "wrong") in traced(DOC.replace("     0     0\n>> sum", "     0  -Inf\n>> sum"))


def test_a_display_that_differs_everywhere_is_not_judged() -> None:
    got = traced(DOC.replace(">> Q = X*W\n", ">> Q = X*W + 1\n"))  # the command changed after it ran
    assert (9, "unchecked") in got and not any(s == "wrong" for _, s in got)


def test_commands_as_python() -> None:
    assert python("Ac = exp(Sm) ./ sum(exp(Sm), 2)") == "Ac = np.exp(Sm) / np.sum(np.exp(Sm), axis=1, keepdims=True)"
    assert python("S = Q*K' / sqrt(d_k)") == "S = Q @ K.T / np.sqrt(d_k)"
    assert python("m = max(S, [], 2)") == "m = np.max(S, axis=1, keepdims=True)"
    assert python("H = [Y Y2]") == "H = np.hstack([Y, Y2])"


def test_commands_outside_the_subset_are_left_alone() -> None:
    session = (">> X = [1 2; 3 4];\n>> Y = inv(X)\nY =\n  -2.0000   1.0000\n   1.5000  -0.5000\n"
               ">> det(X(1, :))\nans =\n  9\n")
    assert transcript(Tracer(), session) == []


def test_a_shape_displayed_the_other_way_round_is_wrong() -> None:
    shown = DOC.replace(">> size(Q)", ">> size(X)").replace("ans =\n   2   2", "ans =\n   3   2")  # X is 2 x 3
    assert (13, "wrong") in traced(shown)


SESSION = ("```\n>> X = [1 0; 0 2];  W = [1 1; 0 1];\n"
           ">> softmax_rows = @(S) exp(S - max(S,[],2)) ./ sum(exp(S - max(S,[],2)), 2);\n"
           ">> Q = X*W, K = X*W'     % two results displayed, one after the other\nQ =\n\n   1   1\n   0   2\n\n"
           "K =\n\n   1   0\n   2   2\n\n>> A = softmax_rows(Q)\nA =\n\n   0.5000   0.5000\n"
           "   0.1192   0.8808\n\n```\n")


def test_several_statements_on_a_line_and_a_function_of_the_sessions_own() -> None:
    """`Wq1 = [...];  Wk1 = [...];` on one line, `Q1 = X*Wq1, K1 = X*Wk1` displayed together and an anonymous
    `@(S)` softmax left every later display unread (blind set 13: a planted entry missed)."""
    assert traced(SESSION) == [(7, "correct"), (8, "correct"), (12, "correct"), (13, "correct"), (18, "correct"),
                               (19, "correct")]
    assert traced(SESSION.replace("   2   2\n", "   2   3\n")) == [
        (7, "correct"), (8, "correct"), (12, "correct"), (13, "wrong"), (18, "correct"), (19, "correct")]
    assert traced(SESSION.replace("0.1192", "0.1292"))[-2:] == [(18, "correct"), (19, "wrong")]


def test_statements_of_a_line_and_nested_reductions() -> None:
    from mha_symbolic.check.octave import statements

    assert statements("a = 1; b = 'x;y', c = max(S,[],2)  % d = 4") == [
        ("a = 1", False), ("b = 'x;y'", True), ("c = max(S,[],2)", True)]
    assert statements("K = X*W'; S = Q*K'") == [("K = X*W'", False), ("S = Q*K'", True)]
    assert python("E = exp(S - max(S,[],2)) ./ sum(exp(S - max(S,[],2)), 2)") == (
        "E = np.exp(S - np.max(S, axis=1, keepdims=True)) / "
        "np.sum(np.exp(S - np.max(S, axis=1, keepdims=True)), axis=1, keepdims=True)")
    assert python("M = max(A, B)") == "M = np.maximum(A, B)"
    assert python("f = @(S) S'") == "def f(S):\n    return S.T"


def test_a_rank_displayed_by_the_session_is_computed_exactly() -> None:
    """`rank(S1)` shown as `ans = 3` for a 3 x 3 product through 2 columns (blind set 13): exact, integers only."""
    session = ("```\n>> Q = [2 0; 0 2; 2 1];  K = [1 1; 0 1; 1 2];\n>> S = Q*K';\n>> rank(S)\nans = %s\n"
               ">> rank(S / 3)\nans = 2\n```\n")
    assert traced(session % 2) == [(5, "correct")]  # S / 3 is not of whole numbers: not judged
    assert traced(session % 3) == [(5, "wrong")]
    code = "```python\nimport numpy as np\nS = np.array([[1, 2], [2, 4]])\nprint(np.linalg.matrix_rank(S))\n```\n" \
           "```\n%s\n```\n"
    assert [s for _, s in traced(code % 1)] == ["correct"] and [s for _, s in traced(code % 2)] == ["wrong"]


def test_sizes_stated_in_a_commands_comment_are_judged() -> None:
    """`% size(C) is 6x2` after `C = [H1 H2]` (3 x 4) was never read (blind set 13)."""
    session = ("```\n>> X = [1 0 1 0; 0 2 0 1; 1 1 1 1];   %% size(X) is 3x4\n"
               ">> Y = X';   %% size(Y) is %s, Y' is 3x4\n```\n")
    assert traced(session % "4x3") == [(2, "correct"), (3, "correct"), (3, "correct")]
    assert traced(session % "3x4") == [(2, "correct"), (3, "wrong"), (3, "correct")]


def test_a_shape_in_the_comment_of_a_printed_number_is_not_the_numbers() -> None:
    """`print(np.linalg.matrix_rank(Q @ K.T))  # (4, 4) matrix, but rank <= 2`: the shape is of the argument."""
    code = ("```python\nimport numpy as np\nQ = np.array([[1, 0], [0, 1], [1, 1], [2, 1]])\n"
            "print(np.linalg.matrix_rank(Q @ Q.T))   # (4, 4) matrix, but rank <= 2\n```\n```\n2\n```\n")
    assert [s for _, s in traced(code)] == ["correct"]


def test_displays_that_cannot_be_shared_out_are_not_judged() -> None:
    """Two values shown by one line but three labels below it: which grid is whose is not guessed."""
    session = ("```\n>> X = [1 0; 0 2];  W = [1 1; 0 1];\n>> Q = X*W, K = X*W'\nQ =\n\n   1   1\n   0   2\n\n"
               "ans =\n\nK =\n\n   1   0\n   2   2\n\n```\n")
    assert traced(session) == []


def test_heads_sliced_by_columns_and_concatenated_side_by_side() -> None:
    """``Q(:,1:2)`` (1-based ranges) and ``[O1 O2]*W_O`` (blocks side by side): a two-head session is followed to its
    output. Before, indexing made every later name unknown, and ``np.hstack`` failed on its default axis."""
    session = (">> Q = [1 2 3 4; 0 1 0 1];\n>> Q1 = Q(:,1:2); Q2 = Q(:,3:4);\n>> r = Q(2,:)\nr =\n   0   1   0   1\n"
               ">> Y = [Q2 Q1]*[1 0 0 0; 0 1 0 0; 0 0 1 0; 0 0 0 2]\nY =\n   3   4   1   4\n   0   1   0   2\n")
    assert [(f.line, f.status) for f in transcript(Tracer(), session)] == [(5, "correct"), (8, "correct"),
                                                                         (9, "correct")]
    edited = session.replace("3   4   1   4", "3   4   1   2")
    assert [(f.line, f.status) for f in transcript(Tracer(), edited)][1] == (8, "wrong")


def test_shapes_said_in_prose_of_the_code_that_follows() -> None:
    """"`Q1` and `K1` are 3×2, so `K1'` is 2×3" before the block that defines them: judged once that code is traced
    (Octave here; Python names the same way), ``'`` transposing."""
    doc = ("`Q1` and `K1` are 3×2, so `K1'` is 2×3.\n\n```\n>> Q = [1 2 3 4; 0 1 0 1; 1 1 1 1];\n"
           ">> Q1 = Q(:,1:2); K1 = Q(:,3:4);\n```\n")
    got = [(f.line, f.status) for f in check_text(doc, isolate=False).findings if f.kind == "shape"]
    assert got == [(1, "correct"), (1, "correct")]
    wrong = [(f.line, f.status) for f in check_text(doc.replace("is 2×3", "is 3×2"), isolate=False).findings
             if f.kind == "shape"]
    assert wrong == [(1, "correct"), (1, "wrong")]
    unknown = doc.replace("`Q1` and `K1`", "`Q7` and `K1`")  # a name the code never defines: nothing said
    assert [f for f in check_text(unknown, isolate=False).findings if f.kind == "shape"][1:] == []


def test_the_shape_said_of_a_stack_of_matrices_is_each_matrix() -> None:
    """"`A` is `4 x 4` for each head" of a (2, 4, 4) array (shape in backticks too)."""
    doc = ("```python\nimport numpy as np\nA = np.zeros((2, 4, 4))\n```\n\n"
           "So `A` is `4 x 4` for each head.\n")
    assert [(f.line, f.status) for f in check_text(doc, isolate=False).findings if f.kind == "shape"] == \
        [(6, "correct")]
    wrong = doc.replace("`4 x 4`", "`4 x 2`")
    assert [(f.line, f.status) for f in check_text(wrong, isolate=False).findings if f.kind == "shape"] == \
        [(6, "wrong")]
