r"""A table of scores and their softmax weights, judged from its own cells (a local computation, no model).

Explanation
===========

Tutorials show one query's attention as a table: a row per key, a column of scores and a column of weights
(or, transposed, a row of scores and a row of weights).  The weights must be the softmax of the scores over the
table's keys, whatever model produced the scores, so the table is judged from its cells alone:

* the columns (or rows) are found by their headers, in the languages of the documents read (score, logit,
  Punktzahl, puntuación ...; weight, probability, softmax, Gewicht, poids, peso ...); a table with several
  score columns is judged only when one of them is marked scaled (the softmax's input);
* a score written with three or more decimals stands for the interval it rounds (:mod:`.balls`), and the
  softmax is bounded exactly over those intervals (it increases in its own score and decreases in the others);
* a weight holds when that range meets the interval its written decimals stand for; one row whose weight it
  misses is ``wrong``, naming the computed value;
* the weights of one query sum to one: a table whose weights sum to far from 1 holds something else (several
  queries, a mask, a percentage) and is not judged.

>>> rows = [("the", "2.0", "0.455"), ("cat", "1.0", "0.167"), ("sat", "0.5", "0.102"), ("on", "1.5", "0.276")]
>>> [v[0] for v in softmax_rows(["key", "score", "weight"], rows)]
['correct', 'correct', 'correct', 'correct']
>>> [v[0] for v in softmax_rows(["key", "score", "weight"], [("a", "2.0", "0.474"), *rows[1:]])][0]
'wrong'

The same holds for a call written in plain text or code, ``softmax([2.0, 1.0, 1.0]) → [0.576, 0.212, 0.212]``
(:func:`softmax_calls`): the list after the arrow (``→``, ``->``, ``=``, ``≈``) is the softmax of the list inside.

>>> [v[0] for v in softmax_calls("softmax([2.0, 1.0, 1.0]) → [0.50, 0.25, 0.25] ← spread out")]
['wrong']
>>> [v[0] for v in softmax_calls("softmax([200, 100, 100]) -> [1.00, 0.00, 0.00]")]
['correct']
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from typing import Any

from .balls import MIN_PLACES

__all__ = ["exponential_weights", "softmax_rows", "judge_softmax_table", "softmax_calls"]

#: headers of a column of scores (the softmax's input) and of weights, in the documents' languages
_SCORES = re.compile(r"score|logit|punktzahl|puntuaci|pontua|punteggio|^\$?\s*[sz]_?\{?[ij]?\}?\s*\$?$|q\s*[·.⋅]\s*k"
                     r"|\\cdot|q\^?\{?T\}?\s*k|q_?i?\s*k", re.I)
_SCALED = re.compile(r"scaled|skaliert|escalad|normalis|/\s*\\?sqrt|/\s*√|÷|/\s*\d", re.I)
_WEIGHTS = re.compile(r"weight|prob|softmax|attention|gewicht|poids|pes[oi]|wahrscheinlich|alpha|α"
                      r"|^\$?\s*[ap]_?\{?[ij]?\}?\s*\$?$", re.I)
_NUMBER = re.compile(r"\s*\$?\s*(-?\d+(?:\.\d+)?)\s*\$?\s*")


def _value(text: str) -> tuple[Decimal, int] | None:
    """A cell's number and its written decimals, or None."""
    m = _NUMBER.fullmatch(text.replace("−", "-"))
    if not m:
        return None
    try:
        return Decimal(m.group(1)), len(m.group(1).split(".")[1]) if "." in m.group(1) else 0
    except InvalidOperation:
        return None


def _columns(headers: list[str]) -> tuple[int, int] | None:
    """(score column, weight column) by their headers; None when not exactly one of each (scaled preferred)."""
    weights = [k for k, h in enumerate(headers) if _WEIGHTS.search(h) and not _SCORES.search(h)]
    scores = [k for k, h in enumerate(headers) if _SCORES.search(h) and k not in weights]
    if len(scores) > 1:
        scores = [k for k in scores if _SCALED.search(headers[k])]
    if len(weights) != 1 or len(scores) != 1:
        return None
    return scores[0], weights[0]


