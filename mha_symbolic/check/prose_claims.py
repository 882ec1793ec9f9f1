r"""Claims about a matrix stated in words, judged on the document's model.

Two forms of the grammar (``prose.lark``) are claims, not sizes:

* **the normalisation axis** -- "each row of $A$ sums to one", "every column of the attention weights is a
  probability distribution".  The softmax of attention normalises each query's scores over the keys: a row
  when tokens are rows (``X`` is n x d_model), a column when the document puts tokens in columns.  Which one
  a document uses is read from it (the shape of ``X``, ``softmax(..., dim=-1)`` in its code, its other claims
  about the axis), never assumed.  A claim on the matrix's values the document gives is computed on them; a
  claim about the weights in general is decided by the axis, with a counterexample for the other one.
* **a rank in words** -- "$S$ has rank 2", "$W_Q W_K^\top$ has rank at most $d_k = 64$", "$M$ is full rank",
  "$M$ is rank-deficient": judged like ``\operatorname{rank}(S) = 2`` written in LaTeX (proof, certified
  witness or exact computation, :mod:`.ranks`).

A claim in a conditional or hypothetical sentence, or about a matrix the document's model cannot read, gets
no verdict.

>>> from mha_symbolic.check.model import DocumentModel
>>> doc = DocumentModel()
>>> doc.rows = True  # X is n x d_model: tokens are rows
>>> [v[0] for v in judge_prose_claims(doc, "Every column of the attention weights sums to one.")]
['wrong']
>>> [v[0] for v in judge_prose_claims(doc, "Each row of the softmax output sums to 1.")]
['correct']
>>> [v[0] for v in judge_prose_claims(DocumentModel(), "Each column of the softmax output sums to 1.")]
['unchecked']
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Any

from ..errors import MHASymbolicError
from .model import DocumentModel, as_sympy
from .prose import (
    AxisClaim,
    Condition,
    Constraint,
    MomentClaim,
    RankClaim,
    RatioClaim,
    Restatement,
    Setting,
    _plain,
    _sentences,
    hedged,
    holds,
    hypothetical,
    read,
    variants,
)

#: the words an axis or a rank claim holds (prose.lark's terminals)
_CLAIM_WORDS = ("AXIS", "RANK", "FULL_RANK", "RANK_DEFICIENT", "VARIANCE_WORD", "SD_WORD", "UNIT_FRACTION", "SMALLER",
                "BY_A_FACTOR_OF", "X_REDUCTION", "APPOSITION")

__all__ = ["judge_prose_claims", "judge_weight_rows", "document_axes"]

#: (status, message, expected, kind, basis)
Verdict = tuple[str, str, "str | None", str, str]

#: words that make a claim's subject the attention weights (or, with no subject, the sentence about them)
_WEIGHT_WORDS = ("weight", "attention", "softmax", "probabilit")
#: the names tutorials give the attention weights
_WEIGHT_NAMES = ("A", "P", "\\alpha", "α")

# scores [[1, 0], [0, 0]]: the weights' first column sums to e/(e+1) + 1/2 = 1.231 (three places), not 1
#: normalised along {0}s, the scores [[1, 0], [0, 0]] give weights whose first {1} does not sum to 1
_COUNTEREXAMPLE = "scores [[1, 0], [0, 0]] give weights whose first {1} sums to e/(e+1) + 1/2 ≈ 1.231"


def judge_prose_claims(doc: DocumentModel, text: str, clause: str = "") -> list[Verdict]:
    """The verdicts of the axis and rank claims of the sentences that start on a line of prose (``text``; see
    the module's docstring).  ``clause`` is the sentence or sentences around the line: a sentence that goes on
    to the next line ("... of $A$ is a probability / distribution") is read whole, and judged on its first
    line only."""
    whole = " ".join((clause or text).split("\n"))  # soft line breaks: one sentence, offsets kept
    line_at = whole.find(" ".join(text.split("\n")))
    if line_at < 0:
        whole, line_at = text, 0
    out: list[Verdict] = []
    for at, sentence in _sentences(whole):
        if at >= line_at + len(text) or at + len(sentence) <= line_at:
            continue  # a sentence that does not reach this line
        plain = _plain(sentence)
        if not holds(plain, _CLAIM_WORDS):
            continue
        statements = [s for _, s in read(plain)]
        out += _moments(doc, statements, sentence, _plain(text))  # each moment on the line it is written on
        out += _amount_ratios(plain, _plain(text))  # and each ratio of two amounts it writes (in any mood)
        out += _restated(statements, _plain(text))  # and each amount it restates in another unit (in any mood)
        if not line_at <= at < line_at + len(text):
            continue  # the sentence starts on another line: its other claims are judged there
        if any(isinstance(s, (Condition, Constraint)) for s in statements) or hypothetical(sentence):
            continue  # about another configuration, or a claim under a condition
        for s in statements:
            if isinstance(s, AxisClaim):
                out += _axis(doc, s, sentence)
            elif isinstance(s, RankClaim):
                out += _rank(doc, s)
    return out


#: a number as the plain text writes it (math unwrapped: 65536, 262144, 1.5)
_NUMBER = re.compile(r"(?<![\w.^])\d+(?:\.\d+)?(?![\w.^])")


def _amount_ratios(plain: str, line: str | None = None) -> list[Verdict]:
    """"costs 65,536 numbers, an eighth of the 512^2 = 262,144 a full form needs": a ratio stated between two amounts
    the sentence writes, the one just before it and the one just after it (the value a chain there ends with), when
    the sentence names no variant of attention (a ratio of KV caches is :mod:`.counts`'s) and does not hedge it
    ("roughly a third of").  Both amounts must be written right beside the ratio; anything else is left alone.  With
    ``line`` (plain), only a ratio written on that line.

    >>> [v[0] for v in _amount_ratios("costs 65,536 numbers, a quarter of the 512^2 = 262,144 of a full form")]
    ['correct']
    >>> [v[:3] for v in _amount_ratios("costs 65536 numbers, an eighth of the 512^2 = 262144 of a full form")]
    [('wrong', '262144 / 65536 = 4: a quarter, not 1/8', '4')]
    """
    if variants(plain):
        return []
    out: list[Verdict] = []
    for at, claim in read(plain):
        if not isinstance(claim, RatioClaim) or claim.larger or hedged(plain[:at]) or line is not None and \
                " ".join(claim.text.split()) not in " ".join(line.split()):
            continue
        grouped = re.compile(r"(?<=\d)[,\u202f\u2009 ](?=\d{3}(?!\d))")  # 65,536 is one number
        before = re.fullmatch(r".*?(\d+(?:\.\d+)?)\s*[^\W\d]*\s*,?\s*", grouped.sub("", plain[max(0, at - 40):at]),
                              re.S)
        after = grouped.sub("", plain[at + len(claim.text):at + len(claim.text) + 40])
        chain = re.match(r"\s*(?:[^\W\d]{1,4}\s+)?([\d^*·. ]+(?:=\s*[\d.]+)*)", after)  # an article in any language
        if before is None or chain is None or not _NUMBER.search(chain.group(1).split("=")[-1]):
            continue
        small, large = Fraction(before.group(1)), Fraction(_NUMBER.findall(chain.group(1).split("=")[-1])[-1])
        if small < 2 or large <= small or "." in before.group(1) + chain.group(1):
            continue  # whole amounts only: a rounded one's ratio is not exact
        factor, said = large / small, Fraction(claim.factor)
        shown = str(factor) if factor.denominator == 1 else f"{float(factor):.4g}"
        words = {2: "a half", 3: "a third", 4: "a quarter", 8: "an eighth"}
        name = words.get(int(factor), f"1/{shown}") if factor.denominator == 1 else f"1/{shown}"
        if factor == said:
            out.append(("correct", f"{large} / {small} = {shown}: {claim.text} the amount after it", None, "number",
                        "computed"))
        else:
            out.append(("wrong", f"{large} / {small} = {shown}: {name}, not 1/{claim.factor}", shown, "number",
                        "computed"))
    return out


def _restated(statements: list[Any], line: str) -> list[Verdict]:
    """"786432 bytes, i.e. 768 KiB", "20480 bytes (20 KiB)": an amount restated in another unit is compared with it at
    the precision each is written with (:func:`.units.judge_amounts`, "≈": a restatement rounds), from the two amounts
    alone.  The same unit twice ("2 GiB or 4 GiB") is no restatement; only those written on ``line`` are judged.

    >>> from mha_symbolic.check.prose import read
    >>> [v[:2] for v in _restated([s for _, s in read("786432 bytes, i.e. 768 MiB.")], "786432 bytes, i.e. 768 MiB.")]
    [('wrong', '786432 bytes is 0.75 MiB, not 768 MiB')]
    >>> [v[0] for v in _restated([s for _, s in read("20480 bytes (20 KiB).")], "20480 bytes (20 KiB).")]
    ['correct']
    """
    from .units import judge_amounts

    out: list[Verdict] = []
    for s in statements:
        if not isinstance(s, Restatement) or " ".join(s.text.split()) not in " ".join(line.split()):
            continue
        sizes = re.split(r"\s*[×x*·]\s*", s.first)
        if len(sizes) > 1:  # a shape and the count of its entries, exactly
            product, count = math.prod(int(x) for x in sizes), int(re.match(r"\d+", s.second).group(0))  # type: ignore
            out.append(("correct", f"{' x '.join(sizes)} = {product} entries", None, "number", "computed")
                       if product == count else
                       ("wrong", f"{' x '.join(sizes)} = {product} entries, not {count}", str(product), "number",
                        "computed"))
            continue
        sides = []
        for amount in (s.first, s.second):
            m = re.fullmatch(r"(\d+(?:\.\d+)?)\s?(\S+)", amount)
            if m is None:
                break
            unit = "bytes" if m.group(2).lower() in ("bytes", "byte") else m.group(2)
            sides.append((m.group(1), unit))
        if len(sides) != 2 or sides[0][1] == sides[1][1]:
            continue
        got = judge_amounts({}, [rf"{v} \text{{{u}}}" for v, u in sides], ["approx"])
        if got is not None:
            status, message, expected, basis = got
            out.append((status, message.replace("\\text{", "").replace("}", ""), expected, "number", basis))
    return out


def _moments(doc: DocumentModel, statements: list[Any], sentence: str, line: str) -> list[Verdict]:
    """The moments of a score a sentence states in words (:class:`.prose.MomentClaim`) on this ``line`` (plain), at
    the head width its own condition or setting gives ("For $d_k = 64$ the unscaled score has variance 64"), else
    the document's."""
    from .counts import sizes
    from .statistics import judge_moment_claim

    flat = " ".join(line.split())
    claims = [s for s in statements if isinstance(s, MomentClaim) and " ".join(s.text.split()) in flat]
    said = [dict(s.sizes).get("d_k") for s in statements if isinstance(s, Condition)] + \
        [s.value for s in statements if isinstance(s, Setting) and s.name == "d_k"]
    if not claims or hypothetical(sentence) and not (any(v is not None for v in said) and all(
            c.scaled is not None for c in claims)):  # ("with d_k = 64 an unscaled score would have ...": the
        return []  # sentence names all a moment depends on, so its mood changes nothing)
    d_k = next((v for v in said if v is not None), None) or sizes(doc).get("d_k")
    out: list[Verdict] = []
    for c in claims:
        status, message, expected, basis = judge_moment_claim(doc, c.moment, c.scaled, c.value, d_k)
        out.append((status, f"{c.text}: {message}", expected, "statistic", basis))
    return out


def _about_weights(claim: AxisClaim, sentence: str) -> bool:
    name = re.split(r"∈|\\in\b", claim.subject)[0].strip()  # "A ∈ R^{n x n}": A, its set written after it
    subject = name.lower()
    if subject:
        return any(w in subject for w in _WEIGHT_WORDS) or name in _WEIGHT_NAMES or \
            name.split("_")[0] in _WEIGHT_NAMES and "^" not in name
    return any(w in sentence.lower() for w in _WEIGHT_WORDS)


def document_axes(pieces: list[Any]) -> dict[str, int]:
    """What a document says of its softmax axis: how many of its prose claims about the weights name rows and
    columns, and ``code_rows``: how many code softmax calls normalise the last axis (``dim=-1``, ``axis=-1``:
    a row of a (tokens x keys) matrix)."""
    out = {"row": 0, "column": 0, "code_rows": 0}
    paragraphs = {p.sentence: None for p in pieces if p.kind == "prose"}  # each paragraph once, in order
    for paragraph in paragraphs:
        for _, sentence in _sentences(" ".join(paragraph.split("\n"))):
            plain = _plain(sentence)
            for _, s in read(plain) if holds(plain, ("AXIS",)) else ():
                if isinstance(s, AxisClaim) and _about_weights(s, sentence):
                    out[s.axis] += 1
    for p in pieces:
        if p.kind == "code" and "softmax" in p.text:
            flat = "".join(p.text.split())
            out["code_rows"] += flat.count("dim=-1") + flat.count("axis=-1")
    return out


def _normalised(doc: DocumentModel, claim: AxisClaim) -> tuple[str | None, str]:
    """The axis the document's softmax normalises and what says so: ``structure`` (where its tokens are: ``X``
    is n x d_model or d_model x n; ``softmax(..., dim=-1)`` in its code) or ``claims`` (its other claims about
    the axis, this one among them, agree on one axis more often than on the other), or for a row claim in a
    document that never speaks of columns, ``convention``; (None, "") otherwise."""
    axes = doc.memory.get("axes") or {"row": 0, "column": 0, "code_rows": 0}
    if doc.columns:  # tokens as columns: the scores' formula says where the queries are (K^T Q: in columns)
        if doc.memory.get("query_axis"):
            return doc.memory["query_axis"], "structure"
        if axes["row"] + axes["column"] >= 2 and axes["row"] != axes["column"]:
            return ("row" if axes["row"] > axes["column"] else "column"), "claims"
        return None, ""
    if doc.rows or axes["code_rows"]:
        return "row", "structure"
    if axes["row"] + axes["column"] >= 2 and axes["row"] != axes["column"]:  # its claims, this one with them:
        return ("row" if axes["row"] > axes["column"] else "column"), "claims"  # a lone claim decides nothing
    if claim.axis == "row" and not axes["column"]:  # the usual convention, which nothing in the document denies:
        return "row", "convention"  # enough to agree with a row claim, never to call a column claim wrong
    return None, ""


def _axis(doc: DocumentModel, claim: AxisClaim, sentence: str) -> list[Verdict]:
    if not _about_weights(claim, sentence):
        return []
    normalised, source = _normalised(doc, claim)
    values = _values(doc, claim.subject)
    if values is not None:  # the document's own weights: the sums it claims, computed
        sums = [sum(values.row(i)) for i in range(values.rows)] if claim.axis == "row" else \
            [sum(values.col(j)) for j in range(values.cols)]
        off = [float(x) for x in sums if abs(float(x) - 1) > 0.01]
        if not off:
            return [("correct", f"every {claim.axis} of {claim.subject} sums to 1 (within 0.01, computed on the "
                     "document's values)", None, "axis", "computed")]
        return [("wrong", f"a {claim.axis} of {claim.subject} sums to {off[0]:.4g} on the document's values, not 1",
                 "1", "axis", "computed")]
    if normalised is None:
        return [("unchecked", "which axis the softmax normalises depends on whether tokens are rows or columns, "
                 "and the document does not say (or says both as often)", None, "axis", "")]
    why = {"structure": "where the document puts its tokens and its queries",
           "claims": "the document's other statements of the axis",
           "convention": "tokens as rows, the usual convention, which the document does not contradict"}[source]
    if claim.axis == normalised:
        return [("correct", f"the softmax normalises each {normalised} ({why}): every {normalised} of the weights "
                 "sums to exactly 1 whatever the scores", None, "axis", "proof")]
    return [("wrong" if source == "structure" else "inconsistent",
             f"the softmax normalises each {normalised} ({why}), so the {normalised}s sum to 1; a {claim.axis} "
             f"does not in general: {_COUNTEREXAMPLE.format(normalised, claim.axis)}", f"{normalised}s", "axis",
             "proof")]


def _values(doc: DocumentModel, subject: str) -> Any:
    """The numbers of the matrix a subject names, if the document gives them (or they follow from what it
    gives)."""
    from .judge import _value

    if not subject or " " in subject.strip():
        return None
    def numbers(V: Any) -> bool:  # an explicit matrix of numbers (a matrix symbol has no entries to sum)
        return bool(getattr(V, "is_Matrix", False)) and hasattr(V, "tolist") and all(x.is_number for x in V)

    try:
        V = doc.read(subject)
        return V if numbers(V) else (lambda W: W if numbers(W) else None)(_value(doc, V))
    except (MHASymbolicError, ValueError, TypeError, AttributeError, KeyError):
        return None


def _rank(doc: DocumentModel, claim: RankClaim) -> list[Verdict]:
    from .ranks import judge_rank

    subject, value, op = re.sub(r"([_^])\(([^()]*)\)", r"\1{(\2)}", claim.subject), claim.value, claim.op  # S^(i)
    if value == "full":  # the smaller side of the matrix, if the model knows its shape
        from .numbers import _dims_subs

        try:
            shape = tuple(as_sympy(x) for x in doc.read(subject).shape)
            shape = tuple(x.subs(_dims_subs(doc, x)) for x in shape)  # S_i of the generic head: n x n, n = 512
        except (MHASymbolicError, ValueError, TypeError, AttributeError):
            return []
        if not all(getattr(x, "is_Integer", False) for x in shape):
            return []
        value = str(min(shape))
    tex = value.replace(" ", " \\cdot ") if not value.isdigit() else value
    try:
        status, message, expected, basis = judge_rank(doc, [f"\\operatorname{{rank}}({subject})", tex],
                                                      ["lt" if op == "can" else op])
    except (MHASymbolicError, ValueError, TypeError, AttributeError, KeyError):
        return []
    if status == "unchecked" and message.startswith("not read"):
        return []  # not a matrix of the document's model ("I have rank 2")
    if op == "can":  # "it can be full rank": the claim that it is always below full rank must fail, with a witness
        if status not in ("correct", "wrong"):
            return [(status, f"{claim.text}: {message}", None, "rank", basis)]
        status, message = ("correct" if status == "wrong" else "wrong",
                           f"rank({subject}) < {value} for every instance is {status}: {message}")
        expected = None if status == "correct" else f"rank < {value}"
    return [(status, f"{claim.text}: {message}", expected, "rank", basis)]


#: a vector of two or more decimals as written in prose: "(0.1056, 0.4344)", "[0.5760 0.2840 0.1400]"
_VECTOR = re.compile(r"[(\[]\s*(-?(?:\d+(?:\.\d+)?|\.\d+)(?:(?:\s*[,;]\s*|\s+)-?(?:\d+(?:\.\d+)?|\.\d+))+)\s*[)\]]")
#: a head's weights named in math: A_1, A^{(1)}, A_{1}
_WEIGHTS_NAME = re.compile(r"\$\s*A\s*(?:_\{?(\d+)\}?|\^\{?\((\d+)\)\}?)\s*\$")


#: "row 1 of $S'/\sqrt{2}$: $[1.4142,\ 0.7071]$" -- a row of a matrix the sentence names in math, then its numbers
_NAMED_ROW = re.compile(r"\b(?i:row|Zeile|fila|riga|ligne|linha)\s+(\d{1,2})\s+(?i:of|von|der|de|di|du|da|del|des)\s+"
                        r"\$([^$]{1,80})\$\s*(?::|=|\bis\b|\bist\b|\bes\b|\bè\b|\best\b|\bé\b)?\s*\$?\s*(?=[(\[])")


def judge_named_rows(doc: DocumentModel, text: str) -> list[Verdict]:
    r"""A row of a matrix the sentence names (``row 1 of $S'/\sqrt{2}$: $[1.4142, 0.7071]$``), compared with that
    row of the matrix the document's values give, entry by entry at the places each is written (rows counted as the
    document counts them).  Nothing is said when the matrix has no value of numbers or not that many columns."""
    from sympy import MatrixBase, Rational

    from ..statements._base import agrees
    from .numbers import _value

    out: list[Verdict] = []
    for m in _NAMED_ROW.finditer(text):
        vector = _VECTOR.match(re.sub(r"\\[ ,;:!]|\\quad", " ", text[m.end():m.end() + 200]))
        if vector is None:
            continue
        words = re.split(r"\s*[,;]\s*|\s+", vector.group(1).strip())
        doc.memory["stated_row"] = (doc.line, m.group(1), words)  # "Softmax of row 1: [...]" on the next line
        try:
            M = _value(doc, doc.read(m.group(2)))
        except (MHASymbolicError, ValueError, TypeError, KeyError, AttributeError):
            continue
        row = int(m.group(1)) - (0 if doc.zero_based else 1)
        if not isinstance(M, MatrixBase) or M.cols != len(words) or not 0 <= row < M.rows or \
                not all(getattr(x, "is_number", False) for x in M.row(row)):
            continue
        exact = list(M.row(row))
        places = max(len(w.split(".")[1]) if "." in w else 0 for w in words)
        shown = ", ".join(f"{float(x):.{places}f}" for x in exact)
        said = f"row {m.group(1)} of {m.group(2).strip()} is ({shown}), computed exactly from the document's values"
        ok = all(agrees(x, Rational(w), len(w.split(".")[1]) if "." in w else None)
                 for x, w in zip(exact, words, strict=True))
        out.append(("correct", said, None, "number", "computed") if ok else
                   ("wrong", said, f"({shown})", "number", "computed"))
    return out


def judge_softmax_of_row(doc: DocumentModel, text: str) -> list[Verdict]:
    r"""``Softmax of row 1: [0.6698, 0.3302]`` on the line after ``Row 1 of $S'/\sqrt{2}$: [1.4142, 0.7071]``: the
    softmax of the row the line before stated (as written, each entry the interval it rounds), a local computation;
    nothing when the line before stated no row, or the line names another row or more than one vector."""
    from .softmax_tables import softmax_rows

    stated = doc.memory.get("stated_row")
    plain = re.sub(r"\\[ ,;:!]|\\quad|\$", " ", text)
    said = re.match(r"\s*(?:[-*+]|\d+[.)])?\s*(?:\*\*)?(?:the\s+)?softmax\b(?:\s+(?i:of)\s+(?i:row|it|this\s+row)\s*"
                    r"(\d+)?)?\s*(?:\*\*)?\s*(?::|=|→|->|≈|\\approx)?\s*", plain, re.I)
    if stated is None or said is None or stated[0] != doc.line - 1 or said.group(1) not in (None, stated[1]):
        return []
    rest = plain[said.end():]
    vector = _VECTOR.match(rest)  # right after the words: "softmax of row 1 (after scaling): ..." is another row
    if vector is None or _VECTOR.search(rest, vector.end()):
        return []
    weights = re.split(r"\s*[,;]\s*|\s+", vector.group(1).strip())
    if len(weights) != len(stated[2]):
        return []
    rows = softmax_rows(["score", "weight"], list(zip(stated[2], weights, strict=True)))
    bad = [r for r in rows if r[0] == "wrong"]
    if not rows:
        return []
    if bad:
        return [("wrong", bad[0][1].replace("of the score column at row", "of the row the line before states, "
                                             "entry"), bad[0][2], "number", "computed")]
    return [("correct", "every weight is the softmax of the row the line before states (at the decimals written)",
             None, "number", "computed")]


def judge_weight_rows(doc: DocumentModel, text: str, clause: str = "") -> list[Verdict]:
    """A row of the attention weights written in prose -- "riga 2: $(0.0139, 0.0139, 0.0017, 0.9704)$", "token 1
    ... its row is (...)" -- compared with that row of the head's weights ``A_i`` where the document's values fix
    them, at the precision each entry is written.  Only a probability vector (entries in [0, 1] summing to one
    within their rounding) of the model's length is read as a row of weights; the head is the one the sentence, the
    sentence before a list, or the section names (or the only one).  Nothing is said otherwise."""
    from sympy import Rational

    from ..statements._base import agrees
    from .numbers import _value
    from .prose import scope

    if doc.columns:
        return []
    where = scope(_plain(text))  # the row its own line names ("row 2: [..]" in a list of rows), else its sentence's
    if "token" not in where:
        where = scope(_plain(clause or text))
    named = _WEIGHTS_NAME.search(clause or text)
    if named:  # "the weights $A^{(1)}$ are:" -- for the rows listed under it, in its section
        doc.memory["weights_head"] = (int(named.group(1) or named.group(2)), doc.section)
    row = where.get("token")
    if row is None:
        return []
    vectors = _VECTOR.findall(re.sub(r"\\[ ,;:!]|\\quad|\$|\\left|\\right", " ", text))  # as written
    if len(vectors) != 1:
        return []
    words = re.split(r"\s*[,;]?\s+|\s*[,;]\s*", vectors[0].strip())
    stated = [float(w) for w in words]
    places = min(len(w.split(".")[1]) if "." in w else 0 for w in words)
    slack = len(stated) * 0.5 * 10 ** -places
    if not all(0 <= x <= 1 for x in stated) or abs(sum(stated) - 1) > slack + 1e-12:
        return []  # not a row of weights
    h = doc.known_dims().get("h")
    listed, scope_of_list = doc.memory.get("weights_head", (None, None))
    head = where.get("head") or (listed if scope_of_list == doc.section else None) or doc.current_head or \
        (1 if h == 1 else None)
    if head is None:
        return []
    def weights() -> list[Any] | None:
        try:
            A = _value(doc, doc.read(f"A_{{{head}}}"))
        except (MHASymbolicError, ValueError, TypeError, KeyError, AttributeError):
            return None
        if not all(getattr(x, "is_number", False) for x in A) or A.cols != len(stated) or not 1 <= row <= A.rows:
            return None
        return list(A.row(row - 1))

    def fits(exact: list[Any]) -> bool:  # a weight written as a whole number (a masked 0, a one-hot 1) is exact
        return all(agrees(x, Rational(w), len(w.split(".")[1]) if "." in w else None)
                   for x, w in zip(exact, words, strict=True))

    exact = weights()
    if exact is None:
        return []
    masked = ""
    # the later tokens' weights written as exact zeros, in a document that speaks of the causal mask: its masked rows
    if not fits(exact) and doc.causal_text and not doc.causal and \
            all((Rational(w) == 0) == (j >= row) for j, w in enumerate(words)) and any(x != 0 for x in exact[row:]):
        doc.use_causal(True)
        causal = weights()
        if causal is not None and fits(causal):
            exact, masked = causal, " with the causal mask the document describes"
        else:
            doc.use_causal(False)
    shown = ", ".join(f"{float(x):.{places}f}" for x in exact)
    said = f"row {row} of A_{head} is ({shown}) at {places} decimals, computed exactly{masked}"
    if fits(exact):
        return [("correct", said, None, "number", "computed")]
    return [("wrong", said, f"({shown})", "number", "computed")]
