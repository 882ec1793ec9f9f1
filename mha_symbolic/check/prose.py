r"""Prose: the sizes a sentence states, the bounds it puts on them, and the conditions local to it.

:func:`settings` and :func:`constraints` read the dimensions a sentence of prose states ("d_model is 6", "two
heads", ``$h = 2$``) or bounds ("at most 10 heads", ``1 \le N \le 10^4``); :func:`scope` reads a condition
that binds a value only inside its sentence ("with h = 1", "for head 2", "the first token");
:func:`hypothetical` tells a sentence about another example ("would", "for example").

>>> settings("We use $h = 2$ heads, numbered $0 \\le i \\le h - 1$.")
[Setting(name='h', value=2, text='h = 2 heads')]
>>> scope("With $h = 1$ we would instead have $d_k = 4$."), scope("for the second head")
({'h': 1}, {'head': 2})
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources
from typing import Any

from lark import Lark, Token, Transformer, v_args

from .normalise import normalise

__all__ = ["Setting", "Constraint", "Condition", "HeadScope", "TokenScope", "AxisClaim", "RankClaim", "RatioClaim",
           "Restatement", "Variant", "read", "holds", "variants", "settings", "constraints",
           "conditions", "scope", "hypothetical"]


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


_SIZES = {"SIZE_N": "n", "SIZE_D_MODEL": "d_model", "SIZE_H": "h", "SIZE_D_K": "d_k", "SIZE_D_V": "d_v",
          "SIZE_G": "g", "SIZE_N_KV": "n_kv"}
_LABELS = {"N_LABEL": "n", "D_MODEL_LABEL": "d_model", "H_LABEL": "h", "D_K_LABEL": "d_k", "D_V_LABEL": "d_v",
           "G_LABEL": "g"}
_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
                 "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
             "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "1st": 1, "2nd": 2, "3rd": 3,
             "erste": 1, "zweite": 2, "dritte": 3, "vierte": 4, "primer": 1, "primera": 1, "primero": 1,
             "segunda": 2, "segundo": 2, "tercer": 3, "tercera": 3, "tercero": 3, "cuarta": 4, "cuarto": 4}
_FRACTIONS = {"half": 2, "third": 3, "quarter": 4, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
              "ninth": 9, "tenth": 10, "twelfth": 12, "sixteenth": 16, "thirty-second": 32, "sixty-fourth": 64}
_REL = {"=": "eq", "<": "lt", ">": "gt", "≤": "le", "≥": "ge", "≠": "ne", "≈": "approx"}
_FLIP = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "ne": "ne"}
_BOUND_WORDS = {"at most": "le", "up to": "le", "no more than": "le", "not more than": "le", "at least": "ge",
                "no fewer than": "ge", "no less than": "ge", "more than": "gt", "fewer than": "lt", "less than": "lt"}
#: the longest piece of a sentence read at once: a longer one is read in pieces cut at a clause mark (the
#: parser's work grows with the piece's length, so a document's reading stays linear in its length)
_PIECE = 1200


@lru_cache(maxsize=256)
def _plain(text: str) -> str:
    """Prose with its inline math as plain words: ``$d_{\\text{model}} \\le 4$`` -> ``d_model ≤ 4``.

    Cached: every piece of a sentence asks for its sentence's (or clause's) plain text, so without the cache a
    sentence of n statements would be normalised n times (quadratic in a long paragraph)."""
    t = normalise(text)
    # numbers as written: 32,768 and 32{,}768 are one number (a thousands separator), never 768 after a comma
    t = re.sub(r"(?<![\d,.])\d{1,3}(?:(?:,|\{,\}|\\,)\d{3})+(?![\d,])", lambda m: re.sub(r"\D", "", m.group(0)), t)
    t = re.sub(r"\\[()\[\]]|\$+|`+|\*\*", " ", t)
    t = re.sub(r"\\(?:text|mathrm|textrm|operatorname|mathit|mathbf|boldsymbol|mathsf|textnormal|mbox)\s*\{([^{}]*)\}",
               r"\1", t)
    t = re.sub(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}", r"\1/\2", t)
    t = re.sub(r"(?<=[A-Za-z])_\{(\w+)\}", r"_\1", t)  # n_{kv} = 1: the binding's name as one word
    for cmds, sym in ((r"le|leq|leqslant", "≤ "), (r"ge|geq|geqslant", "≥ "), (r"ne|neq", "≠ "), (r"approx", "≈ "),
                      (r"lt", "< "), (r"gt", "> "), (r"in", "∈ "), (r"cdot|times", "* "), (r"quad|qquad", ", "),
                      (r"left|right", "")):
        t = re.sub(r"\\(?:%s)(?![A-Za-z])\s*" % cmds, sym, t)
    t = re.sub(r"\\(?:top|intercal)(?![A-Za-z])", "ᵀ", t)  # W_K^{(i)\top}: a transpose inside a superscript
    t = re.sub(r"([_^])\{([^{}\s]*)\}", r"\1\2", t)
    t = re.sub(r"\\_", "_", t)
    return re.sub(r"[ \t]+", " ", t)


def _name(term: str) -> str:
    """The size a symbol names (``n_heads`` -> ``h``, ``(d_k`` -> ``d_k``), or "": the grammar's size names."""
    t = term.strip().strip("()").strip()
    return next((size for terminal, size in _SIZES.items() if _size_patterns()[terminal].fullmatch(t)), "")


def _int(term: str) -> int | None:
    t = term.strip().rstrip(".,;:!?)").replace("{", "").replace("}", "")
    m = re.fullmatch(r"(\d+)(?:\^(\d{1,2}))?", t)
    if not m:
        return None
    return int(m.group(1)) ** int(m.group(2)) if m.group(2) else int(m.group(1))


#: an abbreviation of single letters and dots at the end of a text ("i.e.", "e.g.", "d.h.", "c.-à-d."): no sentence end
_ABBREVIATION = re.compile(r"(?:^|(?<=[\s(,]))(?:[^\W\d_][.-]+){1,2}[^\W\d_]\.$")


def _sentences(prose: str) -> list[tuple[int, str]]:
    """(offset, sentence): split after ``. ! ? ।`` followed by a space, and at line breaks; not after an abbreviation
    of letters and dots ("i.e.", "e.g.", "d.h.", "z.B.", "c.-à-d.").

    >>> [s for _, s in _sentences("It is 786432 bytes, i.e. 768 KiB. Next one.")]
    ['It is 786432 bytes, i.e. 768 KiB.', 'Next one.']
    """
    out, at = [], 0
    for m in re.finditer(r"(?<=[.!?।])\s+|\n+|$", prose):
        if "\n" not in m.group(0) and _ABBREVIATION.search(prose, max(0, m.start() - 12), m.start()):
            continue
        if prose[at:m.start()].strip():
            out.append((at, prose[at:m.start()]))
        at = m.end()
    return out


# ----------------------------------------------------------------------------------------------------------
# The grammar (prose.lark) and its reader

@dataclass(frozen=True)
class Condition:
    """Sizes a condition binds inside its sentence ("for n = 3, d_k = 1"), as (name, value) pairs in order."""

    sizes: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class HeadScope:
    """The head a sentence speaks of ("for head 2", "for the second head"), numbered as written."""

    head: int


@dataclass(frozen=True)
class TokenScope:
    """The token a sentence speaks of ("token 3", "the first token"), numbered as written."""

    token: int


@dataclass(frozen=True)
class AxisClaim:
    """"each row of A sums to one": ``axis`` is "row" or "column", ``subject`` the words after "of" ("" if none)."""

    axis: str
    subject: str
    text: str


@dataclass(frozen=True)
class RankClaim:
    """A rank stated in words: ``rank(subject) op value``; ``value`` is a number or a size's name, or "full"
    (the smaller side of the matrix; with op "lt": rank-deficient)."""

    subject: str
    op: str
    value: str
    text: str


@dataclass(frozen=True)
class RatioClaim:
    """One amount is ``factor`` times smaller than another ("4 times smaller", "a quarter of"), as written; with
    ``larger``, ``factor`` times larger ("4× more")."""

    factor: str
    text: str
    larger: bool = False


@dataclass(frozen=True)
class Restatement:
    """An amount restated in another unit ("786432 bytes, i.e. 768 KiB"), or a shape as its count of entries
    ("4096×1024 (4194304 params)"): both as written."""

    first: str
    second: str
    text: str


@dataclass(frozen=True)
class ShapeClaim:
    """A shape stated in words: ``subject`` (math, as plain text: ``Q_i K_i^T / √64``) has the sizes ``dims``
    (numbers or size names, as written)."""

    subject: str
    dims: tuple[str, ...]
    text: str


@dataclass(frozen=True)
class MomentClaim:
    """A moment of an attention score stated in words: ``moment`` "Var" or "sd" of the score ``scaled`` (divided by
    sqrt(d_k): True, unscaled: False, not said: None) is ``value``, as written ("4096", "0.5")."""

    moment: str
    scaled: bool | None
    value: str
    text: str


@dataclass(frozen=True)
class Variant:
    """A variant of attention named in prose: ``kind`` "mha", "mqa" or "gqa", and the key/value heads it states
    ("GQA-8", "MHA (32 KV heads)", "MQA (a single KV head)", "GQA with 8 KV heads"), else None; ``configured``
    when the heads are stated as the document's own choice ("with 8 KV heads"), not as part of a name."""

    kind: str
    kv_heads: int | None
    text: str
    configured: bool = False


@dataclass(frozen=True)
class LayerCount:
    """A count of layers named by its letter: "L = 32 layers", "a 32-layer decoder, L = 32"."""

    name: str
    value: int
    text: str


Statement = LayerCount | Setting | Constraint | Condition | HeadScope | TokenScope | AxisClaim | RankClaim \
    | RatioClaim | MomentClaim | ShapeClaim | Restatement


@lru_cache(maxsize=1)
def _parser() -> Lark:
    grammar = resources.files(__package__).joinpath("prose.lark").read_text(encoding="utf-8")
    return Lark(grammar, start=["start", "mood", "variants", "conclusions", "choices"], parser="earley",
                lexer="dynamic", ambiguity="resolve", propagate_positions=True)


#: the terminals one of which every form that yields a statement holds (a number, a relation, a number word, ...):
#: a sentence with none of them is not parsed (the parse costs time in proportion to the sentence's length)
_TRIGGERS = ("RELATION", "DIGITS", "NUMBER_WORD", "ONE", "ONE_TOKEN", "SINGLE_HEAD_CASE", "THE_SAME", "ORDINAL",
             "AXIS", "RANK", "FULL_RANK", "RANK_DEFICIENT", "UNIT_FRACTION", "VARIANCE_WORD", "SD_WORD",
             "SHAPE_VERB")


@lru_cache(maxsize=1)
def _terminal_patterns() -> dict[str, re.Pattern[str]]:
    """The grammar's terminals, compiled (searched directly where a parse is not needed)."""
    return {t.name: re.compile(t.pattern.to_regexp()) for t in _parser().terminals}


def _may_hold_a_form(plain: str) -> bool:
    patterns = _terminal_patterns()
    return any(patterns[name].search(plain) for name in _TRIGGERS)


def holds(plain: str, *needs: tuple[str, ...]) -> bool:
    """Does the text hold, for every group of terminal names, one of the group (a form's words, searched without
    a parse)?  ``holds(s, ("AXIS",))``: a claim about rows or columns may be in it.  Readers ask this before
    :func:`read` for the one kind of statement they need: most sentences hold none, and a parse costs time."""
    patterns, text = _terminal_patterns(), "¶ " + plain  # as the parser sees it: after the first clause mark
    return all(any(patterns[name].search(text) for name in group) for group in needs)


#: what a size stated needs: a name, label or counted noun of a size, and a number (or the word one)
_SETTING_NEEDS = (tuple(_SIZES) + tuple(_LABELS) + ("COUNTED_NOUN", "ONE_TOKEN", "SINGLE_HEAD_CASE", "HEAD", "KV_HEAD"),
                  ("DIGITS", "NUMBER", "NUMBER_WORD", "ONE", "ONE_TOKEN", "SINGLE_HEAD_CASE", "THE_SAME"))
#: what a bound needs: a bound word (else an inequality: one of RELATION's signs but "=" and "≈")
_BOUND_NEEDS = (("BOUND_WORD", "BETWEEN"),)
#: what a condition or a head or token scope needs: its word, and a number or an ordinal
_SCOPE_NEEDS = (("CONDITION_WORD", "CONDITION_VERB", "HEAD_WORD", "TOKEN", "ONE_TOKEN"),
                ("DIGITS", "NUMBER_WORD", "ORDINAL"))


@lru_cache(maxsize=1)
def _size_patterns() -> dict[str, re.Pattern[str]]:
    """The grammar's size-name terminals: a chain's side is a size name if one matches it whole."""
    return {name: _terminal_patterns()[name] for name in _SIZES}


#: the moment each word of the grammar names
_MOMENTS = {"VARIANCE_WORD": "Var", "SD_WORD": "sd"}


def _text(meta: Any, sentence: str) -> str:
    return sentence[meta.start_pos:meta.end_pos].strip()


#: the number a text ends with, its digits perhaps grouped by spaces ("20 480"); never a part of a group ("2 480" of
#: "1 2 480" is none)
_NUMBER_BEFORE = re.compile(r"(?<!\d[ \u00a0\u2009\u202f])(?<![\w.^])"
                            r"(\d{1,3}(?:[ \u00a0\u2009\u202f]\d{3})+|\d+(?:\.\d+)?)\s?$")


class _Reader(Transformer):  # type: ignore[type-arg]
    """Each form of prose.lark -> (offset, statement) pairs (a list: a range gives two bounds)."""

    def __init__(self, sentence: str) -> None:
        super().__init__()
        self.sentence = sentence

    def _at(self, meta: Any, statement: Statement) -> list[tuple[int, Statement]]:
        return [(meta.start_pos, statement)]

    @v_args(meta=True)
    def label_setting(self, meta: Any, children: list[Token]) -> list[tuple[int, Statement]]:
        value = _int(children[-1])
        return self._at(meta, Setting(_LABELS[children[0].type], value, _text(meta, self.sentence))) \
            if value is not None else []

    @v_args(meta=True)
    def is_setting(self, meta: Any, children: list[Any]) -> list[tuple[int, Statement]]:
        value = _int(children[-1])
        return self._at(meta, Setting(children[0], value, _text(meta, self.sentence))) if value is not None else []

    @v_args(meta=True)
    def colon_setting(self, meta: Any, children: list[Any]) -> list[tuple[int, Statement]]:
        return self.is_setting(meta, children)

    def size_name(self, children: list[Token]) -> str:
        return _SIZES[children[0].type]

    def term(self, children: list[Any]) -> str:
        return " ".join(str(c) for c in children)

    first_term = term

    def arith(self, children: list[Token]) -> str:
        return str(children[0])

    @v_args(meta=True)
    def chain(self, meta: Any, children: list[Any]) -> list[tuple[int, Statement]]:
        terms, ops = [t.strip() for t in children[0::2]], [str(op) for op in children[1::2]]
        text = _text(meta, self.sentence).rstrip(".,;")
        out: list[tuple[int, Statement]] = []
        if terms[0].endswith(")") and terms[0].count(")") > terms[0].count("("):
            return out  # "min(d_v, n) = 2": the last argument of a function, whose value the relation states
        if all(op == "=" for op in ops):  # "h = 2", "d_k = d_v = 64"
            value, names = _int(terms[-1]), [_name(t) for t in terms[:-1]]
            if value is not None and all(names):
                out += [(meta.start_pos, Setting(n, value, text)) for n in names]
        for a, op, b in zip(terms, ops, terms[1:]):  # noqa: B905 - one term more than operators
            rel = _REL[op]
            va, vb = _int(a), _int(b)
            if rel not in _FLIP or rel == "ne" and va is None and vb is None:
                continue
            if va is None and _symbolic(a):
                out.append((meta.start_pos, Constraint(_name(a) or _clean(a), rel, _clean(b) if vb is None else vb,
                                                       text)))
            elif vb is None and va is not None and _symbolic(b):
                out.append((meta.start_pos, Constraint(_name(b) or _clean(b), _FLIP[rel], va, text)))
        return out

    @v_args(meta=True)
    def counted(self, meta: Any, children: list[Token]) -> list[tuple[int, Statement]]:
        return self._count(meta, children)

    def _count(self, meta: Any | None, children: list[Token]) -> list[tuple[int, Statement]]:
        word, noun = children[0].lower(), children[1].lower()
        value = int(word) if word.isdigit() else _NUMBER_WORDS[word]
        name = "n" if "token" in noun else "g" if any(kv in noun for kv in ("kv", "k/v", "key")) else "h"
        if value < (2 if name in ("h", "g") else 1):
            return []
        return [(meta.start_pos if meta else 0, Setting(name, value, _text(meta, self.sentence) if meta else ""))]

    @v_args(meta=True)
    def named_count(self, meta: Any, children: list[Token]) -> list[tuple[int, Statement]]:
        if not _symbolic(children[0]) or any(op in children[0] for op in "+-*/^"):
            return []  # "h/g = 4 query heads": what a computation yields, not a size
        said = self._count(meta, [children[1], children[-1]])
        gap = " ".join(children[2:-1]).lower()  # "n_kv = 8 shared key/value heads", "g = 8 kv heads"
        if said and any(kv in gap for kv in ("kv", "k/v", "key")):
            said = [(at, replace(s, name="g")) for at, s in said if isinstance(s, Setting)]
        return said

    @v_args(meta=True)
    def layer_count(self, meta: Any, children: list[Token]) -> list[tuple[int, Statement]]:
        if children[0].type == "LAYERED":  # "a 32-layer decoder, L = 32": the same number twice
            name, value = children[-2], int(children[-1])
            if int("".join(ch for ch in children[0] if ch.isdigit())) != value:
                return []
        else:
            name, value = children[0], int(children[1])
        if not _symbolic(name) or any(op in name for op in "+-*/^"):
            return []
        return self._at(meta, LayerCount(str(name), value, _text(meta, self.sentence)))

    @v_args(meta=True)
    def single_token(self, meta: Any, children: list[Token]) -> list[tuple[int, Statement]]:
        return self._at(meta, Setting("n", 1, _text(meta, self.sentence)))

    @v_args(meta=True)
    def single_head(self, meta: Any, children: list[Token]) -> list[tuple[int, Statement]]:
        return self._at(meta, Setting("h", 1, _text(meta, self.sentence)))

    @v_args(meta=True)
    def one_kv_head(self, meta: Any, children: list[Token]) -> list[tuple[int, Statement]]:
        text = _text(meta, self.sentence)
        heads = [Setting("h", int(c), text) for c in children if c.type == "DIGITS" and int(c) >= 2]
        return [(meta.start_pos, s) for s in [*heads, Setting("g", 1, text)]]

    def not_a_count(self, children: list[Token]) -> list[tuple[int, Statement]]:
        return []

    not_one_head = not_a_count
    case_definition = not_a_count

    @v_args(meta=True)
    def word_bound(self, meta: Any, children: list[Token]) -> list[tuple[int, Statement]]:
        value = _int(children[1])
        name = "n" if "token" in children[2].lower() else "h"
        word = " ".join(children[0].lower().split())
        return self._at(meta, Constraint(name, _BOUND_WORDS[word], value, _text(meta, self.sentence))) \
            if value is not None else []

    @v_args(meta=True)
    def between_bound(self, meta: Any, children: list[Token]) -> list[tuple[int, Statement]]:
        lo, hi = _int(children[1]), _int(children[3])
        name, text = "n" if "token" in children[4].lower() else "h", _text(meta, self.sentence)
        if lo is None or hi is None:
            return []
        return [(meta.start_pos, Constraint(name, "ge", lo, text)), (meta.start_pos, Constraint(name, "le", hi, text))]

    @v_args(meta=True)
    def name_bound(self, meta: Any, children: list[Any]) -> list[tuple[int, Statement]]:
        value = _int(children[-1])
        word = " ".join(children[-2].lower().split())
        return self._at(meta, Constraint(children[0], _BOUND_WORDS[word], value, _text(meta, self.sentence))) \
            if value is not None else []

    def size_binding(self, children: list[Any]) -> tuple[str, int]:
        return children[0], int(children[-1])  # "h = 2"

    def count_binding(self, children: list[Token]) -> tuple[str, int]:
        counted = [s for _, s in self._count(None, children) if isinstance(s, Setting)]  # "8 K/V heads"
        return (counted[0].name, counted[0].value) if counted else ("", 0)

    @v_args(meta=True)
    def condition(self, meta: Any, children: list[Any]) -> list[tuple[int, Statement]]:
        sizes: dict[str, int] = {}
        for name, value in (c for c in children if isinstance(c, tuple)):
            if not name:  # "with one head": no count, no binding
                break
            sizes.setdefault(name, value)
        return self._at(meta, Condition(tuple(sizes.items()))) if sizes else []

    @v_args(meta=True)
    def head_scope(self, meta: Any, children: list[Token]) -> list[tuple[int, Statement]]:
        number = next(c for c in children if c.type in ("DIGITS", "ORDINAL"))
        return self._at(meta, HeadScope(_numbered(number)))

    @v_args(meta=True)
    def token_scope(self, meta: Any, children: list[Token]) -> list[tuple[int, Statement]]:
        number = next(c for c in children if c.type in ("DIGITS", "ORDINAL"))
        return self._at(meta, TokenScope(_numbered(number)))

    @v_args(meta=True)
    def axis_claim(self, meta: Any, children: list[Token]) -> list[tuple[int, Statement]]:
        axis = next(c for c in children if c.type == "AXIS").lower().rstrip("s")
        subject = " ".join(str(c) for c in children if c.type == "SUBJECT_WORD")
        return self._at(meta, AxisClaim(axis, subject, _text(meta, self.sentence)))

    @v_args(meta=True)
    def rank_claim(self, meta: Any, children: list[Any]) -> list[tuple[int, Statement]]:
        subject = next((c for c in children if isinstance(c, tuple) and c[0] != "relation"), ("it", ""))[0]
        words = next((c[1] for c in children if isinstance(c, tuple) and c[0] == "relation"), "")
        if any(isinstance(c, Token) and c.type == "AT_MOST" for c in children):
            words = "at most"
        op = {"at most": "le", "at least": "ge"}.get(words, "eq")
        value: str | tuple[str, str]
        modal = next((str(c).lower() for c in children if isinstance(c, Token) and c.type == "MODAL_FULL"), None)
        if modal is not None:  # "cannot be full rank": below full rank always; "can be full rank": not always below
            value, op = "full", "lt" if re.search(r"not|n't|never", modal) else "can"
        elif any(isinstance(c, Token) and c.type == "FULL_RANK" for c in children):
            value = "full"
        elif any(isinstance(c, Token) and c.type == "RANK_DEFICIENT" for c in children):
            value, op = "full", "lt"
        else:
            value = next(c for c in children if type(c) is str or isinstance(c, tuple) and c[0].isdigit())
        text = _text(meta, self.sentence)
        if isinstance(value, tuple):  # "at most d_k = 64": the claim, and d_k = 64 said on the way
            number, named = value[0], value[1].split()
            if len(named) == 1:
                return [(meta.start_pos, RankClaim(subject.strip(), op, number, text)),
                        (meta.start_pos, Setting(named[0], int(number), text))]
            value = number
        return self._at(meta, RankClaim(subject.strip(), op, value, text))

    def matrix(self, children: list[Token]) -> tuple[str, str]:
        return " ".join(str(c) for c in children), ""

    def role_matrix(self, children: list[Token]) -> tuple[str, str]:
        return "Q_{i} K_{i}^{T}", ""  # the scores of any head: head i of the model

    def factor(self, children: list[Token]) -> Token:
        return children[0]

    def rank_relation(self, children: list[Token]) -> tuple[str, str]:
        return "relation", " ".join(children[0].lower().split())

    def size_product(self, children: list[Any]) -> str:
        return " ".join(c for c in children if c in _SIZES.values())  # "h d_k"

    def rank_value(self, children: list[Any]) -> str | tuple[str, str]:
        if len(children) == 2:  # "d_k = 64": the number, and the size it names
            return str(children[-1]), str(children[0])
        return str(children[0])

    @v_args(meta=True)
    def shape_claim(self, meta: Any, children: list[Any]) -> list[tuple[int, Statement]]:
        subject = next(c for c in children if isinstance(c, tuple) and c[0] == "subject")[1]
        dims = next((c for c in children if isinstance(c, tuple) and c[0] == "shape"), ("shape", tuple(
            str(c) for c in children if isinstance(c, Token) and c.type == "DIM")))[1]
        return self._at(meta, ShapeClaim(subject, dims, _text(meta, self.sentence)))

    member_claim = shape_claim

    def not_a_shape(self, children: list[Any]) -> list[tuple[int, Statement]]:
        return []

    @v_args(meta=True)
    def shape_subject(self, meta: Any, children: list[Token]) -> tuple[str, str]:
        return "subject", self.sentence[meta.start_pos:meta.end_pos].strip()

    def shape(self, children: list[Token]) -> tuple[str, tuple[str, ...]]:
        return "shape", tuple(str(c) for c in children if c.type == "DIM")

    @v_args(meta=True)
    def moment_claim(self, meta: Any, children: list[Any]) -> list[tuple[int, Statement]]:
        scaling = next((c[1] for c in children if isinstance(c, tuple) and c[0] == "scaling"), None)
        scaled = None if scaling is None else scaling == "SCALED"
        text = _text(meta, self.sentence)
        values = [c for c in children if isinstance(c, tuple) and c[0] != "scaling"]
        if not values:  # "the standard deviation of the logits is 8": the moment named first
            word = next(c for c in children if isinstance(c, Token) and c.type in _MOMENTS)
            number = next(str(c) for c in children if isinstance(c, str) and not isinstance(c, Token))
            values = [(_MOMENTS[word.type], number)]
        return [(meta.start_pos, MomentClaim(moment, scaled, value, text)) for moment, value in values]

    def moment_value(self, children: list[Any]) -> tuple[str, str]:
        word = next(c for c in children if isinstance(c, Token) and c.type in _MOMENTS)
        return _MOMENTS[word.type], next(c for c in children if isinstance(c, str) and not isinstance(c, Token))

    def scaling(self, children: list[Token]) -> tuple[str, str]:
        return "scaling", children[0].type

    def moment_number(self, children: list[Token]) -> str:
        return str(next(c for c in reversed(children) if c.type == "DECIMAL"))

    @v_args(meta=True)
    def ratio_claim(self, meta: Any, children: list[Token]) -> list[tuple[int, Statement]]:
        number = next((str(c) for c in children if c.type == "DECIMAL"), None)
        spelled = next((str(c) for c in children if c.type == "NUMBER_WORD"), None)
        if spelled is not None:  # "eight times less"
            number = str(_NUMBER_WORDS[spelled.lower()])
        if number is None:  # "a quarter of", "1/5 of"
            word = children[0].lower().split()[-1]
            factor = word.split("/")[1] if "/" in word else str(_FRACTIONS[word])
        else:
            factor = number
        larger = any(isinstance(c, Token) and c.type == "LARGER" for c in children)
        return self._at(meta, RatioClaim(factor, _text(meta, self.sentence), larger))

    @v_args(meta=True)
    def restatement(self, meta: Any, children: list[Token]) -> list[tuple[int, Statement]]:
        if children[0].type == "PRODUCT_APPOSITION":  # a shape restated as its count of entries
            shape = re.search(r"(?<![\w.^])(\d+(?:\s*[×x*·]\s*\d+){1,3})\s*$", self.sentence[:meta.start_pos])
            if shape is None:
                return []
            second = next(str(c) for c in children if c.type == "COUNT_END")
            return [(shape.start(), Restatement(shape.group(1), second, self.sentence[shape.start():meta.end_pos]))]
        number = _NUMBER_BEFORE.search(self.sentence[:meta.start_pos])
        if number is None:
            return []  # (digits grouped by spaces are one number: "20 480 bytes"; a part of a group is none)
        first = f"{re.sub(r'[^0-9.]', '', number.group(1))} {str(children[0]).strip()}"
        written = next(str(c) for c in children if c.type == "AMOUNT_END")
        second = re.sub(r"(?<=\d)[ \u00a0\u2009\u202f](?=\d)", "", written)
        return [(number.start(), Restatement(first, second, self.sentence[number.start():meta.end_pos]))]

    @v_args(meta=True)
    def variant(self, meta: Any, children: list[Token]) -> tuple[int, Variant]:
        name = children[0].lower()
        kind = "mha" if name.startswith(("mha", "multi-head")) else "mqa" if name.startswith(("mqa", "multi-query")) \
            else "gqa"
        heads: int | None = int(name.rsplit("-", 1)[1]) if name[-1].isdigit() else None  # "GQA-8"
        if len(children) > 1:  # "(32 KV heads)", "(a single KV head)"
            number = re.search(r"\d+", children[1])  # "(32 KV heads)", "with 8 KV heads"; else one
            heads = int(number.group(0)) if number else 1
        configured = len(children) > 1 and not children[1].lstrip().startswith("(")
        return meta.start_pos, Variant(kind, heads, _text(meta, self.sentence), configured)

    def variants(self, children: list[Any]) -> list[tuple[int, Variant]]:
        return [c for c in children if isinstance(c, tuple)]

    def start(self, children: list[Any]) -> list[tuple[int, Statement]]:
        out = [s for c in children if isinstance(c, list) for s in c]
        for k, (at, s) in enumerate(out):  # "... has rank at most 64, so it cannot be full rank": the matrix before
            if isinstance(s, RankClaim) and s.subject == "it":
                before = [(a, t.subject) for a, t in out[:k] if isinstance(t, (RankClaim, ShapeClaim))]
                whole = bool(before) and not re.search(r"[*·⋅×/+−-]\s*$|[\w})\]ᵀ]\s*$", self.sentence[:before[-1][0]])
                out[k] = (at, replace(s, subject=before[-1][1] if whole else ""))  # (not the last factor of a product
                # the grammar read as a subject: "S_1 = Q_1 K_1^T is 8 x 8, yet it ...")
        return [(at, s) for at, s in out if not isinstance(s, RankClaim) or s.subject]

    def hypothetical(self, children: list[Token]) -> bool:
        return True

    def mood(self, children: list[Any]) -> bool:
        return any(c is True for c in children)


def _numbered(token: Token) -> int:
    if token.type == "DIGITS":
        return int(token)
    word = token.lower()
    return _ORDINALS.get(word) or _ORDINALS[word[:-1]]


def _pieces(plain: str) -> list[tuple[int, str]]:
    """(offset, piece) of at most _PIECE characters, cut after a clause mark (else at a space)."""
    out, at = [], 0
    while len(plain) - at > _PIECE:
        window = plain[at:at + _PIECE]
        cut = max(window.rfind(mark) for mark in (", ", "; ", ": "))
        cut = cut + 2 if cut > 0 else (window.rfind(" ") + 1 or _PIECE)
        out.append((at, plain[at:at + cut]))
        at += cut
    return out + [(at, plain[at:])]


@lru_cache(maxsize=8192)
def read(plain: str) -> tuple[tuple[int, Statement], ...]:
    """The statements of one sentence of plain prose (see :func:`_plain`), each with its offset, in order.

    >>> read("with h = 2 there are two heads")
    ((0, Condition(sizes=(('h', 2),))), (21, Setting(name='h', value=2, text='two heads')))
    """
    out: list[tuple[int, Statement]] = []
    for at, piece in _pieces(plain):
        if not any("a" <= ch.lower() <= "z" for ch in piece) or not _may_hold_a_form(piece):
            continue  # a piece of numbers, or of words without a number, relation or claim word: no form
        out += [(at + k - 2, s) for k, s in _parsed("¶ " + piece)]
    return tuple(sorted(out, key=lambda x: x[0]))


@lru_cache(maxsize=8192)
def _parsed(piece: str) -> tuple[tuple[int, Statement], ...]:
    """The statements of one piece as the grammar reads it (a piece repeated in a document is parsed once)."""
    return tuple(_Reader(piece).transform(_parser().parse(piece, start="start")))


#: the words a condition, a head scope or a token scope holds, how far before them such a form may start (the
#: clause mark before "with"; "for the second" before "head") and how far after them it may reach (a condition's
#: bindings; "head 2's")
_SCOPE_WORDS = {"CONDITION_WORD": (3, 240), "CONDITION_VERB": (3, 240), "HEAD_WORD": (40, 16), "TOKEN": (40, 16)}


@lru_cache(maxsize=8192)
def _scope_statements(plain: str) -> tuple[tuple[int, Statement], ...]:
    """The conditions and head or token scopes of a sentence, each with its offset: the sentence is parsed only
    around the words such a form holds (see _SCOPE_WORDS), in windows merged where they meet."""
    if not holds(plain, *_SCOPE_NEEDS):
        return ()
    patterns, text = _terminal_patterns(), "¶ " + plain
    windows: list[list[int]] = []
    for at, back, reach in sorted({(m.start(), back, reach) for name, (back, reach) in _SCOPE_WORDS.items()
                                   for m in patterns[name].finditer(text)}):
        lo, hi = max(0, at - back), min(len(text), at + reach)
        if windows and lo <= windows[-1][1] and max(hi, windows[-1][1]) - windows[-1][0] <= _PIECE:
            windows[-1][1] = max(hi, windows[-1][1])
        else:
            windows.append([lo, hi])
    out: list[tuple[int, Statement]] = []
    for lo, hi in windows:
        piece = text[lo:hi]
        if not holds(piece, _SCOPE_NEEDS[1]):
            continue  # no number and no ordinal near the word: no binding, no numbered head or token
        out += [(lo + k - 2, s) for k, s in _parsed(piece) if isinstance(s, (Condition, HeadScope, TokenScope))]
    return tuple(sorted(set(out), key=lambda x: (x[0], repr(x[1]))))  # windows that met: each statement once


@lru_cache(maxsize=1024)
def variants(plain: str) -> tuple[tuple[int, Variant], ...]:
    """The variants of attention a piece of plain prose names, each with its offset in ``plain``.

    >>> [(k, v.kind, v.kv_heads) for k, v in variants("GQA-8 needs a quarter of the MHA (32 KV heads) cache")]
    [(0, 'gqa', 8), (29, 'mha', 32)]
    """
    if not holds(plain, ("VARIANT_NAME",)):
        return ()
    out: list[tuple[int, Variant]] = []
    for at, piece in _pieces(plain):
        out += [(at + k - 2, v) for k, v in _Reader("¶ " + piece).transform(_parser().parse("¶ " + piece,
                                                                                             start="variants"))]
    return tuple(out)


@lru_cache(maxsize=8192)
def _mood(plain: str) -> bool:
    return bool(_terminal_patterns()["HYPOTHETICAL_WORD"].search(plain))  # the mood rule's one word, searched


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


def _sentence_settings(plain: str) -> list[tuple[int, Setting]]:
    """The settings of one sentence; the key/value heads of a variant it names in brackets ("MHA (32 KV heads)") are
    that variant's, not a size of the document's model (a variant "with 8 KV heads" sets them, as before)."""
    if not holds(plain, *_SETTING_NEEDS):
        return []
    named = [(k, k + len(v.text)) for k, v in variants(plain) if v.kv_heads is not None and not v.configured]
    return [(k, s) for k, s in read(plain) if isinstance(s, Setting) and
            not (s.name == "g" and any(a <= k < b for a, b in named))]


def sentence_sizes(sentence: str) -> dict[str, int]:
    """The sizes one sentence writes as relations, ``name = number``: the inputs of a computation the sentence
    makes itself ("Here h = 12, so GQA with g = 4 stores a third of the MHA cache").  Counts ("32 KV heads down to
    1") are not among them: they may describe another variant.

    >>> sentence_sizes("Here h = 12, so GQA with g = 4 stores a third of the MHA cache (32 KV heads down to 4).")
    {'h': 12, 'g': 4}
    """
    return {s.name: int(s.value) for _, s in read(_plain(sentence)) if isinstance(s, Setting) and "=" in s.text}


def constraints(prose: str) -> list[Constraint]:
    r"""Bounds and ranges in prose: ``1 \le N \le 10^4``, ``h \ge 2``, ``d_k < n``, "at most 10 heads".

    Names are the dimension names when known (``n_heads`` -> ``h``), else the symbol as written;
    ``\ne`` counts only against a number (``A_1 \ne A_2`` is a claim, not a bound).

    >>> [(c.name, c.op, c.value) for c in constraints("The length is $1 \\le N \\le 10^4$; at most 10 heads.")]
    [('N', 'ge', 1), ('N', 'le', 10000), ('h', 'le', 10)]
    """
    found: list[tuple[int, Constraint]] = []
    for offset, sentence in _sentences(prose):
        plain = _plain(sentence)
        if any(sign in plain for sign in "<>≤≥≠") or holds(plain, *_BOUND_NEEDS):
            found += [(offset + k, s) for k, s in read(plain) if isinstance(s, Constraint)]
    return [c for _, c in sorted(found, key=lambda x: x[0])]


def _symbolic(term: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z][A-Za-z0-9_']*(?:\s[-+]\s(?:\d+|[A-Za-z][A-Za-z0-9_']*))*", _clean(term)))