def softmax_rows(headers: list[str], cells: list[tuple[str, ...]]) -> list[tuple[str, str, str | None]]:
    """One verdict ``(status, message, expected)`` per row of a table whose weights should be the softmax of its
    scores; ``[]`` when the table is not such a table."""
    where = _columns(list(headers))
    if where is None or len(cells) < 2:
        return []
    s_col, w_col = where
    read = [(_value(row[s_col]) if s_col < len(row) else None, _value(row[w_col]) if w_col < len(row) else None)
            for row in cells]
    if any(s is None or w is None for s, w in read):
        return []
    scores = [(float(s[0]), 0.5 * 10.0 ** -s[1] if s[1] >= MIN_PLACES else 0.0) for s, _ in read]  # type: ignore[index]
    weights = [(float(w[0]), w[1]) for _, w in read]  # type: ignore[index]
    if any(not 0 <= w <= 1 for w, _ in weights) or abs(sum(w for w, _ in weights) - 1) > 0.1:
        return []  # not one query's distribution: several queries, a mask, percentages
    if max(abs(s) for s, _ in scores) > 700:
        return []  # beyond what exp() holds: not a table of scores
    out: list[tuple[str, str, str | None]] = []
    for i, (w, places) in enumerate(weights):
        lo, hi = _bounds(scores, i)
        half = 0.5 * 10.0 ** -places
        exact = _bounds([(s, 0.0) for s, _ in scores], i)[0]
        if lo - 1e-12 <= w + half and w - half <= hi + 1e-12:
            out.append(("correct", f"softmax of the score column at row {i + 1}: {exact:.{places + 2}f}; agrees at "
                        f"{places} decimals", None))
        else:
            out.append(("wrong", f"softmax of the score column at row {i + 1}: {exact:.{places + 2}f}, not "
                        f"{w:.{places}f} (the weights of one query are the softmax of its scores)",
                        f"{exact:.{places}f}"))
    return out


def _bounds(scores: list[tuple[float, float]], i: int) -> tuple[float, float]:
    """The least and greatest softmax weight of entry ``i`` over the scores' intervals (value, radius)."""
    top = max(s for s, _ in scores)
    def weight(own: float, others: list[float]) -> float:
        e = math.exp(own - top)
        return e / (e + sum(math.exp(x - top) for x in others))
    s, r = scores[i]
    rest = [(x, q) for k, (x, q) in enumerate(scores) if k != i]
    return weight(s - r, [x + q for x, q in rest]), weight(s + r, [x - q for x, q in rest])


#: a column of one query's score or weight for one key ("s_i1", "$z_{12}$", "α_i3", "$a_{2}$")
_SCORE_ENTRY = re.compile(r"\$?\s*[sz]_?\{?[ij]?\d{1,2}\}?\s*\$?")
_WEIGHT_ENTRY = re.compile(r"\$?\s*(?:α|\\alpha|a)_?\{?[ij]?\d{1,2}\}?\s*\$?")


def _vector(cell: str) -> list[str] | None:
    """A cell holding a list of numbers ("0, 2.8284, 1.4142", "[0.1 0.9]"), else None."""
    body = cell.strip().strip("$[]() ")
    parts = [p for p in re.split(r"\s*[,;]\s*|\s+", body) if p]
    return parts if len(parts) >= 2 and all(_value(p) is not None for p in parts) else None


