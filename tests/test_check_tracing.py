"""Code traced through its statements (never run): shape comments, printed values and printouts judged."""

import json

import pytest

from mha_symbolic.check.pipeline import check_document
from mha_symbolic.check.tracing import Tracer, _agrees, _result_shapes

TORCH = "import torch\nimport torch.nn as nn\nB, n, d_model, h = 2, 10, 64, 4\nd_k = d_model // h\n"


def verdicts(code: str, printed: str | None = None) -> list[tuple[int, str]]:
    return [(f.line, f.status) for f in Tracer().run(code, printed)]


@pytest.mark.parametrize("line, expected", [
    ("x = torch.randn(B, n, d_model)  # (B, n, d_model) = (2, 10, 64)", "correct"),
    ("x = torch.randn(B, n, d_model)  # (2, 10, 32)", "wrong"),
    ("x = torch.randn(B, n, d_model).view(B, n, h, d_k)  # (2, 10, 4, 16)", "correct"),
    ("x = torch.randn(B, n, d_model).view(B, n, h, d_k).transpose(1, 2)  # (B, h, n, d_k)", "correct"),
    ("x = torch.randn(B, n, d_model).view(B, n, h, d_k).transpose(1, 2)  # (B, n, h, d_k)", "wrong"),
    ("x = torch.randn(B, n, d_model).view(B, n, h, -1)  # (2, 10, 4, 16)", "correct"),
    ("x = torch.randn(B, n, d_k) @ torch.randn(B, n, d_k).transpose(-2, -1)  # (B, n, n)", "correct"),
    ("x = torch.randn(B, n, d_k) @ torch.randn(B, n, d_k).transpose(-2, -1)  # (B, n, d_k)", "wrong"),
    ("x = torch.randn(B, h, n, d_k).transpose(1, 2).reshape(B, n, d_model)  # (2, 10, 16, 4) -> (2, 10, 64)",
     "correct"),
    ("x = torch.randn(B, h, n, d_k).transpose(1, 2).reshape(B, n, d_model)  # (2, 10, 4, 16) -> (2, 10, 16)",
     "wrong"),
    ("x = torch.cat([torch.randn(n, d_k)] * 1 + [torch.randn(n, d_k)], dim=-1)  # (10, 32)", None),
    ("x = torch.cat([torch.randn(n, d_k), torch.randn(n, d_k)], dim=-1)  # (10, 32)", "correct"),
    ("x = torch.stack([torch.randn(n, d_k), torch.randn(n, d_k)], dim=0)  # (2, 10, 16)", "correct"),
    ("x = torch.randn(B, 2, n, d_k).repeat_interleave(h // 2, dim=1)  # (B, h, n, d_k)", "correct"),
    ("x = torch.randn(B, n, d_model).sum(dim=-1, keepdim=True)  # (2, 10, 1)", "correct"),
    ("x = torch.randn(B, n, d_model)[:, 0]  # (2, 64)", "correct"),
    ("x = torch.randn(B, n, d_model)[:, 0]  # (2, 10)", "wrong"),
    ('x = torch.einsum("bhqd,bhkd->bhqk", torch.randn(B, h, n, d_k), torch.randn(B, h, n, d_k))  # (2, 4, 10, 10)',
     "correct"),
    ('x = torch.einsum("bhqd,bhkd->bhqk", torch.randn(B, h, n, d_k), torch.randn(B, h, n, d_k))  # (2, 4, 10, 16)',
     "wrong"),
    ('x = torch.einsum("ij,jk", torch.randn(n, d_k), torch.randn(d_k, 3))  # (10, 3)', "correct"),  # implicit output
    ('x = torch.einsum("...d,...d->...", torch.randn(n, d_k), torch.randn(n, d_k))  # (10,)', None),  # not read
    ('x = rearrange(torch.randn(B, n, d_model), "b n (h d) -> b h n d", h=h)  # (2, 4, 10, 16)', "correct"),
    ('x = rearrange(torch.randn(B, n, d_model), "b n (h d) -> b h n d", h=h)  # (2, 10, 4, 16)', "wrong"),
    ('x = rearrange(torch.randn(B, h, n, d_k), "b h n d -> b n (h d)")  # (B, n, d_model)', "correct"),
    ('x = rearrange(torch.randn(B, n, d_model), "b n (h d) -> b h n d", h=3)  # (2, 3, 10, 21)', None),  # 64 / 3
    ("x = mystery(B, n)  # (2, 10)", None),  # an operation outside the list: nothing is said
    ("x = torch.randn(B, n, d_model)  # (GiB, GQA)", None),  # words in parentheses are not a shape
    ("x = torch.randn(B, n, e)  # (B, n, d_model)", None),  # e is never given: undecided, not wrong
])
def test_shape_comments(line: str, expected: str | None) -> None:
    got = verdicts(TORCH + line)
    assert got == ([] if expected is None else [(5, expected)])


