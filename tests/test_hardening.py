"""Regression cases of the second reliability round: hostile or careless input at the public surfaces.

Each test failed before its fix (a wrong verdict, a bare exception, a hang or a silent wrong answer)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from mha_symbolic import MultiHeadAttention
from mha_symbolic.document import check_text
from mha_symbolic.errors import InputError, MHASymbolicError


def statuses(text: str) -> list[tuple[str, str]]:
    return [(f.latex, f.status) for f in check_text(text, isolate=False).findings]


# ----- \log is the natural logarithm --------------------------------------------------------------------------
def test_log_without_a_base_is_natural_and_a_base_is_read_as_written():
    """`$\\log(e) = 1$` and `$\\log 10 \\approx 2.303$` were `wrong` (latex2sympy reads \\log as base 10)."""
    got = statuses(r"We use $\log(e) = 1$, $\log 10 \approx 2.303$, $\ln 2 \approx 0.693$, $\log_{10} 1000 = 3$, "
                   r"$\log_2 8 = 3$, $\operatorname{log} 1 = 0$ and $\log(e) = 2$." "\n")
    assert got == [(r"\log(e) = 1", "correct"), (r"\log 10 \approx 2.303", "correct"),
                   (r"\ln 2 \approx 0.693", "correct"), (r"\log_{10} 1000 = 3", "correct"),
                   (r"\log_2 8 = 3", "correct"), (r"\operatorname{log} 1 = 0", "correct"),
                   (r"\log(e) = 2", "wrong")]


def test_a_bare_log_that_holds_in_base_2_or_10_is_not_called_wrong():
    """`\\log 8 = 3` (bits) holds in base 2: the notation has that reading too, so it is unchecked with the
    reason; a relation that holds in no base is still wrong."""
    findings = check_text(r"The entropy is $\log 8 = 3$ bits; $\log 1000 = 3$; $\log 8 = 5$." "\n",
                          isolate=False).findings
    assert [f.status for f in findings] == ["unchecked", "unchecked", "wrong"]
    assert "holds if \\log is base 2" in findings[0].message and "base 10" in findings[1].message


# ----- wrong types at public calls: the package's error, naming the parameter ----------------------------------
def _public_calls():
    from mha_symbolic import Derivation, Dims, example, stable_softmax
    from mha_symbolic.evaluation import estimate_terms, evaluate
    from mha_symbolic.plots import singular_value_spectra
    from mha_symbolic.proofs import (
        gqa_equals_repeated_kv,
        head_decomposition,
        parameter_and_flop_counts,
        two_heads_not_one,
    )
    from mha_symbolic.pytorch import from_layer
    from mha_symbolic.rank import bottleneck_theorem
    from mha_symbolic.rank.circuits import layer_ranks
    from mha_symbolic.statements import generic_instance, score_moments

    return {
        "evaluate's model": lambda bad: evaluate(bad),
        "example's name": lambda bad: example(bad),
        "Dims relations": lambda bad: Dims(relations=bad),
        "stable_softmax's x": lambda bad: stable_softmax(bad),
        "Derivation.general's model": lambda bad: Derivation.general(bad),
        "Derivation.from_example's example": lambda bad: Derivation.from_example(bad),
        "gqa_equals_repeated_kv's model": lambda bad: gqa_equals_repeated_kv(bad),
        "head_decomposition's model": lambda bad: head_decomposition(bad),
        "parameter_and_flop_counts's model": lambda bad: parameter_and_flop_counts(bad),
        "two_heads_not_one's model": lambda bad: two_heads_not_one(bad),
        "bottleneck_theorem's model": lambda bad: bottleneck_theorem(bad),
        "generic_instance's model": lambda bad: generic_instance(bad),
        "score_moments's model": lambda bad: score_moments(bad),
        "singular_value_spectra's E": lambda bad: singular_value_spectra(bad),
        "layer_ranks's w": lambda bad: layer_ranks(bad),
        "from_layer's layer": lambda bad: from_layer(bad),
        "estimate_terms's dims": lambda bad: estimate_terms(bad),
    }


@pytest.mark.parametrize("where", list(_public_calls()))
@pytest.mark.parametrize("bad", [5, {}, object()], ids=["int", "dict", "object"])
def test_a_wrong_type_is_the_packages_error_naming_the_parameter(where, bad):
    """These raised AttributeError, TypeError or IndexError from deep inside (`evaluate(None)`: "'NoneType' object
    has no attribute 'dims'")."""
    with pytest.raises(MHASymbolicError) as error:
        _public_calls()[where](bad)
    assert str(error.value).startswith(where)


def test_stable_softmax_of_nothing_and_of_a_list():
    from mha_symbolic import stable_softmax

    with pytest.raises(InputError, match="stable_softmax's x has dtype object"):
        stable_softmax(None)
    with pytest.raises(InputError, match="no entries along its last axis"):
        stable_softmax([])
    with pytest.raises(InputError, match="at least one axis"):
        stable_softmax(5)
    assert stable_softmax([[0.0, 0.0]]).tolist() == [[0.5, 0.5]]


def test_lambdify_with_no_heads_names_the_weights():
    """`MultiHeadAttention().lambdify()(X, [], [], [], W_O)` was a bare IndexError."""
    f = MultiHeadAttention().lambdify()
    with pytest.raises(InputError, match=r"W_Q has no heads: give one matrix per head"):
        f(np.ones((8, 4)), [], [], [], np.ones((4, 4)))
    with pytest.raises(InputError, match=r"W_K has no heads"):
        f(np.ones((8, 4)), np.ones((2, 4, 2)), np.ones((0, 4, 2)), np.ones((2, 4, 2)), np.ones((4, 4)))


# ----- a document costs time linear in its length; one not checked to its end never passes as clean ---------------
def _paragraph(lines: int, planted_at: int | None = None) -> str:
    rows = []
    for k in range(lines):
        a, b = 2 + k % 89, 3 + k % 71
        rows.append(f"Step {k}: we have ${a} \\times {b} = {a * b + (k == planted_at)}$ and")
    return "\n".join(rows) + "\n"


def test_reading_a_paragraph_is_linear_in_its_length(monkeypatch):
    """A paragraph of n statements normalised its whole text for every statement (1,000 formula lines: 761 judged
    in 51 s). Counted in characters normalised, not timed: 4x the lines must cost about 4x the work."""
    from mha_symbolic.check import normalise as normalise_module
    from mha_symbolic.check import prose

    work = [0]
    real = normalise_module.normalise

    def counting(text: str, *args, **kwargs):
        work[0] += len(text)
        return real(text, *args, **kwargs)

    monkeypatch.setattr(prose, "normalise", counting)
    costs = []
    for lines in (100, 400):
        prose._plain.cache_clear()
        work[0] = 0
        report = check_text(_paragraph(lines), isolate=False, timeout=None)
        assert report.counts()["correct"] == lines and report.exit_code == 0
        costs.append(work[0])
    assert costs[1] <= 5 * costs[0], costs  # linear: 4x (quadratic was 16x)


def test_every_piece_of_a_long_sentence_sees_a_bounded_clause():
    from mha_symbolic.check.extract import _LONGEST_CLAUSE, extract

    pieces = [p for p in extract(_paragraph(600), "a.md") if p.kind == "math"]
    assert len(pieces) == 600
    assert max(len(p.clause) for p in pieces) <= _LONGEST_CLAUSE + 200
    assert all(p.text in p.clause for p in pieces)


def test_a_document_not_checked_to_its_end_exits_3_and_says_so(monkeypatch):
    """A 10^5-formula document judged 22 formulas and exited 0: a planted error after the budget passed as clean.
    The clock is injected (each reading one second later), so the budget runs out after a fixed number of pieces."""
    from mha_symbolic import budget as budget_module

    class Stepping:
        now = 0.0

        def __call__(self) -> float:
            self.now += 1.0
            return self.now

    monkeypatch.setattr(budget_module, "clock", Stepping())
    report = check_text(_paragraph(40, planted_at=39), isolate=False, timeout=10)
    assert report.stopped.startswith("the document's time budget of 10 s ran out at line")
    assert report.exit_code == 3 and report.counts()["wrong"] == 0
    assert "NOT CHECKED TO THE END" in report.to_table().splitlines()[1]
    assert report.as_dict()["stopped"] == report.stopped
    whole = check_text(_paragraph(40, planted_at=39), isolate=False, timeout=None)
    assert whole.stopped == "" and whole.exit_code == 1  # with the time, the planted error is found


# ----- bounded reads: regular files only, sizes checked before reading ---------------------------------------
@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="POSIX FIFOs")
def test_documents_that_are_not_regular_files_are_refused_without_reading(tmp_path, monkeypatch):
    """A FIFO named doc.md hung check_file; /dev/zero was read to a MemoryError (3.7 GB)."""
    import os

    from mha_symbolic import check_file, files
    from mha_symbolic.errors import ParseError

    fifo = tmp_path / "doc.md"
    os.mkfifo(fifo)
    for path, kind in ((fifo, r"a FIFO \(named pipe\)"), ("/dev/zero", "a character device"),
                       (tmp_path, "a directory")):
        with pytest.raises(ParseError, match=f"is {kind}, not a regular file"):
            check_file(str(path))
    big = tmp_path / "big.md"
    big.write_text("$1 + 1 = 2$\n" * 20)
    monkeypatch.setattr(files, "DOCUMENT_BYTES", 100)
    monkeypatch.setattr("mha_symbolic.document.DOCUMENT_BYTES", 100)
    with pytest.raises(ParseError, match=r"is 240 bytes; the limit is 100 bytes"):
        check_file(str(big))