def _clean(term: str) -> str:
    return term.strip().rstrip(".,;:!?").strip("()")


def conditions(sentence: str) -> list[dict[str, int]]:
    """The sizes each condition of ``sentence`` binds, one dict per condition in order ("for n = 3 ...; for
    n = 4 ..." gives two).

    >>> conditions("For $n = 3$ that is $6$; for $n = 4$, $h = 2$ it is $10$.")
    [{'n': 3}, {'n': 4, 'h': 2}]
    """
    return [dict(s.sizes) for _, s in _scope_statements(_plain(sentence)) if isinstance(s, Condition)]


def scope(sentence: str) -> dict[str, int]:
    """Values a condition binds only inside ``sentence``: dimensions ("with h = 1", "for n = 3, d_k = 1"),
    ``head`` ("for head 2", "for the second head", "für Kopf 2") and ``token`` ("the first token",
    "token 1"), numbered as written.  "with"/"for" count at the start of a clause, "if"/"when"/
    "whenever" anywhere.

    >>> scope("Indeed, for $n = 3$, $d_k = 1$ and logits $xx^T$ ..."), scope("para la cabeza 2, el primer token")
    ({'n': 3, 'd_k': 1}, {'head': 2, 'token': 1})
    """
    out: dict[str, int] = {}
    for _, s in _scope_statements(_plain(sentence)):
        if isinstance(s, Condition):
            for name, value in s.sizes:
                out.setdefault(name, value)
        elif isinstance(s, HeadScope):
            out.setdefault("head", s.head)
        elif isinstance(s, TokenScope):
            out.setdefault("token", s.token)
    return out


