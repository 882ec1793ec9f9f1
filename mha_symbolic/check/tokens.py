r"""A formula's tokens, with the structure of pylatexenc's ``LatexWalker`` (environments, groups, macro
arguments); text it cannot parse goes through a plain splitter, so tokenising never raises.  Used by
:func:`mha_symbolic.check.read.chains`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

_OP_MACROS = {
    "le": "le", "leq": "le", "leqslant": "le", "leqq": "le", "ge": "ge", "geq": "ge", "geqslant": "ge",
    "geqq": "ge", "lt": "lt", "gt": "gt", "ne": "ne", "neq": "ne", "approx": "approx", "simeq": "approx",
    "approxeq": "approx", "thickapprox": "approx", "in": "in", "to": "to", "rightarrow": "to",
    "longrightarrow": "to", "mapsto": "to", "longmapsto": "to", "coloneqq": "def", "coloneq": "def",
    "equiv": "def", "triangleq": "def", "eqqcolon": "def", "eqcolon": "def", "colon": "colon",
}
_CHAR_OPS = {"=": "eq", "<": "lt", ">": "gt", ":": "colon", ":=": "def", "=:": "def"}
_ROW_BREAKS = {"\\", "cr", "newline"}
_SEPARATORS = {"quad", "qquad", "hspace", "hskip", "Rightarrow", "Longrightarrow", "implies", "iff",
               "Leftrightarrow", "Longleftrightarrow", "therefore", "because"}
_OPEN = {"langle", "lbrace", "{", "lbrack", "lceil", "lfloor", "lvert", "lVert"}
_CLOSE = {"rangle", "rbrace", "}", "rbrack", "rceil", "rfloor", "rvert", "rVert"}
_TEXT_MACROS = {"text", "textrm", "textit", "textbf", "textnormal", "textsf", "mbox", "hbox", "mathrm",
                "operatorname"}
#: words that start a new statement; True: what follows is a condition
_KEYWORDS = {"and": False, "where": True, "with": True, "for": True, "if": True, "when": True, "whenever": True,
             "given": True, "provided": True, "assuming": True, "such that": True, "s.t.": True, "for all": True,
             "for every": True, "for each": True, "for any": True, "und": False, "mit": True, "für": True,
             "wobei": True, "falls": True, "wenn": True, "y": False, "con": True, "para": True, "donde": True,
             "si": True, "cuando": True}
_BARE_KEYWORDS = {"and", "where", "with", "for", "if", "when", "whenever"}
_QUANTIFIERS = {"all", "every", "each", "any"}
_ROW_ENVS = {"aligned", "align", "alignat", "alignedat", "gather", "gathered", "split", "eqnarray", "multline",
             "flalign", "equation", "displaymath", "math"}
_CASES_ENVS = {"cases", "dcases", "rcases", "numcases"}
_BINARY = {"+", "-", "*", "/", r"\cdot", r"\times", r"\div", r"\pm", "^", "_"}
_CHARS = re.compile(r":=|=:|\s+|\d+(?:\.\d+)?|[A-Za-z]+|.", re.S)


@dataclass
class _Tok:
    kind: str  # atom space op open close amp row sep kw comma cases
    text: str
    pos: int
    value: str = ""
    cond: bool = False
    rows: list[tuple[list[_Tok], list[_Tok]]] = field(default_factory=list)


def _chars(text: str, pos: int) -> list[_Tok]:
    out = []
    for m in _CHARS.finditer(text):
        s, p = m.group(0), pos + m.start()
        if s.isspace():
            out.append(_Tok("space", s, p))
        elif s in _CHAR_OPS:
            out.append(_Tok("op", s, p, _CHAR_OPS[s]))
        elif s in "([":
            out.append(_Tok("open", s, p))
        elif s in ")]":
            out.append(_Tok("close", s, p))
        elif s == ",":
            out.append(_Tok("comma", s, p))
        elif s == ";":
            out.append(_Tok("sep", s, p))
        elif s == "&":
            out.append(_Tok("amp", s, p))
        elif s == "~":
            out.append(_Tok("space", s, p))
        elif s in ("{", "}"):  # only the fallback splitter sees bare braces
            out.append(_Tok("open" if s == "{" else "close", s, p))
        else:
            out.append(_Tok("atom", s, p, s if s.isalpha() else ""))
    return out


@lru_cache(maxsize=1)
def _context() -> Any:
    from pylatexenc import macrospec
    from pylatexenc.latexwalker import get_default_latex_context_db

    db = get_default_latex_context_db()
    macros = [macrospec.MacroSpec(name, "{{") for name in ("overset", "underset", "stackrel")]
    macros += [macrospec.MacroSpec(name, "*{") for name in ("operatorname", "tag")]
    macros += [macrospec.MacroSpec(name, "{") for name in ("textnormal", "boldsymbol", "bm", "mathsf", "mathcal",
                                                            "mathit", "hbox")]
    envs = [macrospec.EnvironmentSpec(name, "[", is_math_mode=True) for name in ("aligned", "gathered", "split")]
    envs += [macrospec.EnvironmentSpec(name, "{", is_math_mode=True) for name in ("alignedat",)]
    envs += [macrospec.EnvironmentSpec(name, "", is_math_mode=True) for name in _CASES_ENVS | {"align", "gather"}]
    db.add_context_category("mha-check", macros=macros, environments=envs, prepend=True)
    return db


def _tokenize(text: str) -> list[_Tok]:
    """Top-level tokens: pylatexenc's nodes, or the plain splitter if it cannot parse ``text``."""
    try:
        from pylatexenc.latexwalker import LatexWalker

        walker = LatexWalker(text, latex_context=_context(), tolerant_parsing=False)
        nodes, _, _ = walker.get_latex_nodes(parsing_state=walker.make_parsing_state(in_math_mode=True))
        return _merge_delimiters(_from_nodes(text, nodes, 0, len(text)))
    except Exception:  # pylatexenc refuses unbalanced text (and may hit recursion limits): split by hand
        return _merge_delimiters(_fallback(text))


