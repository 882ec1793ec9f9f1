"""ANTLR's prediction cache for the LaTeX parser, kept between runs.

Explanation
===========

``latex2sympy2_extended`` parses with an ANTLR 4 parser.  ANTLR decides which alternative of the grammar to
follow by simulating its ATN and memoises every decision in a DFA (``decisionsToDFA``) shared by all parsers of
that class.  The DFA starts empty in each process, and filling it costs most of a short ``check``: eleven small
formulas spend about 0.4 s in ``adaptivePredict`` the first time and almost nothing the second.

The DFA is only a memo of a deterministic computation: ANTLR returns the same parse whether a decision comes
from the DFA or from the ATN (its design, and :mod:`tests.test_prediction_cache` checks it on the test formulas
and on generated ones).  So this module saves the DFA after a document is checked and loads it before the first
parse of a later process.

* The file lives in ``$MHA_CACHE_DIR`` (``off`` turns the cache off), else ``$XDG_CACHE_HOME/mha_symbolic``,
  else ``~/.cache/mha_symbolic``.  Its name carries a hash of both serialised ATNs, of the files of ANTLR's
  runtime that define the cached objects (size and modification time) and of Python's version, so another
  grammar or runtime never reads this cache.
* ATN states are saved by number and resolved into the ATN of the running parser; ANTLR's singletons
  (``PredictionContext.EMPTY``, ``SemanticContext.NONE``, the lexer's action instances) are saved by name, so
  identity tests inside ANTLR hold after loading.  Cached hash codes, which depend on the process (string and
  identity hashes), are cleared and every hashed table rebuilt after loading.
* Loading is refused, silently, unless the file is a regular file owned by this user and writable by no one
  else, in a directory of the same kind; it is read by an unpickler that resolves only ANTLR's own classes (no
  other global, so no code can be run by a planted file).  A file that fails any check or does not match the
  running grammar is ignored: the parser starts cold, as it would without a cache.
* Saving happens only when the DFA grew by :data:`SAVE_AFTER_NEW_STATES` states since it was loaded or saved,
  is written to a temporary file and renamed into place (concurrent runs never see half a file), and is skipped
  above :data:`MAX_BYTES`.

Examples
========

>>> import os
>>> os.environ.get("MHA_CACHE_DIR") == "off" or cache_file() is None or cache_file().name.startswith("antlr-")
True
"""

from __future__ import annotations

import hashlib
import importlib
import io
import os
import pickle
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["cache_file", "warm", "save", "state_count", "MAX_BYTES", "SAVE_AFTER_NEW_STATES"]

#: the largest cache file written, in bytes
MAX_BYTES = 64 << 20
#: new DFA states that make a save worth its cost
SAVE_AFTER_NEW_STATES = 20
_FORMAT = 1
#: ANTLR's runtime modules whose objects the cache holds (their files' sizes and times are part of its key)
_RUNTIME = ("antlr4.atn.ParserATNSimulator", "antlr4.atn.ATNConfigSet", "antlr4.atn.ATNConfig",
            "antlr4.dfa.DFA", "antlr4.dfa.DFAState", "antlr4.PredictionContext", "antlr4.atn.SemanticContext",
            "antlr4.atn.LexerATNSimulator", "antlr4.atn.LexerActionExecutor")

_loaded = False  # warm() ran in this process
_saved_states = 0  # the DFA's size when it was last loaded or saved


def _recognizers() -> tuple[Any, Any]:
    from latex2sympy2_extended.antlr_parser import PSLexer, PSParser

    return PSParser, PSLexer


def _singletons() -> dict[str, Any]:
    from antlr4.atn.LexerAction import LexerMoreAction, LexerPopModeAction, LexerSkipAction
    from antlr4.atn.SemanticContext import SemanticContext
    from antlr4.ParserRuleContext import RuleContext
    from antlr4.PredictionContext import PredictionContext

    return {"PredictionContext.EMPTY": PredictionContext.EMPTY, "SemanticContext.NONE": SemanticContext.NONE,
            "LexerSkipAction.INSTANCE": LexerSkipAction.INSTANCE,
            "LexerPopModeAction.INSTANCE": LexerPopModeAction.INSTANCE,
            "LexerMoreAction.INSTANCE": LexerMoreAction.INSTANCE, "RuleContext.EMPTY": RuleContext.EMPTY}


def _key() -> str:
    parser, lexer = _recognizers()
    digest = hashlib.sha256()
    for recognizer in (parser, lexer):
        digest.update(str(sys.modules[recognizer.__module__].serializedATN()).encode())
    for module in _RUNTIME:  # the classes the cache is made of: another runtime, another key
        info = os.stat(importlib.import_module(module).__file__ or "")
        digest.update(f"{module}:{info.st_size}:{info.st_mtime_ns};".encode())
    digest.update(f"python={sys.version_info[:2]};format={_FORMAT}".encode())
    return digest.hexdigest()[:20]


