r"""The document model: what a document has said so far -- sizes, values, declared shapes, constraints.

Explanation
===========

Only an equality binds (``h = 2``, ``X = [...]``); an inequality or range is a constraint, checked when
the values are known.  Names are resolved to the engine's model: the document's spellings of the
per-head quantities (``W_Q^{(1)}``, ``W^Q_1``, ``\mathbf{W}_1^{(q)}``, ``\mathrm{head_1}``, ``H_0`` in a
0-based document, ``WQ1``, ``W_q[0]`` in code) are rewritten to the reader's canonical LaTeX and read by
the one LaTeX reader (:mod:`mha_symbolic.parse`) against the symbols of a
:class:`~mha_symbolic.attention.MultiHeadAttention` of the document's sizes.

Examples
========

>>> doc = DocumentModel()
>>> doc.bind_dim("n", 2); doc.bind_dim("d_model", 4); doc.bind_dim("h", 2)
>>> doc.model().dims.d_k
2
>>> str(doc.read(r"W_Q^{(1)} (W_K^{(1)})^\top"))
'W_Q^1*W_K^1.T'
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Any

from sympy import FiniteSet, ImmutableMatrix, MatrixBase, MatrixSymbol, Rational, S, Symbol, expand
from sympy import latex as sympy_latex

from .._convert import as_sympy
from ..attention import MultiHeadAttention
from ..errors import MHASymbolicError, ParseError
from ..parse import SymbolTable, read_expression

__all__ = ["DocumentModel", "DIMS", "as_int", "canonical_tex", "dim_name", "generic_model", "spelling"]

DIMS = ("n", "d_model", "h", "d_k", "d_v", "g", "n_kv")
#: the variants named by their key/value heads: multi-query (g = 1) and multi-head (g = h) attention
VARIANT_NAMES = r"(MQA|MHA|multi-query|multi-head)"
_DIM_ALIASES = {"n": "n", "N": "n", "L": "n", "T": "n", "n_tokens": "n", "seq_len": "n", "ntokens": "n",
                "sequencelength": "n", "seqlen": "n", "tokens": "n", "numtokens": "n",
                "modeldimension": "d_model", "hiddensize": "d_model", "numberofheads": "h", "heads": "h",
                "d_model": "d_model", "dmodel": "d_model", "d": "d_model", "D": "d_model", "d_{model}": "d_model",
                "h": "h", "n_heads": "h", "num_heads": "h", "nheads": "h",
                "d_k": "d_k", "dk": "d_k", "p_k": "d_k", "p_q": "d_k", "d_q": "d_k", "d_head": "d_k",
                "head_dim": "d_k", "d_v": "d_v", "dv": "d_v", "p_v": "d_v", "d_h": "d_k", "d_{h}": "d_k",
                # grouped-query attention: the number of key/value heads
                "g": "g", "n_kv_heads": "g", "num_kv_heads": "g", "kv_heads": "g", "n_kv_head": "g",
                "num_key_value_heads": "g", "h_kv": "g", "h_{kv}": "g", "H_kv": "g", "H_{kv}": "g",
                "num_groups": "g", "n_groups": "g",
                # cross-attention: n_q queries (the model's n) and n_kv keys/values (read as g in a document that
                # is not about cross-attention, see DocumentModel.known_dims)
                "n_q": "n", "n_{q}": "n", "N_q": "n", "L_q": "n", "tgt_len": "n", "target_len": "n",
                "n_kv": "n_kv", "n_{kv}": "n_kv", "N_kv": "n_kv", "N_{kv}": "n_kv", "n_{k}": "n_kv",
                "src_len": "n_kv", "source_len": "n_kv", "kv_len": "n_kv", "L_kv": "n_kv", "L_{kv}": "n_kv",
                "n_{src}": "n_kv", "n_src": "n_kv", "n_{tgt}": "n", "n_tgt": "n"}


#: the concatenation named without its arguments ("MultiHead = Concat · W^O")
_BARE_CONCAT = re.compile(r"\\mathrm\{Concat\}(?!\s*(?:\(|\\left|_|\^))")


def dim_name(name: str) -> str | None:
    """The dimension a spelling names (``d_{\\text{model}}``, ``p_v``, ``N``, ``n_heads``), or None."""
    return _DIM_ALIASES.get(spelling(name))


def spelling(name: str) -> str:
    """A name as spelled, whatever its markup: ``d_{\\text{model}}`` and ``d_model`` are one spelling, ``d_h`` and
    ``d_k`` two (which :func:`dim_name` reads as one size).

    >>> spelling(r"d_{\\mathrm{model}}"), spelling("d_{h}")
    ('d_model', 'd_h')
    """
    plain = re.sub(r"\\(?:mathrm|text|textrm|operatorname|mathit)\s*\{([^{}]*)\}", r"\1", name)
    return plain.replace("{", "").replace("}", "").replace(" ", "").replace("\\", "")


#: the names of operators and objects in a document's words, other languages' included, by the reader's name
_OPERATORS = {"head": ("head", "tête", "tete", "kopf", "Kopf", "cabeza", "cabeça"),
              "MultiHead": ("MultiHead", "MultiTête", "MultiTete", "MultiKopf", "MultiCabeza", "MultiCabeça", "MHA",
                            "MultiHeadAttention"),
              "rank": ("rank", "rg", "Rang", "rango", "posto"),
              **{name: (name,) for name in ("Concat", "softmax", "Var", "Attention")}}
_OPERATOR = {spelling: name for name, spellings in _OPERATORS.items() for spelling in spellings}


def _operator_name(m: re.Match[str]) -> str:
    r"""``\text{Kopf}``, ``\operatorname{rg}``, ``\mathrm{head_{2}}`` in the reader's spelling (``\mathrm{head}``,
    ``\mathrm{rank}``, ``\mathrm{head}_{2}``); ``\text{model}`` as the word it subscripts; anything else as written."""
    command, word = m.group(1), m.group(2).strip()
    if word in _OPERATOR:
        return r"\mathrm{%s}" % _OPERATOR[word]
    numbered = re.fullmatch(r"head_?\{?(\w+)\}?", word)
    if numbered:
        return r"\mathrm{head}_{%s}" % numbered.group(1)
    return word if command == "text" and word == "model" else m.group(0)


def _inner_products(expr: Any, named: dict[Any, Any]) -> Any:
    r"""``q \cdot k`` of two vectors the document gave, of one shape (both rows or both columns): the only product
    of the two that is defined is their inner product, so that is what it reads as."""
    from sympy import Mul

    vectors = {a: v for a, v in named.items() if getattr(v, "shape", (0, 0))[0] == 1 or
               getattr(v, "shape", (0, 0))[1] == 1 and getattr(v, "shape", (0, 0))[0] > 1}

    def dot(m: Any) -> Any:
        pair = [a for a in m.args if a in vectors]
        rest = [a for a in m.args if a not in vectors]
        a, b = vectors[pair[0]], vectors[pair[1]]
        inner = (a * b.T if a.rows == 1 else a.T * b)[0, 0]
        return Mul(inner, *rest)

    def is_pair(m: Any) -> bool:
        pair = [a for a in m.args if a in vectors]
        return len(pair) == 2 and vectors[pair[0]].shape == vectors[pair[1]].shape and max(
            vectors[pair[0]].shape) > 1
    return expr.replace(lambda m: isinstance(m, Mul) and is_pair(m), dot) if vectors and hasattr(expr, "replace") \
        else expr


def canonical_tex(tex: str, zero_based: bool = False) -> str:
    r"""A document's LaTeX with the per-head spellings rewritten to the reader's canonical ones.

    >>> canonical_tex(r"Q^{(2)} K^{(2)\top}")
    'Q_{2} K_{2}^{T}'
    >>> canonical_tex(r"\mathrm{head_0} = H_0", zero_based=True)
    '\\mathrm{head}_{1} = \\mathrm{head}_{1}'
    >>> canonical_tex(r"q^{(0)} \cdot k^{(1)}")
    'q_{0} \\cdot k_{1}'
    """
    t = re.sub(r"(\d)(?:\{,\}|\\,|\\ |~)(?=\d{3}(?!\d))", r"\1", tex)  # 262{,}144, 263\,168: thousands
    t = re.sub(r"\\[;,:!](?![A-Za-z])|(?<!\\)\\ |\\quad|\\qquad", " ", t)  # spacing commands, control space
    t = re.sub(r"\\(min|max)\s*\\\{(.*?)\\\}", r"\\\1(\2)", t)  # \min\{a, b\}
    # 1e-3 is scientific notation, unless the formula writes Euler's e elsewhere: then 2e+1 is 2e + 1
    sci = r"(?<![\w.])(\d+(?:\.\d+)?)[eE]([-+]?\d+)(?![\w.])"
    if not re.search(r"(?<![\\A-Za-z])e(?![A-Za-z])", re.sub(sci, "", t)):
        t = re.sub(sci, r"\1 \\times 10^{\2}", t)
    t = re.sub(r"(?<![\w.])(\d+)\.(\d{13,})(?![\d.])",  # long decimals, exactly (a float keeps ~15 digits)
               lambda m: r"\frac{%s}{1%s}" % (int(m.group(1) + m.group(2)), "0" * len(m.group(2))), t)
    # the all-ones vector (\mathbf{1}, \mathbb{1}, \vec{1}) is no number: its length is the reader's to infer, so
    # it is left unread (the statement unchecked), never read as the scalar 1
    t = re.sub(r"\\(?:mathbf|boldsymbol|bm|mathbfit|mathbb|vec)\s*\{\s*1\s*\}|\\mathbf\s+1(?!\d)", r"\\onesvector ", t)
    t = re.sub(r"\\(?:mathbf|boldsymbol|bm|mathbfit)\s*\{([^{}]*)\}", r"\1", t)
    t = re.sub(r"X_\{\\(?:text|mathrm)\{head\s*(\d+)\}\}", r"X_{\1}", t)
    t = re.sub(r"\\(mathrm|text|operatorname)\{([^{}]*(?:\{\w*\})?)\}", _operator_name, t)
    # e^{2.8284}: Euler's number to a written decimal, read as \exp (the grammar evaluates e^{2.8284} to a float at
    # once, which hides the decimal's rounding from the reading at written precision)
    t = re.sub(r"(?<![\\A-Za-z])e\s*\^\s*(?:\{\s*(-?\s*\d+\.\d+)\s*\}|(\d+\.\d+))",
               lambda m: r"\exp(" + (m.group(1) or m.group(2)).replace(" ", "") + ")", t)
    # an entry: 2, -1.5, \ln 3, \frac{1}{2}, \tfrac{3}{\sqrt2}, -\infty
    entry = (r"(?:-?\s*(?:\\ln|\\log)\s*\d+(?:\.\d+)?|-?\\[dt]?frac\{\d+\}\{(?:\d+|\\sqrt\s*(?:\d|\{\d+\}))\}|-?[\d.]+"
             r"|-\s*\\infty)")  # (\tfrac{3}{\sqrt2}: a score divided by a root)
    t = re.sub(rf"(\\mathrm\{{softmax\}})\s*(?:\\left)?\(\s*((?:\\left)?\()?\s*({entry}(?:\s*,\s*{entry})+)"
               r"\s*(?:\\right)?\)",  # softmax(3, 0): of a row vector; softmax((1, 0, 2)/\sqrt{2}): a row, divided
               lambda m: m.group(1) + "(" + _row(m.group(3)) + ("" if m.group(2) else ")"), t)
    t = re.sub(r"^\s*(?:\\left)?\(\s*(-?[\d.]+(?:\s*,\s*-?[\d.]+)+)\s*(?:\\right)?\)\s*(\^\s*\{?(?:T|\\top)\}?)?\s*$",
               lambda m: _row(m.group(1), column=bool(m.group(2))), t)  # (0, 1, 2)^T: a column
    t = _numeric_tuple(t)  # (1/3, 1/3, 1/3), (\frac{1}{1 + e^2}, ...): a row of numbers
    t = _python_lists(t)
    t = re.sub(r"(\\mathrm\{MultiHead\})\s*(\\left)?\(\s*([A-Z])\s*(\\right)?\)", r"\1(\3, \3, \3)", t)
    # MultiHead(X, Y): cross-attention's queries from X, keys and values from Y
    t = re.sub(r"(\\mathrm\{MultiHead\})\s*(\\left)?\(\s*([A-Z])\s*,\s*([A-Z])\s*(\\right)?\)", r"\1(\3, \4, \4)", t)
    t = re.sub(r"\\mathrm\{MultiHead\}(?!\s*(?:\\left)?\()", r"\\mathrm{MultiHead}(X, X, X)", t)  # MultiHead alone
    t = re.sub(r"\\(?:text|mathrm|operatorname)\{[Cc]oncat\}(?!\s*(?:\\left)?[(\[])", r"\\mathrm{Concat}", t)
    t = re.sub(r"(?:\\left)?\[([^\[\]]*\\(?:dots|ldots|cdots)[^\[\]]*)(?:\\right)?\]", _stacked, t)
    t = re.sub(r"\\(?:tilde|hat)\s*\{?\s*S\s*\}?(?=\s*[_^])", "S'", t)  # \tilde S_i, \tilde S^{(i)}: the scaled scores
    # any other accented letter is a name of its own, spelled with braces: \hat A is \hat{A}
    t = re.sub(r"\\(tilde|widetilde|hat|widehat|bar|overline|check|breve)\s+([A-Za-z])(?![A-Za-z])", r"\\\1{\2}", t)
    t = _SCRIPTED.sub(lambda m: _spelling(m, zero_based), t)
    # W_O^{(1)}, W^O_2, W_1^O: the block of the output projection that head i's output multiplies, a name of its own
    # (not W_O to a power, nor W_O itself)
    t = re.sub(r"(?<![\\A-Za-z])W(?:_\{?O\}?\^\{?\(?(\d+|[a-z])\)?\}?|\^\{?O\}?_\{?\(?(\d+|[a-z])\)?\}?"
               r"|_\{?\(?(\d+|[a-z])\)?\}?\^\{?O\}?)(?![\w{])",
               lambda m: "W_{O%s}" % (m.group(1) or m.group(2) or m.group(3)), t)
    # k^{(0)}, q^{(2)}, P^{(1)}: a superscript in parentheses is an index (of a head, a layer, a token), never a power
    t = re.sub(r"(?<![\\A-Za-z_^{])([A-Za-z])\s*\^\s*\{\s*\((\w{1,3})\)\s*\}(?!\s*[_^])", r"\1_{\2}", t)
    t = re.sub(r"f_(\{?\w+\}?)\s*\(\s*x\s*\)", r"\\mathrm{head}_\1", t)  # f_i(x): head i as a map
    t = re.sub(r"(?<![\\A-Za-z])(?:I|\\mathbb\{I\}|\\mathrm\{I\})_\{?(\d{1,2})\}?", _identity, t)
    t = re.sub(r"(?:\\left)?\[\s*(\\mathrm\{head\}[^\[\]]*?)(?:\\right)?\]", _stacked, t)
    # a block matrix of heads: one block row (H_1 & \cdots & H_h) or one block column (H_1 \\ \vdots \\ H_h)
    t = re.sub(r"\\begin\{([bpBv]matrix)\}((?:\s|\\mathrm\{head\}_\{?\w+\}?|\\[vcl]?dots|\\\\|&)+)\\end\{\1\}",
               _head_blocks, t)
    # Concat(a, b, \dots, z) -> Concat(a, \dots, z): the reader takes the first and the last
    t = re.sub(r"(\\mathrm\{Concat\}(?:_\{[hv]stack\})?\(\s*[^,()]+?),\s*[^,()]+?,\s*(\\(?:dots|ldots|cdots))",
               r"\1, \2", t)
    return t


_NUM = r"[-−]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?"
_LIST = rf"\[\s*{_NUM}(?:\s*,\s*{_NUM})*\s*,?\s*\]"


def _python_lists(t: str) -> str:
    """``[1, 3]`` and ``[[1, 0], [0, 1]]`` (Python or printed lists in a formula) as LaTeX matrices."""
    def matrix(m: re.Match[str]) -> str:
        rows = re.findall(_LIST, m.group(0))
        return r"\begin{bmatrix}" + r" \\ ".join(
            " & ".join(x.strip().replace("−", "-") for x in r.strip("[] ,").split(",") if x.strip())
            for r in rows) + r"\end{bmatrix}"
    t = re.sub(rf"\[\s*{_LIST}(?:\s*,\s*{_LIST})*\s*,?\s*\]", matrix, t)
    matlab = rf"\[\s*{_NUM}(?:\s+{_NUM})*(?:\s*;\s*{_NUM}(?:\s+{_NUM})*)*\s*\]"  # [1 -1; 0 2]: MATLAB's rows
    t = re.sub(matlab, lambda m: r"\begin{bmatrix}" + r" \\ ".join(
        " & ".join(x.replace("−", "-") for x in row.split()) for row in m.group(0).strip("[] ").split(";"))
        + r"\end{bmatrix}", t)
    return re.sub(rf"(?<![A-Za-z_\]}}])\s*{_LIST}", lambda m: " " + matrix(m), t)


_ENTRY = re.compile(r"\s*([-−]?)\s*(\d+(?:\.\d*)?|\.\d+)\s*")


def _numeric_matrix(value: Any) -> bool:
    """A matrix of numbers (not a single number)."""
    return isinstance(value, ImmutableMatrix) and value.shape != (1, 1) and \
        all(getattr(x, "is_number", False) for x in value)


def spelled(name: str) -> str:
    r"""A pattern for a name as documents write it: ``v_1`` and ``v_{1}`` are one name.

    >>> bool(re.fullmatch(spelled("v_1"), "v_{1}")), bool(re.fullmatch(spelled("v_{1}"), "v_1"))
    (True, True)
    """
    base, _, sub = name.partition("_")
    return re.escape(base) + (rf"_\{{?{re.escape(sub.strip('{}'))}\}}?" if sub else "")


#: how an ``assumed`` verdict names what it lacks; the pipeline checks that claim against the document's lines
NEVER_GIVEN = re.compile(r"depends on (.+?), which the document never gives")


def never_given(subject: str, value: Any) -> str:
    r"""The message of a value that still depends on the model's inputs (its matrix symbols), naming them.

    >>> never_given("Q_1", MatrixSymbol("X", 2, 2) * MatrixSymbol("W_Q^1", 2, 1))
    'Q_1 depends on W_Q^1, X, which the document never gives'
    """
    names = sorted({str(m) for m in getattr(value, "free_symbols", ()) if isinstance(m, MatrixSymbol)})
    return f"{subject} depends on {', '.join(names) or 'sizes the document does not fix'}, which the document " \
        "never gives"


def written_name(name: str, zero_based: bool = False) -> re.Pattern[str]:
    r"""How a document writes a matrix of the model, in any notation, for a line whose braces and font commands are
    dropped (:func:`bare_line`): ``W_Q^1`` as ``W_Q^1``, ``W^Q_1``, ``W^(1)_Q``, ``W_Q,1``, ``W_q1``, or without a
    head index (``W_Q``: a weight of every head, or of the only one), but not with another index or a general one
    (``W^Q_i``); the index as the document numbers its heads.  ``X`` as ``X``.

    >>> [bool(written_name("W_Q^1").search(bare_line(t))) for t in (r"Let W^{(1)}_{\mathrm{Q}} = I.", "W_Q = I",
    ...     "W^Q_i", "W_Q^2", "W_Q⁽¹⁾")]
    [True, True, False, False, True]
    >>> bool(written_name("X").search("Xavier")), bool(written_name("W_Q^3", zero_based=True).search("W^Q_2"))
    (False, True)
    """
    letter, _, rest = name.partition("_")
    role = re.match(r"[A-Za-z]+", rest.replace("{", ""))
    if not role:
        return re.compile(rf"(?<![A-Za-z\\]){re.escape(letter)}(?![A-Za-z])")
    index = re.search(r"\^\{?\(?(\d+)", rest)
    before = after = ""
    if index:  # the head as the document numbers it, before the role (W^(1)_Q) or after it (W_Q^1, W_Q,1, W_q1)
        k = int(index.group(1)) - zero_based
        before, after = rf"(?:[_^]\(?{k}\)?)?", rf"(?:[_^,]?\(?{k}\)?)?"
    return re.compile(rf"(?<![A-Za-z\\]){re.escape(letter)}{before}[_^]?{re.escape(role.group())}{after}"
                      r"(?![A-Za-z\d]|[_^,]\(?\w)", re.IGNORECASE)  # (never another index, nor a general one)


_SCRIPT_DIGITS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹₀₁₂₃₄₅₆₇₈₉⁽⁾₍₎", "01234567890123456789()()")


def bare_line(line: str) -> str:
    r"""A line without braces, font commands and spaces around ``_``/``^``, its raised and lowered digits plain:
    ``W_{\mathrm{Q}}`` reads ``W_Q``, ``W_Q⁽¹⁾`` reads ``W_Q(1)``."""
    line = re.sub(r"\\(?:mathrm|text|mathbf|boldsymbol|bm|mathit|operatorname)\b\s*|[{}]", "", line)
    return re.sub(r"\s*([_^])\s*", r"\1", line.translate(_SCRIPT_DIGITS))


def numeric_matrix(tex: str) -> ImmutableMatrix | None:
    r"""``\begin{bmatrix} 1 & -0.5 \\ 2 & 3 \end{bmatrix}`` (any matrix environment) of plain decimals as an
    exact matrix, or None when the text is anything else.

    >>> numeric_matrix(r"\begin{pmatrix} 1 & -0.5 \\ 2 & 3 \end{pmatrix}")
    Matrix([
    [1, -1/2],
    [2,    3]])
    """
    m = re.fullmatch(r"\s*\\begin\{([pbvBV]?matrix)\}(.*)\\end\{\1\}\s*", tex, re.S)
    if not m:
        return None
    rows = [r for r in m.group(2).split("\\\\") if r.strip()]
    entries = []
    for r in rows:
        row = []
        for cell in r.split("&"):
            e = _ENTRY.fullmatch(cell)
            if not e:
                return None
            value = Fraction(e.group(2))
            row.append(Rational(-value if e.group(1) else value))
        entries.append(row)
    if not entries or len({len(r) for r in entries}) != 1:
        return None
    return ImmutableMatrix(entries)


def _head_blocks(m: re.Match[str]) -> str:
    r"""``\begin{bmatrix} H_1 \\ \vdots \\ H_h \end{bmatrix}`` as the heads stacked, ``H_1 & \cdots & H_h`` as the
    heads side by side (a block matrix of more than one block row and column is left as it is)."""
    body = m.group(2)
    rows, cols = body.split("\\\\"), body.split("&")
    if len(rows) > 1 and len(cols) > 1:
        return m.group(0)
    cells = [re.sub(r"\\[vcl]?dots", r"\\dots", c.strip()) for c in (rows if len(rows) > 1 else cols) if c.strip()]
    return r"\mathrm{Concat}_{%s}(%s)" % ("vstack" if len(rows) > 1 else "hstack", ", ".join(cells))


def _stacked(m: re.Match[str]) -> str:
    r"""``[h_1, h_2]`` as the blocks side by side, ``[h_1; h_2]`` as the blocks stacked (each a block row): which
    one is the concatenation of heads depends on where the document puts its tokens, so the direction is kept
    (``\mathrm{Concat}_{hstack}``, ``_{vstack}``: :meth:`mha_symbolic.parse.latex._Reader.function`)."""
    content = m.group(1)
    if ";" in content and "," not in content:
        return r"\mathrm{Concat}_{vstack}(" + _blocks(content.replace(";", ",")) + ")"
    return r"\mathrm{Concat}_{hstack}(" + _blocks(content) + ")"


def _blocks(content: str) -> str:
    """The blocks of ``[h_1 \\; h_2]``, ``[h_1 | \\cdots | h_h]``, ``[h_1, h_2]`` separated by commas."""
    t = re.sub(r"\s*(?:\\mid|\\vert|\|)\s*", ", ", content.strip())
    return re.sub(r"(?<=[\w}])\s+(?=\\mathrm\{head\}|\\(?:dots|ldots|cdots))", ", ", t)


def _numeric_tuple(tex: str) -> str:
    r"""Each tuple of numeric expressions (fractions, ``e``, roots; no other letters) that stands as an operand --
    a whole side, or a factor of a product or quotient, not the arguments of a function -- as a row vector (a
    column vector when it is transposed); anything else unchanged.

    >>> _numeric_tuple(r"\left(\frac{1}{1 + e^{2}}, \frac{e^{2}}{1 + e^{2}}\right)")
    '\\begin{bmatrix}\\frac{1}{1 + e^{2}} & \\frac{e^{2}}{1 + e^{2}}\\end{bmatrix}'
    >>> _numeric_tuple("(1/3, 1/3)"), _numeric_tuple("(n, d_k)"), _numeric_tuple("(1)(2, 3)")
    ('\\begin{bmatrix}1/3 & 1/3\\end{bmatrix}', '(n, d_k)', '(1)(2, 3)')
    >>> _numeric_tuple(r"\left(\tfrac{1}{4},\ 0.75\right)^\top")
    '\\begin{bmatrix}\\tfrac{1}{4} \\\\ 0.75\\end{bmatrix}'
    >>> _numeric_tuple(r"(e, 1) / (e + 1)"), _numeric_tuple(r"\min(64, 512)")
    ('\\begin{bmatrix}e & 1\\end{bmatrix} / (e + 1)', '\\min(64, 512)')
    """
    if "," not in tex:
        return tex
    closing: dict[int, int] = {}  # each "(" -> its ")" and its own commas, in one pass (linear)
    commas: dict[int, list[int]] = {}
    stack: list[int] = []
    for k, ch in enumerate(tex):
        if ch in "({[":
            stack.append(k)
        elif ch in ")}]" and stack:
            closing[stack.pop()] = k
        elif ch == "," and stack:
            commas.setdefault(stack[-1], []).append(k)
    out, at = [], 0
    for m in re.finditer(r"(?:\\left\s*)?\(", tex):
        if m.start() < at or m.end() - 1 not in commas or m.end() - 1 not in closing:
            continue  # inside a tuple already read, or no tuple (no comma of its own)
        end = closing[m.end() - 1]
        cuts = [m.end() - 1, *commas[m.end() - 1], end]
        parts = [tex[a + 1:b] for a, b in zip(cuts, cuts[1:], strict=False)]
        parts[-1] = re.sub(r"\\right\s*$", "", parts[-1])
        numeric = all(p.strip() and not re.search(r"[A-Za-df-z]", re.sub(r"\\[A-Za-z]+", "", p)) for p in parts)
        power = re.match(r"\s*\^\s*\{?\s*(?:T|\\top|\\intercal)\s*\}?", tex[end + 1:])
        operator = re.search(r"\\(?:cdot|times|approx|simeq|le|ge|ne|quad|qquad)\s*$", tex[:m.start()])
        if len(parts) < 2 or not numeric or not power and not operator and re.search(
                r"[\w}\])^_]\s*$|\\[A-Za-z]+\s*$", tex[:m.start()]):  # (after an operator, 0.2 \cdot (1, 2), a vector)
            continue  # the arguments of a function, an index or a power (M (1, 0)^T is a product: a column)
        if not power and re.match(r"\s*(?:\(|\\times|×|x(?![A-Za-z]))", tex[end + 1:]):
            continue  # (10, 64)(64, 10), (3, 3) \times (3, 2): shapes multiplied, not vectors
        entries = [re.sub(r"^(?:\\ |\s)+", "", p.strip()) for p in parts]  # "(a,\ b)": TeX's space is no entry
        out.append(tex[at:m.start()] + r"\begin{bmatrix}" + (r" \\ " if power else " & ").join(entries)
                   + r"\end{bmatrix}")  # (..)^T: a column
        at = end + 1 + (power.end() if power else 0)
    return "".join(out) + tex[at:] if out else tex


def _row(numbers: str, column: bool = False) -> str:
    """``3, 0`` as the row vector ``\\begin{bmatrix} 3 & 0 \\end{bmatrix}`` (or as a column)."""
    sep = r" \\ " if column else " & "
    return r"\begin{bmatrix}" + sep.join(x.strip() for x in numbers.split(",")) + r"\end{bmatrix}"


def _identity(m: re.Match[str]) -> str:
    """``I_3`` as an explicit identity matrix (the reader reads a bare ``I`` as the imaginary unit)."""
    k = int(m.group(1))
    rows = [" & ".join("1" if i == j else "0" for j in range(k)) for i in range(k)]
    return r"\begin{bmatrix}" + r" \\ ".join(rows) + r"\end{bmatrix}"


_GENERIC_HEAD = re.compile(r"[_^]\{?\(?[ij]\)?\}?(?![A-Za-z=])")

#: one sub- or superscript: a braced group (one level of braces inside), a command or one character
_SCRIPT = r"[_^]\s*(?:\{(?:[^{}]|\{[^{}]*\})*\}|\\[A-Za-z]+|[A-Za-z0-9])"
#: a per-head name with its scripts, in any order and spelling (``W_K^{(i)\top}``, ``W^{(1)}_q``, ``W_{Q,2}``,
#: ``Q^{(2)\top}``, ``H_0``, ``\mathrm{head}^{(1)}``), or a weight glued to its role and head (``WQ1``)
_SCRIPTED = re.compile(r"(?<![\\A-Za-z_^])W(?P<glued>[QKV])_?\{?(?P<number>\d+)\}?(?![\d}])"
                       r"|(?P<base>(?<![\\_^])W|(?<![\\A-Za-z_^])(?:Q|K|V|S|A|H|Z|\\mathrm\{head\}))(?P<primes>'*)"
                       rf"(?P<scripts>(?:\s*{_SCRIPT}){{1,3}})")
#: a transposition written inside a superscript, after the head or the role (``^{(i)\top}``, ``^{K\top}``)
_INNER_T = re.compile(r"(?<=[)A-Za-z}])\s*(?:\\top|\\intercal|\\mathsf\{T\}|(?<=\))\s*T)\s*$")
#: what a head is numbered with: 1, i, h, h-1 (a 0-based document's last head)
_HEAD = re.compile(r"[A-Za-z0-9]+(?:\s*-\s*1)?")


def _spelling(m: re.Match[str], zero_based: bool) -> str:
    r"""One per-head name (a match of :data:`_SCRIPTED`) in the reader's spelling: ``W_{Q}^{i}`` for a weight of
    role Q and head i, ``W_{Q}`` for a weight with no head, ``Q_{i}`` for a per-head step and ``\mathrm{head}_{i}``
    for a head's output (``H_i``, ``Z_i``); a transposition written inside a script is moved outside, a head in
    parentheses loses them, a lower-case role is capitalised and, in a 0-based document, a numbered head counts one
    up.  A name that needs none of this is returned as written (``W_k^Q``: head k of the query weights); one that is
    not a per-head name (``W_1``,
    ``H_{kv}``, two subscripts) too.

    >>> [_SCRIPTED.sub(lambda m: _spelling(m, False), t) for t in (r"W_K^{(i)\top}", r"W^{(1)}_q", "W_k^Q", "WQ1")]
    ['(W_{K}^{i})^{T}', 'W_{Q}^{1}', 'W_k^Q', 'W_{Q}^{1}']
    >>> [_SCRIPTED.sub(lambda m: _spelling(m, True), t) for t in ("H_0", r"Q^{(0)\top}", "W_1^Q", "H_{h-1}", "H_{kv}")]
    ['\\mathrm{head}_{1}', 'Q_{1}^{T}', 'W_{Q}^{2}', '\\mathrm{head}_{h}', 'H_{kv}']
    >>> [_SCRIPTED.sub(lambda m: _spelling(m, True), t) for t in (r"K_1^\top", "S^{(1)}_{31}")]
    ['K_{2}^\\top', '(S_{2})_{31}']
    """
    if m.group("glued"):
        return _written("W", "", m.group("glued"), _counted(m.group("number"), zero_based), False)
    base, primes, scripts, after = m.group("base"), m.group("primes"), {}, ""
    given = re.findall(r"\s*" + _SCRIPT, m.group("scripts"))
    if re.fullmatch(r"\s*\^\s*\{?\s*(?:T|\\top|\\intercal)\s*\}?", given[-1]):  # K_1^\top, K^{(1)}^T: a
        after = given.pop()  # transposition, kept as written
    for script in given:
        script = script.strip()
        body = script[1:].strip()
        if script[0] in scripts:
            return m.group(0)
        scripts[script[0]] = body[1:-1].strip() if body.startswith("{") and body.endswith("}") else body
    sub, sup = scripts.get("_"), scripts.get("^")
    transposed = False
    if sup is not None and (t := _INNER_T.search(sup)) and sup[:t.start()].strip():
        sup, transposed = sup[:t.start()].strip(), True
    changed = transposed
    heads: list[str] = []
    roles: list[str] = []
    entry = ""
    for script in (sub, sup):
        if script is None:
            continue
        inner = script[1:-1].strip() if script.startswith("(") and script.endswith(")") else script
        changed |= inner != script
        if base == "W" and "," in inner and script is sub and sup is None:  # W_{Q,i}
            role, _, head = (x.strip() for x in inner.partition(","))
            if not (len(role) == 1 and role in "QKVqkv" and _HEAD.fullmatch(head)):
                return m.group(0)
            roles, heads, changed = [role], [head], True
        elif base == "W" and len(inner) == 1 and inner in "QKVO":
            roles.insert(0, inner)
        elif base == "W" and len(inner) == 1 and inner in "qkvo":
            roles.append(inner)
        elif _HEAD.fullmatch(inner) and inner not in ("kv", "KV"):
            heads.append(inner)
        elif script is sub and base != "W" and sup is not None and sup.startswith("("):
            entry = sub  # A^{(3)}_{2,\cdot}: row 2 of head 3's weights
        else:
            return m.group(0)
    if base == "W":
        if len(roles) == 2 and not heads:  # W_k^Q: head k of the query weights
            heads = [roles.pop()]
        if len(roles) != 1 or len(heads) > 1 or (sub is None) == (sup is None) and not heads:
            return m.group(0)
        role, head = roles[0], heads[0] if heads else None
        if role in "Oo" and head is not None:  # W^O_i: a block of the output weights, written as the document does
            return m.group(0)
        numbered = _counted(head, zero_based) if head is not None else None
        if not changed and role.isupper() and numbered == head:
            return m.group(0)
        if transposed and after:
            return m.group(0)
        weight = _written("W", primes, role.upper(), numbered, transposed)
        return f"({weight}){after.strip()}" if after and numbered is not None else weight + after
    if sub is not None and sup is not None and sup.startswith("(") and len(heads) == 2:  # S^{(1)}_{31}
        entry, heads = heads[0], heads[1:]  # entry (3, 1) of head 1's scores
    if len(heads) != 1 or sub is not None and sup is not None and not entry:
        return m.group(0)
    numbered = _counted(heads[0], zero_based)
    name = r"\mathrm{head}" if base in ("H", "Z") else base
    if not changed and name == base and numbered == heads[0] and sup is None:
        return m.group(0)
    written = name + primes + "_{" + numbered + "}" + ("^{T}" if transposed else "") + after
    return f"({written})_{{{entry}}}" if entry else written


def _counted(head: str, zero_based: bool) -> str:
    """A head's number in the model's count: a 0-based document's ``0`` is head ``1``, its ``h-1`` head ``h``."""
    if not zero_based:
        return head
    if head.isdigit():
        return str(int(head) + 1)
    return re.sub(r"\s*-\s*1$", "", head)


