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


def test_commands_with_continuations_and_outputs():
    from mha_symbolic.check.sessions import commands, is_session

    source = ("intro\n>>> x = (1,\n...      2)\n>>> x\n(1, 2)\n>>> y = 3\n>>> [y,\n... y]\n[3,\n 3]\n\nafter\n")
    assert commands(source) == [
        (1, "x = (1,\n     2)", None, None),
        (3, "x", "(1, 2)", 4),
        (5, "y = 3", None, None),
        (6, "[y,\ny]", "[3,\n 3]", 8),
    ]
    assert commands(">>> >>> x\n1\n") == [(0, ">>> x", "1", 1)]  # one prompt taken, the rest is the code's
    assert is_session("\n\n>>> x") and not is_session("x\n>>> y") and not is_session("")


def test_sessions_in_the_text_not_in_code_blocks():
    from mha_symbolic.check.sessions import sessions

    src = ("Text.\n>>> a = 1\n>>> a\n1\n\n```\n>>> b\n```\n\n    >>> c\n\n>>> d\n2\n")
    assert sessions(src) == [(1, 4), (11, 13)]


def test_a_session_at_the_very_start_or_end_of_the_text():
    from mha_symbolic.check.sessions import commands, sessions

    assert sessions(">>> a\n1") == [(0, 2)]
    assert commands(">>> x = (1,\n... 2)") == [(0, "x = (1,\n2)", None, None)]