def _directory() -> Path | None:
    chosen = os.environ.get("MHA_CACHE_DIR")
    if chosen is not None:
        return None if chosen.strip().lower() in ("off", "") else Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mha_symbolic"


def cache_file() -> Path | None:
    """Where this grammar's prediction cache is kept, or ``None`` when the cache is off."""
    directory = _directory()
    return None if directory is None else directory / f"antlr-{_key()}.pickle"


def _private(path: Path, kind: int) -> bool:
    """A file (or directory) of this user, of the given kind, that no one else may write."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    if (info.st_mode & 0o170000) != kind or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return False
    return not hasattr(os, "geteuid") or info.st_uid == os.geteuid()


def state_count() -> int:
    """How many DFA states the parser and the lexer hold now."""
    parser, lexer = _recognizers()
    return sum(len(dfa._states) for r in (parser, lexer) for dfa in r.decisionsToDFA)


class _Pickler(pickle.Pickler):
    def __init__(self, file: io.BytesIO) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        parser, lexer = _recognizers()
        self._ids = {id(v): ("singleton", k) for k, v in _singletons().items()}
        for which, recognizer in (("parser", parser), ("lexer", lexer)):
            for state in recognizer.atn.states:
                if state is not None:
                    self._ids[id(state)] = (which, state.stateNumber)

    def persistent_id(self, obj: Any) -> Any:
        return self._ids.get(id(obj))


class _Unpickler(pickle.Unpickler):
    """Resolves ATN states into the running grammar, ANTLR's singletons by name, and no global outside ANTLR."""

    def __init__(self, file: io.BytesIO) -> None:
        super().__init__(file)
        parser, lexer = _recognizers()
        self._atns = {"parser": parser.atn, "lexer": lexer.atn}
        self._singletons = _singletons()

    def persistent_load(self, pid: Any) -> Any:
        kind, key = pid
        if kind == "singleton":
            return self._singletons[key]
        return self._atns[kind].states[key]

    def find_class(self, module: str, name: str) -> Any:
        if module.startswith("antlr4.") or (module == "builtins" and name in ("set", "frozenset", "range")):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not part of a prediction cache")


def _rehash(dfas: list[Any], context_cache: Any = None) -> None:
    """Clear hash codes cached in another process and rebuild the tables keyed by them."""
    for dfa in dfas:
        for state in dfa._states.values():
            if state.configs is not None:
                state.configs.cachedHashCode = -1
        dfa._states = {s: s for s in dfa._states.values()}
    if context_cache is not None:
        context_cache.cache = {c: c for c in context_cache.cache.values()}


def warm() -> bool:
    """Load the saved prediction cache into the parser, once per process, before the first parse.  Returns
    whether a cache was loaded; any problem with the file leaves the parser cold (never an error)."""
    global _loaded, _saved_states
    if _loaded:
        return False
    _loaded = True
    path = cache_file()
    if path is None or not _private(path.parent, stat.S_IFDIR) or not _private(path, stat.S_IFREG):
        _saved_states = state_count()
        return False
    parser, lexer = _recognizers()
    try:
        with open(path, "rb") as fh:
            if os.fstat(fh.fileno()).st_size > MAX_BYTES:
                raise ValueError("too large")
            data = fh.read(MAX_BYTES + 1)
        key, parser_dfas, contexts, lexer_dfas = _Unpickler(io.BytesIO(data)).load()
        if (key != _key() or len(parser_dfas) != len(parser.decisionsToDFA)
                or len(lexer_dfas) != len(lexer.decisionsToDFA)):
            raise ValueError("another grammar")
        _rehash(parser_dfas, contexts)
        _rehash(lexer_dfas)
    except Exception:  # a damaged, foreign or stale file: start cold, as without a cache
        _saved_states = state_count()
        return False
    parser.decisionsToDFA[:] = parser_dfas
    parser.sharedContextCache.cache = contexts.cache
    lexer.decisionsToDFA[:] = lexer_dfas
    _saved_states = state_count()
    return True


def save() -> bool:
    """Write the prediction cache if it grew enough since it was loaded or saved (atomically; skipped when the
    cache is off, the directory cannot be made private, or the file would pass :data:`MAX_BYTES`)."""
    global _saved_states
    if not _loaded:
        return False
    path = cache_file()
    now = state_count()
    if path is None or now - _saved_states < SAVE_AFTER_NEW_STATES:
        return False
    parser, lexer = _recognizers()
    buffer = io.BytesIO()
    try:
        _Pickler(buffer).dump((_key(), parser.decisionsToDFA, parser.sharedContextCache, lexer.decisionsToDFA))
    except (pickle.PicklingError, RecursionError, TypeError, AttributeError):
        return False
    if buffer.tell() > MAX_BYTES:
        return False
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not _private(path.parent, stat.S_IFDIR):
            return False
        fd, temporary = tempfile.mkstemp(prefix=".antlr-", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(buffer.getbuffer())
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError:  # a read-only home, a full disk: the cache is only an optimisation
        return False
    _saved_states = now
    return True