def test_index_notation_traces_values_too() -> None:
    code = ("import numpy as np\nfrom einops import rearrange\nq = np.array([[1.0, 0.0], [0.0, 2.0]])\n"
            "k = np.array([[1.0, 1.0], [3.0, 0.0]])\ns = np.einsum('id,jd->ij', q, k)\nprint(s)\n"
            "r = rearrange(np.array([[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]]), 'b (h d) -> b h d', h=2)\nprint(r[0, 1])\n")
    # the printout's lines: the two rows of s, then the second head of r
    assert verdicts(code, "[[1. 3.]\n [2. 0.]]\n[3. 4. 5.]\n") == [(1, "correct"), (2, "correct"), (3, "correct")]
    assert verdicts(code, "[[1. 3.]\n [2. 1.]]\n[3. 4. 6.]\n") == [(1, "correct"), (2, "wrong"), (3, "wrong")]


def test_layers_and_their_weights() -> None:
    code = TORCH + ("W_q = nn.Linear(d_model, h * d_k, bias=False)  # weight: (64, 64)\n"
                    "W_k = nn.Linear(d_model, 2 * d_k)  # weight (32, 64)\n"
                    "W_v = nn.Linear(d_model, 2 * d_k)  # weight (64, 32)\n"
                    "k = W_k(torch.randn(B, n, d_model))  # (2, 10, 32)\n"
                    "bad = W_k(torch.randn(B, d_model, n))\n")
    assert verdicts(code) == [(5, "correct"), (6, "correct"), (7, "wrong"), (8, "correct"), (9, "wrong")]
    message = [f.message for f in Tracer().run(code)][-1]
    assert "Linear(64, 32) applied to a tensor of shape (2, 64, 10)" in message


def test_statements_that_cannot_run() -> None:
    code = TORCH + "x = torch.randn(B, n, d_model)\ny = x.view(B, n, h, 15)\nz = x @ torch.randn(32, 8)\n"
    got = Tracer().run(code)
    assert [(f.line, f.status) for f in got] == [(6, "wrong"), (7, "wrong")]
    assert "1280 elements" in got[0].message and "inner sizes 64 and 32 differ" in got[1].message


def test_a_shape_taken_from_a_comment_is_a_claim() -> None:
    code = ("import torch\ndef f(x):  # x: (B, n, d)\n    y = x.transpose(1, 2)  # (B, d, n)\n"
            "    z = x.transpose(1, 2)  # (B, n, d)\n    return y\n")
    got = Tracer().run(code)
    assert [(f.line, f.status) for f in got] == [(3, "correct")]  # n and d may be equal: (B, n, d) is undecided
    code = "import torch\ndef f(x):  # x: (2, 3, 4)\n    y = x.transpose(1, 2)  # (2, 3, 4)\n    return y\n"
    got = Tracer().run(code)
    assert [(f.line, f.status) for f in got] == [(3, "inconsistent")]
    assert "traced from a shape another comment gives" in got[0].message


def test_values_printed_in_comments() -> None:
    code = ("import torch\nq = torch.tensor([[1., 0., 2.]])\nk = torch.tensor([[1., 0., 0.], [0., 1., 1.], "
            "[2., 0., 1.]])\n"
            "q @ k.T  # tensor([[1., 2., 4.]])\n"
            "torch.softmax(q @ k.T / 2, dim=-1)  # tensor([[0.1402, 0.2312, 0.6285]])\n"
            "torch.softmax(q @ k.T / 2, dim=-1)  # tensor([[0.1402, 0.2321, 0.6285]])\n"
            "torch.softmax(q @ k.T, dim=-1)  # tensor([[0.1402, 0.2312, 0.6285]])\n")  # all differ: not judged
    assert verdicts(code) == [(4, "correct"), (5, "correct"), (6, "wrong")]


NUMPY = ("import numpy as np\nnp.set_printoptions(precision=4, suppress=True)\n"
         "S = np.array([[0., 2., 1.], [1., 1., 1.]])\n"
         "def softmax(z, axis=-1):\n    z = z - z.max(axis=axis, keepdims=True)\n    e = np.exp(z)\n"
         "    return e / e.sum(axis=axis, keepdims=True)\n"
         "A = softmax(S)\nprint('A =')\nprint(A)\nprint(A.shape, A.sum(axis=1))\nA.T @ S\n")


