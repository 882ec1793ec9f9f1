r"""Trained attention weights from a checkpoint, in the package's layout (``X W``), without importing torch.

Explanation
===========

Checkpoints store the same four projections in different layouts.  :func:`from_state_dict` reads one of

* ``"torch"`` -- ``nn.MultiheadAttention``: ``in_proj_weight`` ``(3E, E)``, ``in_proj_bias``, ``out_proj.weight``;
* ``"bert"`` -- separate ``Linear`` layers ``attention.self.{query,key,value}`` and ``attention.output.dense``
  (weights ``(out, in)``);
* ``"gpt2"`` -- the fused ``attn.c_attn`` ``Conv1D`` (``(E, 3E)``, already ``x W``) and ``attn.c_proj``;
* ``"llama"`` -- ``self_attn.{q,k,v,o}_proj`` with possibly fewer key/value heads (grouped-query attention);
* ``"transformerlens"`` -- ``attn.W_Q`` ``[h, d_model, d_head]`` ... ``attn.W_O`` ``[h, d_head, d_model]``,

from a dict of arrays or tensors, a module with ``state_dict()``, or a ``.safetensors`` file (read lazily with
the ``safetensors`` package, one tensor at a time).  Every layer found is a :class:`LayerWeights`: per query
head ``W_Q^i`` (``d_model x d_k``), per key/value head ``W_K^j``, ``W_V^j``, and ``W_O`` (``h d_v x d_model``),
in the dtype the checkpoint stores.  A missing or mis-shaped tensor is an :class:`~mha_symbolic.errors.InputError`
naming the key, the layout and the layer.

LLaMA-style checkpoints rotate queries and keys by position (RoPE) between the projection and the product, and
some normalise them (QK-norm) or add position biases (ALiBi); none of these is applied. The weights read here
are the projections, so ``W_QK`` is the circuit at relative position 0.

Examples
========

>>> import numpy as np
>>> from mha_symbolic.weights import from_state_dict
>>> rng = np.random.default_rng(0)
>>> E = 8
>>> sd = {f"encoder.layer.0.attention.self.{r}.{p}": rng.normal(size=(E, E) if p == "weight" else E)
...       for r in ("query", "key", "value") for p in ("weight", "bias")}
>>> sd |= {"encoder.layer.0.attention.output.dense.weight": rng.normal(size=(E, E)),
...        "encoder.layer.0.attention.output.dense.bias": np.zeros(E)}
>>> [layer] = from_state_dict(sd, layout="bert", num_heads=2)
>>> layer
LayerWeights(layout='bert', layer=0, d_model=8, heads=2, kv_heads=2, d_k=4, d_v=4, dtype=float64)
>>> layer.W_Q.shape, layer.W_O.shape
((2, 8, 4), (8, 8))
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .errors import InputError, require
from .files import CONFIG_BYTES, read_limited, regular_file
from .names import LAYOUTS

__all__ = ["LayerWeights", "TensorSource", "from_state_dict", "load_weights", "LAYOUTS", "detect_layout",
           "read_config", "layer_numbers", "resolve"]

#: The tensor (suffix of its key) that marks one attention block of each layout.
ANCHORS = {
    "torch": "in_proj_weight",
    "bert": "attention.self.query.weight",
    "gpt2": "attn.c_attn.weight",
    "llama": "self_attn.q_proj.weight",
    "transformerlens": "attn.W_Q",
}


@dataclass(frozen=True, repr=False)
class LayerWeights:
    """One attention block's weights in the package's layout (``Q_i = X W_Q^i + b_Q^i``).

    ``W_Q`` ``(h, d_model, d_k)``; ``W_K``, ``W_V`` ``(g, d_model, d_k|d_v)`` with ``g`` key/value heads (``g = h``
    for multi-head attention; query head ``i`` reads key/value head ``i // (h / g)``); ``W_O`` ``(h d_v, d_model)``;
    biases ``b_Q`` ``(h, d_k)``, ``b_K``, ``b_V`` ``(g, .)``, ``b_O`` ``(d_model,)`` or ``None``.
    """

    layout: str
    layer: int
    W_Q: np.ndarray
    W_K: np.ndarray
    W_V: np.ndarray
    W_O: np.ndarray
    b_Q: np.ndarray | None = None
    b_K: np.ndarray | None = None
    b_V: np.ndarray | None = None
    b_O: np.ndarray | None = None
    name: str = ""  # the block's key prefix in the checkpoint ("encoder.layer.3.")

    @property
    def heads(self) -> int:
        return int(self.W_Q.shape[0])

    @property
    def kv_heads(self) -> int:
        return int(self.W_K.shape[0])

    @property
    def d_model(self) -> int:
        return int(self.W_Q.shape[1])

    @property
    def d_k(self) -> int:
        return int(self.W_Q.shape[2])

    @property
    def d_v(self) -> int:
        return int(self.W_V.shape[2])

    @property
    def dtype(self) -> np.dtype:
        return self.W_Q.dtype

    def kv_head(self, i: int) -> int:
        """The key/value head query head ``i`` (0-based) reads."""
        return i // (self.heads // self.kv_heads)

    def W_O_head(self, i: int) -> np.ndarray:
        """``W_O^i``: the rows of ``W_O`` that head ``i``'s output multiplies (``d_v x d_model``)."""
        return self.W_O[i * self.d_v:(i + 1) * self.d_v]

    def __repr__(self) -> str:
        return (f"LayerWeights(layout={self.layout!r}, layer={self.layer}, d_model={self.d_model}, "
                f"heads={self.heads}, kv_heads={self.kv_heads}, d_k={self.d_k}, d_v={self.d_v}, dtype={self.dtype})")


class TensorSource:
    """Named tensors read on demand: a mapping (a state_dict of arrays or tensors) or a ``.safetensors`` file."""

    def __init__(self, tensors: Mapping[str, Any] | None = None, path: str | Path | None = None):
        self._tensors = tensors
        require(path, (str, os.PathLike, type(None)), "TensorSource's path", "a path or None")
        self.path = Path(path) if path is not None else None
        self._keys: list[str]
        if self.path is not None:
            _check_header(self.path)
            self._keys = list(_safe_open(self.path).keys())
        else:
            require(tensors, Mapping, "TensorSource's tensors", "a mapping of names to tensors (or give path=)")
            assert tensors is not None  # for mypy: require refused it
            self._keys = [str(k) for k in tensors]

    def keys(self) -> list[str]:
        return self._keys

    def get(self, key: str) -> np.ndarray:
        if key not in self._keys:
            raise KeyError(key)
        if self.path is not None:
            try:
                arr = np.asarray(_safe_open(self.path).get_tensor(key))
            except (TypeError, AttributeError):  # a dtype NumPy has no type for: bfloat16 is widened to float32
                arr = _read_bfloat16(self.path, key)  # exactly, another (F8_E4M3, ...) is refused by name
            return _numpy(arr, key)
        assert self._tensors is not None
        return _numpy(self._tensors[key], key)

    def __reduce__(self) -> tuple[Any, ...]:  # a file source travels as its path (read again by a worker)
        if self.path is not None:
            return (TensorSource, (None, str(self.path)))
        return (TensorSource, (self._tensors, None))


def _read_bfloat16(path: Path, key: str) -> np.ndarray:
    """A bfloat16 tensor of a .safetensors file as float32 (exact: bfloat16 is float32's top 16 bits), read from
    the format's header (8-byte length, JSON with dtype, shape and byte offsets) without torch."""
    with open(path, "rb") as fh:
        n = int.from_bytes(fh.read(8), "little")
        header = json.loads(fh.read(n))
        info = header.get(key, {})
        if info.get("dtype") != "BF16":
            raise InputError(f"tensor {key!r} of {path} has dtype {info.get('dtype')}, which is not read (NumPy has "
                             "no such type; bfloat16, float16, float32 and float64 are): convert the checkpoint")
        start, end = info["data_offsets"]
        fh.seek(8 + n + start)
        raw = np.frombuffer(fh.read(end - start), dtype="<u2")
    return (raw.astype(np.uint32) << 16).view(np.float32).reshape(info["shape"])


def _check_header(path: Path) -> None:
    """A ``.safetensors`` file is a regular file whose header (8-byte length, then JSON) fits in it: checked
    before the library maps it (a FIFO would block, a device would be read without end)."""
    size = regular_file(path, "the weights file")
    with open(path, "rb") as fh:
        n = int.from_bytes(fh.read(8), "little")
    if size < 8 or n > size - 8 or n > _HEADER_BYTES:
        raise InputError(f"{path} is not a .safetensors file: its header claims {n} bytes, the file has {size}")


#: the largest header of a .safetensors file read (the library's own limit)
_HEADER_BYTES = 100 << 20


def _safe_open(path: Path) -> Any:
    try:
        from safetensors import safe_open
    except ImportError:
        raise InputError("reading .safetensors files needs the safetensors package: "
                         "pip install 'mha_symbolic[weights]'") from None
    try:
        return safe_open(str(path), framework="np")
    except FileNotFoundError:
        raise InputError(f"no such weights file: {path}") from None
    except Exception as e:  # the library's own error types (SafetensorError, OSError) for unreadable files
        raise InputError(f"{path} is not a readable .safetensors file: {e}") from None


def as_array(value: Any, name: str = "the array") -> np.ndarray:
    """A NumPy array from an array, nested lists or a torch tensor (detached; bfloat16 widened exactly; torch is
    never imported here).  Text and ragged rows are refused, naming ``name``."""
    if hasattr(value, "detach") and hasattr(value, "cpu"):
        value = value.detach().cpu()
        if str(getattr(value, "dtype", "")) == "torch.bfloat16":
            value = value.float()
        value = value.numpy()
    if isinstance(value, (str, bytes)):
        raise InputError(f"{name} must be an array of numbers, got a {type(value).__name__}")
    try:
        return np.asarray(value)
    except (ValueError, TypeError):
        raise InputError(f"{name} is ragged: its rows have different lengths") from None


def _numpy(value: Any, name: str) -> np.ndarray:
    """:func:`as_array`, then real and finite entries required (a checkpoint's tensors)."""
    arr = as_array(value, name)
    if arr.dtype.kind not in "iuf":
        raise InputError(f"{name} has dtype {arr.dtype}; expected real numbers")
    if not np.isfinite(arr).all():
        raise InputError(f"{name} contains NaN or inf")
    return arr


def _source(weights: Any) -> TensorSource:
    if isinstance(weights, TensorSource):
        return weights
    if isinstance(weights, (str, Path)):
        path = Path(weights)
        if path.suffix != ".safetensors":
            raise InputError(f"weights file {path} must be a .safetensors file (read without torch)")
        return TensorSource(path=path)
    if hasattr(weights, "state_dict") and callable(weights.state_dict):
        weights = weights.state_dict()
    if not isinstance(weights, Mapping):
        raise InputError(f"weights must be a state_dict (a mapping of names to arrays), a module with "
                         f"state_dict() or a .safetensors path; got {type(weights).__name__}")
    return TensorSource(weights)


def detect_layout(keys: Iterable[str]) -> str:
    """The one layout whose anchor tensor some key ends with (an error naming them if none or several)."""

    if isinstance(keys, (str, bytes)) or not isinstance(keys, Iterable):
        raise InputError(f"detect_layout's keys must be tensor names (a list of str), got {type(keys).__name__}")
    keys = list(keys)
    found = [name for name, anchor in ANCHORS.items() if any(_ends(k, anchor) for k in keys)]
    if len(found) != 1:
        what = "none of" if not found else f"several ({', '.join(found)}) of"
        raise InputError(f"cannot tell the layout: the keys match {what} the known layouts "
                         f"({', '.join(f'{n}: ...{a}' for n, a in ANCHORS.items())}); pass layout=")
    return found[0]


def _ends(key: str, anchor: str) -> bool:
    return key == anchor or key.endswith("." + anchor)


def _blocks(keys: list[str], layout: str) -> list[tuple[int, str]]:
    """(layer number, key prefix) of every attention block, by layer number."""
    anchor = ANCHORS[layout]
    prefixes = [k[: len(k) - len(anchor)] for k in keys if _ends(k, anchor)]
    if not prefixes:
        raise InputError(f"no attention block of layout {layout!r}: no key ends with {anchor!r}")
    out = []
    for position, prefix in enumerate(prefixes):
        numbers = re.findall(r"(?<![^.])(\d+)(?=\.)", prefix)  # dot-separated integers, the innermost last
        out.append((int(numbers[-1]) if numbers else position, prefix))
    if len({n for n, _ in out}) != len(out):
        # several blocks per numbered layer (a decoder's self- and cross-attention; an encoder and a decoder):
        # numbered in key order instead; each block keeps its key prefix as its name
        out = list(enumerate(sorted(prefixes)))
    return sorted(out)


def read_config(path: str | Path) -> dict[str, int]:
    """Head counts from a ``config.json`` beside a checkpoint (Hugging Face names), when it is there."""

    if not isinstance(path, (str, Path)):
        raise InputError(f"read_config's path must be a path (str or Path), got {type(path).__name__}")
    config = Path(path).with_name("config.json")
    if not config.exists():
        return {}
    try:
        data = json.loads(read_limited(config, "the configuration", CONFIG_BYTES).decode("utf-8"))
    except (OSError, ValueError) as e:
        raise InputError(f"{config} is not readable JSON: {e}") from None
    if not isinstance(data, dict):
        raise InputError(f"{config} is not a model configuration: a JSON object was expected, got "
                         f"{type(data).__name__}")
    out = {}
    for key, name in (("num_attention_heads", "num_heads"), ("n_head", "num_heads"),
                      ("num_key_value_heads", "kv_heads")):
        if isinstance(data.get(key), int):
            out[name] = data[key]
    return out


#: the command line's option for each head count of the loaders
_FLAG = {"num_heads": "heads", "kv_heads": "kv-heads"}


def checked_layers(layers: Any) -> set[int]:
    """``layers`` as a set of layer numbers: integers from 0, each checked (``'abc'``, ``0.5``, ``-1`` and a bare
    number instead of a list are errors naming the value, never a layer read by truncation)."""
    if isinstance(layers, (str, bytes)) or not isinstance(layers, Iterable):
        raise InputError(f"layers must be a list of layer numbers (from 0), got {layers!r}")
    out = set()
    for x in layers:
        if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or x < 0:
            raise InputError(f"layers must be whole numbers from 0 (a checkpoint's layers are numbered from 0), "
                             f"got {x!r}")
        out.add(int(x))
    return out


def resolve(weights: Any, layout: str | None = None, num_heads: int | None = None, kv_heads: int | None = None
            ) -> tuple[TensorSource, str, int | None, int | None]:
    """The source, its layout (detected when ``None``) and the head counts (from a ``config.json`` beside a file
    when not given), checked: what :func:`load_weights` reads a checkpoint with."""
    source = _source(weights)
    if source.path is not None:
        config = read_config(source.path)
        for label, given in (("num_heads", num_heads), ("kv_heads", kv_heads)):
            stated = config.get(label)
            if given is not None and stated is not None and given != stated:
                raise InputError(f"{label}={given} contradicts {Path(source.path).with_name('config.json')}, which "
                                 f"says {stated}; leave {label} out (on the command line, --{_FLAG[label]}) to use "
                                 "the configuration's")
        num_heads = num_heads if num_heads is not None else config.get("num_heads")
        kv_heads = kv_heads if kv_heads is not None else config.get("kv_heads")
    layout = detect_layout(source.keys()) if layout is None else layout
    if layout not in ANCHORS:
        raise InputError(f"unknown layout {layout!r}; known: {', '.join(LAYOUTS)}")
    for label, v in (("num_heads", num_heads), ("kv_heads", kv_heads)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1):
            raise InputError(f"{label} must be a positive integer, got {v!r}")
    if layout != "transformerlens" and num_heads is None:
        raise InputError(f"layout {layout!r} does not store the number of heads: pass num_heads (on the command "
                         "line, --heads), or put a config.json with num_attention_heads beside the file")
    return source, layout, num_heads, kv_heads


def load_weights(weights: Any, layout: str | None = None, layers: Iterable[int] | None = None,
                 num_heads: int | None = None, kv_heads: int | None = None) -> Iterator[LayerWeights]:
    """Every (or the chosen) attention layer of a checkpoint, one at a time (a file is read lazily).

    ``weights``: a mapping of names to arrays/tensors, a module with ``state_dict()``, or a ``.safetensors``
    path (head counts are then also read from a ``config.json`` beside it).  ``layout``: one of
    :data:`LAYOUTS`, or ``None`` to detect it from the keys.  ``num_heads`` is needed for every layout but
    ``transformerlens`` (whose arrays carry it); ``kv_heads`` is derived from the key projection's width.
    """
    source, layout, num_heads, kv_heads = resolve(weights, layout, num_heads, kv_heads)
    blocks = _blocks(source.keys(), layout)
    wanted = None if layers is None else checked_layers(layers)
    if wanted is not None:
        missing = wanted - {n for n, _ in blocks}
        if missing:
            raise InputError(f"no layer {sorted(missing)} in the checkpoint; its layers are "
                             f"{[n for n, _ in blocks]}")
    for number, prefix in blocks:
        if wanted is None or number in wanted:
            yield _READERS[layout](_Block(source, layout, number, prefix), num_heads, kv_heads)


def layer_numbers(weights: Any, layout: str | None = None) -> list[int]:
    """The layer numbers of a checkpoint's attention blocks (nothing but the key names is read)."""
    source = _source(weights)
    layout = detect_layout(source.keys()) if layout is None else layout
    if layout not in ANCHORS:
        raise InputError(f"unknown layout {layout!r}; known: {', '.join(LAYOUTS)}")
    return [n for n, _ in _blocks(source.keys(), layout)]


def from_state_dict(weights: Any, layout: str | None = None, layer: int | None = None,
                    num_heads: int | None = None, kv_heads: int | None = None) -> list[LayerWeights]:
    """The attention layers of a state_dict (or module, or ``.safetensors`` path) as a list; ``layer=`` picks one.

    See :func:`load_weights`, which yields them one at a time.
    """
    if layer is not None and (isinstance(layer, bool) or not isinstance(layer, (int, np.integer)) or layer < 0):
        raise InputError(f"layer must be a layer number (a whole number from 0), got {layer!r}")
    return list(load_weights(weights, layout, None if layer is None else [layer], num_heads, kv_heads))


class _Block:
    """The tensors of one attention block, with errors that name the key, layout and layer."""

    def __init__(self, source: TensorSource, layout: str, layer: int, prefix: str):
        self.source, self.layout, self.layer, self.prefix = source, layout, layer, prefix

    def where(self) -> str:
        return f"(layout {self.layout}, layer {self.layer})"

    def get(self, suffix: str, ndim: int, optional: bool = False) -> np.ndarray | None:
        key = self.prefix + suffix
        if key not in self.source.keys():
            if optional:
                return None
            raise InputError(f"missing tensor {key!r} {self.where()}")
        arr = self.source.get(key)
        if arr.ndim != ndim:
            raise InputError(f"tensor {key!r} has shape {arr.shape}; expected {ndim} dimensions {self.where()}")
        if arr.dtype.kind != "f":
            raise InputError(f"tensor {key!r} has dtype {arr.dtype}; expected floating point {self.where()}")
        if 0 in arr.shape:
            raise InputError(f"tensor {key!r} is empty (shape {arr.shape}) {self.where()}")
        return arr

    def need(self, arr: np.ndarray | None, suffix: str, shape: tuple[int, ...]) -> np.ndarray:
        assert arr is not None
        if arr.shape != shape:
            raise InputError(f"tensor {self.prefix + suffix!r} has shape {arr.shape}; expected {shape} {self.where()}")
        return arr


def _heads_of(W: np.ndarray, count: int, what: str, block: _Block) -> np.ndarray:
    """A ``(d_model, count * width)`` projection (``x W``) split into ``(count, d_model, width)``."""
    d_model, total = W.shape
    if total % count:
        raise InputError(f"{what} has {total} output features, not divisible by {count} heads {block.where()}")
    return np.ascontiguousarray(W.reshape(d_model, count, total // count).transpose(1, 0, 2))


def _bias_heads(b: np.ndarray | None, count: int) -> np.ndarray | None:
    return None if b is None else np.ascontiguousarray(b.reshape(count, -1))


def _layer(block: _Block, h: int, g: int | None, Wq: np.ndarray, Wk: np.ndarray, Wv: np.ndarray, Wo: np.ndarray,
           biases: tuple[np.ndarray | None, ...]) -> LayerWeights:
    """Split full ``x W`` projections (``d_model x h d_k`` ...) into heads, checking every width."""
    d_model = Wq.shape[0]
    if Wq.shape[1] % h:
        raise InputError(f"the query projection has {Wq.shape[1]} output features, not divisible by "
                         f"num_heads = {h} {block.where()}")
    dk = Wq.shape[1] // h
    if g is None:
        if Wk.shape[1] % dk:
            raise InputError(f"the key projection's {Wk.shape[1]} output features are not a multiple of "
                             f"d_k = {dk} {block.where()}")
        g = Wk.shape[1] // dk
    if h % g:
        raise InputError(f"{g} key/value heads do not divide {h} query heads {block.where()}")
    for what, W in (("key", Wk), ("value", Wv)):
        if W.shape[0] != d_model:
            raise InputError(f"the {what} projection reads {W.shape[0]} features, the query {d_model} {block.where()}")
    if Wk.shape[1] != g * dk:
        raise InputError(f"the key projection has {Wk.shape[1]} output features; expected {g} x {dk} "
                         f"{block.where()}")
    if Wv.shape[1] % g or Wo.shape != (h * (Wv.shape[1] // g), d_model):
        raise InputError(f"the output projection has shape {Wo.shape} (x W layout); expected "
                         f"({h} x d_v, {d_model}) with d_v = {Wv.shape[1]} / {g} {block.where()}")
    bq, bk, bv, bo = biases
    for what, b, width in (("query", bq, h * dk), ("key", bk, g * dk), ("value", bv, Wv.shape[1]),
                           ("output", bo, d_model)):
        if b is not None and b.shape != (width,):
            raise InputError(f"the {what} bias has shape {b.shape}; expected ({width},) {block.where()}")
    return LayerWeights(block.layout, block.layer, _heads_of(Wq, h, "the query projection", block),
                        _heads_of(Wk, g, "the key projection", block), _heads_of(Wv, g, "the value projection", block),
                        np.ascontiguousarray(Wo), _bias_heads(bq, h), _bias_heads(bk, g), _bias_heads(bv, g), bo,
                        block.prefix)


def _torch(block: _Block, h: int | None, g: int | None) -> LayerWeights:
    assert h is not None
    if block.prefix + "bias_k" in block.source.keys() or block.prefix + "bias_v" in block.source.keys():
        raise InputError(f"this block was built with add_bias_kv=True (bias_k, bias_v: an extra learned key and "
                         f"value), which the model does not include {block.where()}")
    W = block.get("in_proj_weight", 2)
    assert W is not None
    E = W.shape[1]
    W = block.need(W, "in_proj_weight", (3 * E, E))
    b = block.get("in_proj_bias", 1, optional=True)
    b = None if b is None else block.need(b, "in_proj_bias", (3 * E,))
    Wo = block.need(block.get("out_proj.weight", 2), "out_proj.weight", (E, E))
    bo = block.get("out_proj.bias", 1, optional=True)
    Wq, Wk, Wv = (W[k * E:(k + 1) * E].T for k in range(3))
    bq, bk, bv = (None if b is None else b[k * E:(k + 1) * E] for k in range(3))
    return _layer(block, h, None, Wq, Wk, Wv, Wo.T, (bq, bk, bv, bo))


def _bert(block: _Block, h: int | None, g: int | None) -> LayerWeights:
    assert h is not None
    names = ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense")
    Ws = [block.get(f"{n}.weight", 2) for n in names]
    bs = [block.get(f"{n}.bias", 1, optional=True) for n in names]
    Wq, Wk, Wv, Wo = (W.T for W in Ws if W is not None)  # Linear stores (out, in)
    return _layer(block, h, g, Wq, Wk, Wv, Wo, tuple(bs))


def _gpt2(block: _Block, h: int | None, g: int | None) -> LayerWeights:
    assert h is not None
    W = block.get("attn.c_attn.weight", 2)  # Conv1D stores (in, out): x W + b
    assert W is not None
    E = W.shape[0]
    W = block.need(W, "attn.c_attn.weight", (E, 3 * E))
    b = block.get("attn.c_attn.bias", 1, optional=True)
    b = None if b is None else block.need(b, "attn.c_attn.bias", (3 * E,))
    Wo = block.need(block.get("attn.c_proj.weight", 2), "attn.c_proj.weight", (E, E))
    bo = block.get("attn.c_proj.bias", 1, optional=True)
    Wq, Wk, Wv = (W[:, k * E:(k + 1) * E] for k in range(3))
    bq, bk, bv = (None if b is None else b[k * E:(k + 1) * E] for k in range(3))
    return _layer(block, h, None, Wq, Wk, Wv, Wo, (bq, bk, bv, bo))


def _llama(block: _Block, h: int | None, g: int | None) -> LayerWeights:
    """A LLaMA-style block's projections. Rotary position embeddings (RoPE), a QK-norm and ALiBi biases act
    between the projection and the scores; they are not applied here, so circuits built from these weights are
    those of the projections (``W_QK`` at relative position 0)."""
    assert h is not None
    names = ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj")
    Ws = [block.get(f"{n}.weight", 2) for n in names]
    bs = [block.get(f"{n}.bias", 1, optional=True) for n in names]
    Wq, Wk, Wv, Wo = (W.T for W in Ws if W is not None)
    return _layer(block, h, g, Wq, Wk, Wv, Wo, tuple(bs))


def _transformerlens(block: _Block, h: int | None, g: int | None) -> LayerWeights:
    Wq = block.get("attn.W_Q", 3)
    assert Wq is not None
    heads, d_model, dk = Wq.shape
    if h is not None and h != heads:
        raise InputError(f"attn.W_Q holds {heads} heads, num_heads = {h} {block.where()}")
    Wk = block.get("attn.W_K", 3, optional=True)
    if Wk is None:
        Wk = block.get("attn._W_K", 3)  # grouped-query attention in TransformerLens
    Wv = block.get("attn.W_V", 3, optional=True)
    if Wv is None:
        Wv = block.get("attn._W_V", 3)
    assert Wk is not None and Wv is not None
    kv = Wk.shape[0]
    Wo = block.get("attn.W_O", 3)
    assert Wo is not None
    dv = Wv.shape[2]
    Wo = block.need(Wo, "attn.W_O", (heads, dv, d_model)).reshape(heads * dv, d_model)

    def full(W: np.ndarray, count: int, width: int, name: str) -> np.ndarray:
        W = block.need(W, name, (count, d_model, width))
        return W.transpose(1, 0, 2).reshape(d_model, count * width)

    def bias(name: str, count: int, width: int) -> np.ndarray | None:
        b = block.get(name, 2, optional=True)
        if b is None:
            b = block.get(name.replace("attn.", "attn._"), 2, optional=True)
        return None if b is None else block.need(b, name, (count, width)).reshape(-1)

    bo = block.get("attn.b_O", 1, optional=True)
    return _layer(block, heads, kv, full(Wq, heads, dk, "attn.W_Q"), full(Wk, kv, dk, "attn.W_K"),
                  full(Wv, kv, dv, "attn.W_V"), Wo,
                  (bias("attn.b_Q", heads, dk), bias("attn.b_K", kv, dk), bias("attn.b_V", kv, dv), bo))


_READERS: dict[str, Callable[[_Block, int | None, int | None], LayerWeights]] = {
    "torch": _torch, "bert": _bert, "gpt2": _gpt2, "llama": _llama, "transformerlens": _transformerlens}