def concluded(before: str) -> bool:
    """Does the clause before a statement draw it as a result ("we get", "so", "hence") rather than choose it?

    >>> concluded("Setting $h = 2$, we get "), concluded("a single head with ")
    (True, False)
    """
    clause = re.split(r"[,;:.](?:\s|$)", before)[-1]
    return holds(_plain(clause), ("CONCLUSION_WORD",))


def chosen(before: str, after: str) -> bool:
    """Is a relation of sizes chosen, proposed or required rather than claimed of the example: by the words just
    before it (in its clause) or right after it (the ``choices`` forms of the grammar)?

    >>> chosen("Some propose setting the head size to the sequence length, ", ""), chosen("A head with ", "")
    (True, True)
    >>> chosen("Here ", " is needed."), chosen("So ", " holds.")
    (True, False)
    """
    clause = re.split(r"[.;:](?:\s|$)", before[-80:])[-1]
    return holds(clause, ("CHOICE_WORD",)) or bool(_terminal_patterns()["REQUIREMENT_WORD"].match(after))


def regime(before: str) -> bool:
    """Do the words right before a relation of sizes open a range of them ("when", "for", "a partir de"): a regime
    the sentence speaks of, not a claim that the example satisfies it (the ``regime`` form of the grammar)?

    >>> regime("the quadratic term overtakes the linear one when "), regime("A partir de "), regime("Here ")
    (True, True, False)
    """
    return bool(_terminal_patterns()["REGIME_WORD"].search(before))


