"""Fuzzing that reaches the computation and compares its results (the second reliability round).

The surface fuzz (``test_fuzz_surface.py``) feeds junk, most of which input validation stops. These strategies
build *valid* inputs -- models, weights, masks, state_dicts, checkpoints on disk, documents and notebooks with a
planted error -- so that nearly every example reaches the computation, and each result is compared with an
independent one: the lambdified model with exact evaluation, the masked forward pass with a plain NumPy reference
(and torch where it is importable), a checkpoint read from a ``.safetensors`` file with the same state_dict in
memory, and a document's verdicts with the error planted in it.  Each surface counts the share of its examples
that reached the computation; the run's terminal summary prints them and a test requires at least 90 %.

10,000 examples in all (600 exact evaluations, 6,000 masked passes, 800 checkpoints, 2,000 documents, 600
notebooks). Marked ``slow``: ``.ci/run`` runs it with the surface fuzz (``pytest -m slow --hypothesis-seed=0``);
``MHA_FUZZ_SCALE=0.1`` runs a tenth.
"""

from __future__ import annotations

import json
import os
from collections import Counter

import numpy as np
import pytest
from conftest import SUMMARY
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mha_symbolic import MHASymbolicError, MultiHeadAttention, check_file, check_text

pytestmark = pytest.mark.slow

SCALE = float(os.environ.get("MHA_FUZZ_SCALE", "1"))
FUZZ = dict(deadline=None, database=None, derandomize=False,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                   HealthCheck.function_scoped_fixture])
#: surface -> Counter(tried=, reached=): how many examples got past validation into the computation
REACH: dict[str, Counter] = {}


def examples(n: int) -> settings:
    return settings(max_examples=max(1, int(n * SCALE)), **FUZZ)


def reached(surface: str, ok: bool) -> None:
    REACH.setdefault(surface, Counter())["tried"] += 1
    REACH[surface]["reached"] += bool(ok)


@st.composite
def small_models(draw):
    h = draw(st.integers(1, 3))
    d_k = draw(st.integers(1, 2))
    n = draw(st.integers(1, 3))
    return MultiHeadAttention(n=n, d_model=h * d_k, h=h, causal=draw(st.booleans()), bias=draw(st.booleans()))


def integer_inputs(model, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    D = model.dims
    n, d, h, dk = int(D.n), int(D.d_model), int(D.h), int(D.d_k)
    out = {"X": rng.integers(-2, 3, size=(n, d)), "W_O": rng.integers(-2, 3, size=(h * dk, d))}
    out |= {k: rng.integers(-2, 3, size=(h, d, dk)) for k in ("W_Q", "W_K", "W_V")}
    if model.bias:
        out |= {k: rng.integers(-1, 2, size=(h, dk)) for k in ("b_Q", "b_K", "b_V")} | {"b_O": rng.integers(-1, 2, d)}
    return out


# ----- lambdify against exact evaluation -------------------------------------------------------------------------
@examples(600)
@given(model=small_models(), seed=st.integers(0, 2**32 - 1))
def test_lambdified_model_agrees_with_exact_evaluation(model, seed):
    args = integer_inputs(model, seed)
    try:
        exact = model.evaluate(**args).output
        fast = model.lambdify()(*(args[k].astype(float) for k in ("X", "W_Q", "W_K", "W_V", "W_O")),
                                **{k: v.astype(float) for k, v in args.items() if k.startswith("b_")})
    except MHASymbolicError:
        reached("lambdify vs exact", False)
        raise
    reached("lambdify vs exact", True)
    np.testing.assert_allclose(fast, np.array(exact.evalf(30).tolist(), dtype=float), rtol=1e-9, atol=1e-9)


# ----- the masked forward pass against a plain reference (and torch) --------------------------------------------
def reference(m, q, k, v, add):
    w = m.weights
    Q = np.einsum("bne,hed->bhnd", q, w["W_Q"]) + w["b_Q"][None, :, None, :]
    K = np.einsum("bne,hed->bhnd", k, w["W_K"]) + w["b_K"][None, :, None, :]
    V = np.einsum("bne,hed->bhnd", v, w["W_V"]) + w["b_V"][None, :, None, :]
    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]) + add
    A = np.exp(S - S.max(-1, keepdims=True))
    A /= A.sum(-1, keepdims=True)
    heads = np.swapaxes(A @ V, 1, 2).reshape(q.shape[0], q.shape[1], V.shape[1] * V.shape[3])
    return heads @ w["W_O"] + w["b_O"], A


