r"""The second room of the document checker: a formula's relation chains, prose settings, local scopes.

Explanation
===========

:func:`chains` cuts one formula into its relation chains (``a = b \approx c`` is one chain with
two operators); :func:`normalise` first turns Unicode math (``≈ ≤ × √ ᵀ − ₁``) into LaTeX and
drops layout-only commands.  The structure (environments, groups, macro arguments) comes from
pylatexenc's ``LatexWalker``; text it cannot parse (an unmatched brace) goes through a plain token
splitter instead, so :func:`chains` never raises.  Operators are whole tokens at the top level:
``\left(`` or ``\leftarrow`` is never ``\le``, and nothing inside ``{...}``, brackets,
``\left..\right`` or a matrix is split.

:func:`settings` and :func:`constraints` read the dimensions a sentence of prose states
("d_model is 6", "two heads", ``$h = 2$``) or bounds ("at most 10 heads", ``1 \le N \le 10^4``);
:func:`scope` reads a condition that binds a value only inside its sentence ("with h = 1",
"for head 2", "the first token").  The Python-code reader :func:`code_expression` lives in
:mod:`mha_symbolic.check._code_expr`.  Nothing is ever ``eval``'d or ``sympify``'d.

Examples
========

>>> from mha_symbolic.check.read import chains, settings, constraints, scope, normalise
>>> [(c.sides, c.ops) for c in chains(r"d_k = d_v = d_{model}/h = 2, \quad h \ge 2")]
[(('d_k', 'd_v', 'd_{model}/h', '2'), ('eq', 'eq', 'eq')), (('h', '2'), ('ge',))]
>>> normalise("QKᵀ/√d_k ≈ 0.5")
'QK^T/\\sqrt{d_k} \\approx 0.5'
>>> settings("We use $h = 2$ heads, numbered $0 \\le i \\le h - 1$.")
[Setting(name='h', value=2, text='h = 2')]
>>> [(c.name, c.op, c.value) for c in constraints("We use $h = 2$ heads, numbered $0 \\le i \\le h - 1$.")]
[('i', 'ge', 0), ('i', 'le', 'h - 1')]
>>> scope("With $h = 1$ we would instead have $d_k = 4$."), scope("for the second head")
({'h': 1}, {'head': 2})
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache, partial
from typing import Any

from ._code_expr import code_expression

__all__ = ["OPS", "Chain", "Setting", "Constraint", "normalise", "chains", "settings", "constraints", "scope",
           "hypothetical", "code_expression"]

OPS = ("eq", "approx", "lt", "le", "gt", "ge", "ne", "in", "colon", "to", "def")


@dataclass(frozen=True)
class Chain:
    """One relation chain ``sides[0] ops[0] sides[1] ...`` of a formula.

    ``row`` is the 0-based line of the chain inside the formula text (its own row of an
    ``aligned`` block or a ``cases`` row); ``side_rows`` the line of each side.  ``condition`` marks
    a chain that follows ``\text{where}``, ``\text{with}``, ``\text{for}``, ``\text{if}`` ... or
    is the condition column of a ``cases`` row.  A chain that continues the previous formula
    (text starting with ``=``) has an empty first side.
    """

    sides: tuple[str, ...]
    ops: tuple[str, ...]
    text: str
    row: int = 0
    condition: bool = False
    side_rows: tuple[int, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class Setting:
    """A dimension stated in prose: ``name`` in n, d_model, h, d_k, d_v."""

    name: str
    value: int
    text: str


@dataclass(frozen=True)
class Constraint:
    """A bound ``name op value`` (op in lt, le, gt, ge, ne), not a value: ``value`` is an int or the
    other side's text (``d_k < n`` gives ``Constraint("d_k", "lt", "n", ...)``)."""

    name: str
    op: str
    value: int | str
    text: str


# ----- normalise ------------------------------------------------------------------------------------------
_UNICODE = {
    "≈": r"\approx", "≃": r"\simeq", "≤": r"\le", "⩽": r"\le", "≦": r"\le", "≥": r"\ge", "⩾": r"\ge",
    "≧": r"\ge", "≠": r"\ne", "×": r"\times", "·": r"\cdot", "⋅": r"\cdot", "∙": r"\cdot", "÷": r"\div",
    "−": "-", "∈": r"\in", "∉": r"\notin", "→": r"\to", "⟶": r"\to", "↦": r"\mapsto", "⇒": r"\Rightarrow",
    "⟹": r"\implies", "⇔": r"\iff", "≡": r"\equiv", "≔": r"\coloneqq", "≜": r"\triangleq",
    "ℝ": r"\mathbb{R}", "ℕ": r"\mathbb{N}", "ℤ": r"\mathbb{Z}", "ℚ": r"\mathbb{Q}", "ℂ": r"\mathbb{C}",
    "∑": r"\sum", "∏": r"\prod", "∞": r"\infty", "…": r"\dots", "⋯": r"\cdots", "±": r"\pm", "∀": r"\forall",
    "∃": r"\exists", "∂": r"\partial", "∇": r"\nabla", "⊙": r"\odot", "⊗": r"\otimes", "∘": r"\circ",
    "⟨": r"\langle", "⟩": r"\rangle", "‖": r"\|", "∗": "*", "′": "'", "″": "''",
    "α": r"\alpha", "β": r"\beta", "γ": r"\gamma", "δ": r"\delta", "ε": r"\epsilon", "θ": r"\theta",
    "λ": r"\lambda", "μ": r"\mu", "π": r"\pi", "σ": r"\sigma", "τ": r"\tau", "φ": r"\phi", "ω": r"\omega",
    "Σ": r"\Sigma", "Δ": r"\Delta", "Π": r"\Pi",
    "\u00a0": " ", "\u2009": " ", "\u202f": " ", "\u2002": " ", "\u2003": " ", "\u200b": "", "\ufeff": "",
}
_SUP = dict(zip("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿⁱᴬᴮᴰᴱᴳᴴᴵᴶᴷᴸᴹᴺᴼᴾᴿᵁⱽᵂᵃᵇᶜᵈᵉᶠᵍʰʲᵏˡᵐᵒᵖʳˢᵗᵘᵛʷˣʸᶻ",
                "0123456789+-=()niABDEGHIJKLMNOPRUVWabcdefghjklmoprstuvwxyz", strict=True))