def hedged(before: str) -> bool:
    """Do the words right before an amount or a ratio hedge it ("roughly ", "about ", "~")?  An estimate, not a value
    to compute (the ``hedged`` form of the grammar).

    >>> hedged("So roughly "), hedged("costs 65536 numbers, ")
    (True, False)
    """
    return bool(_terminal_patterns()["HEDGE"].search(before[-16:]))


def disowned(before: str) -> bool:
    """Do the words of a clause before a statement quote it as a mistake ("the most common mistake was writing ",
    "ein häufiger Fehler ist ")?  Then the statement is shown, not claimed (the ``disowned`` form of the grammar).

    >>> disowned("the most common mistake was writing "), disowned("Un error frecuente es "), disowned("So ")
    (True, True, False)
    """
    return bool(_terminal_patterns()["MISTAKE_WORD"].search(before))


def count_said(sentence: str, name: str, value: int) -> LayerCount | Setting | None:
    """What the sentence says ``name = value`` counts: layers ("$L = 32$ layers", "a 32-layer decoder, $L = 32$") or
    heads ("$n_q = 64$ query heads", a Setting of h or g), else None.

    >>> count_said("A 32-layer decoder, $L = 32$, with $n_q = 64$ query heads.", "n_{q}", 64)
    Setting(name='h', value=64, text='n_q = 64 query heads')
    """
    written = _plain(name).strip()
    for _, s in read(_plain(sentence)):
        if isinstance(s, LayerCount) and s.name == written and s.value == value:
            return s
        if isinstance(s, Setting) and s.name in ("h", "g") and s.value == value and \
                s.text.split("=")[0].strip() == written and not s.text.rstrip()[-1].isdigit():
            return s
    return None