def test_json_that_is_not_a_notebook_is_an_error(tmp_path):
    """`{"a": 1}` named .ipynb exited 0 with no finding and no message."""
    from mha_symbolic import check_file
    from mha_symbolic.cli import main
    from mha_symbolic.errors import ParseError

    for content, got in (('{"a": 1}', "an object with keys a"), ("[1, 2]", "a JSON list")):
        path = tmp_path / "x.ipynb"
        path.write_text(content)
        with pytest.raises(ParseError, match=f"not a notebook: valid JSON, but {got} and no list of cells"):
            check_file(str(path))
        assert main(["check", str(path)]) == 2
    path.write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    assert check_file(str(path)).findings == []  # an empty notebook is a notebook


# ----- checkpoints: every malformed case names the tensor or the value ------------------------------------------
def _bert_layer(shape=(4, 4), dtype=np.float32) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {f"encoder.layer.0.attention.{m}.weight": rng.normal(size=shape).astype(dtype)
            for m in ("self.query", "self.key", "self.value", "output.dense")}


def test_checkpoint_tensors_that_are_empty_or_of_an_unread_dtype(tmp_path):
    """A zero-size tensor was a ZeroDivisionError; an F8 tensor an AttributeError."""
    import json
    import struct

    pytest.importorskip("safetensors")
    from safetensors.numpy import save_file

    from mha_symbolic.rank.circuits import circuit_ranks

    save_file(_bert_layer((0, 0)), str(tmp_path / "zero.safetensors"))
    with pytest.raises(InputError, match=r"tensor 'encoder.layer.0.attention.self.query.weight' is empty "
                                         r"\(shape \(0, 0\)\) \(layout bert, layer 0\)"):
        list(circuit_ranks(str(tmp_path / "zero.safetensors"), num_heads=2))
    header, data = {}, b""
    for key in _bert_layer():
        header[key] = {"dtype": "F8_E4M3", "shape": [4, 4], "data_offsets": [len(data), len(data) + 16]}
        data += bytes(16)
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    (tmp_path / "f8.safetensors").write_bytes(struct.pack("<Q", len(raw)) + raw + data)
    with pytest.raises(InputError, match=r"has dtype F8_E4M3, which is not read"):
        list(circuit_ranks(str(tmp_path / "f8.safetensors"), num_heads=2))


