"""Python sessions in a document (``>>>`` commands and what they printed), in a code block or straight in the
text: each command is traced like a notebook cell and its printed value judged at the precision printed."""

from __future__ import annotations

import pytest

from mha_symbolic import check_text

SESSION = (">>> import numpy as np\n"
           ">>> Q = np.array([[1., 0.], [0., 1.], [1., 1.]])\n"
           ">>> Q @ Q.T / np.sqrt(2)\n"
           "array([[0.7071, 0.    , 0.7071],\n"
           "       [0.    , 0.7071, 0.7071],\n"
           "       [0.7071, 0.7071, {last}]])\n")


def verdicts(text: str, line: int) -> list[str]:
    return [f.status for f in check_text(text, isolate=False).findings if f.line == line]


@pytest.mark.parametrize("fenced", [False, True])
@pytest.mark.parametrize("last, status", [("1.4142", "correct"), ("1.4124", "wrong")])
def test_a_session_is_traced_command_by_command(fenced, last, status):
    body = SESSION.format(last=last)
    doc = "# Example\n\nOne head by hand:\n\n" + ("```python\n" + body + "```\n" if fenced else body)
    row = 11 if fenced else 10  # the line of the printed row [0.7071, 0.7071, ...]
    assert verdicts(doc, row) == [status]
    assert verdicts(doc, row - 2) == ["correct"]


def test_a_session_line_in_the_text_is_no_quote():
    from mha_symbolic.check.extract import extract

    doc = "# Example\n\n" + SESSION.format(last="1.4142") + "\nAfter it, $n = 3$.\n"
    kinds = [(p.kind, p.line) for p in extract(doc, programs=True)]
    assert ("program", 5) in kinds and ("math", 10) in kinds
    assert not any(k == "prose" and line < 9 for k, line in kinds)  # the prompts are no nested quotes