def counts_sequences(after: str) -> bool:
    """Do the words right after a letter set to a number say it counts sequences (the ``batch_count`` form)?

    >>> counts_sequences(" sequences of 512 tokens"), counts_sequences(" tokens")
    (True, False)
    """
    return bool(_terminal_patterns()["BATCH_NOUN"].match(after))


def conditional(clause: str) -> bool:
    """Does the clause state a condition ("if", "when", "wenn", "cuando")? What it binds holds in that clause only
    (the ``conditional`` form of the grammar).

    >>> conditional("when $n > 2 d$ the scores dominate"), conditional("Here $n = 4$")
    (True, False)
    """
    return bool(_terminal_patterns()["IF_WORD"].search(clause))


def size_condition(before: str, *, alone: bool = False) -> bool:
    """Does the word right before a size make it the condition of its clause ("With $n_{kv} = 1$ the cache is ...",
    "... bei $n = 2048$ bereits ...")?  With ``alone``, that word must be all the clause holds before the size (the
    ``size_condition`` form of the grammar).

    >>> size_condition("With "), size_condition("sind es bei "), size_condition("sind es bei ", alone=True)
    (True, True, False)
    """
    return bool(_terminal_patterns()["SIZE_CONDITION_WORD"].search(before)) and (not alone or len(before.split()) == 1)