def test_layer_numbers_are_checked(tmp_path):
    """`layer='abc'` was a bare ValueError, and `layer=0.5` read layer 0."""
    from mha_symbolic.weights import from_state_dict, load_weights

    sd = _bert_layer()
    for bad in ("abc", 0.5, -1, True):
        with pytest.raises(InputError, match=f"layer must be a layer number .*got {bad!r}"):
            from_state_dict(sd, num_heads=2, layer=bad)
        with pytest.raises(InputError, match=f"layers must be whole numbers from 0 .*got {bad!r}"):
            list(load_weights(sd, num_heads=2, layers=[bad]))
    with pytest.raises(InputError, match="layers must be a list of layer numbers"):
        list(load_weights(sd, num_heads=2, layers=0))
    assert [w.layer for w in from_state_dict(sd, num_heads=2, layer=0)] == [0]


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="POSIX FIFOs")
def test_weights_and_inputs_that_are_not_regular_files_or_lie_about_their_size(tmp_path):
    """A FIFO named .safetensors, or given as --input, hung; a .npy header with a huge shape was a memory
    traceback; --input had no token limit (4,096 tokens ran past 120 s)."""
    import os

    pytest.importorskip("safetensors")
    from safetensors.numpy import save_file

    from mha_symbolic.cli import _load_input
    from mha_symbolic.weights import load_weights

    os.mkfifo(tmp_path / "w.safetensors")
    with pytest.raises(InputError, match="is a FIFO"):
        list(load_weights(str(tmp_path / "w.safetensors"), num_heads=2))
    (tmp_path / "lie.safetensors").write_bytes((10**9).to_bytes(8, "little") + b"{}")
    with pytest.raises(InputError, match=r"its header claims 1000000000 bytes, the file has 10"):
        list(load_weights(str(tmp_path / "lie.safetensors"), num_heads=2))
    save_file(_bert_layer(), str(tmp_path / "ok.safetensors"))
    assert len(list(load_weights(str(tmp_path / "ok.safetensors"), num_heads=2))) == 1
    os.mkfifo(tmp_path / "x.npy")
    with pytest.raises(InputError, match="--input .* is a FIFO"):
        _load_input(str(tmp_path / "x.npy"))
    np.save(tmp_path / "many.npy", np.ones((65, 4)))
    with pytest.raises(InputError, match="has 65 tokens; at most 64 are certified"):
        _load_input(str(tmp_path / "many.npy"))
    np.save(tmp_path / "ok.npy", np.ones((3, 4)))
    assert _load_input(str(tmp_path / "ok.npy")).shape == (3, 4)
    raw = (tmp_path / "ok.npy").read_bytes().replace(b"(3, 4)", b"(9, 4)")  # the header promises 9 rows
    (tmp_path / "short.npy").write_bytes(raw)
    with pytest.raises(InputError, match="more than the file holds"):
        _load_input(str(tmp_path / "short.npy"))


