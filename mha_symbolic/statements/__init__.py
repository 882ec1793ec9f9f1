"""Statements about attention in structured form, each decided by the engine on the model it is given.

The claims registry (:mod:`mha_symbolic.claims`) is a list of such statements; changing the
model's mathematics (its scale, convention, head widths...) changes what the engine answers.
"""

from __future__ import annotations

import lazy_loader

# each name is imported from its submodule when first used (lazy_loader, reading __init__.pyi beside this file):
# the document checker needs ``_base`` alone, and importing the rank engine with it would slow every ``check``
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