def opens_block(clause: str) -> bool:
    """Is the clause nothing but a condition of sizes that ends with a colon ("For $n = 1024$, $d = 512$:")?  It has
    no claim of its own to bind them in: it states the sizes of what follows (a ``size_condition`` word, then the
    bindings and their separators, and nothing else).

    >>> opens_block("For $n = 1024$, $d = 512$:"), opens_block("For $n = 1024$ the cost is:")
    (True, False)
    """
    text = clause.strip()
    if not text.endswith(":") or "$" not in text:
        return False
    parts = [x.strip() for x in re.split(r"\$[^$]*\$", text[:-1])]
    separator = _terminal_patterns()["BINDING_SEPARATOR"]
    return size_condition(parts[0] + " ", alone=True) and all(not x or separator.fullmatch(x) for x in parts[1:])


def linked(tail: str, *, defines: bool = False) -> bool:
    """Do the words between a variant's name and a statement link the statement to it: a label or a bracket
    ("MQA: ", "**MQA** (multi-query): ", "GQA-8 ("), or with ``defines`` a definition ("MQA is ") (the grammar's
    ``variant_link`` form)?

    >>> linked("**: "), linked(" (multi-query): "), linked(" is ", defines=True), linked(" uses ")
    (True, True, True, False)
    """
    return bool(_terminal_patterns()["VARIANT_DEFINITION" if defines else "VARIANT_LINK"].match(tail))


def contrasts(plain: str) -> bool:
    """Does the sentence contrast variants ("whereas", "compared with", "instead", "both")? (the ``contrast`` form)"""
    return bool(_terminal_patterns()["CONTRAST_WORD"].search(plain))


def counterfactual(clause: str) -> bool:
    """Does the clause speak counterfactually ("would", "had we")? What it binds holds in that clause only."""
    return holds(_plain(clause), ("COUNTERFACTUAL_WORD",))


def hypothetical(sentence: str) -> bool:
    """Does the sentence speak of another example ("would", "instead", "for comparison", "e.g.")?
    A scope in such a sentence never changes the document's own example.

    >>> hypothetical("(With $h = 1$ we would instead have $d_k = 4$.)"), hypothetical("With $h = 8$,")
    (True, False)
    """
    return sentence.lstrip().startswith("(") or _mood(_plain(sentence))
