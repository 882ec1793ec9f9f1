r"""The checker's Markdown parser: markdown-it-py with math rules that run in linear time.

markdown-it-py (CommonMark with tables) reads the document with the mdit-py-plugins ``dollarmath`` (``$...$``,
``$$...$$``) and ``amsmath`` (bare ``\begin{align*}...\end{align*}``) rules.  The ``\(...\)`` and ``\[...\]``
delimiters and a bare environment inside a paragraph are read by the rules of this module instead of
texmath's: texmath matches a regular expression against a copy of the whole rest of the text at every
opener, so 50,000 unclosed ``\[`` took 35 s.  Here the closers of a text are found once and every opener
looks its closer up by bisection.

Examples
========

>>> tokens = markdown_parser().parse(r"a \(x + 1\) b \[y\] c")
>>> [(t.type, t.content) for t in tokens[1].children if t.type.startswith("math")]
[('math_inline', 'x + 1'), ('math_inline_double', 'y')]
>>> import time; start = time.perf_counter(); _ = markdown_parser().parse("\\[" * 50000)
>>> time.perf_counter() - start < 5
True
"""

from __future__ import annotations

import bisect
import re
from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt

__all__ = ["ENVIRONMENTS", "markdown_parser"]

ENVIRONMENTS = ("align", "aligned", "alignat", "alignedat", "gather", "gathered", "eqnarray", "flalign",
                "equation", "multline", "split", "displaymath")
_BEGIN = re.compile(r"\\begin\{(" + "|".join(ENVIRONMENTS) + r")(\*?)\}")


@lru_cache(maxsize=64)
def _positions(src: str, needle: str) -> list[int]:
    """Every start of ``needle`` in ``src``, in order (computed once per text and needle)."""
    found, at = [], src.find(needle)
    while at >= 0:
        found.append(at)
        at = src.find(needle, at + 1)
    return found


def _next(src: str, needle: str, start: int) -> int:
    """The first start of ``needle`` at or after ``start``, or -1."""
    where = _positions(src, needle)
    k = bisect.bisect_left(where, start)
    return where[k] if k < len(where) else -1


def _inline(name: str, opener: str, closer: str, one_line: bool) -> Any:
    """An inline rule for ``opener ... closer`` (at least one character between; on one line if asked)."""

    def rule(state: Any, silent: bool) -> bool:
        src, pos = state.src, state.pos
        if not src.startswith(opener, pos):
            return False
        start = pos + len(opener)
        end = _next(src, closer, start + 1)
        if end < 0 or (one_line and "\n" in src[start:end]):
            return False
        if not silent:
            token = state.push(name, "math", 0)
            token.content, token.markup = src[start:end], opener
        state.pos = end + len(closer)
        return True

    return rule


def _environment(state: Any, silent: bool) -> bool:
    r"""A bare ``\begin{align*} ... \end{align*}`` inside a paragraph, read whole."""
    src, pos = state.src, state.pos
    if not src.startswith("\\begin{", pos):
        return False
    m = _BEGIN.match(src, pos)
    if not m:
        return False
    closer = f"\\end{{{m.group(1)}{m.group(2)}}}"
    end = _next(src, closer, m.end())
    if end < 0:
        return False
    if not silent:
        token = state.push("math_environment", "math", 0)
        token.content, token.markup = src[pos:end + len(closer)], "\\begin{"
    state.pos = end + len(closer)
    return True


def _bracket_block(state: Any, start_line: int, end_line: int, silent: bool) -> bool:
    r"""A display ``\[ ... \]`` starting a block; the closer must lie inside the current block."""
    begin = state.bMarks[start_line] + state.tShift[start_line]
    src = state.src
    if not src.startswith("\\[", begin):
        return False
    end = _next(src, "\\]", begin + 3)
    if end < 0:
        return False
    line = start_line
    while line < end_line and end + 1 > state.eMarks[line]:
        line += 1
    if line >= end_line or end + 1 < state.bMarks[line]:
        return False  # the closer lies outside this block (opened in a blockquote, closed after it)
    if not silent:
        token = state.push("math_block_bracket", "math", 0)
        token.block = True
        token.content = token.info = src[begin + 2:end]
        token.markup = "\\["
        token.map = [start_line, line + 1]
    state.line = line + 1
    return True


@lru_cache(maxsize=1)
def markdown_parser() -> MarkdownIt:
    """The one Markdown parser of the checker (CommonMark, tables, strikethrough, the math rules above)."""
    from mdit_py_plugins.amsmath import amsmath_block, amsmath_plugin
    from mdit_py_plugins.dollarmath import dollarmath_plugin

    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    dollarmath_plugin(md, allow_space=True, allow_digits=True, allow_blank_lines=False, double_inline=True)
    amsmath_plugin(md)
    # a bare \begin{bmatrix} inside a paragraph (after "$$" on the line above) continues that paragraph,
    # where the inline rules read the display; on its own after a blank line it is still a block
    md.block.ruler.at("amsmath", amsmath_block, {"alt": ["reference", "blockquote", "list", "footnote_def"]})
    md.inline.ruler.before("escape", "math_paren", _inline("math_inline", "\\(", "\\)", one_line=True))
    md.inline.ruler.before("escape", "math_bracket", _inline("math_inline_double", "\\[", "\\]", one_line=False))
    md.inline.ruler.before("escape", "math_environment", _environment)
    md.block.ruler.before("fence", "math_block_bracket", _bracket_block)
    md.disable("text_join")  # keep escapes (``\$``) apart from text
    return md