def test_exact_ranks_of_a_layer_run_on_one_blas_thread(monkeypatch):
    """`ranks --weights` spent 10x the CPU it needed on two OpenBLAS threads for small factorisations."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from mha_symbolic.rank import circuits as circuits_module
    from mha_symbolic.weights import from_state_dict

    seen: list[int] = []
    real = circuits_module.circuits

    def recording(w):
        seen.extend(i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas")
        return real(w)

    monkeypatch.setattr(circuits_module, "circuits", recording)
    [w] = from_state_dict(_bert_layer((8, 8)), num_heads=2)
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        before = [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
        ranks = circuits_module.layer_ranks(w)
        after = [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
    assert [h.qk_rank for h in ranks.heads] == [4, 4]
    assert seen and set(seen) == {1} and after == before  # one thread inside, the caller's setting restored


# ----- the masked forward pass checks what the plain path checks, and is chunked --------------------------------
def _torch_like(h: int = 2, E: int = 4):
    from mha_symbolic.pytorch import from_pytorch

    rng = np.random.default_rng(1)
    return from_pytorch(rng.normal(size=(3 * E, E)), rng.normal(size=3 * E), rng.normal(size=(E, E)),
                        rng.normal(size=E), num_heads=h)


def _reference(m, X, mask_add=None):
    """Plain NumPy multi-head attention (batch, n, E), torch's conventions, with an additive (n_q, n_kv) mask."""
    w = m.weights
    Q = np.einsum("bne,hed->bhnd", X, w["W_Q"]) + w["b_Q"][None, :, None, :]
    K = np.einsum("bne,hed->bhnd", X, w["W_K"]) + w["b_K"][None, :, None, :]
    V = np.einsum("bne,hed->bhnd", X, w["W_V"]) + w["b_V"][None, :, None, :]
    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]) + (0 if mask_add is None else mask_add)
    A = np.exp(S - S.max(-1, keepdims=True))
    A /= A.sum(-1, keepdims=True)
    heads = np.swapaxes(A @ V, 1, 2).reshape(X.shape[0], X.shape[1], -1)
    return heads @ w["W_O"] + w["b_O"], A


def test_masked_pass_refuses_what_the_plain_path_refuses():
    """NaN/inf input, a +inf mask entry and overflow returned NaN silently on the masked path."""
    m = _torch_like()
    X = np.ones((1, 3, 4))
    bad = X.copy()
    bad[0, 1, 2] = np.nan
    with pytest.raises(InputError, match=r"X contains NaN or inf \(first at index \(0, 1, 2\)\)"):
        m(bad, need_weights=True)
    with pytest.raises(InputError, match=r"key contains NaN or inf"):
        m(X, key=np.full((1, 3, 4), np.inf), value=X)
    with pytest.raises(InputError, match=r"attn_mask contains \+inf"):
        m(X, attn_mask=np.array([[0.0, np.inf, 0.0]] * 3))
    with pytest.raises(InputError, match="overflow"):
        m(np.full((1, 3, 4), 1e200), need_weights=True)


