"""Every object a notebook shows renders: its LaTeX through MathJax 3 itself, its Markdown through markdown-it.

Jupyter renders ``_repr_latex_`` and the math of ``_repr_markdown_`` with MathJax 3, whose TeX input is not
LaTeX: text-mode escapes (``\\_`` in ``\\text{}``, ``\\textasciicircum{}``) show literally, and an unknown
command is drawn in red instead of failing. So the math is rendered by MathJax itself (node and the
``mathjax-full`` package of ``tests/mathjax/``, installed by ``.ci/run``; set ``MHA_REQUIRE_MATHJAX=1`` to make
its absence a failure) and the MathML it produces is inspected, not the source string.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt
from mdit_py_plugins.dollarmath import dollarmath_plugin

MATHJAX = Path(__file__).parent / "mathjax"


def _mathjax_available() -> bool:
    return shutil.which("node") is not None and (MATHJAX / "node_modules" / "mathjax-full").is_dir()


if not _mathjax_available():
    if os.environ.get("MHA_REQUIRE_MATHJAX") == "1":
        raise RuntimeError("MHA_REQUIRE_MATHJAX=1 but node or tests/mathjax/node_modules is missing: "
                           "npm ci --prefix tests/mathjax")
    pytest.skip("MathJax is not installed (npm ci --prefix tests/mathjax); the reprs are not rendered",
                allow_module_level=True)


def render(items: list[tuple[str, str, bool]]) -> dict[str, tuple[str | None, str | None]]:
    """``{id: (error, mathml)}`` for ``(id, tex, display)`` items, from one node process."""
    payload = json.dumps([{"id": i, "tex": tex, "display": display} for i, tex, display in items])
    out = subprocess.run(["node", str(MATHJAX / "render.js")], input=payload, capture_output=True, text=True,
                         check=True, cwd=MATHJAX)
    return {r["id"]: (r["error"], r["mathml"]) for r in json.loads(out.stdout)}


def problems(mathml: str) -> list[str]:
    """What MathJax shows that the author did not mean: a command drawn in red (unknown), or text tokens that
    contain TeX syntax (a backslash, ``_``, ``^`` or a brace shown as a character)."""
    found = []
    if 'mathcolor="red"' in mathml:
        found.append("an unknown command, drawn in red")
    for tag, content in re.findall(r"<(mtext|mi|mo)[^>]*>([^<]*)</\1>", mathml):
        if any(c in content for c in "\\_^{}"):
            found.append(f"<{tag}> shows {content!r} literally")
    return found


_md = MarkdownIt("commonmark").enable("table").use(dollarmath_plugin, double_inline=True)


def math_of_markdown(text: str) -> tuple[list[tuple[str, bool]], str]:
    """The math segments of a Markdown repr and its rendered HTML (for emphasis the author did not write)."""
    segments = []
    for token in _md.parse(text):
        for t in [token, *(token.children or [])]:
            if t.type in ("math_inline", "math_inline_double", "math_block"):
                segments.append((t.content, t.type != "math_inline"))
    return segments, _md.render(text)


_LATEX_MATH = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$|\\\[(.+?)\\\]", re.S)


def math_of_latex(text: str) -> tuple[list[tuple[str, bool]], str]:
    """The math segments of a ``_repr_latex_`` string and the text outside them."""
    segments = [(m.group(1) or m.group(2) or m.group(3), m.group(2) is None) for m in _LATEX_MATH.finditer(text)]
    return segments, _LATEX_MATH.sub("", text)


def shown_objects() -> dict[str, Any]:
    """The objects a proof notebook shows, one of each kind (and every step and proof)."""
    import numpy as np

    from mha_symbolic import MultiHeadAttention, example
    from mha_symbolic import proofs as P
    from mha_symbolic.claims import claim, run_claims
    from mha_symbolic.derivation import Derivation
    from mha_symbolic.document import check_text
    from mha_symbolic.heads import HeadMatrix
    from mha_symbolic.rank import rank_bound, rank_report
    from mha_symbolic.rank.circuits import circuits
    from mha_symbolic.rank.counterexamples import low_rank_bottleneck, softmax_rank_counterexample
    from mha_symbolic.weights import LayerWeights

    models = {"general": MultiHeadAttention(), "concrete": MultiHeadAttention(n=2, d_model=4, h=2),
              "gqa": MultiHeadAttention(kv_heads="g"), "cross masked": MultiHeadAttention(n_kv=3, mask="key_padding"),
              "causal bias": MultiHeadAttention(causal=True, bias=True), "split": MultiHeadAttention(
                  convention="split")}
    objects: dict[str, Any] = {}
    for name, m in models.items():
        objects[f"model {name}"] = m
        objects[f"dims {name}"] = m.dims
        for step in m.steps.values():
            objects[f"step {name} {step.name}"] = step
            objects[f"expr {name} {step.name}"] = step.expr
    objects["head matrix"] = HeadMatrix("W_Q", 4, 2, 1)
    objects["evaluation seed000"] = example("seed000").evaluate()
    objects["evaluation seed001"] = example("seed001").evaluate()
    objects["example seed003"] = example("seed003")
    general = models["general"]
    for name in ("split_equals_projection", "sqrt_dk_scaling", "softmax_shift_invariance", "softmax_jacobian",
                 "softmax_saturation", "head_decomposition", "head_permutation_invariance", "permutation_equivariance",
                 "causal_breaks_equivariance", "parameter_and_flop_counts", "two_heads_not_one"):
        fn = getattr(P, name)
        objects[f"proof {name}"] = fn(general) if name == "parameter_and_flop_counts" else fn()
    objects["proof gqa"] = P.gqa_equals_repeated_kv(MultiHeadAttention(n=4, d_model=8, h=4, kv_heads=2))
    objects["rank bound"] = rank_bound(general.steps["head_i"].expr, general.dims)
    objects["rank report"] = rank_report(4, 4, 2)
    objects["rank counterexample"] = softmax_rank_counterexample()
    objects["rank bottleneck"] = low_rank_bottleneck(4, 2)
    objects["claim results"] = run_claims(source="004")
    objects["claim result"] = run_claims([claim("002-rank-single")])[0]
    objects["verdict"] = claim("002-higher-rank").decide()
    rng = np.random.default_rng(0)
    layer = LayerWeights("torch", 0, *(rng.normal(size=(2, 6, 3)) for _ in range(3)), rng.normal(size=(6, 6)))
    objects["circuit"] = circuits(layer)[0]
    objects["check report"] = check_text("With $h = 2$ heads and $d_{model} = 4$, $d_k = 2$.\n", isolate=False)
    objects["derivation"] = Derivation.from_example(example("seed000"))
    return objects


def test_every_shown_object_renders_in_mathjax():
    latex_items: list[tuple[str, str, bool]] = []
    outside: list[str] = []
    emphasis: list[str] = []
    missing: list[str] = []
    no_math: list[str] = []
    for name, obj in shown_objects().items():
        latex_repr = getattr(obj, "_repr_latex_", None)
        markdown_repr = getattr(obj, "_repr_markdown_", None)
        if latex_repr is None and markdown_repr is None:
            missing.append(name)
            continue
        if latex_repr is not None:
            segments, rest = math_of_latex(latex_repr())
            if "\\" in rest:
                outside.append(f"{name}: {rest[:80]!r}")
        else:
            segments, html = math_of_markdown(markdown_repr())
            if "<em>" in html:  # an underscore pair read as emphasis (A_1 ... head_1)
                emphasis.append(name)
        if not segments and name != "check report":  # the report shows the document's LaTeX as code, as read
            no_math.append(name)
        latex_items += [(f"{name} #{k}", tex, display) for k, (tex, display) in enumerate(segments)]
    assert not missing, f"objects with neither _repr_latex_ nor _repr_markdown_: {missing}"
    assert not no_math, f"objects that show no formula: {no_math}"
    assert not outside, f"LaTeX commands outside math, shown literally: {outside}"
    assert not emphasis, f"Markdown emphasis nobody wrote: {emphasis}"
    results = render(latex_items)
    bad = {i: err or problems(mml or "") for i, (err, mml) in results.items() if err or problems(mml or "")}
    assert not bad, f"{len(bad)} of {len(results)} formulas render wrongly: {dict(list(bad.items())[:8])}"


def test_the_check_itself_catches_what_jupyter_users_saw():
    """The harness must fail on the defects of the reported reprs: d\\_k and \\textasciicircum{} in \\text{}."""
    results = render([("escaped", r"\text{scores d\_k}", True), ("caret", r"\text{W\textasciicircum{}O}", True),
                      ("unknown", r"\operatorname{rank} \nosuchcommand", True), ("fine", r"\text{scores } d_k", True)])
    assert problems(results["escaped"][1] or "") and problems(results["unknown"][1] or "")
    assert results["caret"][0] is not None or problems(results["caret"][1] or "")
    assert results["fine"] == (None, results["fine"][1]) and not problems(results["fine"][1] or "")


def test_rounded_values_are_written_with_approx():
    """An evaluated step rounded to 4 places was written with `=`."""
    from mha_symbolic import example

    lines = re.split(r"\\end\{bmatrix\} \\\\", example("seed001").evaluate()._repr_latex_())
    rounded = [line for line in lines if re.search(r"\d\.\d{4}", line)]
    assert rounded and all(r"&\approx" in line and "&=" not in line for line in rounded)
    exact = example("seed003").evaluate()._repr_latex_()  # one token: every step is short and exact
    assert r"\approx" not in exact and "&=" in exact