_SUB = dict(zip("₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₒₓₕₖₗₘₙₚₛₜᵢⱼᵣᵤᵥ", "0123456789+-=()aeoxhklmnpstijruv", strict=True))
_SCRIPT_RUN = re.compile("[%s]+|[%s]+|ᵀ|[%s]" % ("".join(_SUP), "".join(_SUB), re.escape("".join(_UNICODE))))
_LAYOUT = re.compile(
    r"\\(?:left|right)\s*\.(?!\d)"
    r"|\\(?:big|Big|bigg|Bigg)[lrm]?(?![A-Za-z])"
    r"|\\(?:displaystyle|textstyle|scriptstyle|scriptscriptstyle|nonumber|notag|limits|nolimits|strut|mathstrut)"
    r"(?![A-Za-z])"
    r"|\\(?:label|tag\*?)\s*\{[^{}]*\}"
    r"|\\[,;:!>]"
    r"|\\[A-Za-z]+|\\.", re.S)
_DROPPED = (r"\\[,;:!>]|\\(?:big|Big|bigg|Bigg)[lrm]?"
            r"|\\(?:displaystyle|textstyle|scriptstyle|scriptscriptstyle|nonumber|notag|limits|nolimits|strut|mathstrut)")
_TRANSPOSE = re.compile(r"\^\s*(?:\{\s*(?:\\top|\\intercal|\\mathsf\{T\}|\\mathrm\{T\}|\\rm\s*T|\\operatorname\{T\}"
                        r"|⊤|T)\s*\}|\\top(?![A-Za-z])|\\intercal(?![A-Za-z])|\\mathsf\{T\}|\\mathrm\{T\}|⊤)")
_ASCII_OPS = [("<=>", r"\iff"), ("<=", r"\le"), (">=", r"\ge"), ("!=", r"\ne"), ("==", "="), ("=>", r"\Rightarrow"),
              ("->", r"\to")]


def _script(m: re.Match[str]) -> str:
    s = m.group(0)
    if s == "ᵀ":
        return "^T"
    if s[0] in _SUP:
        return "^{" + "".join(_SUP[c] for c in s) + "}"
    if s[0] in _SUB:
        return "_{" + "".join(_SUB[c] for c in s) + "}"
    out = _UNICODE[s]
    rest = m.string[m.end():m.end() + 1]
    return out + " " if out.startswith("\\") and out[-1].isalpha() and rest.isalpha() else out


def _spaced(command: str, m: re.Match[str]) -> str:
    """``command``, with a space when a letter follows (``a<=b`` -> ``a\\le b``)."""
    return command + " " if m.group(1) and command[-1].isalpha() else command


def _layout(m: re.Match[str]) -> str:
    s = m.group(0)
    if re.fullmatch(r"\\[A-Za-z]+|\\.", s) and not re.fullmatch(_DROPPED, s):
        return s  # any other command, kept (this also keeps ``\\;`` a row break and a ``;``)
    before, after = m.string[m.start() - 1:m.start()], m.string[m.end():m.end() + 1]
    return " " if before.isalpha() and after.isalpha() else ""


def _sqrt(text: str) -> str:
    r"""``√x``, ``√(…)``, ``√{…}``, ``√\cmd{..}`` -> ``\sqrt{…}``."""
    out, i = [], 0
    while True:
        j = text.find("√", i)
        if j < 0:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:j])
        k = j + 1
        while k < len(text) and text[k] == " ":
            k += 1
        arg, end = _sqrt_argument(text, k)
        out.append(r"\sqrt{" + arg + "}" if arg is not None else r"\sqrt")
        i = end if arg is not None else j + 1


def _sqrt_argument(text: str, k: int) -> tuple[str | None, int]:
    if k < len(text) and text[k] in "({":
        close = _matching_char(text, k)
        if close is not None:
            return text[k + 1:close], close + 1
        return None, k
    m = re.match(r"\\[A-Za-z]+", text[k:])
    if m:
        end = k + m.end()
        for _ in range(2):
            if end < len(text) and text[end] == "{":
                close = _matching_char(text, end)
                if close is None:
                    break
                end = close + 1
        return text[k:end], end
    m = re.match(r"[A-Za-z0-9.]+(?:'+)?(?:_\{[^{}]*\}|_[A-Za-z0-9])?", text[k:])
    if m and m.group(0).strip("."):
        return m.group(0), k + m.end()
    return None, k