def test_masked_pass_agrees_with_a_plain_reference_in_chunks(monkeypatch):
    from mha_symbolic import pytorch

    m = _torch_like()
    rng = np.random.default_rng(2)
    X = rng.normal(size=(3, 5, 4))
    mask = np.triu(np.full((5, 5), -np.inf), k=1) + rng.normal(size=(5, 5))
    expected, A = _reference(m, X, mask)
    monkeypatch.setattr(pytorch, "CHUNK_ENTRIES", 2 * 5 * 2)  # two query rows at a time
    out, weights = m(X, attn_mask=mask, need_weights=True, average_attn_weights=False)
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(weights, A, rtol=1e-12, atol=1e-12)
    kp = np.array([[False, False, True, False, True]] * 3)
    out2 = m(X, key_padding_mask=kp, causal=True)
    ref2, _ = _reference(m, X, np.where(kp[:, None, None, :], -np.inf, 0) + np.triu(np.full((5, 5), -np.inf), k=1))
    np.testing.assert_allclose(out2, ref2, rtol=1e-12, atol=1e-12)


def test_an_empty_batch_with_weights_is_empty():
    """A batch of 0 with need_weights was a bare ValueError (a reshape of size 0)."""
    out, weights = _torch_like()(np.ones((0, 3, 4)), need_weights=True)
    assert out.shape == (0, 3, 4) and weights.shape == (0, 3, 3)


# ----- Dask: every wait bounded, other protocols refused, the trust said ----------------------------------------
def test_a_scheduler_address_is_probed_within_its_timeout(tmp_path, capsys):
    """A port that accepts and never answers, an HTTP server and a cluster with no workers hung `ranks --scheduler`
    for ever; ucx:// and tls:// were a TypeError traceback. Each is now one line, within --connect-timeout."""
    import http.server
    import socket
    import threading

    from mha_symbolic.cli import main
    from mha_symbolic.scheduler import probe

    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(1)
    web = http.server.HTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    try:
        for port in (silent.getsockname()[1], web.server_address[1]):
            with pytest.raises(InputError, match=r"no Dask scheduler answered within 0.5 s"):
                probe(f"tcp://127.0.0.1:{port}", 0.5)
    finally:
        web.shutdown()
        silent.close()
    for address, message in (("ucx://10.0.0.1:13337", "only tcp:// addresses are supported (got ucx://)"),
                             ("tls://10.0.0.1:8786", "only tcp:// addresses are supported (got tls://)"),
                             ("tcp://host", "expected tcp://host:port")):
        with pytest.raises(InputError, match=re.escape(message)):
            probe(address, 0.5)
    pytest.importorskip("distributed")
    pytest.importorskip("safetensors")
    from safetensors.numpy import save_file

    save_file(_bert_layer(), str(tmp_path / "m.safetensors"))
    assert main(["ranks", "--weights", str(tmp_path / "m.safetensors"), "--heads", "2", "--scheduler",
                 "ucx://h:1"]) == 2
    assert "only tcp:// addresses" in capsys.readouterr().err


def test_a_scheduler_with_no_worker_is_an_error_and_paths_travel_absolute(tmp_path, monkeypatch):
    distributed = pytest.importorskip("distributed")
    pytest.importorskip("safetensors")
    from safetensors.numpy import save_file

    from mha_symbolic.scheduler import connect

    with distributed.LocalCluster(n_workers=0, processes=False, protocol="tcp://", dashboard_address=None) as empty:
        with pytest.raises(InputError, match=r"the scheduler has no worker \(none joined within 1 s\)"):
            connect(empty.scheduler_address, 1)
    save_file(_bert_layer(), str(tmp_path / "m.safetensors"))
    monkeypatch.chdir(tmp_path)
    from mha_symbolic import cli

    sent: list[str] = []
    import mha_symbolic.rank.circuits as rc

    original = rc.circuit_ranks

    def spy(weights, **kwargs):
        sent.append(weights)
        return original(weights, **{**kwargs, "executor": None})

    monkeypatch.setattr(rc, "circuit_ranks", spy)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp://",
                                  dashboard_address=None) as cluster:
        assert cli.main(["ranks", "--weights", "m.safetensors", "--heads", "2", "--json",
                         "--scheduler", cluster.scheduler_address]) == 0
    assert sent == [str(tmp_path / "m.safetensors")]


