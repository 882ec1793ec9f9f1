"""Pictures: attention heatmaps, singular-value spectra with the proven bound, rank sweeps, scaling.

Needs matplotlib (``pip install 'mha-symbolic[plot]'``); every function returns the
``Figure`` and, given ``path``, writes a PNG there.  Figures are made without pyplot, so they work without a
display and never change matplotlib's backend or pyplot's state.

Examples
========

>>> from mha_symbolic import example
>>> from mha_symbolic.plots import attention_heatmaps
>>> fig = attention_heatmaps(example("seed000").evaluate(), tokens=["tok 1", "tok 2"])
>>> [ax.get_title() for ax in fig.axes if ax.get_title()]
['head 1: $A_1$', 'head 2: $A_2$']
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import InputError, require, require_int

if TYPE_CHECKING:
    from .evaluation import Evaluation

__all__ = ["attention_heatmaps", "singular_value_spectra", "rank_sweep_plot", "scaling_variance_plot"]


def _figure(**options: Any) -> Any:
    """A ``matplotlib.figure.Figure``. In a Jupyter kernel it is made by pyplot, so the notebook's own backend
    shows it; elsewhere without pyplot, so matplotlib's global backend and pyplot's open figures stay as the
    caller set them (the figure is returned, and written to ``path`` when one is given)."""
    import sys

    try:
        if "ipykernel" in sys.modules:
            import matplotlib.pyplot as plt

            return plt.figure(**options)
        from matplotlib.figure import Figure
    except ImportError:
        raise InputError("plots need matplotlib: pip install 'mha-symbolic[plot]'") from None
    return Figure(**options)


def _save(fig: Any, path: Any) -> Any:
    if path is not None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=120, bbox_inches="tight")
    return fig


def _heads(E: Evaluation) -> list[int]:
    return sorted(int(name[2:]) for name in E if name.startswith("A_") and name[2:].isdigit())


#: Heatmaps per row of the grid, and the largest figure drawn (inches): 12 or 32 heads stay readable on a page.
GRID_COLUMNS = 4
MAX_FIGSIZE = (16.0, 20.0)


def _attention_matrices(E: Any) -> tuple[list[str], list[np.ndarray]]:
    """(titles, matrices) from an evaluation (its ``A_i``) or from numeric weights ``(h, n_q, n_kv)`` /
    ``(n_q, n_kv)`` (e.g. ``mha(X, need_weights=True, average_attn_weights=False)[1][b]``)."""
    if hasattr(E, "numeric") and hasattr(E, "model"):
        heads = _heads(E)
        if not heads:
            raise InputError("the evaluation has no attention matrices A_i (a symbolic-h model?)")
        return [f"head {i}: $A_{i}$" for i in heads], [np.asarray(E.numeric(f"A_{i}"), dtype=float) for i in heads]
    try:
        W = np.asarray(E, dtype=float)
    except (TypeError, ValueError):
        raise InputError("attention_heatmaps takes an Evaluation or an array of attention weights "
                         f"(h, n_q, n_kv); got {type(E).__name__}") from None
    if W.ndim == 2:
        W = W[None]
    if W.ndim != 3 or 0 in W.shape:
        raise InputError(f"attention weights must have shape (h, n_q, n_kv) or (n_q, n_kv); got {W.shape} "
                         "(pick one batch element of a batched result)")
    if not np.isfinite(W).all():
        raise InputError("the attention weights contain NaN or inf")
    return [f"head {i + 1}" for i in range(W.shape[0])], list(W)


def attention_heatmaps(E: Any, tokens: list[str] | None = None, path: Any = None,
                       key_tokens: list[str] | None = None) -> Any:
    """One heatmap per head (query tokens down, key tokens across), values written in when small.

    ``E``: an :class:`~mha_symbolic.evaluation.Evaluation` (exact, its ``A_i``) or numeric weights
    ``(h, n_q, n_kv)``.  Heads are laid out in a grid of at most :data:`GRID_COLUMNS` per row, in a figure of at
    most :data:`MAX_FIGSIZE` inches.

    >>> import numpy as np
    >>> fig = attention_heatmaps(np.full((12, 3, 5), 0.2))
    >>> fig.get_size_inches().tolist(), len([a for a in fig.axes if a.get_title()])
    ([16.0, 12.0], 12)
    """
    titles, mats = _attention_matrices(E)
    n_q, n_kv = mats[0].shape
    labels = tokens or [f"token {k + 1}" for k in range(n_q)]
    keys = key_tokens or (labels if n_kv == n_q and tokens else [f"token {k + 1}" for k in range(n_kv)])
    if len(labels) != n_q:
        raise InputError(f"{len(labels)} token labels for {n_q} query tokens")
    if len(keys) != n_kv:
        raise InputError(f"{len(keys)} key token labels for {n_kv} key tokens")
    cols = min(len(mats), GRID_COLUMNS)
    rows = -(-len(mats) // cols)
    width = min(4.4 * cols + 1.2, MAX_FIGSIZE[0])
    height = min(4.0 * rows, MAX_FIGSIZE[1])
    fig = _figure(figsize=(width, height), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False)
    flat = list(axes.ravel())
    for ax in flat[len(mats):]:
        ax.set_visible(False)
    small = n_q <= 10 and n_kv <= 10 and len(mats) <= 8
    for ax, title, A in zip(flat, titles, mats, strict=False):
        image = ax.imshow(A, vmin=0, vmax=1, cmap="viridis")
        ax.set_title(title)
        if max(n_q, n_kv) <= 32:
            ax.set_xticks(range(n_kv), keys, rotation=45, ha="right")
            ax.set_yticks(range(n_q), labels)
        ax.set_xlabel("key token")
        ax.set_ylabel("query token")
        if small:
            for r in range(n_q):
                for c in range(n_kv):
                    ax.text(c, r, f"{A[r, c]:.2f}", ha="center", va="center",
                            color="white" if A[r, c] < 0.5 else "black", fontsize=8 if max(n_q, n_kv) <= 4 else 6)
    fig.colorbar(image, ax=flat[:len(mats)], shrink=0.8, label="attention weight")
    return _save(fig, path)


def singular_value_spectra(E: Evaluation, path: Any = None, tol: float = 1e-12) -> Any:
    """Singular values of ``S_1``, ``head_1``, ``Concat``, ``Output`` with the proven rank bound marked.

    The bars are numerical (floating-point SVD, shown as a picture, not a verdict); the dashed
    line is the bound proven by :func:`~mha_symbolic.rank.rank_bound`.
    """

    from .evaluation import Evaluation

    require(E, Evaluation, "singular_value_spectra's E", "an Evaluation (model.evaluate(...))")
    from .rank import rank_bound

    model = E.model
    names = [s for s in ("S_1", "head_1", "Concat", "Output") if s in E]
    fig = _figure(figsize=(3.2 * len(names), 3.0))
    axes = fig.subplots(1, len(names), squeeze=False)
    for ax, name in zip(axes[0], names, strict=True):
        s = np.linalg.svd(E.numeric(name), compute_uv=False)
        bound = int(rank_bound(model.steps[name].expr, model.dims).bound)
        ax.bar(range(1, len(s) + 1), np.maximum(s, tol), color="tab:blue")
        ax.axvline(bound + 0.5, color="tab:red", linestyle="--", label=f"proven bound {bound}")
        ax.set_yscale("log")
        ax.set_title("$" + (r"\mathrm{" + name + "}" if name in ("Concat", "Output") else
                            name.replace("head_", r"\mathrm{head}_")) + "$")
        ax.set_xlabel("index")
        ax.set_ylabel("singular value")
        ax.legend(fontsize=7)
    fig.tight_layout()
    return _save(fig, path)


def rank_sweep_plot(results: list[Any], path: Any = None) -> Any:
    """Proven bound against certified rank for every quantity of every swept configuration."""
    require(results, (list, tuple), "rank_sweep_plot's results", "a list of SweepResult (rank_sweep())")
    fig = _figure(figsize=(4.5, 4.2))
    ax = fig.subplots()
    quantities = sorted({row.quantity for r in results for row in r.rows})
    for q in quantities:
        pts = [(row.bound, row.attained) for r in results for row in r.rows if row.quantity == q]
        ax.scatter([p[0] for p in pts], [p[1] for p in pts], label=q, s=14, alpha=0.7)
    top = max((row.bound for r in results for row in r.rows), default=1)
    ax.plot([0, top], [0, top], color="grey", linewidth=0.8, label="attained = bound")
    ax.set_xlabel("proven upper bound")
    ax.set_ylabel("certified rank of the witness")
    ax.set_title(f"rank sweep: {len(results)} configurations")
    ax.legend(fontsize=7)
    return _save(fig, path)


def scaling_variance_plot(d_ks: list[int] | None = None, samples: int = 20_000, path: Any = None,
                          seed: int = 0) -> Any:
    """Var(q.k) and Var(q.k / sqrt(d_k)) against d_k: the exact lines and Monte Carlo points."""
    require(d_ks, (list, tuple, type(None)), "scaling_variance_plot's d_ks", "a list of widths or None")
    for d in d_ks or ():
        require_int(d, "scaling_variance_plot's d_ks", 1, 1 << 16)
    require_int(samples, "scaling_variance_plot's samples", 1, 10**7)
    require(path, (str, os.PathLike, type(None)), "scaling_variance_plot's path", "a path or None")
    from .proofs import monte_carlo_variance

    d_ks = d_ks or [1, 2, 4, 8, 16, 32, 64]
    mc = [monte_carlo_variance(d, samples, seed) for d in d_ks]
    fig = _figure(figsize=(4.8, 3.6))
    ax = fig.subplots()
    ax.plot(d_ks, d_ks, color="tab:red", label=r"exact: $\mathrm{Var}(q\cdot k) = d_k$")
    ax.plot(d_ks, [1] * len(d_ks), color="tab:blue", label=r"exact: $\mathrm{Var}(q\cdot k/\sqrt{d_k}) = 1$")
    ax.scatter(d_ks, [m[0] for m in mc], color="tab:red", marker="x", label="Monte Carlo (evidence)")
    ax.scatter(d_ks, [m[1] for m in mc], color="tab:blue", marker="x")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("$d_k$")
    ax.set_ylabel("variance")
    ax.set_title(r"scaling by $1/\sqrt{d_k}$ keeps the variance at 1")
    ax.legend(fontsize=7)
    return _save(fig, path)