def _matching_char(text: str, k: int) -> int | None:
    pairs = {"(": ")", "{": "}"}
    open_, close, depth = text[k], pairs[text[k]], 0
    for i in range(k, len(text)):
        depth += (text[i] == open_) - (text[i] == close)
        if depth == 0:
            return i
    return None


def normalise(tex: str) -> str:
    r"""Unicode math to LaTeX and layout-only commands removed; newlines are kept (rows stay rows).

    ``≈ ≤ ≥ ≠ × · √ ᵀ ^⊤ − ∈ ℝ →``, super/subscript characters (``d²``, ``head₁``, ``(A₁)ᵢⱼ``) and
    ASCII ``<= >= != ->`` become LaTeX; ``^{\top}``, ``^\intercal`` become ``^T``; plain-text
    subscripts ``d_model`` become ``d_{model}``; ``\displaystyle``, ``\! \, \; \:``, ``\big(``,
    ``\left.``, ``\right.``, ``\label``/``\tag`` are dropped (``\quad`` is kept: it separates
    statements).

    >>> normalise("X ∈ ℝ^{2×4}, rank(A) ≤ 2, x = −1, d_model")
    'X \\in \\mathbb{R}^{2\\times4}, rank(A) \\le 2, x = -1, d_{model}'
    >>> normalise(r"\left.\frac{a}{b}\,\right|_{x} \displaystyle\sum")
    '\\frac{a}{b}\\right|_{x} \\sum'
    """
    t = str(tex)
    t = re.sub(r"\^\s*\{\s*⊤\s*\}|\^\s*⊤|⊤", "^T", t)
    t = _SCRIPT_RUN.sub(_script, t)
    for ascii_op, command in _ASCII_OPS:
        t = re.sub(re.escape(ascii_op) + r"(?=([A-Za-z]?))", partial(_spaced, command), t)
    t = re.sub(r"(?<=[A-Za-z0-9}\)'])_([a-z]{2,}[0-9]*|[A-Z][0-9]+|[0-9]{2,})(?![A-Za-z0-9])", r"_{\1}", t)
    t = re.sub(r"(?<=[A-Za-z0-9}\)])\^(-?[0-9]{2,}|-[0-9])(?![0-9])", r"^{\1}", t)
    t = _sqrt(t)
    t = _LAYOUT.sub(_layout, t)
    return _TRANSPOSE.sub("^T", t)


# ----- tokens ------------------------------------------------------------------------------------------------
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
        word = re.sub(r"\s+", " ", _inner(args[-1])).strip(" ,.;:").lower()
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


# ----- chains -----------------------------------------------------------------------------------------------
@dataclass
class _Draft:
    sides: list[list[_Tok]]
    ops: list[_Tok]
    cond: bool
    anchor: int  # position of the chain's own first token
    pieces: list[list[_Tok]] = field(default_factory=list)


def _has_op(toks: list[_Tok], depths: list[int]) -> bool:
    return any(t.kind == "op" and d == 0 for t, d in zip(toks, depths, strict=True))


def _text(toks: list[_Tok]) -> str:
    return re.sub(r"\s+", " ", "".join(t.text for t in toks if t.kind not in ("amp", "row"))).strip()


def chains(tex: str) -> list[Chain]:
    r"""Every relation chain of one formula (see the module docstring); never raises.

    Rows of ``aligned``/``align``/``gather``/``split``/``cases`` and ``\\`` breaks are cut (``&``
    dropped; a row starting with a relation continues the previous chain, one starting with ``+``
    continues its last side); ``\quad``, ``;``, ``\text{and}``, ``\text{where}`` ... and top-level
    commas between two relations separate chains.  A formula without a relation is one chain with
    one side; blank text gives no chain.

    >>> [(c.sides, c.ops, c.row) for c in chains("A &= B \\\\\n &\\le C")]
    [(('A', 'B', 'C'), ('eq', 'le'), 0)]
    >>> cases = r"|x| = \begin{cases} x & \text{if } x \ge 0 \\ -x & x < 0 \end{cases}"
    >>> [(c.sides, c.condition) for c in chains(cases)]
    [(('|x|', 'x'), False), (('x', '0'), True), (('|x|', '-x'), False), (('x', '0'), True)]
    """
    text = normalise(tex)
    if not text.strip():
        return []
    newlines = [k for k, ch in enumerate(text) if ch == "\n"]

    def row_of(pos: int) -> int:
        lo, hi = 0, len(newlines)
        while lo < hi:
            mid = (lo + hi) // 2
            if newlines[mid] < pos:
                lo = mid + 1
            else:
                hi = mid
        return lo

    drafts: list[_Draft] = []
    prev: _Draft | None = None
    for hard in _split_kind(_tokenize(text), "row"):
        hard = _alignment(hard)
        depths = _depths(hard)
        for line, line_depths in _soft_rows(hard, depths):
            prev = _row(line, line_depths, drafts, prev)
    return [_finish(d, row_of) for d in drafts]