def query_rows(headers: list[str], cells: list[tuple[str, ...]]) -> list[tuple[str, str, str | None]]:
    """One verdict per row of a table whose every row is one query: its scores and its weights either as two
    cells holding lists, or spread over a column per key ("s_i1 .. s_i3 | α_i1 .. α_i3"); ``[]`` otherwise."""
    where = _columns(headers)
    pairs: list[tuple[list[str], list[str]]] = []
    if where is not None and all(max(where) < len(row) for row in cells):
        for row in cells:
            scores, weights = _vector(row[where[0]]), _vector(row[where[1]])
            if scores is None or weights is None or len(scores) != len(weights):
                return []
            pairs.append((scores, weights))
    else:
        s_cols = [k for k, h in enumerate(headers) if _SCORE_ENTRY.fullmatch(h.strip())]
        w_cols = [k for k, h in enumerate(headers) if _WEIGHT_ENTRY.fullmatch(h.strip())]
        if len(s_cols) < 2 or len(s_cols) != len(w_cols) or any(max(s_cols + w_cols) >= len(row) for row in cells):
            return []
        pairs = [([row[k] for k in s_cols], [row[k] for k in w_cols]) for row in cells]
    out: list[tuple[str, str, str | None]] = []
    for scores, weights in pairs:
        got = softmax_rows(["key", "score", "weight"], [(str(k), s, w) for k, (s, w) in enumerate(zip(scores, weights,
                                                                                                      strict=True))])
        if not got:
            return []
        bad = next((v for v in got if v[0] == "wrong"), None)
        out.append(bad if bad else ("correct", "each weight is the softmax of the row's scores (at the decimals "
                                    "written)", None))
    return out


def judge_softmax_table(rows: list[Any], emit: Any) -> bool:
    """Judge a table of table-row pieces as scores and weights (by columns, or transposed by rows, or a query
    per row); True when it was such a table."""
    headers = list(rows[0].columns)
    cells = [tuple(c.strip() for c in p.text.split(" | ")) for p in rows]
    by_query = query_rows(headers, cells)
    if by_query:
        for p, (status, message, expected) in zip(rows, by_query, strict=True):
            emit(p, status, message.replace("softmax of the score column at row", "softmax of the row's scores at "
                                            "key"), expected, "number", "computed")
        return True
    verdicts = softmax_rows(headers, cells)
    if verdicts:
        for p, (status, message, expected) in zip(rows, verdicts, strict=True):
            emit(p, status, message, expected, "number", "computed")
        return True
    labels = [c[0] for c in cells]  # transposed: a row of scores and a row of weights, one column per key
    columns = list(zip(*[c[1:] for c in cells], strict=False))
    verdicts = softmax_rows(labels, [tuple(col) for col in columns]) if columns else []
    if verdicts:
        where = _columns(labels)
        assert where is not None
        bad = [v for v in verdicts if v[0] == "wrong"]
        status, message, expected = bad[0] if bad else verdicts[0]
        emit(rows[where[1]], status, message if bad else "every weight is the softmax of the score row (at the "
             "decimals written)", expected, "number", "computed")
        return True
    return False


_LIST = r"[\[(]\s*(-?\d+(?:\.\d+)?(?:\s*,\s*-?\d+(?:\.\d+)?)+)\s*[\])]"
#: softmax([2, 1, 0]) -> [...], and softmax(2, 1, 0) ≈ (...): the scores in their own brackets or the call's
_CALL = re.compile(r"\bsoftmax\s*\(\s*(?:" + _LIST + r"|(-?\d+(?:\.\d+)?(?:\s*,\s*-?\d+(?:\.\d+)?)+))\s*\)\s*"
                   r"(?:→|->|=|≈|~|\\approx)\s*" + _LIST, re.I)


#: an exponential and the value written for it: ``$e^{3\sqrt{2}} \approx 69.5914$``, ``e^{0.5} ≈ 1.6487``
_EXPONENTIAL = re.compile(r"(?<![A-Za-z\\])e\s*\^\s*(?:\{(?:[^{}]|\{[^{}]*\})*\}|-?\d+(?:\.\d+)?)\s*\$?\s*"
                          r"(?:\\approx|≈|=)\s*\$?\s*(\d+\.\d+)")
#: a bracketed row of numbers written after them: ``(0.0454,\ 0.7679,\ 0.1867)``
_ROW = re.compile(r"[(\[]\s*(\d+(?:\.\d+)?(?:\s*,\s*\d+(?:\.\d+)?)+)\s*[)\]]")


