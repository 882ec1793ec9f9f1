from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from mha_symbolic import InputError, example  # noqa: E402
from mha_symbolic.cli import main  # noqa: E402
from mha_symbolic.plots import attention_heatmaps, rank_sweep_plot, scaling_variance_plot, singular_value_spectra  # noqa: E402
from mha_symbolic.rank import rank_sweep  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


def is_png(path):
    data = path.read_bytes()
    return data[:8] == PNG and len(data) > 5000


def test_attention_heatmaps(tmp_path):
    fig = attention_heatmaps(example("seed000").evaluate(), tokens=["a", "b"], path=tmp_path / "a.png")
    axes = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_title() for ax in axes] == ["head 1: $A_1$", "head 2: $A_2$"]
    assert axes[0].get_xlabel() == "key token" and axes[0].get_ylabel() == "query token"
    assert [t.get_text() for t in axes[0].get_xticklabels()] == ["a", "b"]
    assert "0.67" in [t.get_text() for t in axes[0].texts]
    assert is_png(tmp_path / "a.png")
    with pytest.raises(InputError, match="3 token labels for 2 query tokens"):
        attention_heatmaps(example("seed000").evaluate(), tokens=["a", "b", "c"])


def test_heatmaps_of_numeric_weights_in_a_capped_grid():
    # 12 heads of cross-attention weights (3 queries over 5 keys), as torch-style need_weights returns them
    W = np.random.default_rng(0).dirichlet(np.ones(5), size=(12, 3))
    fig = attention_heatmaps(W, tokens=["q1", "q2", "q3"])
    axes = [ax for ax in fig.axes if ax.get_title()]
    assert fig.get_size_inches().tolist() == [16.0, 12.0]  # 3 rows of 4, not one 54-inch row
    assert [ax.get_title() for ax in axes][:2] == ["head 1", "head 2"] and len(axes) == 12
    assert [t.get_text() for t in axes[0].get_yticklabels()] == ["q1", "q2", "q3"]
    assert [t.get_text() for t in axes[0].get_xticklabels()] == [f"token {k}" for k in range(1, 6)]
    np.testing.assert_array_equal(axes[5].images[0].get_array(), W[5])
    fig = attention_heatmaps(np.full((32, 4, 4), 0.25))
    assert fig.get_size_inches().tolist() == [16.0, 20.0]
    with pytest.raises(InputError, match=r"shape \(h, n_q, n_kv\) or \(n_q, n_kv\); got \(2, 12, 3, 5\)"):
        attention_heatmaps(np.zeros((2, 12, 3, 5)))


def test_spectra_mark_the_proven_bound(tmp_path):
    fig = singular_value_spectra(example("seed001").evaluate(), path=tmp_path / "s.png")
    legends = [ax.get_legend().get_texts()[0].get_text() for ax in fig.axes]
    assert legends == ["proven bound 2", "proven bound 2", "proven bound 4", "proven bound 4"]
    assert fig.axes[0].get_ylabel() == "singular value"
    assert is_png(tmp_path / "s.png")


def test_sweep_and_scaling_pictures(tmp_path):
    fig = rank_sweep_plot(rank_sweep([(4, 4, 2), (8, 8, 4)], workers=1), path=tmp_path / "r.png")
    assert fig.axes[0].get_xlabel() == "proven upper bound"
    assert fig.axes[0].get_title() == "rank sweep: 2 configurations"
    fig = scaling_variance_plot([1, 4, 16], samples=2000, path=tmp_path / "v.png")
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "Monte Carlo (evidence)" in labels and fig.axes[0].get_xlabel() == "$d_k$"
    assert is_png(tmp_path / "r.png") and is_png(tmp_path / "v.png")


def test_derive_with_plots(tmp_path, capsys):
    assert main(["derive", "--example", "seed003", "--format", "md", "--plots", "--out", str(tmp_path)]) == 0
    md = (tmp_path / "seed003.md").read_text(encoding="utf-8")
    assert "![Attention weights of each head](seed003-attention.png)" in md
    assert is_png(tmp_path / "seed003-attention.png") and is_png(tmp_path / "seed003-spectra.png")
    assert main(["derive", "--example", "seed003", "--format", "tex", "--plots", "--out", str(tmp_path)]) == 0
    tex = (tmp_path / "seed003.tex").read_text(encoding="utf-8")
    assert r"\usepackage{graphicx}" in tex and r"\includegraphics[width=\linewidth]{seed003-spectra.png}" in tex


def test_committed_readme_picture():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    assert is_png(root / "derivations" / "figures" / "seed001-attention.png")
    assert "derivations/figures/seed001-attention.png" in (root / "README.md").read_text(encoding="utf-8")


def test_plots_leave_matplotlibs_backend_and_pyplot_alone():
    """A plot call switched matplotlib's global backend to Agg outside Jupyter (and registered its figures with
    pyplot); figures are now made without pyplot."""
    import subprocess
    import sys

    probe = ("import matplotlib\nmatplotlib.use('svg')\nimport matplotlib.pyplot as plt\n"
             "from mha_symbolic import example\n"
             "from mha_symbolic.plots import attention_heatmaps, scaling_variance_plot\n"
             "fig = attention_heatmaps(example('seed000').evaluate())\nscaling_variance_plot(d_ks=[1, 2], samples=50)\n"
             "print(matplotlib.get_backend(), plt.get_fignums(), type(fig).__name__)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["svg", "[]", "Figure"]
