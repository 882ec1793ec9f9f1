"""Rank explorer: proven upper bounds, certified ranks, witnesses and counterexamples."""

from __future__ import annotations

import lazy_loader

# each name is imported from its submodule when first used (lazy_loader, reading __init__.pyi beside this file):
# the document checker's certified balls need ``certify`` alone, not the sweeps, proofs and plots of the others
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