# ----- notebooks: a printed output that contradicts its code is flagged once ------------------------------------
def test_a_printed_output_that_contradicts_its_code_is_one_wrong_finding():
    """`print(8 // 2)` shown as `5` is wrong, judged by the code's trace (never run); the reader of printed values
    by name judged the same output a second time."""
    import json

    def cell(source: str, printed: str) -> dict:
        return {"cell_type": "code", "execution_count": 1, "metadata": {}, "source": source,
                "outputs": [{"output_type": "stream", "name": "stdout", "text": printed}]}

    nb = {"cells": [cell("print(8 // 2)", "5\n"), cell("d_model = 512\nh = 8\nprint(d_model // h)", "65\n"),
                    cell("print(2 + 2)", "4\n")], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    findings = check_text(json.dumps(nb), name="a.ipynb", isolate=False).findings
    outputs = [(f.cell, f.status, f.message) for f in findings if f.output]
    assert outputs == [(0, "wrong", "the code prints 4 here, not 5"), (1, "wrong", "the code prints 64 here, not 65"),
                       (2, "correct", "what the code above prints (traced, at the precision printed)")]


def test_source_segments_of_code_are_read_without_resplitting_the_source():
    """`ast.get_source_segment` split the whole block at every call: 10^4 code lines cost minutes (quadratic).
    The package's segment is the same text, from lines split once per block."""
    import ast

    from mha_symbolic.check._statements import _segment, _source_lines

    sources = ["x = 1\ny = [1,\n  2]  # é\r\nz = 'ü' + 'a'\n\nif x:\n    w = (3 +\n 4)\n",
               "a=1\rb = a * 2\n", "W_Q = [[1, 0],\n       [0, 1]]\nprint(W_Q)"]
    for src in sources:
        nodes = [n for n in ast.walk(ast.parse(src)) if getattr(n, "end_lineno", None) is not None]
        assert [_segment(src, n) for n in nodes] == [ast.get_source_segment(src, n) or "" for n in nodes]
    _source_lines.cache_clear()
    big = "\n".join(f"x{k} = {k} * 2" for k in range(2000))
    nodes = [n for n in ast.walk(ast.parse(big)) if isinstance(n, ast.Assign)]
    assert [_segment(big, n) for n in nodes[:3]] == ["x0 = 0 * 2", "x1 = 1 * 2", "x2 = 2 * 2"]
    assert len({_segment(big, n) for n in nodes}) == 2000
    assert _source_lines.cache_info().misses == 1  # split once for 2,000 segments


# ----- a name given a value again: the document's own model, not a claim -------------------------------------------
def test_a_name_given_a_literal_again_starts_another_example_or_is_not_judged():
    """`s = (1, 2, 3)` in one paragraph and `s = (1, 1, 3)` in a later one were compared (wrong): a name given a
    literal value again elsewhere starts another example; in the same paragraph it is an alternative or a slip."""
    got = check_text("Take $s = (1, 2, 3)$.\nThen $s = (1, 2, 4)$ is the same row.\n\nLater $s = (0, 0, 1)$.\n",
                     isolate=False).findings
    assert [(f.line, f.status) for f in got] == [(1, "given"), (2, "unchecked"), (4, "given")]
    assert got[1].message.startswith("s was given other values on line 1 of this paragraph")
    assert got[2].message.startswith("another example: s given again (1 x 3; it was 1 x 3, line 1)")


def test_a_batched_shape_is_not_read_as_its_first_two_sizes():
    """`$QK^T$ has shape $(2, 12, 128, 128)$` was read as 2 x 12 and called wrong."""
    got = check_text("We use $n = 4$ tokens, $d_{model} = 8$ and $h = 2$ heads.\n\n"
                     "The score tensor $QK^\\top$ has shape $(2, 2, 4, 4)$, i.e. $64$ entries.\n\n"
                     "$QK^T$ has shape $(4, 5)$.\n", isolate=False).findings
    assert not [f for f in got if f.line == 3 and f.status == "wrong"]
    assert [(f.line, f.status) for f in got if f.line == 5] == [(5, "wrong")]


def test_a_code_assignment_rebinds_a_size_in_program_order():
    """`n = 10` in a later code cell (after `n = 6`) was judged wrong: an assignment binds, a printed value claims."""
    import json

    def cell(source: str, printed: str) -> dict:
        return {"cell_type": "code", "execution_count": 1, "metadata": {}, "source": source,
                "outputs": [{"output_type": "stream", "name": "stdout", "text": printed}]}

    nb = {"cells": [cell("n = 6\nprint(n * n)", "36\n"), cell("n = 10\nprint(n * n)", "100\n"),
                    {"cell_type": "markdown", "metadata": {}, "source": "With $n = 10$ there are $100$ scores."}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    got = check_text(json.dumps(nb), name="a.ipynb", isolate=False).findings
    assert [(f.cell, f.status) for f in got if not f.output] == [(0, "given"), (1, "given"), (2, "given")]
    assert "the code sets n = 10 again (it was 6)" in got[2].message


@pytest.mark.parametrize("bad", ["x", 2.5, True, 0, 10**9, None], ids=["str", "float", "bool", "zero", "huge", "none"])
def test_counts_given_to_the_proofs_are_checked(bad):
    """A count of a proof or a rank claim that is not a whole number in range was Python's TypeError from range()
    (or, for a huge one, work without end)."""
    from mha_symbolic.proofs import (
        head_permutation_invariance,
        monte_carlo_variance,
        permutation_equivariance,
        softmax_jacobian,
        softmax_shift_invariance,
        split_equals_projection,
        sqrt_dk_scaling,
    )
    from mha_symbolic.rank import multihead_rank_comparison

    calls = {"head_permutation_invariance's h": lambda: head_permutation_invariance(bad),
             "monte_carlo_variance's d_k": lambda: monte_carlo_variance(bad),
             "permutation_equivariance's n": lambda: permutation_equivariance(bad),
             "softmax_shift_invariance's max_n": lambda: softmax_shift_invariance(bad),
             "softmax_jacobian's sizes": lambda: softmax_jacobian((2, bad)),
             "split_equals_projection's max_h": lambda: split_equals_projection(bad),
             "sqrt_dk_scaling's full_check_up_to": lambda: sqrt_dk_scaling(bad),
             "multihead_rank_comparison's n": lambda: multihead_rank_comparison(bad)}
    for where, call in calls.items():
        with pytest.raises(InputError, match=re.escape(where) + " must be a whole number from"):
            call()


def _more_public_calls():
    from mha_symbolic.budget import Deadline
    from mha_symbolic.claims import run_claims
    from mha_symbolic.latex import escape_text, prose_latex, prose_markdown, statement_markdown
    from mha_symbolic.notebooks import build_notebook, execute_notebook
    from mha_symbolic.parse import too_large
    from mha_symbolic.plots import rank_sweep_plot, scaling_variance_plot
    from mha_symbolic.weights import detect_layout, read_config

    return {"escape_text's s": escape_text, "prose_latex's text": prose_latex,
            "prose_markdown's text": prose_markdown, "statement_markdown's text": statement_markdown,
            "too_large's tex": too_large, "detect_layout's keys": detect_layout, "read_config's path": read_config,
            "run_claims' claims": run_claims, "rank_sweep_plot's results": rank_sweep_plot,
            "scaling_variance_plot's d_ks": scaling_variance_plot, "build_notebook's cells": build_notebook,
            "execute_notebook's nb": execute_notebook, "Budget: seconds": Deadline}


@pytest.mark.parametrize("where", list(_more_public_calls()))
def test_more_wrong_types_are_the_packages_error(where):
    """Each was an AttributeError or TypeError from inside (the wrong-type sweep of 157 public callables)."""
    with pytest.raises(MHASymbolicError) as error:
        _more_public_calls()[where](object())
    assert str(error.value).startswith(where)


def test_a_truth_value_is_not_put_in_a_matrix_as_a_number():
    """A side that evaluates to a truth value was wrapped in a Matrix (SymPy's deprecation of non-Expr entries,
    seen under the document fuzz); it is now the package's error, which the piece turns into `unchecked`."""
    import warnings

    from sympy import Eq, Integer

    from mha_symbolic.check.model import DocumentModel
    from mha_symbolic.check.numbers import _value

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(MHASymbolicError, match="is not a value"):
            _value(DocumentModel(), Eq(Integer(1), Integer(1), evaluate=False))
        assert _value(DocumentModel(), Integer(3) / 4).tolist() == [[Integer(3) / 4]]


# ----- a long code block is judged in full: names read by kind, sides read once ----------------------------------
def _code_block(assignments: int, planted: bool) -> str:
    lines = ["One head: $n = 2$ tokens, $d_{model} = 2$, $h = 1$.", "", "```python", "import numpy as np"]
    lines += [f"x{k} = {k} * 2" if k % 2 else f"a{k} = {k} + n" for k in range(assignments)]
    lines += ["X = [[1, 0], [0, 1]]", "W_Q = [[1, 2], [3, 4]]", f"Q = [[1, 2], [3, {5 if planted else 4}]]", "```"]
    return "\n".join(lines) + "\n"


def test_ten_thousand_code_assignments_are_judged_to_the_end_and_a_planted_error_is_found():
    """10^4 code assignments ran past the budget and exited 3 (each line was compared with the model's X or A_k by
    its name and read through the LaTeX grammar).  A number given to a matrix's name is another variable; the
    planted error after them is found.  Counted in grammar parses, not timed."""
    from mha_symbolic.parse import latex as latex_module

    latex_module._latex2sympy_memo.cache_clear()
    report = check_text(_code_block(10_000, planted=True), isolate=False, timeout=None)
    assert report.stopped == "" and report.exit_code == 1
    assert [(f.latex, f.status) for f in report.findings if f.status != "given"] == \
        [("Q = [[1, 2], [3, 5]]", "wrong")]
    assert latex_module._latex2sympy_memo.cache_info().misses < 20  # not one parse per line
    clean = check_text(_code_block(10, planted=False), isolate=False)
    assert [(f.latex, f.status) for f in clean.findings if f.status != "given"] == \
        [("Q = [[1, 2], [3, 4]]", "correct")]


def test_a_number_given_to_a_matrixs_name_in_code_is_not_the_models_matrix():
    """`a0 = 2 * d_k` and `x5 = 10` were compared with the model's A_1 and X and called wrong."""
    got = check_text("We use $n = 4$, $d_{model} = 8$ and $h = 2$.\n\n```python\nd_k = 4\na0 = 2 * d_k\nx5 = 10\n"
                     "weights1 = 0.5\n```\n", isolate=False).findings
    assert [f.status for f in got if f.status not in ("given", "correct")] == []


def test_bare_per_head_code_names_are_head_ones_only_when_the_model_has_one_head():
    one = check_text("$n = 2$, $d_{model} = 2$, $h = 1$.\n\n```python\nX = [[1, 0], [0, 1]]\n"
                     "W_Q = [[1, 2], [3, 4]]\nQ = [[1, 2], [3, 5]]\n```\n", isolate=False).findings
    assert [(f.latex, f.status) for f in one if f.status == "wrong"] == [("Q = [[1, 2], [3, 5]]", "wrong")]
    two = check_text("$n = 2$, $d_{model} = 2$, $h = 2$.\n\n```python\nX = [[1, 0], [0, 1]]\n"
                     "W_Q = [[1], [3]]\nQ = [[1, 2], [3, 5]]\n```\n", isolate=False).findings
    assert [f.status for f in two if f.status in ("wrong", "inconsistent")] == []


def test_a_remembered_reading_is_not_shared_mutably():
    """The grammar's reading of a short formula is remembered per process; a matrix it returns is a copy."""
    from mha_symbolic.parse import latex as latex_module
    from mha_symbolic.parse.latex import SymbolTable, read_expression

    latex_module._latex2sympy_memo.cache_clear()
    first = read_expression(r"\begin{bmatrix} 1 & 2 \\ 3 & 4 \end{bmatrix}", SymbolTable(), strict=False)
    first[0, 0] = 99
    again = read_expression(r"\begin{bmatrix} 1 & 2 \\ 3 & 4 \end{bmatrix}", SymbolTable(), strict=False)
    assert again.tolist() == [[1, 2], [3, 4]]
    info = latex_module._latex2sympy_memo.cache_info()
    assert (info.hits, info.misses) == (1, 1)


def test_the_default_budget_grows_with_the_document(monkeypatch):
    """Every document had 50 s: a long one stopped early (exit 3) however little each line cost.  The default
    is now 50 s plus 0.02 s per non-blank line, at most an hour; a number given is used as it is."""
    from mha_symbolic import document as document_module

    seen = []
    real = document_module.Deadline

    def recording(seconds):
        seen.append(seconds)
        return real(seconds)

    monkeypatch.setattr(document_module, "Deadline", recording)
    text = _paragraph(400)
    check_text(text, isolate=False)
    check_text(text, isolate=False, timeout=7)
    assert seen == [pytest.approx(50 + 0.02 * 400), 7]
    assert document_module.document_seconds("\n\n  \n") == 50.0
    with pytest.raises(InputError, match="timeout must be a number of seconds, None or 'auto', got 'soon'"):
        check_text(text, timeout="soon")


def test_the_check_commands_timeout_is_auto_or_seconds(capsys):
    from mha_symbolic.cli import build_parser

    parser = build_parser()
    assert parser.parse_args(["check", "a.md"]).timeout == "auto"
    assert parser.parse_args(["check", "a.md", "--timeout", "12.5"]).timeout == 12.5
    with pytest.raises(SystemExit):
        parser.parse_args(["check", "a.md", "--timeout", "never"])
    assert "expected a number of seconds, got 'never'" in capsys.readouterr().err
