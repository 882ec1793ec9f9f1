r"""Sentences about masked attention weights, decided by the engine's masked softmax.

Explanation
===========

A document on masks says what the mask does to the weights.  Each kind of sentence is decided by evaluating
a :class:`~mha_symbolic.attention.MultiHeadAttention` with that mask exactly (the document's sizes when they
are small, else two queries, ``d_model = 2``, one head and three keys), on generic integer inputs:

* **a masked key's weight** -- "padded keys get weight (exactly) 0", "the masked positions receive a weight
  of 0.25": the weights of a key whose padding entry is 0 (key padding ``m``) or whose additive entry is
  ``-oo``, computed exactly, against the stated number;
* **row sums** -- "each row of the masked weights still sums to 1": the exact row sums of the masked
  softmax, against the stated number;
* **a fully masked row** -- "a row whose keys are all masked gives NaN / is undefined": the engine refuses
  such a row (:class:`~mha_symbolic.errors.MaskError`), so the softmax has no value there; a sentence that
  gives it a value ("all zeros", "uniform weights") states a convention of some kernels: ``unchecked``, saying
  so (torch gives NaN), never ``wrong``.
* **the causal mask** -- "the weights above the diagonal are 0", "below the diagonal they are 0" (wrong: that
  is where a token attends), "the first token attends only to itself, with weight 1", "6 of the 16 weights are
  masked": the exact ``A_1`` of the causal model (the document's ``n`` when it is small), on generic inputs.

Numbers are read from the sentence, never evaluated as code.

Examples
========

>>> judge_mask_sentence(DocumentModel(), "The padded keys receive a weight of exactly 0.")[0]
'correct'
>>> judge_mask_sentence(DocumentModel(), "Each row of the masked attention weights sums to 0.5.")[:3]
('wrong', 'every row of the masked weights sums to exactly 1 (computed exactly, key padding)', '1')
>>> judge_causal_sentence(DocumentModel(), "With the causal mask every weight below the diagonal is 0.")[:3]
('wrong', 'the causal weights below the diagonal are positive, not all 0 (A_1 computed exactly, n = 3)', 'positive')
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

from sympy import ImmutableMatrix, nsimplify, simplify

from ..attention import MultiHeadAttention
from ..errors import MaskError, MHASymbolicError
from .model import DocumentModel, as_int

__all__ = ["CAUSAL_WORDS", "judge_causal_sentence", "judge_mask_sentence", "mask_prose"]

_MASKED = r"(?:padded|masked(?:[- ]out)?|padding)\s+(?:keys?|positions?|tokens?|entries|columns?|source\s+tokens?)"
_WEIGHT = re.compile(rf"\b{_MASKED}\b[^.;]*?\b(?:weights?|probabilit(?:y|ies))\b[^.;\d]*?"
                     r"(?<![\w.])(-?\d+(?:\.\d+)?)(?!\s*[-+*/^])", re.I)
_ROW_SUM = re.compile(r"\b(?:each|every|all)\s+rows?\b[^.;]*?\b(?:sums?|adds?\s+up)\s+to\s+(?:exactly\s+)?"
                      r"(-?\d+(?:\.\d+)?)", re.I)
_FULL = re.compile(r"\b(?:fully|entirely|completely)\s+masked\s+rows?\b|\brows?\b[^.;]*\b(?:all|every)\s+(?:its\s+)?"
                   r"(?:keys?|positions?|entries)\b[^.;]*\b(?:masked|padded|-\s*inf)", re.I)
_UNDEFINED = re.compile(r"\bNaN\b|\bundefined\b|\bnot\s+defined\b|\berror\b|0\s*/\s*0|division\s+by\s+zero", re.I)
_A_VALUE = re.compile(r"\b(?:all\s+zeros?|zero\s+weights|uniform|1\s*/\s*n)\b", re.I)


def _probe(doc: DocumentModel, mask: str) -> MultiHeadAttention:
    """A concrete model with ``mask`` of the document's sizes when they are small, else a small one."""
    M = doc.model()
    sizes = [as_int(x) for x in (M.dims.n, M.dims.d_model, M.dims.h, M.n_kv)]
    if all(s is not None and 1 <= s <= 8 for s in sizes) and (sizes[3] or 0) >= 2:
        try:
            return M.replace_options(mask=mask, kv_heads=None)
        except MHASymbolicError:
            pass
    return MultiHeadAttention(n=2, d_model=2, h=1, n_kv=3, mask=mask)