def _inner(node: Any) -> str:
    """The verbatim text inside a group argument (without its braces)."""
    if node is None:
        return ""
    s = node.latex_verbatim()
    return s[1:-1] if len(s) >= 2 and s[0] in "{[" else s


def _from_nodes(text: str, nodes: list[Any], start: int, end: int) -> list[_Tok]:
    from pylatexenc.latexwalker import (
        LatexCharsNode,
        LatexCommentNode,
        LatexEnvironmentNode,
        LatexGroupNode,
        LatexMacroNode,
        LatexSpecialsNode,
    )

    out: list[_Tok] = []
    at = start
    for node in nodes:
        if node is None:
            continue
        if node.pos > at:  # text pylatexenc did not cover
            out += _chars(text[at:node.pos], at)
        verbatim = text[node.pos:node.pos + node.len]
        at = node.pos + node.len
        if isinstance(node, LatexCommentNode):
            continue
        if isinstance(node, LatexCharsNode):
            out += _chars(verbatim, node.pos)
        elif isinstance(node, LatexSpecialsNode):
            kind = {"&": "amp", "~": "space"}.get(node.specials_chars, "atom")
            out.append(_Tok(kind, verbatim, node.pos))
        elif isinstance(node, LatexMacroNode):
            args = [a for a in (node.nodeargd.argnlist if node.nodeargd else []) if a is not None]
            out.append(_macro(node.macroname, args, verbatim, node.pos))
        elif isinstance(node, LatexEnvironmentNode):
            name = node.environmentname.rstrip("*")
            body = [n for n in (node.nodelist or []) if n is not None]
            if name in _ROW_ENVS and body:
                out += _from_nodes(text, body, body[0].pos, body[-1].pos + body[-1].len)
            elif name in _CASES_ENVS and body:
                inner = _merge_delimiters(_from_nodes(text, body, body[0].pos, body[-1].pos + body[-1].len))
                out.append(_Tok("cases", verbatim, node.pos, rows=_case_rows(inner)))
            else:
                out.append(_Tok("atom", verbatim, node.pos))
        elif isinstance(node, LatexGroupNode):
            out.append(_Tok("atom", verbatim, node.pos))
        else:
            out.append(_Tok("atom", verbatim, node.pos))
    if end > at:
        out += _chars(text[at:end], at)
    return out


def _macro(name: str, args: list[Any], verbatim: str, pos: int) -> _Tok:
    """Classify one macro (``args``: pylatexenc's argument nodes, empty in the fallback splitter)."""
    if name in _OP_MACROS:
        return _Tok("op", verbatim, pos, _OP_MACROS[name])
    if name in _ROW_BREAKS:
        return _Tok("row", verbatim, pos)
    if name in _SEPARATORS:
        return _Tok("sep", verbatim, pos)
    if name == "forall":
        return _Tok("kw", verbatim, pos, "for all", cond=True)
    if name == "not" and args:  # pylatexenc gives \not its operand
        return _Tok("op", verbatim, pos, "ne") if _inner(args[0]).strip() == "=" else _Tok("atom", verbatim, pos)
    if name in ("left", "right", "not"):
        return _Tok("pending", verbatim, pos, name)
    if name in _OPEN:
        return _Tok("open", verbatim, pos)
    if name in _CLOSE:
        return _Tok("close", verbatim, pos)
    if name == " ":
        return _Tok("space", verbatim, pos)
    if name in _TEXT_MACROS and args:
        word = " ".join(_inner(args[-1]).split()).strip(" ,.;:").lower()
        if word in _KEYWORDS:
            return _Tok("kw", verbatim, pos, word, cond=_KEYWORDS[word])
    if name in ("overset", "stackrel", "underset") and len(args) == 2:
        over, base = _inner(args[0]).strip(), _inner(args[1]).strip()
        op = "eq" if base == "=" else _OP_MACROS.get(base.lstrip("\\"), "") if base.startswith("\\") else ""
        if op == "eq" and re.search(r"def|\\Delta|\\triangle|:", over):
            op = "def"
        if op:
            return _Tok("op", verbatim, pos, op)
    return _Tok("atom", verbatim, pos)


