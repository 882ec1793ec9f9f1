r"""Unicode math to LaTeX, before any formula is read (the checker's first step on a formula's text).

``≈ ≤ ≥ ≠ × · √ ᵀ ^⊤ − ∈ ℝ →``, super/subscript characters, ASCII ``<= >= != ->`` become LaTeX; layout-only
commands are dropped.  See :func:`normalise`.
"""

from __future__ import annotations

import re
from functools import partial

__all__ = ["normalise"]

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


def _group_end(text: str, at: int) -> int:
    """The index after the balanced ``{...}`` group that starts at ``at`` (or after the one token there)."""
    if text[at:at + 1] != "{":
        token = re.match(r"\\[A-Za-z]+|.", text[at:], re.S)
        return at + (len(token.group(0)) if token else 0)
    depth = 0
    for k in range(at, len(text)):
        depth += {"{": 1, "}": -1}.get(text[k], 0)
        if depth == 0:
            return k + 1
    return len(text)


def _braced(text: str) -> str:
    r"""``\underbrace{3 \cdot 2 d^2 n}_{Q,K,V}`` (or ``\overbrace{...}^{...}``) as the bracketed term it labels,
    ``(3 \cdot 2 d^2 n)``: the label is a caption, not a factor."""
    out, at = [], 0
    for m in re.finditer(r"\\(?:underbrace|overbrace)\s*(?=\{)", text):
        if m.start() < at:
            continue
        end = _group_end(text, m.end())
        label = re.match(r"\s*[_^]\s*", text[end:])
        after = _group_end(text, end + label.end()) if label else end
        out += [text[at:m.start()], "(", _braced(text[m.end() + 1:end - 1]), ")"]
        at = after
    return "".join(out) + text[at:]


def normalise(tex: str) -> str:
    r"""Unicode math to LaTeX and layout-only commands removed; newlines are kept (rows stay rows).

    ``≈ ≤ ≥ ≠ × · √ ᵀ ^⊤ − ∈ ℝ →``, super/subscript characters (``d²``, ``head₁``, ``(A₁)ᵢⱼ``) and
    ASCII ``<= >= != ->`` become LaTeX; ``^{\top}``, ``^\intercal`` become ``^T``; plain-text
    subscripts ``d_model`` become ``d_{model}``; ``\displaystyle``, ``\! \, \; \:``, ``\big(``,
    ``\left.``, ``\right.``, ``\label``/``\tag`` are dropped (``\quad`` is kept: it separates
    statements).

    >>> normalise("X ∈ ℝ^{2×4}, rank(A) ≤ 2, x = −1, d_model")
    'X \\in \\mathbb{R}^{2\\times4}, rank(A) \\le 2, x = -1, d_{model}'
    >>> normalise("W_Q^i ∈ R^{d×d_k}")
    'W_Q^i \\in \\mathbb{R}^{d\\times d_k}'
    >>> normalise(r"\left.\frac{a}{b}\,\right|_{x} \displaystyle\sum")
    '\\frac{a}{b}\\right|_{x} \\sum'
    >>> normalise(r"\underbrace{3 \cdot 2 d^2 n}_{Q,K,V} + \overbrace{2 d^2 n}^{W_O}")
    '(3 \\cdot 2 d^2 n) + (2 d^2 n)'
    """
    t = str(tex)
    t = re.sub(r"\^\s*\{\s*⊤\s*\}|\^\s*⊤|⊤", "^T", t)
    t = _SCRIPT_RUN.sub(_script, t)
    for ascii_op, command in _ASCII_OPS:
        t = re.sub(re.escape(ascii_op) + r"(?=([A-Za-z]?))", partial(_spaced, command), t)
    t = re.sub(r"(?<=[A-Za-z0-9}\)'])_([a-z]{2,}[0-9]*|[A-Z][0-9]+|[0-9]{2,})(?![A-Za-z0-9])", r"_{\1}", t)
    t = re.sub(r"(?<=[A-Za-z0-9}\)])\^(-?[0-9]+\.[0-9]+|-?[0-9]{2,}|-[0-9])(?![0-9.])", r"^{\1}", t)  # e^-0.6
    t = _sqrt(t)
    if "brace" in t:
        t = _braced(t)
    t = _LAYOUT.sub(_layout, t)
    t = re.sub(r"(\\in\s*)R(?=\s*\^)", r"\1\\mathbb{R}", t)  # X ∈ R^{d×n} in plain text: the reals
    return _TRANSPOSE.sub("^T", t)