def _weights(model: MultiHeadAttention, masked: list[int]) -> ImmutableMatrix:
    """The exact ``A_1`` of ``model`` on generic inputs with the keys ``masked`` (0-based) masked out."""
    from ..statements import generic_instance

    inputs = generic_instance(model)
    n_kv = int(model.n_kv)
    if model.mask == "key_padding":
        inputs["mask"] = [[0 if b in masked else 1 for b in range(n_kv)]]
    else:
        from sympy import oo

        inputs["mask"] = [[-oo if b in masked else 0 for b in range(n_kv)] for _ in range(int(model.dims.n))]
    return ImmutableMatrix(model.evaluate(**inputs)["A_1"])


def _mask_kind(doc: DocumentModel, s: str) -> str:
    if re.search(r"-\s*\\?inf|−∞|additive|attn_mask|causal", s, re.I):
        return "additive"
    return doc.mask or "key_padding"


def _agrees(value: Any, stated: str) -> bool:
    places = len(stated.split(".")[1]) if "." in stated else None
    exact = nsimplify(value)
    if places is None:
        return bool(simplify(exact - Fraction(stated)) == 0)
    return abs(float(exact) - float(stated)) <= 0.5 * 10 ** -places


def judge_mask_sentence(doc: DocumentModel, text: str) -> tuple[str, str, str | None, str] | None:
    """The verdict on a sentence about masked weights, or None when it states nothing of the kind."""
    from .prose import _plain

    s = _plain(text)
    kind = _mask_kind(doc, s)
    what = "key padding" if kind == "key_padding" else "additive -oo"
    rule = ("softmax_m(S)_ab = m_b e^{s_ab} / sum_c m_c e^{s_ac}" if kind == "key_padding" else
            "softmax(S' + M) with M_ab = -oo")
    try:
        if _FULL.search(s):
            model = _probe(doc, kind)
            try:
                _weights(model, list(range(int(model.n_kv))))
            except MaskError as e:
                why = f"the masked softmax of a row with no key left is 0/0: the engine refuses it ({e})"
                if _UNDEFINED.search(s):
                    return "correct", why, None, "computed"
                value = _A_VALUE.search(s)
                if value:  # a kernel's convention, not mathematics: say which one, never wrong
                    return ("unchecked", f"{why}; the value stated ({value.group(0)}) is a convention "
                            "some kernels adopt for such a row (torch's softmax gives NaN), not a value of the "
                            "softmax", None, "")
            return None
        weight = _WEIGHT.search(s)
        if weight:
            model = _probe(doc, kind)
            A = _weights(model, [int(model.n_kv) - 1])
            got = {simplify(x) for x in A.col(A.cols - 1)}
            if len(got) != 1:
                return None
            value = got.pop()
            who = "m_b = 0" if kind == "key_padding" else "M_ab = -oo"
            if _agrees(value, weight.group(1)):
                return "correct", f"a key with {who} gets weight {value} in every row: {rule}, computed exactly", \
                    None, "computed"
            return ("wrong", f"a key with {who} gets weight {value} in every row ({rule}, computed exactly), not "
                    f"{weight.group(1)}", str(value), "computed")
        rows = _ROW_SUM.search(s)
        if rows and re.search(r"mask|padd", s, re.I):
            model = _probe(doc, kind)
            A = _weights(model, [int(model.n_kv) - 1])
            sums = {simplify(sum(A.row(r))) for r in range(A.rows)}
            if len(sums) != 1:
                return None
            value = sums.pop()
            said = f"every row of the masked weights sums to exactly {value} (computed exactly, {what})"
            if _agrees(value, rows.group(1)):
                return "correct", said, None, "computed"
            return "wrong", said, str(value), "computed"
    except (MHASymbolicError, ValueError, TypeError, ZeroDivisionError) as e:
        return "unchecked", f"not decided: {str(e).splitlines()[0][:160]}", None, ""
    return None


CAUSAL_WORDS = re.compile(
    r"\bcausal\b(?:\s*\([^)]{0,30}\))?\s+(?:mask|masking|attention|self-attention|decoder|model|language|transformer)"
    r"|\blook-?\s*ahead\s+mask|\bmasked\s+self-attention|\bsubsequent\s+mask|\bdecoder\s+(?:mask|self-attention)"
    r"|\bautoregressive\s+(?:mask|masking|attention|decoder)|\bcausal(?:ly)?\s+masked|\bmasking\s+(?:of\s+)?future"
    r"|\b(?:máscara|maschera|masque|maske)\s+(?:causal|causale|kausale)\b|\bkausale\s+maske\b",
    re.I)
_MATRIX_ENVIRONMENT = re.compile(r"\\begin\{([pbvBV]?matrix)\}(.*?)\\end\{\1\}", re.S)