def _written(base: str, primes: str, role: str, head: str | None, transposed: bool) -> str:
    name = f"{base}{primes}_{{{role}}}" + (f"^{{{head}}}" if head is not None else "")
    if transposed:
        return f"({name})^{{T}}" if head is not None else name + "^{T}"
    return name


#: a single letter of the model standing alone or beside another of Q, K, V (``QK^T``): no letter of a word before it
_BESIDE = r"(?<![\\a-z_^])(?<![A-Z](?<![QKV]))"


@dataclass
class DocumentModel:
    """The document's sizes, values (by model key: ``X``, ``W_Q^1``, ``A_2``, ``head_1``, ``Concat``),
    declared shapes and constraints, with the line each came from."""

    dims: dict[str, int] = field(default_factory=dict)
    values: dict[str, ImmutableMatrix] = field(default_factory=dict)
    assumed: dict[str, ImmutableMatrix] = field(default_factory=dict)
    shapes: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    zero_based: bool = False
    zero_based_code: bool = False
    aliases: dict[str, str] = field(default_factory=dict)  # Q = K = V = X_1 in this section
    renames: dict[str, str] = field(default_factory=dict)  # P -> A: the document's letter for a model step
    current_head: int | None = None  # the head a section ("Head 2") speaks of: bare S, A, Z are its steps
    definitions: dict[str, Any] = field(default_factory=dict)  # Z = softmax(Q K^T / sqrt(d_k)) V
    letters: set[str] = field(default_factory=set)  # names given numbers that take cases: "for $z = 8$ ... $z = 1$"
    last_subject: str | None = None
    section: int = 0  # headings seen so far
    heading: str = ""  # the text of the last of them: what its section is about ("KV cache for a 7B model")
    sizes_reported: bool = False
    kv_reported: bool = False  # a g that does not divide h, reported once
    constrained: set[str] = field(default_factory=set)  # sizes given a range (h >= 2), not a value
    local: tuple[str, Any, dict[str, int]] | None = None  # (paragraph, model, sizes) of an example in it
    local_clause: str | None = None  # the clause a local example is bound to (a condition's), or None: the paragraph
    drawn: bool = False  # the formula being read is drawn as a result by the clause before it ("So $p \approx ...$")
    section_sizes: dict[str, int] = field(default_factory=dict)  # a section's own example ("**Q5. ... $n = 4$?**")
    bound_in: dict[str, tuple[int, int]] = field(default_factory=dict)  # the scope each size was bound in
    bound_line: dict[str, int] = field(default_factory=dict)  # the line each size was bound on (evidence)
    paragraph: tuple[int, int] = (0, 0)  # the scope being read: (paragraph, list item); a size restated with
    line: int = 0  # another value in another scope is another example, not a contradiction; the line being read
    history: dict[str, list[tuple[int, int]]] = field(default_factory=dict)  # sizes of earlier examples, with lines
    examples: list[tuple[dict[str, int], dict[str, int]]] = field(default_factory=list)  # each earlier example's
    # sizes together, with the lines that bound them
    example_section: int = 0  # the section (headings seen) the current example started in
    section_paragraph: int = 0  # the first scope (paragraph) of the current section
    # the document's labelled parts ("Problem 2", "Example 1", "Aufgabe 3": a heading that opens with a word and a
    # number): the first value each size was bound to in each, so that a sentence naming a part speaks of its sizes
    labels: dict[str, dict[str, int]] = field(default_factory=dict)
    section_label: str | None = None  # the label of the part being read
    causal_section: int = 0  # the section in which the model last became causal (or not)
    confirmed: set[str] = field(default_factory=set)  # model steps the document used as the model does (K_1)
    convention: str = "projection"
    memory: dict[str, Any] = field(default_factory=dict)  # layers and bytes per value a document states (KV cache)
    cross: bool = False  # cross-attention: queries from X, keys and values from Y (n_kv of them)
    mask: str | None = None  # "key_padding" or "additive": the mask the document's model applies
    causal_text: bool = False  # the document speaks of the causal (look-ahead) mask somewhere
    rows: bool = False  # the document says its tokens are rows (X in R^{n x d}, or a row-convention formula held)
    columns: bool = False  # tokens are columns (X is d_model x n): shapes and matrix formulas are not judged
    unscaled_s: bool = False  # the document's S_i = Q_i K_i^T held (S is not the scaled scores here)
    own_width: bool = False  # the document never writes d_k = d_model / h: a d_k it sets is a size of its own
    # this example's own sentence gave its head width with its d_model ("Let d_model = 3, one head with d_k = 2"): its
    # d_k is its own, whatever relation another example wrote (forgotten when another example starts)
    width_given: bool = False
    causal: bool = False  # its worked example is causal: a stated value agreed only with the causal model
    # code names the code gave a value of its own (a right side not read, or a number): no longer the model's
    # quantity of that name (S0 = raw0 / np.sqrt(d_k) is not the model's S_1), until assigned again
    opaque: set[str] = field(default_factory=set)
    # names the document defines by a formula (S = K^T Q), with the formula's text and its reading then: a name
    # used later is read from that text in the model in force where it is used (the sizes and values set since),
    # as long as the name still holds that definition
    formulas: dict[str, tuple[str, Any]] = field(default_factory=dict)
    # names the document declares a shape for (W_Q \in R^{d x d_k} of a single-head text, C \in R^{h d_v x n})
    # that are no matrix of the model: read as matrices of that shape, whose values are not known
    declared: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    _model: MultiHeadAttention | None = None
    _table: SymbolTable | None = None

    # ----- sizes --------------------------------------------------------------------------------------
    def variant(self) -> tuple[str, bool, str | None]:
        """(convention, cross-attention?, mask) of the document's model: the general head ``i`` has them too."""
        return self.convention, self.cross, self.model().mask

    def use_convention(self, convention: str) -> None:
        """Heads that read column blocks ``X_i`` of ``X`` (``"split"``) or project all of ``X``."""
        if convention != self.convention:
            self.convention = convention
            self._model = self._table = None

    def use_causal(self, causal: bool) -> None:
        """The document's worked example is causal (or, again, not): its model applies the causal mask."""
        if causal != self.causal:
            self.causal = causal
            self.causal_section = self.section
            self._model = self._table = None

    def bind_dim(self, name: str, value: int) -> None:
        self.dims[name] = int(value)
        if self.section_label is not None:
            self.labels.setdefault(self.section_label, {}).setdefault(name, int(value))
        self.bound_in[name] = self.paragraph
        self.bound_line[name] = self.line
        self._model = self._table = None

    def scope_of(self, name: str) -> tuple[int, int]:
        """The scope (paragraph) a size was bound in; a size derived from others (d_k = d_model / h, n and
        d_model read off X) belongs to the latest scope among what it came from."""
        if name in self.bound_in:
            return self.bound_in[name]
        sources = [self.bound_in[k] for k in ("d_model", "h", "n", "X") if k in self.bound_in]
        return max(sources, default=self.paragraph) if name in ("d_k", "d_v", "n", "d_model") \
            else self.paragraph

    def new_example(self, name: str, value: int, computed: bool = False) -> bool:
        """Does ``name = value`` start another example?  It does when ``name`` holds another value bound in
        another scope (an earlier paragraph, section or cell): a binding lives in its scope, and a new value
        elsewhere is another configuration, never a contradiction.  Everything the document said is then
        forgotten (sizes, values, definitions); only a scope that binds a size twice contradicts itself.  A head
        width the document derives (d_model / h) starts another example only when ``computed`` from other sizes
        in the statement itself (``d_k = 512/16 = 32``); a bare ``d_k = 5`` is judged against d_model / h."""
        known = self.known_dims().get(name)
        d = self.known_dims()
        if known is None and name in ("d_k", "d_v") and d.get("h") and d.get("d_model", 0) % d["h"] == 0 and \
                d.get("d_model"):
            if not computed:  # a bare d_k = 5 against d_model / h = 4: the document's own sizes decide it
                return False
            known = d["d_model"] // d["h"]  # d_k = 512/16 = 32: its own arithmetic shows other sizes
        outer = self.scope_of(name)
        if known is None or known == value or outer[0] == self.paragraph[0] and outer[1] in (0, self.paragraph[1]):
            return False  # the same scope, or the opening lines of the paragraph whose list item this is
        if outer[0] == self.section_paragraph - 1 and self.paragraph[0] >= self.section_paragraph:
            return False  # sizes its section's heading (or question) states: the section is their scope
        self.restart()
        return True

    def evidence(self) -> str:
        """The sizes in force and the lines that bound them: what a verdict computed from the model used."""
        return ", ".join(f"{k} = {v} (line {self.bound_line[k]})" for k, v in self.dims.items()
                         if k in self.bound_line)

    def earlier(self, name: str, value: int) -> int | None:
        """The line where an earlier example (one this document has since left) bound ``name = value``, or None:
        a statement of that value refers to that example ("in example 1, with $d_k = 4$")."""
        return next((line for v, line in self.history.get(name, []) if v == value), None)

    def cited(self, text: str) -> dict[str, dict[str, int]]:
        """The labelled parts other than the current one that ``text`` names, with their sizes ("In Problem 2,
        rank(QK^T) = 2" is about Problem 2's example).

        >>> doc = DocumentModel(); doc.section_label = "problem 1"; doc.bind_dim("n", 100)
        >>> doc.section_label = "problem 2"; doc.bind_dim("n", 2)
        >>> doc.cited("For the layer of Problem 1, and in problem 3"), doc.cited("in Problem 2")
        ({'problem 1': {'n': 100}}, {})
        >>> doc.cited("Problem 12 and problem 1.2 are other parts")
        {}
        >>> doc.section_label = "part b"; doc.bind_dim("n", 3); doc.section_label = "part c"
        >>> doc.cited("we go part by part"), doc.cited("as in Part B,")
        ({}, {'part b': {'n': 3}})
        """
        return {label: sizes for label, sizes in self.labels.items() if label != self.section_label and sizes and
                re.search(r"(?<![^\W\d_])" + r"\s+".join(map(re.escape, label.split())) + r"(?!\w|\.\d)", text,
                          re.I)}

    def return_to(self, sizes: dict[str, int]) -> int | None:
        """Go back to an earlier example when ``sizes`` (two or more, stated together) are all that example's and
        not all the current one's: a section after a small example of its own speaks of the main example again.
        Its sizes are bound anew (its values and definitions stay forgotten); the line that first bound one of them,
        or None (nothing changed)."""
        if len(sizes) < 2 or all(self.known_dims().get(k) == v for k, v in sizes.items()):
            return None
        for dims, lines in reversed(self.examples):
            width = dims["d_model"] // dims["h"] if dims.get("h") and dims.get("d_model", 0) % dims["h"] == 0 else None
            if all(dims.get(k, width if k in ("d_k", "d_v") else None) == v for k, v in sizes.items()):
                self.restart()
                for k, v in dims.items():
                    self.bind_dim(k, v)
                return min((lines[k] for k in sizes if k in lines), default=None)
        return None

    def restart(self) -> None:
        """Another example starts: forget the sizes, values and definitions the document gave so far (the sizes
        are kept in :attr:`history`, for statements that refer back to them), but for the sizes its own scope set
        just before ("$d_{model} = 768$, $h = 12$, so $d_k = d_v = 768/12 = 64$": the new example's)."""
        for k, v in self.known_dims().items():
            self.history.setdefault(k, []).append((v, self.bound_line.get(k, 0)))
        self.examples.append((self.known_dims(), dict(self.bound_line)))
        self.example_section = self.section
        here = [k for k in self.dims if self.bound_in.get(k, (None,))[0] == self.paragraph[0]]  # the new example's
        kept = ({k: self.dims[k] for k in here}, {k: self.bound_in[k] for k in here},
                {k: self.bound_line[k] for k in here if k in self.bound_line})  # own sizes, set before in its scope
        # the values the document gave its own names earlier in this section: the new example's ("A small example:
        # take Q = ..., K = ...  Here n = 3 > d_k = 2")
        own = [k for k in self.definitions if self.section_paragraph <= self.bound_in.get(k, (-1,))[0]]
        definitions = {k: self.definitions[k] for k in own}
        scopes = {k: self.bound_in[k] for k in own} | kept[1]
        lines = {k: self.bound_line[k] for k in own if k in self.bound_line} | kept[2]
        formulas = {k: self.formulas[k] for k in own if k in self.formulas}
        self.dims, self.values, self.assumed, self.shapes = {}, {}, {}, {}
        self.definitions, self.aliases, self.bound_in, self.bound_line = definitions, {}, scopes, lines
        self.dims = kept[0]
        self.formulas, self.declared = formulas, {}
        self.confirmed = set()
        self.width_given = False
        self.memory.pop("variant_g", None)  # what GQA was in the earlier example
        self._model = self._table = None

    def own_numbers(self) -> dict[str, Fraction]:
        """The names the document gave a rational number of its own (``m = 512``, ``b = 2``, ``n_{layers} = 32``)."""
        return {name: Fraction(int(v.p), int(v.q)) for name, v in self.definitions.items()
                if getattr(v, "is_Rational", False)}

    def known_dims(self) -> dict[str, int]:
        """The stated sizes plus those read off given matrices (X gives n and d_model)."""
        d = dict(self.dims)
        if "n_kv" in d and not self.cross:  # n_kv in a document about grouped-query attention: the key/value heads
            d.setdefault("g", d.pop("n_kv"))
        if "Y" in self.values and self.cross:
            d.setdefault("n_kv", self.values["Y"].rows)
            d.setdefault("d_model", self.values["Y"].cols)
        if "X" in self.values:
            d.setdefault("n", self.values["X"].rows)
            d.setdefault("d_model", self.values["X"].cols)
        heads = {k for k in self.values if k.startswith(("W_Q^", "W_K^", "W_V^"))}
        for k in sorted(heads):
            d.setdefault("d_v" if k.startswith("W_V") else "d_k", self.values[k].cols)
        if heads and "h" not in d and "d_model" in d:
            width = d.get("d_k") if self.convention == "projection" else None
            if width and d["d_model"] % width == 0:
                d["h"] = d["d_model"] // width  # W_Q^1 is d_model x d_k: h = d_model / d_k
            else:
                d["h"] = max(int(k.split("^")[1]) for k in heads)
        return d

    def model(self) -> MultiHeadAttention:
        """The engine's model of the document's sizes (symbolic where a size is unknown)."""
        if self._model is None:
            d = self.known_dims()
            h = d.get("h")
            d_model = d.get("d_model")
            if d_model is None and h is not None and d.get("d_k") is not None and d.get("d_v", d["d_k"]) == d["d_k"]:
                d_model = h * d["d_k"]  # the usual d_model = h d_k; a document with its own d_v != d_k (a block of
                # its own design) fixes d_model only where it says so
            d_k = d.get("d_k") if d_model is None or h is None or (self.own_width or self.width_given) and \
                "d_k" in self.dims else None
            try:
                self._model = MultiHeadAttention(n=d.get("n"), d_model=d_model, h=h, d_k=d_k,
                                                 convention=self.convention,
                                                 **({"d_v": d["d_v"]} if d.get("d_v") is not None else {}))
            except MHASymbolicError:
                try:
                    self._model = MultiHeadAttention(n=d.get("n"), d_model=d_model, h=h, convention=self.convention)
                except MHASymbolicError:  # sizes that contradict each other (reported once): h left open
                    self._model = MultiHeadAttention(n=d.get("n"), d_model=d_model, h=None, convention=self.convention)
            self._model = self._grouped(self._model, d.get("g"))
            self._model = self._crossed(self._model, d.get("n_kv"))
            if self.causal:
                self._model = self._model.replace_options(causal=True)
        return self._model

    def _crossed(self, model: MultiHeadAttention, n_kv: int | None) -> MultiHeadAttention:
        """The model of a cross-attention document (keys and values from ``Y``, ``n_kv`` of them; symbolic while
        the document does not state ``n_kv``) with the document's mask; otherwise the model as it is."""
        mask = self.mask if {"key_padding": "m", "additive": "M"}.get(self.mask or "") in self.values else None
        if not self.cross and mask is None:
            return model
        try:
            if self.cross:
                model = model.replace_options(n_kv=n_kv) if n_kv is not None else \
                    model.replace_options(n_kv=MultiHeadAttention(cross=True).n_kv)
            return model.replace_options(mask=mask) if mask is not None else model
        except MHASymbolicError:
            return model

    def _grouped(self, model: MultiHeadAttention, g: int | None) -> MultiHeadAttention:
        """The model with the document's ``g`` key/value heads (grouped-query attention), when ``g`` is stated
        and the model can take it; otherwise the model as it is (a ``g`` that does not divide ``h`` is reported
        by the pipeline, :func:`.grouped.kv_heads_problem`)."""
        if g is None or as_int(model.dims.h) is None or model.convention != "projection":
            return model
        try:
            return model.replace_options(kv_heads=g)
        except MHASymbolicError:
            return model

    def table(self) -> SymbolTable:
        if self._table is None:
            M = self.model()
            extra: list[Any] = []
            if as_int(M.dims.h) is None:  # h not fixed: head 1, 2, 3 of the general model are still names
                index = M.head_indices[0]
                per_head = [s.symbol for s in M.steps.values() if index in getattr(s.symbol, "args", ())]
                per_head += [w for k in ("W_Q", "W_K", "W_V") for w in M.inputs[k]]
                extra = [x.subs(index, k) for x in per_head for k in (1, 2, 3)]
            if self.cross:  # n_kv is a name in the document even once it has a value
                from ..dims import dimension_symbol

                extra.append(dimension_symbol("n_kv"))
            self._table = SymbolTable.for_model(M, *extra)
            if self.columns:
                self._table = columns_table(self._table, self.memory.get("query_axis"))
            self._table.unknown = self._defined_matrix
        return self._table

    def _defined_matrix(self, key: str) -> Any:
        """A name the document defined by a formula of matrices (``S = K^T Q``), as the reader meets it: so that it
        is a matrix inside a function too (``\\mathrm{softmax}(S / \\sqrt{2})``); a name it declared a shape for,
        as a matrix of that shape; None for any other name."""
        name = key.replace("{", "").replace("}", "")
        if name not in self.definitions and key in self.definitions:  # W_{O1}: the name as the reader keeps it
            name = key
        elif name not in self.definitions and key[1:] in self.definitions and key[:1] == "\\":
            name = key[1:]  # \tilde{S}: an accented name, kept as tilde{S} where latex2sympy read its definition
        if name not in self.definitions and name in self.declared:
            from .shapes import _size

            return MatrixSymbol(name, *(_size(self, x) for x in self.declared[name]))
        value = self.definitions.get(name)
        letter = re.match(r"(?:\\?[A-Za-z]+\{)?([A-Za-z]?)", name)  # (\tilde{S}: an accented capital)
        if name not in self.formulas and letter and letter.group(1).isupper() and _numeric_matrix(value):
            return value  # S given as numbers: a matrix inside a function too (softmax(S), det S)
        if name not in self.formulas or not getattr(value, "is_Matrix", False):
            return None  # (a value the document gave a name is put in after the reading, as before)
        got = self._definition(name)
        return got if getattr(got, "is_Matrix", False) else None

    # ----- reading ------------------------------------------------------------------------------------
    def read(self, tex: str) -> Any:
        """A side of a relation as a SymPy expression in the model's symbols (ParseError if unreadable)."""
        bound = r"([^\[\],:]*)"
        sliced = re.fullmatch(rf"\s*([A-Za-z]\w*)\s*\[\s*{bound}:{bound},\s*{bound}:{bound}\]\s*", tex) or \
            re.fullmatch(rf"\s*([A-Za-z]\w*)\s*\[\s*()()\s*:\s*,\s*{bound}:{bound}\]\s*", tex)
        if sliced:  # X[:, 0:2], X[:, (i-1)d_k : i d_k]: Python's slice, rows then columns, 0-based, half-open
            base = self.read(sliced.group(1))
            index = generic_model(*self.variant()).head_indices[0]
            ends = [None if not g.strip() else expand(as_sympy(self.read(g)).xreplace(
                {s: index for s in as_sympy(self.read(g)).free_symbols if str(s) == "i"})) for g in sliced.groups()[1:]]
            return base[slice(ends[0], ends[1]), slice(ends[2], ends[3])]
        text = self._local_names(tex)
        text = canonical_tex(text, self.zero_based)
        text = self._named_arguments(text)
        if "Concat" in text:  # "Concat · W^O": the name of the concatenation stands for its value, every head's
            text = _BARE_CONCAT.sub(r"\\mathrm{Concat}(\\mathrm{head}_{1}, \\dots, \\mathrm{head}_{h})", text)
        for name, value in self.definitions.items():
            if _numeric_matrix(value) and (name[:1].isupper() or value.rows == value.cols > 1) and re.search(
                    rf"(?<![\\A-Za-z])(?:e\s*\^\s*\{{?|\\exp\s*(?:\\left)?\(?)\s*{re.escape(name)}(?![\w'])", text):
                raise ParseError(f"e^{{{name}}} of the matrix {name}: the document does not say whether it means the "
                                 "entrywise exponential or the matrix exponential")
        literal = numeric_matrix(text)
        if literal is not None:  # a matrix of numbers: read directly (the grammar is slow on large ones)
            return literal
        generic = _generic_table(*self.variant())
        tables = [self.table(), columns_table(generic, self.memory.get("query_axis")) if self.columns else generic]
        if _GENERIC_HEAD.search(text):
            tables.reverse()  # W_i^Q, head_i: the general head i of the model
        try:
            got = read_expression(text, tables[0], strict=False)
        except (ParseError, ValueError, TypeError):
            if tables[1] is tables[0]:
                raise
            got = read_expression(text, tables[1], strict=False)
        if self.definitions and hasattr(got, "free_symbols"):
            named = {a: self._definition(str(a)) for a in got.free_symbols if str(a) in self.definitions}
            named |= {a: row for a in got.free_symbols if a not in named and (row := self._row_of(str(a))) is not None}
            got = _inner_products(got, named).xreplace(named) if named else got
        if getattr(got, "has", None) and got.has(S.ImaginaryUnit):
            raise ParseError(f"{tex!r}: a bare I is read as the identity only with its size (I_n)")
        if isinstance(got, FiniteSet) and len(got) == 1 and dim_name(str(next(iter(got)))) is not None:
            got = next(iter(got))  # a lone d (the grammar reads {d}, braced so as not to be a differential)
        return got

    def _named_arguments(self, text: str) -> str:
        r"""A row of numbers the document named in lower case (``z = (2, 1, 0.1)``), standing alone as the argument
        of a function: written out in softmax (``\mathrm{softmax}(z)``), entrywise in ``\exp(z)``/``e^{z}``, its
        largest or smallest entry in ``\max(z)``/``\min(z)``.  Elsewhere a lower-case name stays a name (``q \cdot
        k``, ``q^T k`` are inner products of vectors, read by the engine's rules)."""
        if not re.search(r"softmax|exp|e\^|\\max|\\min", text):
            return text
        for name, value in self.definitions.items():
            if name[:1].islower() and _numeric_matrix(value) and value.rows == 1:
                written = r"\\begin{bmatrix}" + " & ".join(sympy_latex(x) for x in value).replace("\\", "\\\\") + \
                    r"\\end{bmatrix}"  # (a replacement template: its backslashes doubled)
                text = re.sub(rf"(softmax\}}?\s*(?:\\left)?\(\s*){spelled(name)}(\s*(?:\\right)?\))",
                              r"\g<1>" + written + r"\g<2>", text)
                if value.cols > 1:  # max(s), min(s): its largest, its smallest entry; exp(s): entrywise (a matrix
                    for op, pick in (("max", max), ("min", min)):  # exponential needs a square)
                        text = re.sub(rf"\\{op}\s*(?:\\left)?\(\s*{spelled(name)}\s*(?:\\right)?\)",
                                      sympy_latex(pick(value)).replace("\\", "\\\\"), text)
                    entries = r"\\begin{bmatrix}" + " & ".join(f"e^{{{sympy_latex(x)}}}" for x in value).replace(
                        "\\", "\\\\") + r"\\end{bmatrix}"
                    text = re.sub(rf"\\exp\s*(?:\\left)?\(\s*{spelled(name)}\s*(?:\\right)?\)|"
                                  rf"(?<![\\A-Za-z])e\s*\^\s*\{{\s*{spelled(name)}\s*\}}", entries, text)
        return text

    def _row_of(self, name: str) -> ImmutableMatrix | None:
        """``q_5``: row 5 of the matrix of numbers the document gave as ``Q`` (tokens as rows, one head; counted
        as the document counts), when it gave no ``q_5`` of its own; None otherwise."""
        m = re.fullmatch(r"([a-z])_\{?(\d+)\}?", name)
        if not m or self.columns or self.known_dims().get("h", 1) != 1:
            return None  # (with several heads, q_2 is a row of which head's Q is the section's to say)
        matrix = self.definitions.get(m.group(1).upper())
        if not isinstance(matrix, MatrixBase) or not all(getattr(x, "is_number", False) for x in matrix):
            return None
        i = int(m.group(2)) - (0 if self.zero_based else 1)
        return ImmutableMatrix(matrix.row(i)) if 0 <= i < matrix.rows else None

    def _definition(self, name: str) -> Any:
        """What ``name`` stands for: a value the document gave, or the formula that defined it read again here."""
        tex, then = self.formulas.get(name, (None, None))
        if tex is None or self.definitions[name] is not then:
            return self.definitions[name]
        from .shapes import _size

        del self.formulas[name]  # (not read again inside its own reading)
        try:
            now = self.read(tex)
            if hasattr(then, "shape") and (not hasattr(now, "shape") or any(
                    (as_sympy(_size(self, a)) - as_sympy(_size(self, b))).simplify() != 0
                    for a, b in zip(then.shape, now.shape, strict=True))):
                return then  # Z = V A of one head read again where V is every head's: not what it named
            return now
        except (MHASymbolicError, ValueError, TypeError, RecursionError):
            return then
        finally:
            self.formulas[name] = (tex, then)

    def undefined(self, *exprs: Any) -> list[str]:
        """The names in ``exprs`` read as numbers that are neither sizes nor names the document defined (a ``W_Q``
        with no head index beside matrices, ``M_i`` defined only later), and the functions it never defined
        (``H(p)``): what they stand for is not known, so nothing with them is computed or refuted."""
        from sympy.core.function import AppliedUndef

        found: set[str] = set()
        for e in exprs:
            found |= {str(x) for x in getattr(e, "free_symbols", ()) if type(x) is Symbol and dim_name(str(x)) is None
                      and str(x) not in self.definitions and str(x) not in ("i", "n_ones")}  # (head i; \mathbf{1})
            found |= {str(f.func) for f in (e.atoms(AppliedUndef) if hasattr(e, "atoms") else ())}
        return sorted(found)

    def _local_names(self, tex: str) -> str:
        """Section-local names: aliases (``Q = K = V = X_1``) and bare step names of the section's head."""
        for name, target in self.renames.items():  # "P_i for the attention weights": P_1 is A_1
            where = rf"(?<![\\A-Za-z_^])(?<![_^]{{){re.escape(name)}(?=\s*_|\^\{{?\()"  # also inside \frac{S_1}{...}
            tex = re.sub(where, target.replace("\\", "\\\\"), tex)
        for name, target in self.aliases.items():
            tex = re.sub(rf"(?:(?<=[QKV])|(?<![\\A-Za-z_^{{])|(?<=[^_^]{{))({name})(?![_a-z{{])", "(" + target + ")",
                         tex)  # Q, and Q inside \frac{QK^T}{...}; not d_{Q}
        if self.current_head is not None:
            k = self.current_head - (1 if self.zero_based else 0)
            tex = re.sub(r"(?<![\\A-Za-z_^{])(S'|S|A|Z)(?![_'A-Za-z(^])", lambda m: f"{m.group(1)}_{{{k}}}", tex)
        elif self.dims.get("h") == 1 and not self.values.get("W_Q^2"):  # one head: bare Q, K, V, A are its own (S
            # is left alone: the document's S may be the scaled scores)
            k = 0 if self.zero_based else 1
            transposed = r"\^\s*\{?\s*(?:T|\\top|\\intercal|\\mathsf\{T\}|\\mathrm\{T\})"
            tex = re.sub(rf"{_BESIDE}(?<![_^]{{)(S'|A|Z|Q|K|V)(?![_'(^]|[a-z]|[A-Z](?<![QKV]))"
                         rf"|{_BESIDE}(?<![_^]{{)([QKV])(?={transposed})",
                         lambda m: f"{m.group(1) or m.group(2)}_{{{k}}}", tex)
        return tex

    def key(self, obj: Any) -> str | None:
        """The model key of a symbol (``X``, ``W_Q^1``, ``A_1``, ``Concat``), or None."""
        if isinstance(obj, MatrixSymbol):
            name = str(obj.name) if not hasattr(obj, "head") else str(obj)
            return name
        if isinstance(obj, Symbol):
            return str(obj.name)
        return None

    def inputs_and_steps(self) -> tuple[dict[str, Any], dict[str, ImmutableMatrix]]:
        """Keyword givens for :meth:`MultiHeadAttention.evaluate` (None for a head not given) and the
        step values the document stated without inputs."""
        M = self.model()
        h = as_int(M.dims.h) or 1
        givens: dict[str, Any] = {}
        if "X" in self.values:
            givens["X"] = self.values["X"]
        for w in ("W_Q", "W_K", "W_V"):
            count = len(M.kv_indices) if w != "W_Q" and M.kv_heads is not None else h  # g key/value heads
            heads = [self.values.get(f"{w}^{i}") for i in range(1, count + 1)]
            if any(x is not None for x in heads):
                givens[w] = heads
        if "W_O" in self.values:
            givens["W_O"] = self.values["W_O"]
        else:  # W_O given as its head blocks W_O^1, ..., W_O^h (the rows head i's output multiplies), stacked
            blocks = [self.definitions.get(f"W_{{O{i}}}") for i in range(1, h + 1)]
            if h > 1 and all(getattr(b, "is_Matrix", False) for b in blocks) and \
                    len({b.cols for b in blocks}) == 1:  # type: ignore[union-attr]
                givens["W_O"] = ImmutableMatrix.vstack(*blocks)
        if M.cross and "Y" in self.values:
            givens["Y"] = self.values["Y"]
        mask = M.mask_matrix
        if mask is not None and str(mask.name) in self.values:
            givens["mask"] = self.values[str(mask.name)]
        steps = {k: v for k, v in self.assumed.items() if k in M.steps}
        return givens, steps


