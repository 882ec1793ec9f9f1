"""The names of the package's choices, in a module that imports nothing heavy.

The command line offers these as ``choices`` before it imports SymPy, so that ``mha-symbolic --help`` is fast;
the modules that define the objects behind each name import their lists from here
(``tests/test_cli.py`` checks that every list matches the objects).

>>> CONVENTIONS, MASKS
(('projection', 'split'), ('key_padding', 'additive'))
"""

from __future__ import annotations

#: how per-head weights see the input: every head all of X (Vaswani), or a column block of X each
CONVENTIONS = ("projection", "split")
#: the masks besides the causal one
MASKS = ("key_padding", "additive")
#: the LaTeX notation presets of :mod:`mha_symbolic.latex`
NOTATION_NAMES = ("vaswani", "per-head", "numbered")
#: the built-in worked examples of :mod:`mha_symbolic.examples`, and the one shown by default
EXAMPLE_NAMES = ("seed000", "seed001", "seed003")
DEFAULT_EXAMPLE = "seed000"
#: the checkpoint layouts of :mod:`mha_symbolic.weights`
LAYOUTS = ("torch", "bert", "gpt2", "llama", "transformerlens")