def _alignment(row: list[_Tok]) -> list[_Tok]:
    """``&`` removed: odd ones align, even ones (``a &= 1 & b &= 2``) separate two equations."""
    out, count = [], 0
    for t in row:
        if t.kind == "amp":
            count += 1
            out.append(_Tok("sep", "", t.pos) if count % 2 == 0 else _Tok("space", " ", t.pos))
        else:
            out.append(t)
    return out


def _soft_rows(toks: list[_Tok], depths: list[int]) -> list[tuple[list[_Tok], list[int]]]:
    """A newline at the top level starts a new statement when both lines hold a relation and neither
    the first ends nor the second starts mid-expression."""
    lines: list[tuple[list[_Tok], list[int]]] = [([], [])]
    for t, d in zip(toks, depths, strict=True):
        if t.kind == "space" and "\n" in t.text and d == 0:
            lines.append(([], []))
        lines[-1][0].append(t)
        lines[-1][1].append(d)
    merged = [lines[0]]
    for toks2, d2 in lines[1:]:
        cur, cur_d = merged[-1]
        last = _significant(cur)[-1:] if _significant(cur) else []
        first = _significant(toks2)[:1]
        new = (_has_op(cur, cur_d) and _has_op(toks2, d2) and last and first
               and last[0].kind not in ("op", "open", "comma", "sep", "kw") and last[0].text.strip() not in _BINARY
               and first[0].kind not in ("op", "close") and first[0].text.strip() not in _BINARY)
        if new:
            merged.append((toks2, d2))
        else:
            merged[-1] = (cur + toks2, cur_d + d2)
    return merged


def _row(toks: list[_Tok], depths: list[int], drafts: list[_Draft], prev: _Draft | None) -> _Draft | None:
    """Chains of one row, appended to ``drafts``; returns the row's last chain (for continuation)."""
    cases = next((k for k, (t, d) in enumerate(zip(toks, depths, strict=True)) if t.kind == "cases" and d == 0), None)
    if cases is not None:
        prefix, suffix, rows = toks[:cases], toks[cases + 1:], toks[cases].rows
        last = None
        for value, cond in rows:
            whole = prefix + value + suffix
            for d in _pieces(whole, _depths(whole), False):
                d.anchor = (_significant(value) or _significant(whole) or [toks[cases]])[0].pos
                drafts.append(d)
                last = d
            cond_toks = cond
            if cond_toks and _significant(cond_toks)[0].kind == "kw":
                k = cond_toks.index(_significant(cond_toks)[0])
                cond_toks = cond_toks[k + 1:]
            for d in _pieces(cond_toks, _depths(cond_toks), True):
                drafts.append(d)
        return last
    lead = 0
    while lead < len(toks) and toks[lead].kind in ("space", "sep"):  # "&\quad + C": indentation only
        lead += 1
    toks, depths = toks[lead:], depths[lead:]
    sig = _significant(toks)
    if not sig:
        return prev
    first = sig[0]
    binary = first.kind == "atom" and first.text.strip() in _BINARY
    continues = prev is not None and (first.kind == "op" or binary or not _text(prev.sides[-1]))
    new = _pieces(toks, depths, prev.cond if continues and prev is not None else False)
    if not new:
        return prev
    if continues and prev is not None:
        head = new.pop(0)
        if first.kind == "op":  # "&= C": the chain goes on with another relation
            prev.sides += head.sides[1:]
        else:  # "+ C", or "A = \\ B": the last side goes on
            prev.sides[-1] = prev.sides[-1] + [_Tok("space", " ", first.pos)] + head.sides[0]
            prev.sides += head.sides[1:]
        prev.ops += head.ops
        prev.pieces += head.pieces
        if not new:
            return prev
    drafts.extend(new)
    return new[-1]


def _pieces(toks: list[_Tok], depths: list[int], cond: bool) -> list[_Draft]:
    """Separators, keywords and commas between relations cut ``toks`` into chains."""
    segments: list[tuple[list[_Tok], list[int], bool]] = []
    cur: list[_Tok] = []
    cur_d: list[int] = []
    skip_quantifier = False
    for k, (t, d) in enumerate(zip(toks, depths, strict=True)):
        if skip_quantifier and t.kind == "atom" and t.value.lower() in _QUANTIFIERS:
            skip_quantifier = False
            continue
        if t.kind != "space":
            skip_quantifier = False
        keyword = t.kind == "kw" or (t.kind == "atom" and t.value in _BARE_KEYWORDS and _bare(toks, k))
        if d == 0 and (t.kind == "sep" or keyword):
            segments.append((cur, cur_d, cond))
            cur, cur_d = [], []
            if t.kind == "sep":
                cond = False
            else:
                cond = cond or _KEYWORDS.get(t.value, False)  # "and" keeps the state it continues
                skip_quantifier = t.value == "for"
            continue
        cur.append(t)
        cur_d.append(d)
    segments.append((cur, cur_d, cond))
    out: list[_Draft] = []
    for k, (seg, seg_d, seg_cond) in enumerate(segments):
        inner = _parenthesised(seg, seg_d) if k > 0 else None
        if inner is not None:  # "\quad (i = 1, 2, 3)": a remark in parentheses, read as a condition
            seg, seg_d, seg_cond = inner, _depths(inner), True
        for piece, piece_d in _comma_split(seg, seg_d):
            draft = _draft(piece, piece_d, seg_cond)
            if draft is not None:
                out.append(draft)
    return out