_FALLBACK = re.compile(r"\\begin\s*\{[^{}]*\}|\\end\s*\{[^{}]*\}|\\[A-Za-z]+\*?|\\.|:=|=:|\s+|\d+(?:\.\d+)?"
                       r"|[A-Za-z]+|.", re.S)


def _fallback(text: str) -> list[_Tok]:
    """A plain splitter for text pylatexenc refuses: braces and matrix environments count as brackets,
    row environments are dropped (their rows become rows), macros are classified as above."""
    out: list[_Tok] = []
    for m in _FALLBACK.finditer(text):
        s, p = m.group(0), m.start()
        env = re.fullmatch(r"\\(begin|end)\s*\{([^{}]*)\}", s)
        if env:
            name = env.group(2).strip().rstrip("*")
            if name in _ROW_ENVS or name in _CASES_ENVS:
                out.append(_Tok("space", " ", p))
            else:
                out.append(_Tok("open" if env.group(1) == "begin" else "close", s, p))
        elif s.startswith("\\") and len(s) > 1:
            name = s[1:].rstrip("*") or s[1:]
            out.append(_macro(name, [], s, p))
        else:
            out += _chars(s, p)
    return out


def _merge_delimiters(toks: list[_Tok]) -> list[_Tok]:
    r"""``\left`` / ``\right`` with their delimiter as one bracket token; ``\not=`` as ``ne``."""
    out: list[_Tok] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.kind != "pending":
            out.append(t)
            i += 1
            continue
        j = i + 1
        while j < len(toks) and toks[j].kind == "space":
            j += 1
        nxt = toks[j] if j < len(toks) else None
        if t.value == "not":
            if nxt is not None and nxt.kind == "op" and nxt.value in ("eq", "in"):
                text = "".join(x.text for x in toks[i:j + 1])
                out.append(_Tok("op", text, t.pos, "ne") if nxt.value == "eq" else _Tok("atom", text, t.pos))
                i = j + 1
            else:
                out.append(_Tok("atom", t.text, t.pos))
                i += 1
            continue
        if nxt is None or nxt.kind in ("row", "amp", "cases"):
            out.append(_Tok("atom", t.text, t.pos))
            i += 1
            continue
        out.append(_Tok("open" if t.value == "left" else "close", "".join(x.text for x in toks[i:j + 1]), t.pos))
        i = j + 1
    return out


def _case_rows(toks: list[_Tok]) -> list[tuple[list[_Tok], list[_Tok]]]:
    rows: list[tuple[list[_Tok], list[_Tok]]] = []
    for row in _split_kind(toks, "row"):
        amp = next((k for k, t in enumerate(row) if t.kind == "amp"), None)
        value, cond = (row, []) if amp is None else (row[:amp], [t for t in row[amp + 1:] if t.kind != "amp"])
        if _significant(value) or _significant(cond):
            rows.append((value, cond))
    return rows


def _split_kind(toks: list[_Tok], kind: str) -> list[list[_Tok]]:
    parts: list[list[_Tok]] = [[]]
    for t in toks:
        if t.kind == kind:
            parts.append([])
        else:
            parts[-1].append(t)
    return parts


def _significant(toks: list[_Tok]) -> list[_Tok]:
    return [t for t in toks if t.kind != "space"]


def _depths(toks: list[_Tok]) -> list[int]:
    """Bracket depth before each token; unmatched brackets count as nothing."""
    stack: list[int] = []
    matched: set[int] = set()
    for k, t in enumerate(toks):
        if t.kind == "open":
            stack.append(k)
        elif t.kind == "close" and stack:
            matched |= {stack.pop(), k}
    depth, out = 0, []
    for k, t in enumerate(toks):
        if t.kind == "close" and k in matched:
            depth -= 1
        out.append(depth)
        if t.kind == "open" and k in matched:
            depth += 1
    return out