def drawn_causal(text: str) -> bool:
    r"""Does the text draw the causal mask, in any language: a square matrix of two rows or more whose entries
    above the diagonal are all minus infinity and whose other entries are not (the mask itself, or the masked
    scores written out).

    >>> drawn_causal(r"$$M = \begin{bmatrix} 0 & -\infty \\ 0 & 0 \end{bmatrix}$$")
    True
    >>> drawn_causal(r"$$\begin{bmatrix} 0 & -\infty \\ -\infty & 0 \end{bmatrix}$$")
    False
    """
    for m in _MATRIX_ENVIRONMENT.finditer(text):
        rows = [[cell.replace(" ", "") for cell in row.split("&")] for row in m.group(2).split("\\\\")
                if row.strip()]
        if len(rows) < 2 or any(len(row) != len(rows) for row in rows):
            continue
        if all((cell in ("-\\infty", "−\\infty", "-∞", "−∞")) == (j > i)
               for i, row in enumerate(rows) for j, cell in enumerate(row)):
            return True
    return False


# a sentence about another attention than the causal one, or about the weights in another layout
_NOT_CAUSAL = re.compile(r"\bencoder\b|\bwithout\s+(?:a\s+|any\s+|the\s+)?mask|\bno\s+mask|\bunmasked\b|\bbidirectional"
                         r"|\bBERT\b|\bnon-?causal|\btranspos|\bkey\s*[x×]\s*query|\bcolumn[- ]wise|\bthis\s+layout"
                         r"|\bcolumns?\s+(?:are|as)\s+(?:the\s+)?(?:queries|tokens)", re.I)
_CUE = re.compile(r"\bmask|\bcan\s+only\b|\bonly\s+(?:see|attend|look)|\bcausal|\bfuture", re.I)
_WEIGHTS = r"(?:weights?|probabilit(?:y|ies))"
_ABOUT_WEIGHTS = re.compile(r"\bweights?\b|\bprobabilit|\battention\s+(?:matrix|map|pattern)|\b(?:of|in)\s+A\b", re.I)
_ABOUT_OTHER = re.compile(r"\bmask(?:'s)?\s+(?:is|are|has|matrix|entries|values|itself|sets|puts|places|contains|holds)"
                          r"|\b(?:entries|values)\s+of\s+(?:the\s+)?(?:mask|M)\b|-\s*\\?inf|−\s*∞|∞|\bscores?\b"
                          r"|\blogits?\b", re.I)
_VERB = r"(?:is|are|equals?|becomes?|gets?|receives?|(?:is|are)\s+set\s+to|set\s+to|stays?|remains?)"
_VALUE = (r"(?:exactly\s+|all\s+|identically\s+|equal\s+to\s+|a\s+weight\s+of\s+|weight\s+)?"
          r"(-?\d+(?:\.\d+)?(?:\s*%)?(?![eE][-+]?\d)(?![\w.]*\s*[-+*/^(])(?!\.\d)|zeros?\b)")
_DIAGONAL = r"(above|below|under|over)\s+the\s+(?:main\s+)?diagonal\b"
_SIDE = re.compile(rf"\b{_DIAGONAL}[^.;\d]*?\b{_VERB}\s+{_VALUE}|"
                   rf"\b{_WEIGHTS}\b[^.;\d]*?\b{_DIAGONAL}[^.;\d]*?\b{_VERB}\s+{_VALUE}|"
                   rf"\b(upper|lower)[- ]triang\w*[^.;\d]*?\b{_VERB}\s+{_VALUE}", re.I)
_CLAUSE = re.compile(r"[,;:]|\s(?:and|so|while|but|whereas|hence|thus|which)\s", re.I)
_FIRST = re.compile(
    rf"\bfirst\s+(?:token|query|row|position|word)\b[^.;]*?"
    rf"(?:\b(?:weight|probability)\s+(?:on|to|for)\s+itself\s+(?:is\s+|of\s+|equals?\s+|=\s*)?(?:A_?\{{?1,?\s*1\}}?\s*=\s*)?"
    rf"|\b(?:self-weight|own\s+weight|self-attention\s+weight)\s+(?:is\s+|of\s+|equals?\s+|=\s*)?"
    rf"|\bgives?\s+(?:a\s+)?weight\s+(?:of\s+)?(?=[-\d.]+\s*%?\s+to\s+itself)"
    rf"|\bitself,?\s+with\s+(?:a\s+)?(?:weight|probability)\s+(?:of\s+)?)"
    rf"{_VALUE}", re.I)
