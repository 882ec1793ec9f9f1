r"""Prose: the sizes a sentence states, the bounds it puts on them, and the conditions local to it.

:func:`settings` and :func:`constraints` read the dimensions a sentence of prose states ("d_model is 6", "two
heads", ``$h = 2$``) or bounds ("at most 10 heads", ``1 \le N \le 10^4``); :func:`scope` reads a condition
that binds a value only inside its sentence ("with h = 1", "for head 2", "the first token");
:func:`hypothetical` tells a sentence about another example ("would", "for example").

>>> settings("We use $h = 2$ heads, numbered $0 \\le i \\le h - 1$.")
[Setting(name='h', value=2, text='h = 2')]
>>> scope("With $h = 1$ we would instead have $d_k = 4$."), scope("for the second head")
({'h': 1}, {'head': 2})
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .normalise import normalise

__all__ = ["Setting", "Constraint", "settings", "constraints", "scope", "hypothetical"]


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
    "g": "g", "n_kv_heads": "g", "num_kv_heads": "g", "kv_heads": "g", "num_key_value_heads": "g", "n_kv_head": "g",
    "n_kv": "n_kv",  # the keys of cross-attention, or the key/value heads elsewhere (see DocumentModel.known_dims)
    "d": "d_model", "d_h": "d_k", "H_kv": "g",
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
    ("g", r"number\s+of\s+(?:kv|key[-/ ]value|key\s+and\s+value)\s+heads"),
]
_VALUE = r"\d+(?:\^\d+)?"
_REL = {"=": "eq", ":": "colon", "<": "lt", ">": "gt", "≤": "le", "≥": "ge", "≠": "ne", "≈": "approx"}
_TERM = r"[^\s=<>≤≥≠≈,;:]+(?:\s[-+*/]\s[^\s=<>≤≥≠≈,;:]+)*"  # "20 / 4" is one term: d_k = 20 / 4 = 5 sets no 20
_CHAIN = re.compile(rf"(?<![^\s(\[])(?<!\s[-+*/]\s)({_TERM})\s*([=<>≤≥≠≈:])\s*({_TERM})((?:\s*[=<>≤≥≠≈]\s*{_TERM})*)")
_BOUND_WORDS = {"at most": "le", "up to": "le", "no more than": "le", "not more than": "le", "at least": "ge",
                "no fewer than": "ge", "no less than": "ge", "more than": "gt", "fewer than": "lt", "less than": "lt"}
#: the end of a computation: an amount right after it is its result ("4 · 512 = 2048 tokens"), not a setting
_RESULT = re.compile(r"(?:\d|\)|\b[KMGT]i?B)\s*[=≈]\s*$")
#: the nouns that count heads and tokens ("two heads", "a two-head layer", "3 tokens", "3-token")
_NOUNS = {"h": r"(?:\s+(?:attention\s+)?heads\b|-heads?\b)", "n": r"(?:\s+(?:input\s+)?tokens\b|-tokens?\b)",
          "g": r"(?:\s+(?:kv|k/v|key[-/]value|key-value)\s+heads\b)"}
_BOUND_NOUNS = {"h": r"\s*(?:attention\s+)?heads?\b", "n": r"\s*(?:input\s+)?tokens?\b"}
_EXCLUDED_BEFORE = re.compile(r"(?:first|last|next|previous|other|these|those|remaining|top|both|every|each|at\s+most"
                              r"|groups?\s+of|shared\s+by|serves"
                              r"|at\s+least|up\s+to|than|between\s+\S+\s+and|between)\s+$|[<>≤≥≠≈*/×^_]\s*$", re.I)


def _plain(text: str) -> str:
    """Prose with its inline math as plain words: ``$d_{\\text{model}} \\le 4$`` -> ``d_model ≤ 4``."""
    t = normalise(text)
    # numbers as written: 32,768 and 32{,}768 are one number (a thousands separator), never 768 after a comma
    t = re.sub(r"(?<![\d,.])\d{1,3}(?:(?:,|\{,\}|\\,)\d{3})+(?![\d,])", lambda m: re.sub(r"\D", "", m.group(0)), t)
    t = re.sub(r"\\[()\[\]]|\$+|`+|\*\*", " ", t)
    t = re.sub(r"\\(?:text|mathrm|textrm|operatorname|mathit|mathbf|boldsymbol|mathsf|textnormal|mbox)\s*\{([^{}]*)\}",
               r"\1", t)
    t = re.sub(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}", r"\1/\2", t)
    t = re.sub(r"(?<=[A-Za-z])_\{(\w+)\}", r"_\1", t)  # n_{kv} = 1: the binding's name as one word
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


_DIMENSIONS = ("n", "d_model", "h", "d_k", "d_v", "g")
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
    for m in re.finditer(rf"\b([A-Za-z]\w*)\s+(?:is|equals|were|was|becomes)\s+({_VALUE})\b{_NOT_AFTER_VALUE}", plain):
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
            if _EXCLUDED_BEFORE.search(plain, max(0, m.start() - 200), m.start()):  # a window: linear
                continue
            if _RESULT.search(plain, max(0, m.start() - 40), m.start()):  # "24 GiB / 128 KiB = 196608 tokens": what a
                continue  # computation yields (a capacity), not the length of the example
            word = m.group(1).lower()
            value = int(word) if word.isdigit() else _NUMBER_WORDS[word]
            if value >= (2 if name in ("h", "g") else 1):
                out.append((m.start(), Setting(name, value, m.group(0).strip())))
    for m in re.finditer(r"\b(?:only\s+one|just\s+one|a\s+single|single)[\s-]+token\b|\bone\s+token\s+only\b",
                         plain, re.I):
        out.append((m.start(), Setting("n", 1, m.group(0))))
    for m in re.finditer(r"\b(?:with|using|uses?|has|have)\s+(?:only\s+|just\s+|exactly\s+)?(?:one|a\s+single|1)\s+"
                         r"(?:attention\s+)?head\b(?![-\s]+(?:of|in|at|dim\w*|width|size|index|vector|output)\b)|\b(?:one|a\s+single)\s+head\s+with\b"
                         r"|\bsingle[- ]head(?:ed)?\s+(?:case|example|toy\s+example)\b",
                         plain, re.I):  # "one head with $d_k = 2$", "a single-head example": h = 1 (not "one head of",
        # nor "single-head attention", the name of a mechanism)
        out.append((m.start(), Setting("h", 1, m.group(0))))
    kv = r"(?:kv|k/v|key[-/]value|key-value)\s+head\b"  # multi-query attention: g = 1
    for m in re.finditer(rf"\b(?:all|every)\s+(?:the\s+)?(?:\d+\s+)?(?:query\s+)?heads\s+share\s+"
                         rf"(?:a\s+single|one|the\s+same)\s+{kv}|\b(?:only|just)\s+one\s+{kv}", plain, re.I):
        out.append((m.start(), Setting("g", 1, m.group(0))))
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


_COND_ANYWHERE = r"if|when|whenever|assuming|suppose|wenn|falls|si|cuando|lorsque|quand|quando|se"
_COND_CLAUSE = r"with|for|given|take|setting|letting|putting|mit|für|bei|con|para|avec|pour|dans|com|em"
_HEAD_WORDS = r"head|kopf|cabeza|tête|tete|cabeça"
_PREPOSITIONS = r"for|in|of|from|at|within|für|im|bei|von|des|para|en|de|del"
_ARTICLES = r"(?:the|den|dem|der|die|das|la|el)\s+"
_BINDING = r"([A-Za-z]\w*)\s*=\s*(\d+)(?![\d.])"


def conditions(sentence: str) -> list[dict[str, int]]:
    """The sizes each condition of ``sentence`` binds, one dict per condition in order ("for n = 3 ...; for
    n = 4 ..." gives two).

    >>> conditions("For $n = 3$ that is $6$; for $n = 4$, $h = 2$ it is $10$.")
    [{'n': 3}, {'n': 4, 'h': 2}]
    """
    plain = _plain(sentence)
    found: list[dict[str, int]] = []
    starts = [m.end() for m in re.finditer(rf"\b(?:{_COND_ANYWHERE})\b", plain, re.I)]
    starts += [m.end() for m in re.finditer(rf"(?:^|[(,;:])\s*(?:{_COND_CLAUSE})\b", plain, re.I)]
    # "8 for d_k = 64", "show that for d = 1024 ..."
    starts += [m.end() for m in re.finditer(r"\b(?:for|that)(?=\s+[A-Za-z]\w*\s*=\s*\d)", plain, re.I)]
    starts += [m.end() for m in re.finditer(r"\bexamples?\s+(?:with|where|in which)\b|\b(?:special|limiting|extreme)"
                                            r"\s+case(?:\s+of)?\b", plain, re.I)]
    for start in sorted(set(starts)):
        # a word slot starts only where a word starts, the binding's name only after a non-letter (linear; the
        # unanchored form split one long word among the slots in O(L^4) ways)
        m = re.match(rf"(?:\s*(?<![A-Za-z\-])[A-Za-z\-]+,?){{0,3}}?\s*(?<![A-Za-z]){_BINDING}", plain[start:])
        if not m:
            continue
        at = start + m.start(1)
        condition: dict[str, int] = {}
        while True:
            b = re.match(rf"\s*{_BINDING}", plain[at:])
            if not b or not _name(b.group(1)):
                break
            condition.setdefault(_name(b.group(1)), int(b.group(2)))
            at += b.end()
            sep = re.match(r"\s*(?:,|and\b|und\b|y\b|e\b|&)\s*", plain[at:])
            if not sep:
                break
            at += sep.end()
        if condition:
            found.append(condition)
    return found


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
    for condition in conditions(sentence):
        for name, value in condition.items():
            out.setdefault(name, value)
    ordinals = "|".join(sorted(_ORDINALS, key=len, reverse=True))
    heads = [(m.start(), int(m.group(1))) for m in (
        re.search(rf"\b(?:{_PREPOSITIONS})\s+(?:{_ARTICLES})?(?:attention\s+)?(?:{_HEAD_WORDS})\s*(?:#\s*)?(\d+)\b",
                  plain, re.I),
        re.search(rf"\b(?:{_HEAD_WORDS})\s*(\d+)'s\b", plain, re.I),
        re.search(rf"^\s*(?:{_HEAD_WORDS})\s*(\d+)\s*[:\-–]", plain, re.I)) if m]
    heads += [(m.start(), _ORDINALS[m.group(1).lower()]) for m in (
        re.search(rf"\b(?:{_PREPOSITIONS})\s+(?:{_ARTICLES})?({ordinals})[nrs]?\s+(?:attention\s+)?(?:{_HEAD_WORDS})\b",
                  plain, re.I),) if m]
    if heads:
        out["head"] = min(heads)[1]
    tokens = [(m.start(), int(m.group(1))) for m in (re.search(r"\btoken\s*(?:#\s*)?(\d+)\b", plain, re.I),) if m]
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
    return bool(re.search(r"\b(?:would|instead|for comparison|for example|for instance|e\.g\.|imagine|had we|what if"
                          r"|(?:a|an|another|one)\s+(?:\w+\s+)?example\s+(?:with|where|in which)"
                          r"|(?:toy|tiny|small|quick|minimal|second|third)\s+example\s+(?:with|where|in which)"
                          r"|special case|limiting case|extreme case|other extreme"
                          r"|würde|wäre|zum beispiel|z\.\s?b\.|sería|por ejemplo|par exemple|pour comparaison|aurait"
                          r"|serait|seria|por exemplo|para comparação)\b|^\s*\(", sentence, re.I))