def test_printed_output_of_a_cell() -> None:
    printed = ("A =\n[[0.09   0.6652 0.2447]\n [0.3333 0.3333 0.3333]]\n(2, 3) [1. 1.]\n"
               "array([[0.3333, 0.5134, 0.4234],\n       [0.3333, 1.6638, 0.9986],\n"
               "       [0.3333, 0.8228, 0.5781]])\n")
    assert verdicts(NUMPY, printed) == [(2, "correct"), (3, "correct"), (4, "correct"), (5, "correct"),
                                        (6, "correct"), (7, "correct")]
    edited = printed.replace("[0.3333 0.3333 0.3333]", "[0.3333 0.3433 0.3333]")
    assert verdicts(NUMPY, edited)[:3] == [(2, "correct"), (3, "wrong"), (4, "correct")]


def test_a_printout_that_differs_everywhere_is_not_judged() -> None:
    """The code was changed after it ran (or the output was): which one cannot be told, so no verdict."""
    code = "import numpy as np\nS = np.array([[0., 2.], [1., 3.]])\nprint(S * 2)\nprint(S)\n"
    got = Tracer().run(code, "[[0. 2.]\n [1. 3.]]\n[[0. 2.]\n [1. 3.]]\n")
    assert [(f.line, f.status, f.output) for f in got] == [(1, "unchecked", True)]


def test_a_printout_that_is_not_followed_stops_the_comparison() -> None:
    code = "import numpy as np\nS = np.array([[0., 2.], [1., 1.]])\nprint(np.linalg.svd(S))\nprint(S)\n"
    assert verdicts(code, "something else\n[[0. 3.]\n [1. 1.]]\n") == [(2, "wrong"), (3, "correct")]  # from the end
    code = "import numpy as np\nS = np.array([[0., 2.]])\nprint(S)\nprint(np.linalg.svd(S))\nprint(S)\n"
    assert verdicts(code, "Svd\n[[0. 2.]]\n") == []  # words that differ: the lines are not where we think


def test_printed_numbers_stand_for_what_rounds_to_them() -> None:
    assert _agrees("0.0900", 0.09004) and not _agrees("0.0900", 0.0901)
    assert _agrees("1.2e-03", 0.00124) and not _agrees("1.2e-03", 0.00126)
    assert _agrees("0.6652", 0.66524) and not _agrees("0.6652", 0.6653)
    assert _agrees("-inf", float("-inf")) and not _agrees("inf", 1e308)


def test_which_shapes_a_comment_gives() -> None:
    assert _result_shapes("(B, n, h, d_k) = (2, 10, 16, 128)") == [["B", "n", "h", "d_k"], ["2", "10", "16", "128"]]
    assert _result_shapes("(2, 10, 16, 128) -> (2, 10, h * d_k)") == [["2", "10", "h * d_k"]]
    assert _result_shapes("x: (B, n, d)") == [] and _result_shapes("weight (4, 4)") == []
    assert _result_shapes("normalise over keys (last axis)") == []
    assert _result_shapes("(4, 2) @ (2, 4) = (4, 4): 16 scores") == [["4", "4"]]  # operands, then the result


def test_in_a_document_the_listing_after_the_code_is_its_output() -> None:
    doc = ("# Example\n\n```python\nimport numpy as np\nX = np.array([[1, 2], [3, 4]])\nprint(X @ X)\n"
           "print(X.shape)  \n```\n\nOutput:\n\n```text\n[[ 7 10]\n [15 23]]\n(2, 2)\n```\n")
    got = [(f.line, f.status) for f in check_document(doc, "doc.md").findings if f.basis == "traced"]
    assert got == [(13, "correct"), (14, "wrong"), (15, "correct")]


def test_in_a_notebook_the_cells_share_their_names() -> None:
    cells = [{"cell_type": "code", "metadata": {}, "execution_count": 1, "source": "import numpy as np\nd_k = 4\n"
              "X = np.ones((3, d_k))", "outputs": []},
             {"cell_type": "code", "metadata": {}, "execution_count": 2, "source": "print(X.sum())\nX.shape",
              "outputs": [{"output_type": "stream", "name": "stdout", "text": "13.0\n"},
                          {"output_type": "execute_result", "execution_count": 2, "metadata": {},
                           "data": {"text/plain": "(3, 4)"}}]}]
    nb = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    got = [(f.cell, f.line, f.output, f.status) for f in check_document(nb, "nb.ipynb").findings
           if f.basis == "traced"]
    assert got == [(1, 1, True, "wrong"), (1, 2, True, "correct")]