@examples(6000)
@given(h=st.integers(1, 3), dk=st.integers(1, 3), batch=st.integers(0, 3), n_q=st.integers(1, 5),
       n_kv=st.integers(1, 5), causal=st.booleans(), seed=st.integers(0, 2**32 - 1),
       chunk=st.sampled_from([1 << 21, 3, 7]))
def test_masked_pass_agrees_with_a_reference(h, dk, batch, n_q, n_kv, causal, seed, chunk, monkeypatch):
    from mha_symbolic import pytorch

    E = h * dk
    rng = np.random.default_rng(seed)
    m = pytorch.from_pytorch(rng.normal(size=(3 * E, E)), rng.normal(size=3 * E), rng.normal(size=(E, E)),
                             rng.normal(size=E), num_heads=h)
    q, kv = rng.normal(size=(batch, n_q, E)), rng.normal(size=(batch, n_kv, E))
    keep = rng.random((batch, n_kv)) < 0.7
    keep[:, 0] = True  # every query keeps a key (key 0 is also allowed by the causal mask)
    add = np.where(keep[:, None, None, :], 0.0, -np.inf)
    if causal:
        add = add + np.triu(np.full((n_q, n_kv), -np.inf), k=1)
    monkeypatch.setattr(pytorch, "CHUNK_ENTRIES", chunk)
    out, weights = m(q, key=kv, value=kv, key_padding_mask=~keep, causal=causal, need_weights=True,
                     average_attn_weights=False)
    reached("masked forward pass", True)
    expected, A = reference(m, q, kv, kv, add)
    np.testing.assert_allclose(out, expected, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(weights, A, rtol=1e-10, atol=1e-10)
    if batch and seed % 10 == 0:  # torch, where it is importable, on a tenth of the examples
        torch = pytest.importorskip("torch")
        w = {k: torch.tensor(v) for k, v in m.weights.items()}
        t_out, _ = torch.nn.functional.multi_head_attention_forward(
            torch.tensor(q).transpose(0, 1), torch.tensor(kv).transpose(0, 1), torch.tensor(kv).transpose(0, 1),
            E, h, torch.cat([w["W_Q"].permute(0, 2, 1).reshape(E, E), w["W_K"].permute(0, 2, 1).reshape(E, E),
                             w["W_V"].permute(0, 2, 1).reshape(E, E)]),
            torch.cat([w["b_Q"].reshape(-1), w["b_K"].reshape(-1), w["b_V"].reshape(-1)]), None, None, False, 0.0,
            w["W_O"].T, w["b_O"], training=False, key_padding_mask=torch.tensor(~keep),
            attn_mask=torch.tensor(np.triu(np.ones((n_q, n_kv), bool), k=1)) if causal else None)
        np.testing.assert_allclose(t_out.transpose(0, 1).numpy(), out, rtol=1e-9, atol=1e-9)


# ----- checkpoints: a .safetensors file reads as the same state_dict in memory ----------------------------------
@st.composite
def state_dicts(draw):
    h, dk = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    layers = draw(st.integers(1, 2))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    d = h * dk
    sd = {}
    for L in range(layers):
        for name in ("self.query", "self.key", "self.value", "output.dense"):
            W = rng.normal(size=(d, d))
            if draw(st.booleans()):  # a rank-deficient projection now and then
                W[:, -1] = 0
            sd[f"encoder.layer.{L}.attention.{name}.weight"] = W.astype(np.float32)
    return sd, h


@examples(800)
@given(case=state_dicts())
def test_checkpoint_from_a_file_reads_as_in_memory(case, tmp_path_factory):
    pytest.importorskip("safetensors")
    from safetensors.numpy import save_file

    from mha_symbolic.rank.circuits import circuit_ranks

    sd, h = case
    path = tmp_path_factory.mktemp("ckpt") / "m.safetensors"
    save_file(sd, str(path))
    memory = list(circuit_ranks(sd, num_heads=h, n=2))
    disk = list(circuit_ranks(str(path), num_heads=h, n=2))
    reached("checkpoint loaders", True)
    assert memory == disk
    for layer in memory:
        for head in layer.heads:
            assert head.qk_rank <= head.d_k and head.ov_rank <= head.d_k


# ----- documents and notebooks: a planted error is found, and nothing else is wrong -----------------------------
@st.composite
def documents(draw):
    rows = draw(st.lists(st.tuples(st.integers(2, 99), st.integers(2, 99), st.sampled_from(["\\times", "+"])),
                         min_size=2, max_size=8))
    planted = draw(st.integers(0, len(rows) - 1))
    style = draw(st.sampled_from(["lines", "paragraphs", "list"]))
    lines = []
    for k, (a, b, op) in enumerate(rows):
        value = a * b if op == "\\times" else a + b
        value += draw(st.integers(1, 9)) if k == planted else 0
        lines.append(("- " if style == "list" else "") + f"We compute ${a} {op} {b} = {value}$ here.")
    return ("\n\n" if style == "paragraphs" else "\n").join(lines) + "\n", planted, len(rows)


def verdicts(report) -> dict[int, str]:
    return {f.line: f.status for f in report.findings if f.status in ("correct", "wrong")}


@examples(2000)
@given(case=documents(), through=st.sampled_from(["text", "file"]))
def test_a_planted_error_in_a_document_is_found(case, through, tmp_path_factory):
    text, planted, count = case
    if through == "file":
        path = tmp_path_factory.mktemp("doc") / "d.md"
        path.write_text(text, encoding="utf-8")
        report = check_file(str(path), isolate=False, timeout=None)
    else:
        report = check_text(text, isolate=False, timeout=None)
    found = verdicts(report)
    reached("documents", len(found) == count)
    lines = sorted(found)
    assert [found[line] for line in lines].count("wrong") == 1, report.findings
    assert found[lines[planted]] == "wrong" and report.exit_code == 1


@examples(600)
@given(values=st.lists(st.tuples(st.integers(1, 50), st.integers(1, 50)), min_size=1, max_size=4),
       planted=st.integers(0, 3))
def test_a_planted_error_in_a_notebook_output_is_found(values, planted):
    planted %= len(values)
    cells = []
    for k, (a, b) in enumerate(values):
        shown = a * b + (1 if k == planted else 0)
        cells.append({"cell_type": "code", "execution_count": k + 1, "metadata": {}, "source": f"print({a} * {b})",
                      "outputs": [{"output_type": "stream", "name": "stdout", "text": f"{shown}\n"}]})
    nb = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    report = check_text(json.dumps(nb), name="n.ipynb", isolate=False, timeout=None)
    judged = {f.cell: f.status for f in report.findings if f.output and f.status in ("correct", "wrong")}
    reached("notebooks", len(judged) == len(values))
    assert judged == {k: "wrong" if k == planted else "correct" for k in range(len(values))}


def test_each_surface_is_reached():
    """Runs last in this file: the share of examples that got past validation, per surface (>= 90 %)."""
    assert REACH, "the fuzz tests above did not run"
    for surface, c in sorted(REACH.items()):
        share = c["reached"] / c["tried"]
        SUMMARY.append(f"fuzz reach: {surface}: {c['reached']} of {c['tried']} examples ({share:.0%})")
        assert share >= 0.9, (surface, c)