_ONLY_ITSELF = re.compile(r"\b(first|last|final)\s+(?:token|query|row|position|word)\b[^.;]*?\bonly\s+"
                          r"(?:attends?|sees?|looks?|see|attend)\s+(?:to\s+|at\s+)?itself\b", re.I)
_ROWS = re.compile(rf"\b(?:(?:each|every|all)\s+rows?|rows?\s+(\d+))\b[^.;\d]*?\b(?:sums?|adds?\s+up)\s+to\s+"
                   rf"{_VALUE}", re.I)
_COUNT = re.compile(r"(?<![\w.])(\d+)\s+(?:out\s+)?of\s+(?:the|all|its)?\s*(\d+)\s+(?:attention\s+)?"
                    r"(?:weights|entries|scores|positions|pairs)\b([^.;]*)|"
                    r"\bout\s+of\s+(?:the|all)?\s*(\d+)\s+(?:attention\s+)?(?:weights|entries),?\s+(\d+)\s+([^.;]*)|"
                    r"\b(?:mask\w*|remov\w*|zero\w*|hid\w*|block\w*)\s+(?:out\s+)?(\d+)\s+of\s+them\b", re.I)
_KEPT = re.compile(r"\bnon-?\s?zero|\bnot\s+(?:masked|zero)|\bunmasked|\bkept\b|\bsurviv|\bvisible|\ballowed|\bremain",
                   re.I)
_GONE = re.compile(r"\bmasked|\bzero|\bhidden|\bblocked|\bremoved", re.I)


def _causal_weights(doc: DocumentModel) -> ImmutableMatrix:
    """The exact ``A_1`` of the causal model of the document's ``n`` (2..6; else 3), on generic inputs."""
    from ..statements import generic_instance

    n = as_int(doc.model().dims.n)
    n = n if n is not None and 2 <= n <= 6 else 3
    model = MultiHeadAttention(n=n, d_model=2, h=1, causal=True)
    return ImmutableMatrix(model.evaluate(**generic_instance(model))["A_1"])


def _number(text: str) -> str:
    """A stated value as digits: ``zero``/``zeros`` is 0, ``100%`` is 1.00.

    >>> _number("zeros"), _number("100%"), _number("12.5 %"), _number("0.25")
    ('0', '1.00', '0.125', '0.25')
    """
    t = text.strip().lower()
    if t.startswith("zero"):
        return "0"
    if t.endswith("%"):
        digits = t.rstrip("% ")
        places = len(digits.split(".")[1]) if "." in digits else 0
        return f"{float(Fraction(digits) / 100):.{places + 2}f}"
    return text


def _clauses(s: str) -> list[str]:
    """The clauses of a sentence about the weights: split at punctuation and conjunctions; a clause that speaks of
    the mask, the scores or -inf (and of no weights) is left out."""
    parts = [c.strip() for c in _CLAUSE.split(s) if c and c.strip()]
    return [c for c in parts if _ABOUT_WEIGHTS.search(c) and not _ABOUT_OTHER.search(c)]