def test_arithmetic_in_comments() -> None:
    code = ("B, h, n, d_k = 2, 12, 10, 64\n"
            "# QK^T: 2 * B * h * n * n * d_k = 2 * 2 * 12 * 10 * 10 * 64 = 307,200 FLOPs\n"
            "# QK^T: 2 * B * h * n * n * d_k = 2 * 2 * 12 * 10 * 10 * 64 = 153,600 FLOPs\n"
            "x = 1  # 2048 // 16 = 128\n"
            "# 2 * 8 * 128 * 2 bytes = 4096 bytes = 4 KiB\n"
            "# 2 * 8 * 128 * 2 bytes = 4096 bytes = 2 KiB\n"
            "# 2 * 12 * 1024**2 * 64 = 1,610,612,736 FLOPs  (~1.61 GFLOPs)\n"
            "# the weight 2 / 3 = 0.6667 (written to four places)\n"
            "# x = x + 1, d_k = 64, (B, n, d) = (2, 10, 64)\n"
            "# per head: B * h * m * m = 4800 (m is never given)\n")
    assert verdicts(code) == [(2, "correct"), (3, "wrong"), (4, "correct"), (5, "correct"), (6, "wrong"),
                              (7, "correct"), (8, "correct")]
    messages = [f.message for f in Tracer().run(code) if f.status == "wrong"]
    assert messages == ["2 * 2 * 12 * 10 * 10 * 64 = 307200, not 153600 FLOPs", "4096 bytes = 4096, not 2 KiB"]


def test_the_comment_on_a_print_says_what_it_shows() -> None:
    code = ("import torch\nimport torch.nn as nn\nfused = nn.Linear(768, 3 * 768)\n"
            "print(fused.weight.shape)  # torch.Size([2304, 768])\n"
            "print(fused.weight.shape)  # torch.Size([768, 2304])\n")
    assert verdicts(code) == [(4, "correct"), (5, "wrong")]


def test_a_line_that_agrees_locates_the_edit_even_when_it_is_zeros() -> None:
    code = "import numpy as np\nS = np.array([[0., 0.], [1., 3.]])\nprint(S)\n"
    assert verdicts(code, "[[0. 0.]\n [2. 5.]]\n") == [(1, "correct"), (2, "wrong")]


def test_the_softmax_is_traced_stably() -> None:
    code = "import numpy as np\nz = np.array([1000., 1001.])\ne = np.exp(z - z.max())\nprint(e / e.sum())\n"
    assert verdicts(code, "[0.26894142 0.73105858]\n") == [(1, "correct")]
    code = "import torch\nz = torch.tensor([[1000., 1001.]])\ntorch.softmax(z, dim=-1)  # tensor([[0.2689, 0.7311]])\n"
    assert verdicts(code) == [(3, "correct")]


def test_code_written_in_a_comment_is_no_claim() -> None:
    assert verdicts("x = 1\n# x = x + 1\n") == []


def test_a_huge_power_is_not_worked_out() -> None:
    tracer = Tracer()
    assert tracer.run("n = 10\ny = n ** 99999999\nz = 2 ** 10 ** 9\n") == []
    assert "y" not in tracer.env and "z" not in tracer.env  # unknown, in no time (the work is bounded, not timed)
    assert verdicts("n = 2\nm = n ** 10  # 2 ** 10 = 1024\n") == [(2, "correct")]


def test_np_hstack_of_an_array_and_of_vectors() -> None:
    """``np.hstack(A)`` of a (2, 4, 4) array puts its two blocks side by side (it was unknown: its argument is no
    list), ``np.hstack`` of two matrices joins columns, of two vectors joins them (its default axis was an int the
    tracer could not read)."""
    code = ("import numpy as np\nA = np.array([[[1, 2], [3, 4]], [[5, 6], [7, 8]]])\n"
            "print(np.hstack(A))\nprint(np.hstack([A[0], A[1]]).shape)\nprint(np.hstack([A[0, 0], A[1, 1]]))\n")
    assert verdicts(code, "[[1 2 5 6]\n [3 4 7 8]]\n(2, 4)\n[1 2 7 8]\n") == [(1, "correct"), (2, "correct"),
                                                                              (3, "correct"), (4, "correct")]
    assert (2, "wrong") in verdicts(code, "[[1 2 5 6]\n [3 4 7 9]]\n(2, 4)\n[1 2 7 8]\n")


def test_a_numbered_name_of_the_whole_layer_is_some_heads() -> None:
    """``out2 = weights2 @ V2`` is head 2's output, not the layer's (``out`` is); it was judged as MultiHead's."""
    from mha_symbolic.check.code import _code_key

    assert _code_key("out", False) is not None and _code_key("out2", False) is None
    assert _code_key("weights2", False) == "A_2"