def exponential_weights(text: str) -> list[tuple[str, str, str | None]]:
    r"""The weights a line writes after the exponentials it computed (``e^{1/\sqrt{2}} \approx 2.0281``, ``e^{5/\sqrt
    {2}} \approx 34.3133``, sum ..., weights ``(0.0558, 0.9442, 0)``): each is its exponential over their sum, in
    the order written, a masked key a weight written as a bare ``0``.  The exponentials are taken as written, each
    standing for the interval it rounds; the verdict is one for the row.  ``[]`` when the line writes no such row
    (not one row after them, entries not a distribution, other than one nonzero weight per exponential).

    >>> exponential_weights(r"$e^{0.5} \approx 1.6487$, $e^{1} \approx 2.7183$, sum 4.3670, weights (0.3775, 0.6225)")
    [('correct', 'each weight is its exponential over their sum (at the decimals written)', None)]
    >>> exponential_weights(r"$e^{0.5} \approx 1.6487$, $e^{1} \approx 2.7183$, weights $(0.6225, 0.3775, 0)$")[0][0]
    'wrong'
    """
    text = re.sub(r"\\[,;:! ]|\\quad|~", " ", text)
    found = list(_EXPONENTIAL.finditer(text))
    rows = list(_ROW.finditer(text, found[-1].end())) if found else []
    if len(found) < 2 or len(rows) != 1 or not _WEIGHTS.search(text[found[-1].end():rows[0].start()]):
        return []  # (a row named as weights between them: "the scores (0.2, 0.8)" are not)
    words = re.split(r"\s*,\s*", rows[0].group(1).strip())
    shown = [w for w in words if w != "0"]
    if len(shown) != len(found) or len(words) > 2 * len(found) + 2:
        return []
    weights = [(float(w), len(w.split(".")[1]) if "." in w else 0) for w in shown]
    slack = sum(0.5 * 10.0 ** -p for _, p in weights)
    if any(not 0 <= w <= 1 for w, _ in weights) or abs(sum(w for w, _ in weights) - 1) > slack + 1e-9:
        return []
    scores = []
    for m in found:  # ln of the value as written, and the radius of the interval it rounds
        value, half = float(m.group(1)), 0.5 * 10.0 ** -len(m.group(1).split(".")[1])
        if value - half <= 0:
            return []
        scores.append((math.log(value), math.log(value) - math.log(value - half)))
    for i, (w, places) in enumerate(weights):
        lo, hi = _bounds(scores, i)
        half = 0.5 * 10.0 ** -places
        if not (lo - 1e-12 <= w + half and w - half <= hi + 1e-12):
            exact = ", ".join(f"{_bounds([(s, 0.0) for s, _ in scores], k)[0]:.{max(p, 4)}f}" for k, (_, p) in
                              enumerate(weights))
            return [("wrong", f"each weight is its exponential over their sum: ({exact}), not ({', '.join(shown)})",
                     f"({exact})")]
    return [("correct", "each weight is its exponential over their sum (at the decimals written)", None)]


def softmax_calls(text: str) -> list[tuple[str, str, str | None]]:
    """A verdict per ``softmax([scores]) → [weights]`` written in a line of plain text or code, and on the weights a
    line writes after the exponentials it computed (:func:`exponential_weights`)."""
    out: list[tuple[str, str, str | None]] = exponential_weights(text)
    for m in _CALL.finditer(text.replace("−", "-")):
        scores, weights = (re.split(r"\s*,\s*", g.strip()) for g in (m.group(1) or m.group(2), m.group(3)))
        if len(scores) != len(weights):
            out.append(("wrong", f"softmax of {len(scores)} scores has {len(scores)} weights, not {len(weights)}",
                        None))
            continue
        rows = softmax_rows(["score", "weight"], list(zip(scores, weights, strict=True)))
        if not rows:
            continue
        bad = [r for r in rows if r[0] == "wrong"]
        if bad:
            out.append(("wrong", bad[0][1].replace("of the score column at row", "of the scores, entry"), bad[0][2]))
        else:
            out.append(("correct", "every weight is the softmax of the scores (at the decimals written)", None))
    return out