def _parenthesised(toks: list[_Tok], depths: list[int]) -> list[_Tok] | None:
    """The inside of ``( ... )`` when the parentheses enclose all of ``toks``, else None."""
    keep = [k for k, t in enumerate(toks) if t.kind != "space"]
    if len(keep) < 2:
        return None
    first, last = keep[0], keep[-1]
    if toks[first].text != "(" or toks[last].text != ")" or depths[first] != 0 or depths[last] != 0:
        return None
    if any(depths[k] == 0 for k in range(first + 1, last)):
        return None
    return toks[first + 1:last]


def _bare(toks: list[_Tok], k: int) -> bool:
    """A bare English keyword (plain-text formulas): spaces or the ends on both sides."""
    before = toks[k - 1] if k > 0 else None
    after = toks[k + 1] if k + 1 < len(toks) else None
    return (before is None or before.kind == "space") and (after is None or after.kind == "space") and \
        (before is not None or after is not None)


def _comma_split(toks: list[_Tok], depths: list[int]) -> list[tuple[list[_Tok], list[int]]]:
    parts: list[tuple[list[_Tok], list[int]]] = [([], [])]
    commas: list[_Tok] = []
    for t, d in zip(toks, depths, strict=True):
        if t.kind == "comma" and d == 0:
            parts.append(([], []))
            commas.append(t)
        else:
            parts[-1][0].append(t)
            parts[-1][1].append(d)
    out = [parts[0]]
    for comma, (p, pd) in zip(commas, parts[1:], strict=True):
        cur, cur_d = out[-1]
        if _has_op(cur, cur_d) and _has_op(p, pd):
            out.append((p, pd))
        else:
            out[-1] = (cur + [comma] + p, cur_d + [0] + pd)
    return out


def _draft(toks: list[_Tok], depths: list[int], cond: bool) -> _Draft | None:
    keep = [k for k, t in enumerate(toks) if t.kind != "space"]
    if not keep:
        return None
    lo, hi = keep[0], keep[-1]
    while lo <= hi and depths[lo] == 0 and (toks[lo].kind in ("comma", "sep") or toks[lo].text in (".",)):
        lo += 1
    while hi >= lo and depths[hi] == 0 and (toks[hi].kind in ("comma", "sep") or toks[hi].text in (".",)):
        hi -= 1
    if lo > hi:
        return None
    toks, depths = toks[lo:hi + 1], depths[lo:hi + 1]
    sides: list[list[_Tok]] = [[]]
    ops: list[_Tok] = []
    for t, d in zip(toks, depths, strict=True):
        if t.kind == "op" and d == 0:
            ops.append(t)
            sides.append([])
        else:
            sides[-1].append(t)
    return _Draft(sides, ops, cond, toks[0].pos, [toks])


def _finish(d: _Draft, row_of: Any) -> Chain:
    sides = tuple(_text(s) for s in d.sides)
    side_rows = []
    for k, s in enumerate(d.sides):
        sig = _significant(s)
        pos = sig[0].pos if sig else (d.ops[k - 1].pos if k > 0 else d.anchor)
        side_rows.append(row_of(pos))
    text = " ".join(t for t in (_text(p) for p in d.pieces) if t)
    return Chain(sides, tuple(o.value for o in d.ops), text, row_of(d.anchor), d.cond, tuple(side_rows))


# ----- prose: settings, constraints, scope ------------------------------------------------------------------
_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
                 "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
             "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "1st": 1, "2nd": 2, "3rd": 3,
             "erste": 1, "zweite": 2, "dritte": 3, "vierte": 4, "primer": 1, "primera": 1, "primero": 1,
             "segunda": 2, "segundo": 2, "tercer": 3, "tercera": 3, "tercero": 3, "cuarta": 4, "cuarto": 4}
_ALIASES = {
    "h": "h", "n_heads": "h", "num_heads": "h", "nheads": "h", "n_head": "h", "num_head": "h",
    "number_of_heads": "h", "n": "n", "n_tokens": "n", "num_tokens": "n", "ntokens": "n", "seq_len": "n",
    "seqlen": "n", "sequence_length": "n", "d_model": "d_model", "dmodel": "d_model", "d_emb": "d_model",
    "embed_dim": "d_model", "hidden_size": "d_model", "d_k": "d_k", "dk": "d_k", "d_head": "d_k",
    "head_dim": "d_k", "d_q": "d_k", "dq": "d_k", "head_size": "d_k", "d_v": "d_v", "dv": "d_v",
}
_LABELS = [
    ("h", r"number\s+of\s+(?:attention\s+)?heads|head\s+count|anzahl\s+der\s+köpfe|número\s+de\s+cabezas"),
    ("n", r"sequence\s+length|length\s+of\s+the\s+sequence|number\s+of\s+tokens|context\s+length|sequenzlänge"
          r"|longitud\s+de\s+la\s+secuencia"),
    ("d_model", r"model\s+(?:dimension|dim|width|size)|embedding\s+(?:dimension|dim|size)|hidden\s+(?:size|dimension)"
                r"|dimension\s+of\s+the\s+model|modell(?:breite|dimension)|dimensión\s+del\s+modelo"),
    ("d_k", r"(?:per-)?head\s+(?:dimension|dim|size|width)|(?:key|query)\s+(?:dimension|dim|size)"
            r"|dimension\s+per\s+head"),
    ("d_v", r"value\s+(?:dimension|dim|size)"),
]
_VALUE = r"\d+(?:\^\d+)?"
_REL = {"=": "eq", ":": "colon", "<": "lt", ">": "gt", "≤": "le", "≥": "ge", "≠": "ne", "≈": "approx"}
_TERM = r"[^\s=<>≤≥≠≈,;:]+(?:\s[-+]\s[^\s=<>≤≥≠≈,;:]+)*"
_CHAIN = re.compile(rf"(?<![^\s(\[])({_TERM})\s*([=<>≤≥≠≈:])\s*({_TERM})((?:\s*[=<>≤≥≠≈]\s*{_TERM})*)")
_BOUND_WORDS = {"at most": "le", "up to": "le", "no more than": "le", "not more than": "le", "at least": "ge",
                "no fewer than": "ge", "no less than": "ge", "more than": "gt", "fewer than": "lt", "less than": "lt"}