def as_int(x: Any) -> int | None:
    """``x`` as a Python int when it is an integer (int or SymPy Integer), else None."""
    if isinstance(x, bool):
        return None
    if isinstance(x, int):
        return x
    return int(x) if getattr(x, "is_Integer", False) else None


@lru_cache(maxsize=8)
def generic_model(convention: str = "projection", cross: bool = False, mask: str | None = None
                  ) -> MultiHeadAttention:
    """The model of symbolic sizes (head ``i``) in a convention: formulas about a general head (of
    cross-attention, keys and values from ``Y``, and with a mask, when the document's model has them)."""
    return MultiHeadAttention(convention=convention, cross=cross, mask=mask)


def written_transposed(name: str, query_axis: str | None) -> bool | None:
    """Does a document whose tokens are columns write the model's matrix ``name`` (``X``, ``W_Q^1``, ``S'_i``)
    transposed?  Every matrix of the model but the n x n ones is (``X`` is d_model x n, ``Q_i = W_i^Q X`` is
    d_k x n); the scores, scaled scores, weights and an additive mask ``M`` are when its scores put a query in
    each column (``K^T Q``: ``query_axis`` is ``"column"``), not when in each row (``Q^T K``), and which is not
    known (None) when it writes neither.  The key-padding row ``m`` is a row either way."""
    base = re.split(r"[_^]", name, maxsplit=1)[0]
    if base in ("S", "S'", "A", "M"):
        return None if query_axis not in ("column", "row") else query_axis == "column"
    return base != "m"


