"""Repairing mis-encoded text: UTF-8 that was decoded as Mac Roman or cp1252 and saved again.

Explanation
===========

ftfy detects the damage (``ftfy.badness.is_bad``).  The repair is exact when re-encoding
with the wrong codec and decoding as UTF-8 round-trips (the seeds 000 and 002 are Mac Roman
mojibake and come back byte for byte); otherwise ``ftfy.fix_text`` is used, and the report
says which.  Only characters change, never line breaks, so line numbers stay those of the
file as given.

Examples
========

>>> text = "Model dimension ≈ 4 →".encode("utf-8").decode("mac_roman")
>>> r = repair_encoding(text)
>>> r.text, r.method
('Model dimension ≈ 4 →', 'mac_roman round trip')
>>> repair_encoding("plain ascii").repaired
False
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Repair", "repair_encoding"]

_CODECS = ("mac_roman", "cp1252", "latin-1")


@dataclass(frozen=True)
class Repair:
    """The (possibly) repaired text and how: ``method`` is None when nothing was wrong."""

    text: str
    method: str | None

    @property
    def repaired(self) -> bool:
        return self.method is not None


def repair_encoding(text: str) -> Repair:
    """Detect mojibake and undo it (exact codec round trip first, ftfy otherwise)."""
    if text.isascii():  # mojibake is made of non-ASCII characters: nothing to detect (and ftfy is not imported)
        return Repair(text, None)
    from ftfy import fix_text
    from ftfy.badness import badness, is_bad

    if not is_bad(text):
        return Repair(text, None)
    before = badness(text)
    for codec in _CODECS:
        try:
            fixed = text.encode(codec).decode("utf-8")
        except (UnicodeEncodeError, UnicodeDecodeError):
            continue
        if fixed.encode("utf-8").decode(codec) == text and badness(fixed) < before \
                and fixed.count("\n") == text.count("\n"):
            return Repair(fixed, f"{codec} round trip")
    fixed = fix_text(text, normalization=None)
    if badness(fixed) < before and fixed.count("\n") == text.count("\n"):
        return Repair(fixed, "ftfy.fix_text")
    return Repair(text, None)
