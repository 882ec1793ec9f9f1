r"""Finding the checkable pieces of a Markdown / plain-text tutorial, with their line numbers.

Explanation
===========

:func:`extract` returns :class:`Fragment` objects in document order:

* ``math`` -- ``$$ ... $$`` (one or several lines), ``\[ ... \]`` and inline ``$ ... $``;
  the line is that of the first line of the formula's own text (for a ``$$`` on its own
  line, the line after it);
* ``code`` -- a Python-style assignment in a fenced code block (``X = [1, 2, 3, 4]``,
  ``WQ1 = [[1,0],[0,1]]``, ``Q1 = X @ WQ1``), or a labelled row (``token 1: [0.2, 0.5]``);
* ``heading`` -- a Markdown heading (it sets context: "Head 2", "Input Matrix X");
* ``prose`` -- a line outside math and code that states a setting or a shape
  ("Sequence length = 2 tokens", "Model dimension = 4", "Shape: (8, 4)", "Only one token").

Line numbers are 1-based and refer to the text as given.

Examples
========

>>> doc = "# Setup\nSequence length = 2 tokens\n\n$$\nd_k = \\frac{4}{2}\n$$\n```\nX = [1, 2]\n```"
>>> [(f.kind, f.line) for f in extract(doc)]
[('heading', 1), ('prose', 2), ('math', 5), ('code', 8)]
>>> extract(doc)[2].text
'd_k = \\frac{4}{2}'
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

__all__ = ["Fragment", "extract"]

_ASSIGN = re.compile(r"^\s*([A-Za-z_][A-Za-z_0-9]*)\s*=\s*(.+?)\s*$")
_ROW = re.compile(r"^\s*token\s*(\d+)\s*:\s*(\[.*\])\s*$", re.I)
_SETTING = re.compile(r"(sequence length|model dimension|head dimension|number of heads|tokens?|shape)\s*[:=]",
                      re.I)
_ONE_TOKEN = re.compile(r"\b(only\s+)?\**\s*one\s*\**\s+token\b", re.I)


@dataclass(frozen=True)
class Fragment:
    """A checkable piece: ``kind`` (math, code, heading, prose), 1-based ``line``, its ``text``."""

    kind: str
    line: int
    text: str
    display: bool = False
    context: str = ""  # the whole source line the fragment sits on


def extract(text: str) -> list[Fragment]:
    """All fragments of ``text`` in document order (see the module docstring)."""
    lines = text.split("\n")
    out: list[Fragment] = []
    masked = list(lines)  # code blocks blanked out before searching for math
    in_code = False
    for k, line in enumerate(lines, start=1):
        if line.strip().startswith(("```", "~~~")):
            in_code = not in_code
            masked[k - 1] = ""
            continue
        if in_code:
            masked[k - 1] = ""
            m = _ROW.match(line)
            if m:
                out.append(Fragment("code", k, line.strip(), context=line))
            elif _ASSIGN.match(line):
                out.append(Fragment("code", k, line.strip(), context=line))
            continue
        stripped = line.strip()
        if stripped.startswith("#"):
            out.append(Fragment("heading", k, stripped.lstrip("#").strip(), context=line))
    body = "\n".join(masked)
    # inline code and HTML comments are not math: blank them (keeping line breaks)
    body = re.sub(r"<!--.*?-->|`[^`\n]*`", lambda m: re.sub(r"[^\n]", " ", m.group(0)), body, flags=re.S)
    starts = [0] + [i + 1 for i, ch in enumerate(body) if ch == "\n"]
    spans: list[tuple[int, int]] = []
    taken = bytearray(len(body) + 1)
    inline = r"(?<!\$)\$(?!\$)(.+?)(?<!\$)\$(?!\$)"
    for pattern, display in ((r"\$\$(.+?)\$\$", True), (r"\\\[(.+?)\\\]", True), (inline, False)):
        for m in re.finditer(pattern, body, re.S):
            if taken[m.start()]:
                continue
            spans.append((m.start(), m.end()))
            taken[m.start():m.end()] = b"\x01" * (m.end() - m.start())
            content = m.group(1)
            lead = len(content) - len(content.lstrip())
            at = bisect.bisect_right(starts, m.start(1) + lead)
            out.append(Fragment("math", at, content.strip(), display, lines[at - 1]))
    for m in re.finditer(r"\$\$", body):
        if not taken[m.start()]:  # a $$ that opens no complete block
            at = bisect.bisect_right(starts, m.start())
            out.append(Fragment("unclosed", at, "$$", True, lines[at - 1]))
            break
    math_lines = {f.line for f in out if f.kind == "math" and f.display}
    for k, line in enumerate(masked, start=1):
        if not line.strip() or k in math_lines or line.strip().startswith("#"):
            continue
        plain = re.sub(r"\$[^$]*\$", "", line)
        if _SETTING.search(plain) or _ONE_TOKEN.search(plain):
            out.append(Fragment("prose", k, line.strip(), context=line))
    out.sort(key=lambda f: (f.line, {"heading": 0, "prose": 2}.get(f.kind, 1)))
    return out