#: the nouns that count heads and tokens ("two heads", "a two-head layer", "3 tokens", "3-token")
_NOUNS = {"h": r"(?:\s+(?:attention\s+)?heads\b|-heads?\b)", "n": r"(?:\s+(?:input\s+)?tokens\b|-tokens?\b)"}
_BOUND_NOUNS = {"h": r"\s*(?:attention\s+)?heads?\b", "n": r"\s*(?:input\s+)?tokens?\b"}
_EXCLUDED_BEFORE = re.compile(r"(?:first|last|next|previous|other|these|those|remaining|top|both|every|each|at\s+most"
                              r"|at\s+least|up\s+to|than|between\s+\S+\s+and|between)\s+$|[<>≤≥≠≈*/×^_]\s*$", re.I)


def _plain(text: str) -> str:
    """Prose with its inline math as plain words: ``$d_{\\text{model}} \\le 4$`` -> ``d_model ≤ 4``."""
    t = normalise(text)
    t = re.sub(r"\\[()\[\]]|\$+|`+|\*\*", " ", t)
    t = re.sub(r"\\(?:text|mathrm|textrm|operatorname|mathit|mathbf|boldsymbol|mathsf|textnormal|mbox)\s*\{([^{}]*)\}",
               r"\1", t)
    t = re.sub(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}", r"\1/\2", t)
    for cmds, sym in ((r"le|leq|leqslant", "≤ "), (r"ge|geq|geqslant", "≥ "), (r"ne|neq", "≠ "), (r"approx", "≈ "),
                      (r"lt", "< "), (r"gt", "> "), (r"in", "∈ "), (r"cdot|times", "*"), (r"quad|qquad", ", "),
                      (r"left|right", "")):
        t = re.sub(r"\\(?:%s)(?![A-Za-z])\s*" % cmds, sym, t)
    t = re.sub(r"([_^])\{([^{}\s]*)\}", r"\1\2", t)
    t = re.sub(r"\\_", "_", t)
    return re.sub(r"[ \t]+", " ", t)


def _name(term: str) -> str:
    """The dimension a symbol names (``n_heads`` -> ``h``), or ""."""
    t = term.strip().strip("()").strip()
    return _ALIASES.get(t, _ALIASES.get(t.lower(), "") if len(t) > 1 else "")


def _int(term: str) -> int | None:
    t = term.strip().rstrip(".,;:!?)").replace("{", "").replace("}", "")
    m = re.fullmatch(r"(\d+)(?:\^(\d{1,2}))?", t)
    if not m:
        return None
    return int(m.group(1)) ** int(m.group(2)) if m.group(2) else int(m.group(1))


def _sentences(prose: str) -> list[tuple[int, str]]:
    """(offset, sentence): split after ``. ! ? ।`` followed by a space, and at line breaks."""
    out, at = [], 0
    for m in re.finditer(r"(?<=[.!?।])\s+|\n+|$", prose):
        if prose[at:m.start()].strip():
            out.append((at, prose[at:m.start()]))
        at = m.end()
    return out


def _relation_chains(plain: str) -> list[tuple[int, list[str], list[str], str]]:
    """(offset, terms, operators, text) of each relation chain written in plain words."""
    out = []
    for m in _CHAIN.finditer(plain):
        before = plain[:m.start()].rstrip()
        if before and before[-1] in "*/+-^_":
            continue
        terms, ops = [m.group(1), m.group(3)], [m.group(2)]
        for op, term in re.findall(rf"\s*([=<>≤≥≠≈])\s*({_TERM})", m.group(4)):
            ops.append(op)
            terms.append(term)
        if ops[0] == ":" and len(ops) > 1:  # "Head size: d_k = ...": the label is not a side
            terms, ops = terms[1:], ops[1:]
        out.append((m.start(), [t.strip() for t in terms], ops, m.group(0).strip().rstrip(".,;")))
    return out