def judge_causal_sentence(doc: DocumentModel, text: str) -> tuple[str, str, str | None, str] | None:
    """The verdict on a sentence about the causal mask's weights, or None when it states nothing of the kind.

    A sentence about which triangle of the weights is 0 is read in a document on the causal mask
    (``doc.causal_text``) or when it names the mask; one about the first or last token, counts or rows only when
    it names the mask itself ("mask", "causal", "can only see").  A sentence about an encoder, an unmasked model
    or the weights in another layout (transposed, key x query) is not read."""
    from .prose import _plain

    s = _plain(text)
    named = bool(CAUSAL_WORDS.search(s) or _CUE.search(s))
    if not (doc.causal_text or named) or _NOT_CAUSAL.search(s):
        return None
    side = next((m for c in _clauses(s) for m in [_SIDE.search(c)] if m), None)
    first = _FIRST.search(s) if named else None
    alone = _ONLY_ITSELF.search(s) if named else None
    rows = _ROWS.search(s)
    count = _COUNT.search(s) if named else None
    if count and re.search(r"\bpadd(?:ing|ed)\b", s, re.I) and not CAUSAL_WORDS.search(s):
        count = None  # "with padding alone 4 \cdot 2 = 8 of its 16 entries are masked": not the causal mask's count
    if not (side or first or alone or rows or count):
        return None
    try:
        A = _causal_weights(doc)
    except (MHASymbolicError, ValueError, TypeError) as e:
        return "unchecked", f"not decided: {str(e).splitlines()[0][:160]}", None, ""
    n = A.rows
    where = f"A_1 computed exactly, n = {n}"

    def verdict(ok: bool, said: str, value: Any) -> tuple[str, str, str | None, str]:
        return ("correct", said, None, "computed") if ok else ("wrong", said, str(value), "computed")

    if side:
        word = (side.group(1) or side.group(3) or side.group(5)).lower()
        stated = _number(side.group(2) or side.group(4) or side.group(6))
        upper = word in ("above", "over", "upper")
        cells = [A[i, j] for i in range(n) for j in range(n) if (j > i if upper else j < i)]
        name = "above" if upper else "below"
        values = {simplify(x) for x in cells}
        if len(values) == 1:
            value = values.pop()
            return verdict(_agrees(value, stated), f"the causal weights {name} the diagonal are all exactly {value} "
                                                   f"({where})", value)
        if all(x.is_positive for x in cells) and _agrees(0, stated):  # other values depend on the inputs
            said = f"the causal weights {name} the diagonal are positive, not all {stated} ({where})"
            return "wrong", said, "positive", "computed"
        return None
    if first:
        value = simplify(A[0, 0])
        return verdict(_agrees(value, _number(first.group(1))),
                       f"the first query's weight on itself is {value}: every later key is masked ({where})", value)
    if alone:
        row = 0 if alone.group(1).lower() == "first" else n - 1
        seen = sum(1 for x in A.row(row) if simplify(x) != 0)
        said = f"the {'first' if row == 0 else 'last'} query attends to {seen} key{'s' if seen > 1 else ''} ({where})"
        return verdict(seen == 1, said, f"{seen} keys")
    if rows:
        named_matrices = {x for math in re.findall(r"\$([^$]+)\$", text)
                          for x in re.findall(r"(?<![\\A-Za-z])([A-Z])(?![A-Za-z])", math)}
        if named_matrices and not named_matrices & {"A", "P"} and "softmax" not in text:
            return None  # the sentence names its matrices (J_sigma 1 = 0: the Jacobian's rows), none of them weights
        if re.search(r"\bmask|\bscores?\b|\blogits?\b|\bX\b|\binputs?\b|\bembedding", s, re.I) and \
                not re.search(r"\bweights?\b|\bprobabilit|\battention\b|\bsoftmax\b", s, re.I):
            return None  # the rows of the mask, the scores or the input, not of the weights
        which = int(rows.group(1)) - 1 if rows.group(1) else None
        if which is not None and not 0 <= which < n:
            return None
        sums = {simplify(sum(A.row(r))) for r in (range(n) if which is None else [which])}
        if len(sums) != 1:
            return None
        value = sums.pop()
        said = f"every row of the causal weights sums to exactly {value} ({where})"
        return verdict(_agrees(value, _number(rows.group(2))), said, value)
    assert count is not None
    if as_int(doc.model().dims.n) != n:
        return None  # a count needs the document's own n
    zeros = sum(1 for x in A if simplify(x) == 0)
    if count.group(1) is not None:
        stated_count, total, rest = int(count.group(1)), int(count.group(2)), count.group(3)
    elif count.group(4) is not None:
        total, stated_count, rest = int(count.group(4)), int(count.group(5)), count.group(6)
    else:
        total, stated_count, rest = n * n, int(count.group(7)), "masked"  # "removes 8 of them": of the n^2 weights
    if total != n * n:
        return None
    head = re.split(r"\s(?:and|but|while)\s|[,;]", rest, maxsplit=1)[0]  # "10 of 16 are kept and 6 are masked"
    if _KEPT.search(head):
        kept = n * n - zeros
        said = f"{kept} of the {n * n} causal weights are not masked: n(n+1)/2 with n = {n} ({where})"
        return verdict(stated_count == kept, said, kept)
    if not _GONE.search(head):
        return None
    said = f"{zeros} of the {n * n} causal weights are exactly 0: n(n-1)/2 with n = {n} ({where})"
    return verdict(stated_count == zeros, said, zeros)


def mask_prose(doc: DocumentModel, p: Any, emit: Any) -> bool:
    """Judge a line of prose about masked weights (the causal mask's too); True when it stated something of the
    kind."""
    got = judge_causal_sentence(doc, p.text)
    if got is not None:
        emit(p.line, p.text, got[0], got[1], got[2], "number", got[3])
        return True
    if doc.mask is None and not re.search(r"mask|padd", p.text, re.I):
        return False
    got = judge_mask_sentence(doc, p.text)
    if got is None:
        return False
    emit(p.line, p.text, got[0], got[1], got[2], "number", got[3])
    return True
