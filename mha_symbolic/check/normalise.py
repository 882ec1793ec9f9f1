r"""Unicode math to LaTeX, before any formula is read (the checker's first step on a formula's text).

``≈ ≤ ≥ ≠ × · √ ᵀ ^⊤ − ∈ ℝ →``, super/subscript characters, ASCII ``<= >= != ->`` become LaTeX; layout-only
commands are dropped.  See :func:`normalise`.
"""

from __future__ import annotations

import re
from functools import partial

__all__ = ["normalise", "unicode_formulas"]

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


#: the relations a formula in plain text states
_RELATIONS = frozenset("= ≈ ≤ ≥ ≠ < > ∈ ≃ ⩽ ⩾".split())
#: operators that join the tokens of a formula written in plain text
_OPERATORS = _RELATIONS | frozenset("+ − - · × / ± ⋅ * →".split())
#: the marks only mathematics writes: a span holding none of them is left to the prose readers ("n = 3 tokens",
#: "rank(Y) ≤ 4"), a size written with a letter subscript alone (dₖ = 2) too
_MATH_MARK = re.compile("[ᵀ⊤ℝ√·⋅×∈₀₁₂₃₄₅₆₇₈₉⁰¹²³⁴⁵⁶⁷⁸⁹]")
#: one token of a formula: a name of one to three letters with sub/superscripts (q₁, Kᵀ, QKᵀ, W_Q, d_model), a
#: number, a function of the vocabulary applied to its argument (Var(q·k), softmax(...)), or a product or quotient
#: of those written without spaces (q₁·k₂, QKᵀ/√2, 2·2, ℝ^{2×3}); never a word of prose
_ATOM = re.compile(r"""
    [(\[]*
    (?: (?:softmax|Var|var|rank|Concat|head|exp|min|max|E)(?=\() | [A-Za-z]{1,3}(?![A-Za-z]) | d_[a-z]+ | √ | ℝ
        | \d+(?:[.,]\d+)? )
    (?: [ᵀ⊤⁰¹²³⁴⁵⁶⁷⁸⁹₀₁₂₃₄₅₆₇₈₉ₐₑₒₓₕₖₗₘₙₚₛₜᵢⱼᵥ'′] | _\{?[A-Za-z0-9]+\}? | \^\{[^{}\s]*\} | \^[A-Za-z0-9]
        | \([^()]*(?:\([^()]*\)[^()]*)*\) | [·⋅×/√] | [A-Za-z](?![A-Za-z]{3}) | \d+(?:[.,]\d+)? | [.,](?=\d) )*
    [)\]]*
    """, re.X)


def unicode_formulas(text: str) -> list[tuple[int, int]]:
    """Where ``text`` (prose, outside math delimiters) holds a formula written in Unicode: a run of formula tokens
    joined by operators, with a relation and a mark only mathematics writes (ᵀ, ℝ, √, ·, ×, ∈, ≈, digit scripts).
    The prose grammar reads what is left (``n = 3 tokens``, ``dₖ = 2``).

    >>> t = "So Kᵀ ∈ ℝ^{2×3} y la matriz QKᵀ ∈ ℝ^{3×3}. Por ejemplo, q₁·k₂ = 2·2 + 0·0 = 4 y n = 3 tokens."
    >>> [t[a:b] for a, b in unicode_formulas(t)]
    ['Kᵀ ∈ ℝ^{2×3}', 'QKᵀ ∈ ℝ^{3×3}', 'q₁·k₂ = 2·2 + 0·0 = 4']
    """
    tokens = []
    for m in re.finditer(r"[^\s(]*\((?:[^()\n]|\([^()\n]*\)){0,80}\)\S*|\S+", text):  # Var(q·k / √dₖ): one token
        word = m.group(0).rstrip(".,;:!?")
        end = m.start() + len(word)
        if not word:
            continue
        kind = "op" if word in _OPERATORS else "atom" if _is_atom(word) else "word"
        tokens.append((m.start(), end, word, kind))
        if end < m.end():  # a sentence's full stop or a comma after the token ends the formula there
            tokens.append((end, end, "", "word"))
    out: list[tuple[int, int]] = []
    run: list[tuple[int, int, str, str]] = []
    for tok in tokens + [(len(text), len(text), "", "word")]:
        if tok[3] != "word" and (not run or run[-1][3] == "atom" or tok[3] == "atom"):  # X WQ₁: a product
            run.append(tok)
            continue
        while run and run[-1][3] == "op":
            run.pop()
        while run and run[0][3] == "op":
            run.pop(0)
        body = text[run[0][0]:run[-1][1]] if run else ""
        if run and any(t[2] in _RELATIONS for t in run) and _MATH_MARK.search(body) and _balanced(body) and \
                _NAMED.search(re.sub(_UNITS, " ", body)):
            out.append((run[0][0], run[-1][1]))
        run = [tok] if tok[3] == "atom" else []
    return out


#: units after a number: an amount's arithmetic (128 KB × 131,072 = 16.7 GB) is the amounts reader's, not a formula
_UNITS = r"(?<![A-Za-z])(?:[KMGTP]i?B|B|bytes?|[kKMGT]?FLOPs?|ms|[KMGT])(?![A-Za-z])"
#: what makes a run of numbers a formula: a name, a transpose, a root or a set
_NAMED = re.compile(r"[A-Za-zᵀ⊤ℝ√∈]")


def _is_atom(word: str) -> bool:
    """A token of a formula: see _ATOM; a short word of prose (``so``, ``La``, ``es``, ``and``) is none."""
    if word.lower() in _PROSE or not _ATOM.fullmatch(word):
        return False
    return not (re.fullmatch(r"[A-Z]?[a-z]{2,3}", word) and word.lower() not in ("exp", "min", "max", "log", "ln",
                                                                              "det", "var", "sin", "cos"))


def _balanced(text: str) -> bool:
    """Every bracket of ``text`` closed in it (``[[1], [0]]`` cut at its comma is no formula)."""
    depth = {"(": 0, "[": 0, "{": 0}
    for ch in text:
        if ch in depth:
            depth[ch] += 1
        elif ch in ")]}":
            opener = {")": "(", "]": "[", "}": "{"}[ch]
            depth[opener] -= 1
            if depth[opener] < 0:
                return False
    return not any(depth.values())


#: short words of the languages read, never a formula's token
_PROSE = frozenset("a an and as at be by de del do el en es et for if in is it la le los las o of on or so su "
                   "the to un una und y e".split())


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