def settings(prose: str) -> list[Setting]:
    r"""Dimension settings a piece of prose states (inline ``$...$`` math included), in text order.

    A derived value (``d_k = d_{model}/h = 2``), a bound (``h \ge 2``, "at most 10 heads") and
    anything in a sentence with a local condition ("with h = 1 ...", see :func:`scope`) are not
    settings.

    >>> [(s.name, s.value) for s in settings("Number of heads (h): 2. d_model is 6. Only one token.")]
    [('h', 2), ('d_model', 6), ('n', 1)]
    """
    found: list[tuple[int, Setting]] = []
    for offset, sentence in _sentences(prose):
        if any(k in _DIMENSIONS for k in scope(sentence)):
            continue
        found += [(offset + k, s) for k, s in _sentence_settings(_plain(sentence))]
    out: list[Setting] = []
    seen: set[tuple[str, int]] = set()
    for _, s in sorted(found, key=lambda x: x[0]):
        if (s.name, s.value) not in seen:
            seen.add((s.name, s.value))
            out.append(s)
    return out


_DIMENSIONS = ("n", "d_model", "h", "d_k", "d_v")
_NOT_AFTER_VALUE = r"(?![\d.]*\d)(?!,\d{3})(?!\s*[-+*/^×])"


def _sentence_settings(plain: str) -> list[tuple[int, Setting]]:
    out: list[tuple[int, Setting]] = []
    for name, label in _LABELS:  # "Number of heads (h): 2", "model dimension 512", "head dimension d_k = 64"
        pattern = (rf"\b(?:{label})\s*(?:\(\s*[^()]{{1,20}}\)\s*)?(?:[:=]|\bis\b|\bof\b|\bequals?\b)?\s*"
                   rf"(?:[A-Za-z][\w{{}}\\]*\s*=\s*)?({_VALUE}){_NOT_AFTER_VALUE}")
        for m in re.finditer(pattern, plain, re.I):
            value = _int(m.group(1))
            if value is not None:
                out.append((m.start(), Setting(name, value, m.group(0).strip())))
    for m in re.finditer(rf"\b([A-Za-z]\w*)\s+(?:is|equals)\s+({_VALUE})\b{_NOT_AFTER_VALUE}", plain):
        name, value = _name(m.group(1)), _int(m.group(2))
        if name and value is not None:  # "d_model is 6"
            out.append((m.start(), Setting(name, value, m.group(0))))
    for at, terms, ops, text in _relation_chains(plain):  # "h = 2", "d_k = d_v = 64", "h: 2"
        if all(op == "=" for op in ops) or ops == [":"]:
            value = _int(terms[-1])
            names = [_name(t) for t in terms[:-1]]
            if value is not None and all(names):
                out += [(at, Setting(n, value, text)) for n in names]
    words = "|".join(_NUMBER_WORDS)
    for name, noun in _NOUNS.items():  # "two heads", "3 tokens"
        for m in re.finditer(rf"\b(\d+|{words})\b{noun}", plain, re.I):
            if _EXCLUDED_BEFORE.search(plain[:m.start()]):
                continue
            word = m.group(1).lower()
            value = int(word) if word.isdigit() else _NUMBER_WORDS[word]
            if value >= (2 if name == "h" else 1):
                out.append((m.start(), Setting(name, value, m.group(0).strip())))
    for m in re.finditer(r"\b(?:only\s+one|just\s+one|a\s+single|single)[\s-]+token\b|\bone\s+token\s+only\b",
                         plain, re.I):
        out.append((m.start(), Setting("n", 1, m.group(0))))
    return out


def constraints(prose: str) -> list[Constraint]:
    r"""Bounds and ranges in prose: ``1 \le N \le 10^4``, ``h \ge 2``, ``d_k < n``, "at most 10 heads".

    Names are the dimension names when known (``n_heads`` -> ``h``), else the symbol as written;
    ``\ne`` counts only against a number (``A_1 \ne A_2`` is a claim, not a bound).

    >>> [(c.name, c.op, c.value) for c in constraints("The length is $1 \\le N \\le 10^4$; at most 10 heads.")]
    [('N', 'ge', 1), ('N', 'le', 10000), ('h', 'le', 10)]
    """
    flip = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "ne": "ne"}
    found: list[tuple[int, Constraint]] = []
    words = "|".join(_BOUND_WORDS)
    for offset, sentence in _sentences(prose):
        plain = _plain(sentence)
        for at, terms, ops, text in _relation_chains(plain):
            for a, op, b in zip(terms, ops, terms[1:]):  # noqa: B905 - one term more than operators
                rel = _REL[op]
                va, vb = _int(a), _int(b)
                if rel not in flip or rel == "ne" and va is None and vb is None:
                    continue
                if va is None and _symbolic(a):
                    found.append((offset + at, Constraint(_name(a) or _clean(a), rel, _clean(b) if vb is None else vb,
                                                          text)))
                elif vb is None and va is not None and _symbolic(b):
                    found.append((offset + at, Constraint(_name(b) or _clean(b), flip[rel], va, text)))
        for name, noun in _BOUND_NOUNS.items():  # "at most 10 heads", "between 1 and 8 heads"
            for m in re.finditer(rf"\b({words})\s+({_VALUE}){noun}", plain, re.I):
                value = _int(m.group(2))
                if value is not None:
                    found.append((offset + m.start(), Constraint(name, _BOUND_WORDS[m.group(1).lower()], value,
                                                                 m.group(0))))
            for m in re.finditer(rf"\bbetween\s+({_VALUE})\s+and\s+({_VALUE}){noun}", plain, re.I):
                lo, hi = _int(m.group(1)), _int(m.group(2))
                if lo is not None and hi is not None:
                    found += [(offset + m.start(), Constraint(name, "ge", lo, m.group(0))),
                              (offset + m.start(), Constraint(name, "le", hi, m.group(0)))]
        for m in re.finditer(rf"\b([A-Za-z]\w*)\s+(?:is\s+|must\s+be\s+)?({words})\s+({_VALUE})\b", plain, re.I):
            name, value = _name(m.group(1)), _int(m.group(3))
            if name and value is not None:  # "d_model is at most 1024"
                found.append((offset + m.start(), Constraint(name, _BOUND_WORDS[m.group(2).lower()], value,
                                                             m.group(0))))
    return [c for _, c in sorted(found, key=lambda x: x[0])]