def columns_table(table: SymbolTable, query_axis: str | None) -> SymbolTable:
    """The symbol table of a document whose tokens are columns: each model matrix it writes transposed is read as
    the transpose of the model's (row-convention) matrix, so that what is read has the value, shape and
    orientation the document writes; an n x n matrix of an orientation not known is left out (read as a name of
    the document's own).  The table's :attr:`~mha_symbolic.parse.SymbolTable.columns` tells the reader how the
    document's softmax, Concat, Attention and MultiHead go.

    >>> doc = DocumentModel(columns=True)
    >>> doc.bind_dim("n", 3); doc.bind_dim("d_model", 4); doc.bind_dim("h", 2)
    >>> doc.memory["query_axis"] = "column"
    >>> doc.read("W_1^Q X").shape, doc.read(r"\\mathrm{softmax}(K_1^T Q_1)").shape
    ((2, 3), (3, 3))
    """
    entries: dict[str, Any] = {}
    for key, value in table.entries.items():
        if isinstance(value, MatrixSymbol):
            flip = written_transposed(str(value), query_axis)
            if flip is None:
                continue
            value = value.T if flip else value
        entries[key] = value
    out = SymbolTable(entries, table.d_k, table.head_index, table.unknown)
    out.columns = query_axis if query_axis in ("column", "row") else "unknown"
    return out


@lru_cache(maxsize=8)
def _generic_table(convention: str = "projection", cross: bool = False, mask: str | None = None) -> SymbolTable:
    return SymbolTable.for_model(generic_model(convention, cross, mask))
