r"""Python sessions written into a document: ``>>>`` commands, ``...`` continuations and what each printed.

A README or a docstring-style tutorial shows its examples as an interactive session -- ``>>>`` before each
command, ``...`` before its continuation lines, and what the command printed below it -- in a code block or straight
in the text (where Markdown would read the prompts as nested quotes).
:func:`commands` cuts such a session into its commands, each with the lines it printed, so that each is traced
like a notebook cell (:mod:`.tracing`: never run; its printed value compared at the precision printed).

>>> [(line, code, printed, at) for line, code, printed, at in commands(">>> x = 1\n>>> x + 1\n2\n")]
[(0, 'x = 1', None, None), (1, 'x + 1', '2', 2)]
>>> is_session("x = 1\nprint(x)"), is_session(">>> x = 1")
(False, True)
"""

from __future__ import annotations

import re

__all__ = ["commands", "is_session", "sessions"]

_PROMPT = re.compile(r"^\s*>>>(?: |$)")
_MORE = re.compile(r"^\s*\.\.\.(?: |$)")


def is_session(source: str) -> bool:
    """Does ``source`` open with a ``>>>`` prompt (after blank lines)?"""
    first = next((x for x in source.split("\n") if x.strip()), "")
    return bool(_PROMPT.match(first))


def commands(source: str) -> list[tuple[int, str, str | None, int | None]]:
    """``(line, code, printed, printed_line)`` per command of a session (0-based lines in ``source``): the code
    without its prompts, and the lines printed after it up to the next prompt or blank line (None if nothing)."""
    lines = source.split("\n")
    out: list[tuple[int, str, str | None, int | None]] = []
    k = 0
    while k < len(lines):
        if not _PROMPT.match(lines[k]):
            k += 1
            continue
        start, code = k, [_PROMPT.sub("", lines[k], count=1)]
        k += 1
        while k < len(lines) and _MORE.match(lines[k]):
            code.append(_MORE.sub("", lines[k], count=1))
            k += 1
        shown = k
        while k < len(lines) and lines[k].strip() and not _PROMPT.match(lines[k]):
            k += 1
        printed = "\n".join(lines[shown:k]) if k > shown else None
        out.append((start, "\n".join(code), printed, shown if printed is not None else None))
    return out


def sessions(src: str) -> list[tuple[int, int]]:
    """The sessions written straight in a Markdown text (not in a code block): ``(first, end)`` 0-based line
    ranges, each a run of non-blank lines whose first holds a ``>>>`` prompt."""
    lines, found, fenced, k = src.split("\n"), [], False, 0
    while k < len(lines):
        if re.match(r"^\s{0,3}(?:`{3,}|~{3,})", lines[k]):
            fenced = not fenced
        elif not fenced and _PROMPT.match(lines[k]) and not lines[k].startswith("    "):
            start = k
            while k < len(lines) and lines[k].strip():
                k += 1
            found.append((start, k))
            continue
        k += 1
    return found
