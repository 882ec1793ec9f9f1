r"""Statements written outside math delimiters: formula lines of plain text and code quoted in prose.

Explanation
===========

* A **plain formula line** -- ``Q₂K₂ᵀ / √3 ≈ [[1.155, 0.577], [0.695, 0.000]]`` in a ``.txt`` file or a
  paragraph -- has a relation and no words beyond the names of the mathematics (softmax, rank, head, ...);
  it is normalised (:func:`.read.normalise`: Unicode sub/superscripts, ``√``, ``≈``) and judged like math.
* **Code in prose** -- ``\`scores1 / np.sqrt(dk)\` ≈ [[1.732, ...]]``, ``\`weights2.shape\` is \`(4, 3)\```,
  ``\`np.linalg.matrix_rank(weights1) <= dk\` is \`True\``` -- the quoted expression is read with
  :func:`._code_expr.code_expression` (through ``ast``, never run) in the model's names and compared with the
  stated value, shape or truth value.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from sympy import ImmutableMatrix
from sympy import latex as sympy_latex

from ..errors import MHASymbolicError
from .judge import judge
from .model import DocumentModel

__all__ = ["as_math", "formula_line", "formula_runs", "judge_code_prose", "judge_traced_shapes", "numeric_function",
           "shape_chain", "holds_if_rounded"]

_VOCABULARY = {"softmax", "rank", "head", "concat", "multihead", "sqrt", "exp", "var", "det", "max", "min",
               "diag", "attention", "model", "log", "ln", "mathrm", "mathbb", "frac", "left", "right", "cdot", "times",
               "top", "approx", "le", "ge", "ne", "in", "to", "begin", "end", "bmatrix", "pmatrix", "lt", "gt", "sum"}
_RELATION = re.compile(r"=|≈|≤|≥|≠|<|>|\\approx|\\le|\\ge|\\ne|∈")


#: the label a line of an exercise or a list opens with: "a)", "(b)", "iv)", "3."
_LABEL = re.compile(r"^\s*(?:\(?[A-Za-z]\)|\(?[ivx]{1,4}\)|\d{1,2}[.)])\s+")


def formula_line(text: str) -> str | None:
    """The line as LaTeX when it is a formula written in plain text, else None."""
    if "$" in text or "`" in text or not _RELATION.search(text):
        return None
    text = _LABEL.sub("", text)  # " a) d_k = 768 / 12 = 64": the label of a sub-question, not part of the formula
    from .model import dim_name
    from .read import normalise

    def size(m: re.Match[str]) -> str:  # a size's code name (n_kv_heads, head_dim) as the size
        name = dim_name(m.group(0))
        return m.group(0) if name is None else {"d_model": "d_{model}"}.get(name, name)

    text = re.sub(r"(?<![\\{])\b[A-Za-z]+(?:_[A-Za-z]+)+\b", size, text)
    text = text.replace("**", "^")  # code's power: 1024**2, d_k**0.5
    text = re.sub(r"(?<![\d.,(\[])\d{1,3}(?:,\d{3})+(?![\d,)\]])", lambda m: m.group(0).replace(",", ""), text)  # 4,096
    tex = normalise(re.sub(r"\s+\(\s*\d+\s*[×x]\s*\d+\s*\)\s*$", "", text.strip().rstrip(".,;")))  # "(4 × 2)"
    tex = re.sub(r"(?<=\d)\s*x\s*(?=\d)", r" \\times ", tex)  # "(3 x 3) * (3 x 2) = 3 x 2": sizes by an ASCII x
    tex = re.sub(r"(?<=\))\s*[x@]\s*(?=\()", r" \\times ", tex)  # "(10, 64) x (64, 10)", "(10, 64) @ (64, 10)"
    tex = re.sub(r"(?<![*^])\*(?![*])", r" \\cdot ", tex)  # code's product: X * W_Q
    words = re.findall(r"[A-Za-z]{3,}", re.sub(r"\\[A-Za-z]+|d_\{model\}", " ", tex))
    if any(w.lower() not in _VOCABULARY for w in words):
        return None
    return _python_lists(math_words(tex))


#: a word of a sentence, not of its mathematics: a lower-case or capitalised word of two letters or more, or an
#: acronym of three, that is not a name of the mathematics (softmax, rank, det, ...)
_WORD = re.compile(r"[A-Za-z][a-z]+|[A-Z]{3,}")


def _is_word(bare: str) -> bool:
    """A word of the sentence in any language (``são``, ``für``, ``শব্দ``): letters, the later ones not capitals,
    none a modifier letter (``dₖ`` is d_k) and none Greek (``α``, ``σ`` are the mathematics')."""
    if bare.isascii():
        return bool(_WORD.fullmatch(bare))
    import unicodedata

    return len(bare) >= 2 and bare.isalpha() and not any(
        c.isupper() or unicodedata.category(c) == "Lm" or "\u0370" <= c <= "\u03ff" for c in bare[1:]) and \
        not "\u0370" <= bare[0] <= "\u03ff"


def _is_mark(bare: str) -> bool:
    """A mark a writer puts beside a formula (``✓``, ``✗``, an emoji, an arrow pointing back at it ``←``): symbols
    that are no mathematics (Unicode's "other symbols"), which end a formula run as a word does."""
    import unicodedata

    return bool(bare) and all(unicodedata.category(c) == "So" or c in "←⟵⇐" for c in bare)


def formula_runs(text: str) -> list[str]:
    r"""The formulas written inside a plain sentence ("so det(QKᵀ) = 0 and rank(QKᵀ) = 2", "as the bound
    rank(QKᵀ) ≤ min(3, 2) = 2 predicts"): the longest runs of it with no word of the sentence, each holding a
    relation and a matrix, a function or a list (a size alone, "n = 3", is the grammar's), as LaTeX like
    :func:`formula_line`.

    >>> formula_runs("so det(QKᵀ) = 0 and rank(QKᵀ) = 2.") == [r"\det(QK^T) = 0", r"\mathrm{rank}(QK^T) = 2"]
    True
    >>> formula_runs("With n = 3 tokens it is fine.")
    []
    """
    if "$" in text or "`" in text or not _RELATION.search(text):
        return []
    from .numerals import scaled

    runs: list[tuple[str, str]] = []  # each run with the words after it ("e^20 ≈ 485 million": a scale word)
    current: list[str] = []
    tokens = text.split()
    for i, token in enumerate(tokens):
        bare = token.strip(".,;:!?()\"'")
        article = bare in ("a", "an") and (i > 0 and tokens[i - 1].endswith(",") or i + 1 < len(tokens) and
                                            tokens[i + 1][:1].isdigit())  # ", a 3×3 matrix": a word of the sentence
        if _is_word(bare) and bare.lower() not in _VOCABULARY or _is_mark(bare) or article:
            runs.append((" ".join(current), " ".join(tokens[i:]) if current and current[-1][-1:].isdigit() else ""))
            current = []
        else:
            current.append(token)
    runs.append((" ".join(current), ""))
    runs = [(part, after if k == len(parts) - 1 else "") for run, after in runs  # "W_Q ∈ ℝ^{d×d} → Q ∈ ℝ^{n×d}":
            for parts in [_consequences(run)] for k, part in enumerate(parts)]  # two statements, the second drawn
    runs = [part for whole, rest in runs for part in _aside(whole, rest)]
    out = []
    for run, after in runs:
        run = re.sub(r"^\(?\d+\)?\s*:\s*", "", run.strip(" ,;:."))  # "Row 2: e^0.5 ≈ 1.6487": the label is the prose's
        run = re.sub(r"^(?i:softmax|attention|head|model)\s+(?=[^\W\d])", "", run)  # "for softmax p = ...": a noun
        whole = formula_line(run) if _RELATION.search(run) else None
        if whole is not None and after and scaled(whole, " " + after) != whole:  # "e^20 ≈ 485 million": its scale
            if numeric_function(whole):
                out.append(scaled(whole, " " + after))
            continue  # (an amount with its scale word is the prose's: prose_amounts)
        if whole is not None and shape_chain(whole):  # "(10, 64)(64, 10) = (10, 10)": its parentheses are its own
            out.append(whole)
            continue
        while run.startswith("(") and (_closes_at_end(run) or run.count("(") > run.count(")")):
            run = run[1:-1].strip() if _closes_at_end(run) else run[1:].strip()  # "([3, 1, 3] = [1, 0, 2] + ...)":
            # the sentence's parenthesis; "(e^0.5, e²)/(...) = (0.3775, 0.6225)" begins with a tuple of its own
        while run.endswith(")") and run.count(")") > run.count("("):
            run = run[:-1].strip()
        named = re.sub(r"\b(?:[kKMGTP]i?B|B|[kKMGTP]?FLOPs?|bytes?)\b", "", run)  # units are no matrices:
        if not _RELATION.search(run):  # "128 KB x 2 = 256 KB" is the prose's arithmetic (prose_amounts)
            continue
        tex = formula_line(run)
        if tex is not None and (re.search(r"[A-Z\[√]|rank|det|softmax|min|max", named) or numeric_function(tex)
                                or _TUPLE.search(tex) and not _TIMES_TUPLE.search(tex) or GREEK_PARAMETER.match(tex)):
            out.append(tex)  # (a tuple of numbers is a vector, never a size; a Greek letter names a parameter)
    return out


def as_math(text: str) -> str | None:
    r"""The line with each formula written in plain text inside it put in ``$...$`` as LaTeX (:func:`formula_line`),
    so that it is read as math is -- its bindings, definitions, shapes and ranks -- or None when the line has no such
    formula or one that is not clean to delimit (a formula whose run :func:`formula_runs` cuts in several, a number
    with a scale word after it: "e^20 ≈ 485 million").

    >>> as_math("the head only sees the matrix Mᵢ = Wᵢ^Q (Wᵢ^K)ᵀ.")
    'the head only sees the matrix $M_{i} = W_{i}^Q (W_{i}^K)^T$.'
    >>> as_math("Since n = 512 > dₖ = 64, rank(Sᵢ) ≤ min(n, dₖ) = 64: at most 64.")
    'Since n = 512 > dₖ = 64, $\\mathrm{rank}(S_{i}) \\le \\min(n, d_{k}) = 64$: at most 64.'
    >>> as_math("Each head works in dₖ = d_model / h = 512 / 8 = 64 dimensions.")
    'Each head works in $d_{k} = d_{model} / h = 512 / 8 = 64$ dimensions.'
    >>> as_math("With n = 3 tokens it is fine."), as_math("so e^20 ≈ 485 million")
    (None, None)
    """
    if "$" in text or "`" in text or not _RELATION.search(text):
        return None
    from .numerals import scaled

    spans: list[tuple[int, int]] = []
    start = end = -1
    tokens = list(re.finditer(r"\S+", text))
    for i, m in enumerate(tokens):
        bare = m.group(0).strip(".,;:!?()\"'")
        article = bare in ("a", "an") and (i > 0 and tokens[i - 1].group(0).endswith(",") or i + 1 < len(tokens)
                                            and tokens[i + 1].group(0)[:1].isdigit())
        noun = bare.isalpha() and m.group(0)[-1:] in ",:;"  # "Per head, W_Qⁱ ...": a noun, then a list
        if _is_word(bare) and (bare.lower() not in _VOCABULARY or noun) or _is_mark(bare) or article:
            if start >= 0:
                spans.append((start, end))
            start = -1
        else:
            start, end = (m.start() if start < 0 else start), m.end()
    if start >= 0:
        spans.append((start, end))
    pieces: list[tuple[int, int, str]] = []
    for a, b in spans:
        for x, y in _top_level_parts(text, a, b):  # "n = 512 > d = 64, rank(S) ≤ 64": two formulas
            while y > x and text[y - 1] in ".,;:" or text[x:y].endswith(")") and \
                    text[x:y].count(")") > text[x:y].count("("):
                y -= 1
            while x < y and text[x] == "(" and text[x:y].count("(") > text[x:y].count(")"):
                x += 1
            while re.match(r"(?:in|to)\s", text[x:y]):  # "works in dₖ = ...": the sentence's word, not ∈
                x += 3
            label = _LABEL.match(text[x:y])  # "a) dₖ = ...": the label of a sub-question stays the prose's
            x += label.end() if label else 0
            found = formula_runs(text[x:y]) or _size_chain(text[x:y])
            if not found:
                continue
            whole = formula_line(text[x:y])
            if len(found) > 1 or whole is None or found[0] != whole or \
                    scaled(whole, " " + text[y:].lstrip()) != whole or not _delimited(text[x:y], whole):
                return None  # the line is left to the readers of plain text
            pieces.append((x, y, whole))
    if not pieces:
        return None
    ends, starts = [0] + [y for _, y, _ in pieces], [x for x, _, _ in pieces] + [len(text)]
    rest = "".join(text[a:b] for a, b in zip(ends, starts, strict=True))
    rest = re.sub(r"\S+\s*=\s*\d+\s*[<>≤≥]\s*\S+\s*=\s*\d+", "", rest)  # "n = 512 > dₖ = 64": two sizes compared
    if re.search(r"[^\W\d]\w*\s*=\s*\d", rest):
        return None  # "d_model = 512, ... rank(M) ≤ 64": sizes set in the words, which the readers of plain text read
    out, last = [], 0
    for x, y, tex in pieces:
        out += [text[last:x], "$", tex, "$"]
        last = y
    return "".join(out) + text[last:]


#: what a delimited formula may be: a rank, a shape, a definition of a matrix by a product of matrices
_DELIMITED = re.compile(r"\\mathrm\{rank\}|\\in\s*\\mathbb\{R\}|^\s*[A-Z](?:_\{?\w+\}?)?(?:\^\{?\w+\}?)?\s*=\s*"
                        r"(?:\(?[A-Z](?:_\{?\w+\}?)?(?:\^\{?\w+\}?)?\)?(?:\^\{?(?:T|\\top)\}?)?\s*)+$")


def _delimited(run: str, tex: str) -> bool:
    """May the formula ``run`` (read as ``tex``) be put in ``$...$``?  Only what math reads without guessing where
    the formula ends: a rank, a shape, a matrix defined as a product of matrices, a chain of sizes
    (:func:`_size_chain`); not one that crosses the end of a sentence or a clause ("= 128. In bf16"), holds units
    (amounts are the prose's), a single-letter word of the sentence ("K_i y V_i") or a list that goes on after its
    relation ("Q_i = X W_Q^i, K_i").  The rest stays with the readers of plain text."""
    if re.search(r"[.:;!?](?=\s)", run) or re.search(r"\b(?:[KMGT]i?B|B|bytes?|FLOPs?|tokens?)\b", run):
        return False
    if re.search(r"(?<=\s)[aeouy](?=\s|$)", run):
        return False
    if re.search(r"(?:=|≈|≤|≥|<|>|∈|\\le|\\ge|\\in|\\approx)[^,()\[\]{}]*,\s", run):
        return False  # a relation, then a comma outside brackets: the sentence's list goes on
    if re.match(r"\s*(?:[QKVSAXZOPWYH]|\\mathrm\{head\})(?:_\{?\w+\}?)?(?:\^\{?\w+\}?)?\s*(?:=|\\in)|\s*W_", tex):
        return False  # "Q = X·W_Q", "S = QKᵀ", "X ∈ ℝ^{n×d}", "W_Q, W_K ∈ ℝ^{d×dₖ}": a letter of the model defined or
        # declared, which the readers of plain text keep (with the convention it declares and the numbers the document
        # gives it later, "Q = [[1, 0], ...]")
    return bool(_DELIMITED.search(tex) or _size_chain(run))


def _size_chain(run: str) -> list[str]:
    """A chain that opens with a size and computes it from written numbers ("dₖ = d_model / h = 512 / 8 = 64"), as
    LaTeX in a list, else an empty list (a size set alone, "n = 3", is the grammar's)."""
    from .model import dim_name

    tex = formula_line(run)
    arithmetic = r"\d\s*[-+*/]\s*\d|\\(?:cdot|times)"
    if tex is None or len(re.findall(r"=|\\approx", tex)) < 2 or not re.search(arithmetic, tex):
        return []
    return [tex] if dim_name(re.split(r"=|\\approx", tex)[0].strip()) is not None else []


def _top_level_parts(text: str, a: int, b: int) -> list[tuple[int, int]]:
    """``text[a:b]`` cut at each ", " outside brackets where both sides hold a relation."""
    cuts, depth = [], 0
    for k in range(a, b):
        depth += (text[k] in "([{") - (text[k] in ")]}")
        if depth == 0 and text[k] == "," and text[k + 1:k + 2] == " ":
            cuts.append(k)
    parts, last = [], a
    for k in cuts:
        if _RELATION.search(text[last:k]) and _RELATION.search(text[k + 1:b]):
            parts.append((last, k))
            last = k + 2
    return parts + [(last, b)]


def _aside(run: str, after: str) -> list[tuple[str, str]]:
    """A run with a bracket opened after a space and never closed in it ("W^O = [1 0; 0 1] (det = 1" before ", so
    full rank"), or closed at its end round a relation of its own ("head₁ = A₁V₁ (3×3 times 3×2 = 3×2)"): the formula,
    and the remark in the bracket, apart.

    >>> _aside("W = [1 0; 0 1] (det = 1", "")
    [('W = [1 0; 0 1]', ''), ('det = 1', '')]
    >>> _aside("h = A V (3×3 times 3×2 = 3×2)", ""), _aside("y = (0.5, 0.5)", "")
    ([('h = A V', ''), ('3×3 times 3×2 = 3×2', '')], [('y = (0.5, 0.5)', '')])
    """
    open_at: list[int] = []
    for k, ch in enumerate(run):
        if ch == "(":
            open_at.append(k)
        elif ch == ")" and open_at:
            open_at.pop()
    cut = next((k for k in open_at if k > 0 and run[k - 1] == " "), None)
    if cut is not None:
        return [(run[:cut].rstrip(), ""), (run[cut + 1:].lstrip(), after)]
    last = re.search(r" \(([^()]*)\)[\s,;:.]*$", run)  # "head₁ = A₁V₁ (3×3 times 3×2 = 3×2)": a formula after a formula
    if last and _RELATION.search(last.group(1)) and _RELATION.search(run[:last.start()]) and \
            not re.search(r"[=<>≤≥≈+*/·×-]\s*$", run[:last.start()]):
        return [(run[:last.start()], ""), (last.group(1), after)]
    return [(run, after)]


#: a parameter named by a Greek letter, perhaps squared (``σ² = 0.5`` is ``\sigma^{2} = 0.5``): never a size
GREEK_PARAMETER = re.compile(r"\s*\\(?:alpha|beta|gamma|delta|epsilon|lambda|mu|sigma|tau)(?![A-Za-z])"
                             r"\s*(?:\^\s*\{?\s*2\s*\}?)?\s*")
#: tuples multiplied, (2, 8, 10, 64) @ (2, 8, 64, 10): shapes, the shape readers' (tracing.shape_products)
_TIMES_TUPLE = re.compile(r"\)\s*(?:\\times|@|×)\s*\(")
#: a tuple of two or more numbers written in a sentence's formula: (2, 1, 0)
_TUPLE = re.compile(r"\(\s*-?\d+(?:\.\d+)?\s*,\s*-?\d")


def _consequences(run: str) -> list[str]:
    """A run cut at each arrow (``→``, ``⇒``) that has a relation on both sides: a statement and what it gives
    (``(3×2)(2×3) → 3×3`` or ``row 2 → [0.5 0.5]`` are one statement each: no relation on one side)."""
    parts = re.split(r"\s(?:→|⇒|⟹)\s", run)
    if len(parts) < 2 or not all(_RELATION.search(x) for x in parts):
        return [run]
    return parts


def _closes_at_end(run: str) -> bool:
    """Does the parenthesis that opens ``run`` close at its very end (so that it encloses all of it)?"""
    depth = 0
    for k, ch in enumerate(run):
        depth += (ch == "(") - (ch == ")")
        if depth == 0:
            return k == len(run) - 1
    return False


def numeric_function(tex: str) -> bool:
    r"""Arithmetic of written numbers through a function (``\sqrt{128} \approx 11.31``, ``e^{3.18} \approx 12.1``,
    ``\exp(2) \approx 7.389``): no name in it but the functions', so it is computed from what it writes."""
    if not re.search(r"\\(?:sqrt|exp|log|ln)\b|(?<![A-Za-z\\])e\s*\^", tex):
        return False
    from .numbers import numbers_only

    return numbers_only(tex)


def holds_if_rounded(doc: DocumentModel, sides: list[str], ops: list[str]) -> bool:
    r"""Does every ``=``/``≈`` link of a chain of written numbers hold once each decimal of a side (any number of
    places) may be anywhere in the interval it rounds from?  ``e^{3.18} \approx 24.1`` does (3.18 is 36/√128
    rounded; e^3.1820 = 24.09), ``e^{3.18} \approx 12.1`` does not.  Used before a computation through a function
    is called wrong: an author who rounded an operand and computed on with its exact value is not wrong."""
    from .numbers import _corners_meet, _holds, _stated_places

    for k, op in enumerate(ops):
        if op not in ("eq", "approx"):
            continue
        try:
            value, stated = doc.read(sides[k]), doc.read(sides[k + 1])
        except (MHASymbolicError, ValueError, TypeError, ArithmeticError, RecursionError):
            return False
        if not _holds(value, stated, op, _stated_places(sides[k], sides[k + 1], op)) and \
                not _corners_meet(sides[k], stated, sides[k + 1], min_places=1, functions=True):
            return False
    return True


def shape_chain(tex: str) -> bool:
    r"""Every side of the chain a shape or a product of shapes, one of them a product: ``(10, 64)(64, 10) = (10, 10)``
    (a local computation of shapes, written in tuples or with ``x`` between the sizes)."""
    from .shapes import shape_product

    if re.search(r"\d\.\d", tex) or any(m.group(0).count(",") > 1 for m in re.finditer(r"\([^()]*\)", tex)):
        return False  # (0.5, 0.5): values; (2, 8, 10, 64): batched (:func:`.tracing.shape_products` reads that)
    products = [shape_product(side) for side in re.split(r"=|\\approx", tex)]
    return all(p is not None for p in products) and any(len(p or []) > 1 for p in products) and len(products) > 1


def math_words(tex: str) -> str:
    """Function names written as words in plain text (softmax, head, rank, min) as LaTeX commands."""
    tex = re.sub(r"(?<![\\A-Za-z{])sqrt\s*\(([^()]*)\)", r"\\sqrt{\1}", tex)  # sqrt(2), sqrt(d_k)
    tex = re.sub(r"(?<![\\A-Za-z{])(softmax|Concat|MultiHead|rank|Attention|head|Var|Cov)(?![A-Za-z])", r"\\mathrm{\1}",
                 tex)
    # a matrix numbered by its head as code names it: W_Q1 is W_Q^1, Q1 is Q_1, head2 is head_2 (never Q times 1)
    tex = re.sub(r"(?<![\\A-Za-z_^{])W(?:_\{([QKV])(\d{1,2})\}|_?([QKV])(\d{1,2})(?![\w.]))",
                 lambda m: f"W_{m.group(1) or m.group(3)}^{{{m.group(2) or m.group(4)}}}", tex)
    tex = re.sub(r"(?<![\\A-Za-z_^{\d.])([A-Z]|\\mathrm\{head\})(\d{1,2})(?![\w.])", r"\1_{\2}", tex)
    tex = re.sub(r"(?<![\\A-Za-z{])(log|ln)(?=\s*[\d(])", r"\\\1 ", tex)  # log 2, ln(2)
    return re.sub(r"(?<![\\A-Za-z{])(min|max|exp|det)(?=\s*\()", r"\\\1", tex)


def _python_lists(tex: str) -> str:
    from .model import _python_lists as lists

    return lists(tex)


_QUOTED = re.compile(r"^\s*`([^`]+)`\s*(=|≈|is|==)\s*(`[^`]+`|\[.*\]|-?\d[\d.]*)(.*)$")


def judge_code_prose(doc: DocumentModel, p: Any, emit: Any) -> bool:
    """Judge ``\\`EXPR\\` (= | ≈ | is) VALUE``; True when the line was such a statement."""
    from ._code_expr import code_expression
    from .code import resolver

    m = _QUOTED.match(p.text)
    if not m:
        return False
    source, value_text = m.group(1).strip(), m.group(3).strip().strip("`")
    if "=" in source and "==" not in source and "<=" not in source and ">=" not in source:
        source = source.split("=", 1)[1]  # `scores1 = Q1 @ K1.T` = [...]: the value of the right side

    resolve = resolver(doc)
    try:
        value = ast.literal_eval(value_text)
    except (ValueError, SyntaxError):
        return False
    shape = re.fullmatch(r"(.+)\.shape", source)
    rank = re.fullmatch(r"(?:np\.linalg\.|torch\.linalg\.)?matrix_rank\((.+)\)\s*(<=|<|==|>=|>)?\s*(.*)", source)
    got: tuple[str, Any] | None
    try:
        if shape:
            subject = code_expression(shape.group(1), resolve)
            if not (isinstance(value, tuple) and len(value) == 2):
                return False
            rows, cols = value
            got = _shape(doc, subject, rows, cols, shape.group(1))
        elif rank:
            subject = code_expression(rank.group(1), resolve)
            op = {"<=": "le", "<": "lt", "==": "eq", ">=": "ge", ">": "gt", None: "eq"}[rank.group(2)]
            bound_tex = rank.group(3) if rank.group(2) else value_text
            if rank.group(2) and value is not True:
                return False  # "... <= dk is False": a claim that the bound fails, not read here
            bound = code_expression(bound_tex, resolve) if rank.group(2) else value
            got = _rank(doc, subject, op, bound)
        else:
            subject = code_expression(source, resolve)
            matrix = ImmutableMatrix(value if isinstance(value, list) and value and isinstance(value[0], list)
                                     else [value] if isinstance(value, list) else [[value]])
            got = judge(doc, [source, sympy_latex(matrix)], ["approx" if m.group(2) == "≈" else "eq"], p.text,
                        read=[subject, doc.read(sympy_latex(matrix))])
    except (MHASymbolicError, ValueError, TypeError) as e:
        if "unknown name" in str(e):
            return False  # a name of the document's code, not of the model: the traced code's (judge_traced_shapes)
        emit(p.line, p.text, "unchecked", f"not read (never run): {str(e).splitlines()[0][:160]}")
        return True
    if got is not None:
        kind, (status, message, expected, basis) = got
        emit(p.line, p.text, status, message, expected, kind, basis)
    return True


#: names quoted as code, then the shape they are said to have: "`Q1` and `K1` are 3×2", "`K1'` is 2×3"
_SAID_SHAPE = re.compile(r"((?:`[^`]{1,40}`(?:\s*,\s*|\s+(?:and|und|y|et|e)\s+)?)+)\s+"
                         r"(?:is|are|ist|sind|es|son|est|sont)\s+(?:all\s+|both\s+|alle\s+|beide\s+)?(?:of\s+shape\s+)?"
                         r"`?\(?(\d+(?:\s*[×x,]\s*\d+)+)\)?`?(?![\d×x])")


def judge_traced_shapes(doc: DocumentModel, p: Any, emit: Any, pending: bool = False) -> None:
    """"`Q1` and `K1` are 3×2, so `K1'` is 2×3": names of the document's code (Python or Octave, traced by
    :mod:`.tracing`) said in prose to have a shape; ``'`` and ``.T`` transpose, and the shape of a stack of
    matrices ((2, 4, 4): one 4 x 4 per head) is each matrix's.  Judged only when every name is a traced array whose
    shape is known; a sentence whose names the code has not yet defined speaks of the code
    that follows it, and is judged once that code is traced (``emit(p, status, ...)`` then, as a table row's)."""
    envs = [t.env for t in (doc.memory.get("octave"), doc.memory.get("tracer")) if t is not None]
    for m in _SAID_SHAPE.finditer(p.text):
        said = tuple(int(x) for x in re.findall(r"\d+", m.group(2)))
        shapes: list[tuple[str, tuple[int, ...]]] = []
        for name in re.findall(r"`([^`]+)`", m.group(1)):
            transposed = name.endswith("'") or name.endswith(".T")
            base = name.removesuffix("'").removesuffix(".T").strip()
            found = {tuple(v.shape) for env in envs if (v := env.get(base)) is not None and hasattr(v, "shape")}
            if not found and not pending:
                waiting = doc.memory.setdefault("pending_shapes", [])
                if p not in waiting:
                    waiting.append(p)  # the code below will define it
                break
            if len(found) != 1 or len(next(iter(found))) < 2 or not all(getattr(x, "is_Integer", False)
                                                                       for x in next(iter(found))):
                break
            have = [int(x) for x in next(iter(found))]
            if transposed:
                have[-2:] = have[:-3:-1]
            if len(said) == 2:  # a stack of matrices said to be 4 x 4: each one's shape
                have = have[-2:]
            shapes.append((name, tuple(have)))
        else:
            bad = [(name, have) for name, have in shapes if have != said]
            where = (p,) if pending else (p.line, p.text)
            if bad:
                emit(*where, "wrong", f"{bad[0][0]} is {_dims(bad[0][1])} in the code, not {_dims(said)}",
                     _dims(bad[0][1]), "shape", "traced")
            elif shapes:
                emit(*where, "correct", f"{', '.join(n for n, _ in shapes)}: {_dims(said)} in the code", None,
                     "shape", "traced")


def _dims(shape: tuple[int, ...]) -> str:
    return " x ".join(map(str, shape))


def _shape(doc: DocumentModel, subject: Any, rows: Any, cols: Any, name: str) -> tuple[str, Any]:
    from .shapes import _size

    have = tuple(_size(doc, x) for x in subject.shape)
    if have == (rows, cols):
        return "shape", ("correct", f"{name} is {have[0]} x {have[1]} by the model's shape rules", None, "proven")
    return "shape", ("wrong", f"{name} is {have[0]} x {have[1]}, not {rows} x {cols}", f"{have[0]} x {have[1]}",
                     "proven")


def _rank(doc: DocumentModel, subject: Any, op: str, bound: Any) -> tuple[str, Any]:
    from .ranks import _decide_instance, _instance

    instance = _instance(doc, subject)
    if instance is None:
        return "rank", ("assumed", "the matrix depends on values the document never gives", None, "computed")
    from .shapes import _size

    return "rank", _decide_instance(doc, subject, instance, op, _size(doc, bound))
