"""Sphinx configuration: ``sphinx-build -W -b html docs docs/_build/html`` (run by ``.ci/run``)."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.abspath(".."))

project = "mha_symbolic"
author = "the mha_symbolic developers"
copyright = "2026, the mha_symbolic developers"

extensions = [
    "myst_nb",                # Markdown pages (MyST) and the example notebooks, executed at build time
    "sphinx.ext.autodoc",     # the API reference, from the docstrings
    "sphinx.ext.napoleon",    # their "Parameters" sections (SymPy's numpydoc style)
    "sphinx.ext.mathjax",
]

exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3

# the notebooks in notebooks/ (links to derivations/notebooks/) are run afresh on every build, so a notebook
# whose code no longer works fails the build
nb_execution_mode = "force"
nb_execution_timeout = 600
nb_execution_raise_on_error = True

autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "show-inheritance": False}
autodoc_typehints = "none"

html_theme = "alabaster"
html_title = "mha_symbolic"