def _symbolic(term: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z][A-Za-z0-9_']*(?:\s[-+]\s(?:\d+|[A-Za-z][A-Za-z0-9_']*))*", _clean(term)))


def _clean(term: str) -> str:
    return term.strip().rstrip(".,;:!?").strip("()")


_COND_ANYWHERE = r"if|when|whenever|assuming|suppose|wenn|falls|si|cuando"
_COND_CLAUSE = r"with|for|given|take|mit|für|bei|con|para"
_HEAD_WORDS = r"head|kopf|cabeza"
_PREPOSITIONS = r"for|in|of|from|at|within|für|im|bei|von|des|para|en|de|del"
_ARTICLES = r"(?:the|den|dem|der|die|das|la|el)\s+"
_BINDING = r"([A-Za-z]\w*)\s*=\s*(\d+)(?![\d.])"


def scope(sentence: str) -> dict[str, int]:
    """Values a condition binds only inside ``sentence``: dimensions ("with h = 1", "for n = 3, d_k = 1"),
    ``head`` ("for head 2", "for the second head", "für Kopf 2") and ``token`` ("the first token",
    "token 1"), numbered as written.  "with"/"for" count at the start of a clause, "if"/"when"/
    "whenever" anywhere.

    >>> scope("Indeed, for $n = 3$, $d_k = 1$ and logits $xx^T$ ..."), scope("para la cabeza 2, el primer token")
    ({'n': 3, 'd_k': 1}, {'head': 2, 'token': 1})
    """
    plain = _plain(sentence)
    out: dict[str, int] = {}
    starts = [m.end() for m in re.finditer(rf"\b(?:{_COND_ANYWHERE})\b", plain, re.I)]
    starts += [m.end() for m in re.finditer(rf"(?:^|[(,;:])\s*(?:{_COND_CLAUSE})\b", plain, re.I)]
    for start in sorted(starts):
        m = re.match(rf"(?:\s*[A-Za-z\-]+,?){{0,3}}?\s*{_BINDING}", plain[start:])
        if not m:
            continue
        at = start + m.start(1)
        while True:
            b = re.match(rf"\s*{_BINDING}", plain[at:])
            if not b or not _name(b.group(1)):
                break
            out.setdefault(_name(b.group(1)), int(b.group(2)))
            at += b.end()
            sep = re.match(r"\s*(?:,|and\b|und\b|y\b|e\b|&)\s*", plain[at:])
            if not sep:
                break
            at += sep.end()
    ordinals = "|".join(sorted(_ORDINALS, key=len, reverse=True))
    heads = [(m.start(), int(m.group(1))) for m in (
        re.search(rf"\b(?:{_PREPOSITIONS})\s+(?:{_ARTICLES})?(?:attention\s+)?(?:{_HEAD_WORDS})\s*#?\s*(\d+)\b", plain,
                  re.I),
        re.search(rf"\b(?:{_HEAD_WORDS})\s*(\d+)'s\b", plain, re.I),
        re.search(rf"^\s*(?:{_HEAD_WORDS})\s*(\d+)\s*[:\-–]", plain, re.I)) if m]
    heads += [(m.start(), _ORDINALS[m.group(1).lower()]) for m in (
        re.search(rf"\b(?:{_PREPOSITIONS})\s+(?:{_ARTICLES})?({ordinals})[nrs]?\s+(?:attention\s+)?(?:{_HEAD_WORDS})\b",
                  plain, re.I),) if m]
    if heads:
        out["head"] = min(heads)[1]
    tokens = [(m.start(), int(m.group(1))) for m in (re.search(r"\btoken\s*#?\s*(\d+)\b", plain, re.I),) if m]
    tokens += [(m.start(), _ORDINALS[m.group(1).lower()])
               for m in (re.search(rf"\b({ordinals})[nrs]?\s+token\b", plain, re.I),) if m]
    if tokens:
        out["token"] = min(tokens)[1]
    return out


def hypothetical(sentence: str) -> bool:
    """Does the sentence speak of another example ("would", "instead", "for comparison", "e.g.")?
    A scope in such a sentence never changes the document's own example.

    >>> hypothetical("(With $h = 1$ we would instead have $d_k = 4$.)"), hypothetical("With $h = 8$,")
    (True, False)
    """
    return bool(re.search(r"\b(?:would|instead|for comparison|for example|for instance|e\.g\.|imagine|had we"
                          r"|würde|wäre|zum beispiel|z\.\s?b\.|sería|por ejemplo)\b|^\s*\(", sentence, re.I))
