"""The ``mha-symbolic`` command: composes the package's rooms, holds no mathematics.

Subcommands
===========

``shapes``    every step of the model with its definition and derived shape
``derive``    the steps of a worked example, exact and to 4 decimals
``examples``  the built-in worked examples

Every error of the package is printed as one line ``mha-symbolic: error: ...``
with exit code 2; no traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from . import __version__
from .errors import InputError, MHASymbolicError, ParseError
from .names import CONVENTIONS, DEFAULT_EXAMPLE, EXAMPLE_NAMES, LAYOUTS, MASKS, NOTATION_NAMES

# SymPy and the package's mathematics are imported by the commands that use them, so that
# `mha-symbolic --help` and argument errors answer at once

_SUBPARSERS: dict[str, argparse.ArgumentParser] = {}
MAX_WORKERS = max(4 * (os.cpu_count() or 1), 8)  # --workers beyond this only costs memory
EXACT_WIDTH = 160  # print exact entries when a matrix fits in this many characters per row


def _dimension(text: str) -> Any:
    """A dimension on the command line: a positive integer, or a name for a symbol."""
    if text.lstrip("-").isdigit():
        return int(text)
    return text


def _add_dims(p: argparse.ArgumentParser) -> None:
    p.add_argument("--n", type=_dimension, help="tokens (integer or symbol name; default symbolic n)")
    p.add_argument("--d-model", type=_dimension, help="model width (default symbolic d_model)")
    p.add_argument("--heads", type=_dimension, help="number of heads h (default symbolic h)")
    p.add_argument("--d-k", type=_dimension, help="query/key width per head (default d_model/h)")
    p.add_argument("--d-v", type=_dimension, help="value width per head (default d_model/h)")
    p.add_argument("--convention", choices=CONVENTIONS, default=None,
                   help="projection (Vaswani) or split (X cut into column blocks)")
    p.add_argument("--causal", action="store_true", help="masked softmax (j > i gets weight 0)")
    p.add_argument("--kv-heads", type=_kv_heads, default=None,
                   help="grouped-query attention: g key/value heads shared by the h query heads (an integer "
                        "dividing --heads, or a symbol name such as g with a symbolic h; 1 is multi-query)")
    p.add_argument("--cross", action="store_true",
                   help="cross-attention: queries from X (n tokens), keys and values from Y (n_kv tokens)")
    p.add_argument("--n-kv", type=_dimension, default=None,
                   help="keys/values of cross-attention (integer or symbol name; implies --cross; default n_kv)")
    p.add_argument("--mask", choices=MASKS, default=None,
                   help="key_padding (a 0/1 row m per key, 1 = attend) or additive (M added to the scores)")


def _kv_heads(text: str) -> int | str:
    """``--kv-heads``: a positive integer (at most 4096) or a symbol name."""
    value = _dimension(text)
    if isinstance(value, int):
        return _bounded_int(1, 4096)(text)
    if not value.isidentifier():
        raise argparse.ArgumentTypeError(f"expected a positive integer or a symbol name, got {text!r}")
    return value


def _model(args: argparse.Namespace) -> Any:
    from .attention import MultiHeadAttention

    return MultiHeadAttention(n=args.n, d_model=args.d_model, h=args.heads, d_k=args.d_k, d_v=args.d_v,
                              convention=args.convention or "projection", causal=args.causal,
                              kv_heads=getattr(args, "kv_heads", None), n_kv=getattr(args, "n_kv", None),
                              cross=getattr(args, "cross", False), mask=getattr(args, "mask", None))


def _dims_given(args: argparse.Namespace) -> bool:
    return any(getattr(args, k) is not None for k in ("n", "d_model", "heads", "d_k", "d_v"))


def _model_given(args: argparse.Namespace) -> bool:
    """Sizes or any model option on the command line (else ``derive`` shows the default example)."""
    return _dims_given(args) or bool(args.causal or args.convention) or any(
        getattr(args, k, None) not in (None, False) for k in ("kv_heads", "cross", "n_kv", "mask"))


def _table(rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows)


def cmd_shapes(args: argparse.Namespace) -> int:
    from ._text import shape_text

    model = _model(args)
    print(model)
    for r in model.dims.relations:
        print(f"  where {r.lhs} = {r.rhs}")
    rows = [("step", "definition", "shape")]
    rows += [(s.name, s.text, shape_text(s.shape)) for s in model.steps.values()]
    print(_table(rows))
    return 0


def _matrix_lines(M: Any, exact: bool, places: int | None = None) -> list[str]:
    from sympy import sstr

    lines = []
    exact_rows = [sstr(list(M.row(i))) for i in range(M.rows)]
    if exact and max(len(r) for r in exact_rows) <= EXACT_WIDTH:
        lines += [f"    {r}" for r in exact_rows]
    if M.free_symbols or all(x.is_Integer for x in M):
        return lines or [f"    {r}" for r in exact_rows]
    k = 4 if places is None else places
    approx = [[f"{float(x.evalf(20)):.{k}f}" for x in M.row(i)] for i in range(M.rows)]
    lines += [f"  ≈ [{', '.join(r)}]" for r in approx]
    return lines


def cmd_derive(args: argparse.Namespace) -> int:
    from ._text import shape_text
    from .derivation import write_documents
    from .examples import example

    if args.all:
        out = Path(args.out or "derivations")
        paths = write_documents(out)
        print(f"wrote {len(paths)} files to {out}")
        return 0
    if args.example is not None and _model_given(args):
        raise InputError("--example fixes the model: give either --example NAME or sizes and options "
                         "(--n, --d-model, --heads, --convention, --causal, --kv-heads, --cross, --n-kv, --mask), "
                         "not both")
    if args.format != "text" or args.plots:
        if args.format == "text":
            args.format = "md"
        return _derive_document(args)
    if _model_given(args):
        return cmd_shapes(args)
    ex = example(args.example or DEFAULT_EXAMPLE)
    model = ex.model
    print(f"Example {ex.name}: {ex.title}")
    print(f"  source: {ex.source}")
    for note in ex.chosen:
        print(f"  chosen: {note}")
    print(f"  model: {model}")
    E = ex.evaluate()
    print("\ninputs")
    for name in ("X", "W_Q", "W_K", "W_V", "W_O"):
        value = E.inputs[name]
        for k, M in enumerate(value if isinstance(value, list) else [value], start=1):
            label = f"{name}^{k}" if isinstance(value, list) else name
            print(f"  {label}  {shape_text(M.shape)}")
            print("\n".join(_matrix_lines(M, True)))
    print("\nsteps")
    for step in model.steps.values():
        print(f"  {step.text}    shape {shape_text(step.shape)}")
        print("\n".join(_matrix_lines(E[step.name], not args.decimals_only, args.decimals)))
    return 0


def _derive_document(args: argparse.Namespace) -> int:
    from .derivation import Derivation, add_plots, compile_pdf
    from .examples import example

    settings = {"notation": args.notation, "transpose": args.transpose}
    if args.example is not None or not _model_given(args):
        name = args.example or DEFAULT_EXAMPLE
        doc = Derivation.from_example(example(name), decimals=args.decimals, **settings)
    else:
        doc = Derivation.general(_model(args), **settings)
        name = "derivation"
    if args.plots:
        written = add_plots(doc, Path(args.out or "."), name,
                            example(args.example or DEFAULT_EXAMPLE) if name != "derivation" else None)
        for path in written:
            print(path, file=sys.stderr)
    text = doc.to_markdown() if args.format == "md" else doc.to_latex()
    if args.format in ("tex", "md") and args.out is None:
        print(text, end="")
        return 0
    out = Path(args.out or ".")
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.{'md' if args.format == 'md' else 'tex'}"
    path.write_text(text, encoding="utf-8")
    if args.format == "pdf":
        result = compile_pdf(path)
        if result.pdf is None or result.errors:
            print(f"mha-symbolic: error: pdflatex failed on {path}: {'; '.join(result.errors) or 'no PDF'}",
                  file=sys.stderr)
            return 1
        if result.overfull:  # a line past the margin: the document is not what was asked for
            print(f"mha-symbolic: error: {path}: {len(result.overfull)} line(s) run past the margin "
                  f"({result.overfull[0]}); the PDF is {result.pdf}", file=sys.stderr)
            return 1
        print(result.pdf)
        return 0
    print(path)
    return 0


def cmd_ranks(args: argparse.Namespace) -> int:
    from .rank import (
        low_rank_bottleneck,
        multihead_rank_comparison,
        rank_report,
        rank_sweep,
        softmax_rank_counterexample,
    )
    from .rank.sweep import text_progress

    if args.weights is not None:
        return _weight_ranks(args)
    if args.sweep:
        # the bar only on a terminal: never into a pipe, a file or a CI log
        results = rank_sweep(workers=args.workers, progress=text_progress if _interactive() and not args.json
                             else None)
        if args.json:
            print(json.dumps([{"n": r.n, "d_model": r.d_model, "h": r.h, "tight": r.tight,
                               "rows": [row.as_dict() for row in r.rows]} for r in results], indent=1))
        else:
            rows = [("n", "d_model", "h", "tight", "not attained")]
            rows += [(str(r.n), str(r.d_model), str(r.h), f"{sum(x.verdict == 'tight' for x in r.rows)}/{len(r.rows)}",
                      ", ".join(f"{x.quantity}: {x.attained}/{x.bound}" for x in r.rows if x.verdict != "tight"))
                     for r in results]
            print(_table(rows))
            print(f"{sum(r.tight for r in results)} of {len(results)} configurations attain every proven bound")
        bad = any("CONTRADICTION" in x.verdict for r in results for x in r.rows)
        return 1 if bad else 0
    if any(getattr(args, k) not in (None, False) for k in ("kv_heads", "n_kv", "mask", "causal")):
        return _variant_ranks(args)
    sizes = [args.n, args.d_model, args.heads]
    if any(s is not None for s in sizes) and not all(isinstance(s, int) for s in sizes):
        raise InputError("ranks needs concrete --n, --d-model and --heads together (or --sweep)")
    n, d, h = sizes if all(isinstance(s, int) for s in sizes) else (8, 4, 2)
    report = rank_report(n, d, h)
    claims = [softmax_rank_counterexample(), multihead_rank_comparison(), low_rank_bottleneck(3, 3),
              low_rank_bottleneck(4, 2)]
    if args.json:
        from .attention import MultiHeadAttention

        print(json.dumps({**_model_keys(MultiHeadAttention(n=n, d_model=d, h=h)), "rows": [r.as_dict() for r in report],
                          "claims": [{"statement": c.statement, "verdict": c.verdict, "kind": c.kind,
                                      "reasoning": list(c.reasoning)} for c in claims]}, indent=1, default=str))
    else:
        print(f"n={n}, d_model={d}, h={h} (witness seed {report[0].seed})")
        rows = [("quantity", "proven bound", "attained", "certificate", "verdict")]
        rows += [(r.quantity, r.bound_expr, str(r.attained), _short(r.certificate), r.verdict) for r in report]
        print(_table(rows))
        for c in claims:
            print(f"\nclaim: {c.statement}\n  verdict: {c.verdict} ({c.kind})")
            for line in c.reasoning:
                print(f"  {line}")
    return 1 if any("CONTRADICTION" in r.verdict for r in report) else 0


def _model_keys(model: Any) -> dict[str, Any]:
    """The keys every ``ranks --json`` object starts with, plain or a variant: the model, its sizes and its
    options (``null`` where an option is off)."""
    D = model.dims
    return {"model": str(model), "n": int(D.n), "d_model": int(D.d_model), "h": int(D.h),
            "kv_heads": model.kv_heads, "n_kv": int(model.n_kv) if model.cross else None, "mask": model.mask,
            "causal": model.causal}


def _variant_ranks(args: argparse.Namespace) -> int:
    """``ranks --kv-heads/--n-kv/--mask/--causal``: the variant's proven bounds and a certified witness."""
    from .attention import MultiHeadAttention
    from .rank.variants import variant_rank_bounds

    n, d, h = (8, 4, 2) if all(x is None for x in (args.n, args.d_model, args.heads)) else \
        (args.n, args.d_model, args.heads)
    if not all(isinstance(x, int) for x in (n, d, h)):
        raise InputError("ranks with --kv-heads, --n-kv, --mask or --causal needs --n, --d-model and --heads together")
    model = MultiHeadAttention(n=n, d_model=d, h=h, kv_heads=args.kv_heads, n_kv=args.n_kv, mask=args.mask,
                               causal=args.causal)
    proof = variant_rank_bounds(model)
    rows = proof.result["rows"]
    if args.json:
        print(json.dumps({**_model_keys(model), "statement": proof.statement, "verified": proof.verified,
                          "bounds": {k: str(v) for k, v in proof.result["bounds"].items()},
                          "rows": [r.as_dict() for r in rows]}, indent=1, default=str))
    else:
        print(model)
        table = [("quantity", "proven bound", "last rule", "attained", "certificate", "verdict")]
        for name, rb in proof.result["traces"].items():
            row = next((r for r in rows if r.quantity == name), None)
            table.append((name, str(rb.bound), rb.trace[-1].rule, str(row.attained) if row else "-",
                          _short(row.certificate) if row else "-", row.verdict if row else "not certified"))
        print(_table(table))
        for step in proof.steps:
            if step.text.startswith(("Tightness not certified", "No witness")):
                print(step.text)
    return 1 if any("CONTRADICTION" in r.verdict for r in rows) else 0


def _weight_ranks(args: argparse.Namespace) -> int:
    """``ranks --weights FILE``: certified ranks of every head of every (chosen) layer of a checkpoint."""
    from .rank.circuits import circuit_ranks
    from .weights import layer_numbers

    wanted = args.layers if args.layers is not None else layer_numbers(args.weights, args.layout)
    executor = None
    if args.scheduler is not None:
        from .scheduler import connect

        executor = connect(args.scheduler, args.connect_timeout)  # probed first: every wait is bounded
        args.weights = str(Path(args.weights).resolve())  # the path travels to workers started elsewhere
    X = None if args.input is None else _load_input(args.input)
    found = circuit_ranks(args.weights, layout=args.layout, layers=wanted, num_heads=args.heads,
                          X=X, n=args.input_n, seed=args.seed, executor=executor)
    if _interactive():  # one layer at a time is read from the file; the bar counts layers
        from tqdm import tqdm

        found = tqdm(found, total=len(wanted), unit="layer", leave=False, file=sys.stderr)
    try:
        layers = list(found)
    finally:
        if executor is not None:
            executor.close()
    if args.json:
        print(json.dumps({"weights": str(args.weights), "layers": [r.as_dict() for r in layers]}, indent=1))
        return 0
    rows = [("layer", "heads", "kv head of each", "d_k", "rank W_QK (exact)", "rank W_OV (exact)", "float SVD QK/OV",
             *(("logits", "Concat") if args.input_n or args.input else ()))]
    for r in layers:
        qk = sorted({h.qk_rank for h in r.heads})
        ov = sorted({h.ov_rank for h in r.heads})
        num = sorted({(h.qk_numerical, h.ov_numerical) for h in r.heads})
        extra: tuple[str, ...] = ()
        if args.input_n or args.input:
            extra = (", ".join(sorted({f"{h.logits_rank}/{h.logits_bound}" for h in r.heads})),
                     f"{r.concat_rank}/{r.concat_bound}")
        rows.append((str(r.layer), str(len(r.heads)), _kv_map(r.heads), str(r.heads[0].d_k), _ranks_text(qk),
                     _ranks_text(ov),
                     ", ".join(f"{a}/{b}" for a, b in num), *extra))
    print(_table(rows))
    heads = [h for r in layers for h in r.heads]
    print(f"{sum(h.attains_d_k for h in heads)} of {len(heads)} heads attain rank d_k in both circuits "
          "(exact ranks of the stored factors; the float SVD column is evidence only)")
    return 0


def _kv_map(heads: Any) -> str:
    """Which key/value head each query head reads, in runs: ``1-4:1 5-8:2``; ``own`` when every head has its own."""
    if all(h.kv_head == h.head for h in heads):
        return "own"
    runs: list[list[int]] = []
    for h in heads:
        if runs and runs[-1][2] == h.kv_head and runs[-1][1] == h.head - 1:
            runs[-1][1] = h.head
        else:
            runs.append([h.head, h.head, h.kv_head])
    return " ".join(f"{a}-{b}:{kv}" if a != b else f"{a}:{kv}" for a, b, kv in runs)


def _ranks_text(values: list[int]) -> str:
    return ", ".join(str(v) for v in values) if len(values) <= 4 else f"{values[0]}..{values[-1]}"


def cmd_claims(args: argparse.Namespace) -> int:
    from .claims import run_claims

    results = run_claims(source=args.source)
    if args.json:
        print(json.dumps([r.as_dict() for r in results], indent=1, ensure_ascii=False))
    else:
        rows = [("id", "source", "basis", "verdict", "why")]
        rows += [(r.claim.id, r.claim.source, r.basis, r.verdict + (f" ({r.scope})" if r.scope else ""),
                  _short(r.detail, 70)) for r in results]
        print(_table(rows))
        counts: dict[str, int] = {}
        for r in results:
            counts[r.verdict] = counts.get(r.verdict, 0) + 1
        print(", ".join(f"{verdict}: {count}" for verdict, count in sorted(counts.items())))
    return 0 if all(r.reached for r in results) else 1


def cmd_check(args: argparse.Namespace) -> int:
    from .document import check_file
    from .files import DOCUMENT_BYTES, regular_file

    fmt = "json" if args.json else args.format
    for path in args.files:  # every file named is checked before the first is read
        regular_file(path, "the document", DOCUMENT_BYTES, ParseError)
    reports = []
    budget = {"timeout": args.timeout, "memory": args.memory_mb << 20, "progress": _interactive()}
    for path in _progress(args.files, "files") if len(args.files) > 1 else args.files:
        reports.append(check_file(path, **budget))
    if fmt == "json":
        data = [r.as_dict() for r in reports]
        print(json.dumps(data[0] if len(data) == 1 else data, indent=1, ensure_ascii=False))
    else:
        print("\n\n".join(r.to_markdown() if fmt == "markdown" else r.to_table() for r in reports))
        if args.explain:
            print("\n\n".join(f"{r.file}: the evidence of each verdict\n{r.explain()}" for r in reports))
    return max(r.exit_code for r in reports)


#: the most tokens ``ranks --input`` certifies (as ``--input-n``): exact ranks of n x n logits grow as n^3
MAX_INPUT_TOKENS = 64


def _load_input(path: str) -> Any:
    """``--input X.npy``: a regular file holding an ``n x d_model`` array of real numbers with at most
    :data:`MAX_INPUT_TOKENS` rows, its header checked before the data are read."""
    import numpy as np

    from .files import regular_file

    size = regular_file(path, "--input")
    try:
        with open(path, "rb") as fh:
            version = np.lib.format.read_magic(fh)
            shape, _, dtype = (np.lib.format.read_array_header_1_0(fh) if version == (1, 0)
                               else np.lib.format.read_array_header_2_0(fh))
    except (OSError, ValueError) as e:
        raise InputError(f"--input {path}: not a readable .npy array of numbers ({e})") from None
    if dtype.kind not in "iuf" or len(shape) != 2:
        raise InputError(f"--input {path}: expected an n x d_model array of real numbers, got shape {shape} of "
                         f"dtype {dtype}")
    if shape[0] > MAX_INPUT_TOKENS:
        raise InputError(f"--input {path} has {shape[0]} tokens; at most {MAX_INPUT_TOKENS} are certified "
                         "(the same limit as --input-n)")
    if shape[0] * shape[1] * dtype.itemsize > size:
        raise InputError(f"--input {path}: its header promises {shape} of {dtype}, more than the file holds")
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise InputError(f"--input {path}: not a readable .npy array of numbers ({e})") from None


def _interactive() -> bool:
    """Progress bars only when standard error is a terminal (never in pipes, files or CI logs)."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _progress(items: Sequence[Any], unit: str) -> Any:
    if not _interactive():
        return items
    from tqdm import tqdm

    return tqdm(items, unit=unit.rstrip("s"), leave=False, file=sys.stderr)


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not 0 < value <= 86400:
        raise argparse.ArgumentTypeError(f"must be between 0 and 86400 seconds, got {text}")
    return value


def _document_seconds(text: str) -> float | str:
    return "auto" if text == "auto" else _positive_seconds(text)


def _bounded_int(low: int, high: int) -> Any:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be between {low} and {high}, got {value}")
        return value

    parse.__name__ = "integer"
    return parse


def _conflicts(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Options that cannot be used together: an argparse error naming both."""
    def given(name: str) -> bool:  # set on the command line (the default formats do not count)
        value = getattr(args, name, None)
        return value not in (None, False) and not (name == "format" and value in ("text", "table", "json"))

    pairs = {"derive": [("all", "example"), ("all", "format"), ("all", "plots"), ("all", "decimals"),
                        ("all", "decimals_only"), ("decimals_only", "format"), ("decimals_only", "plots"),
                        ("all", "n"), ("all", "d_model"), ("all", "heads"), ("all", "causal"),
                        ("all", "kv_heads"), ("all", "cross"), ("all", "n_kv"), ("all", "mask")],
             "check": [("json", "format")],
             "ranks": [("sweep", "n"), ("sweep", "d_model"), ("sweep", "heads"), ("weights", "sweep"),
                       ("scheduler", "sweep"), ("input", "input_n"),
                       ("weights", "n"), ("weights", "d_model"),
                       *[(a, b) for a in ("sweep", "weights") for b in ("kv_heads", "n_kv", "mask", "causal")]]}
    for a, b in pairs.get(args.command, []):
        if given(a) and given(b):
            flag = {"decimals_only": "decimals-only", "d_model": "d-model", "input_n": "input-n",
                    "kv_heads": "kv-heads", "n_kv": "n-kv"}
            _SUBPARSERS.get(args.command, parser).error(f"--{flag.get(a, a)} cannot be used with --{flag.get(b, b)}")


def _short(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def cmd_examples(args: argparse.Namespace) -> int:
    from .examples import EXAMPLES

    rows = [("name", "model", "title")]
    rows += [(name, f"n={ex.model.dims.n}, d_model={ex.model.dims.d_model}, h={ex.model.dims.h}, "
              f"{ex.model.convention}", ex.title) for name, ex in EXAMPLES.items()]
    print(_table(rows))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mha-symbolic",
                                     description="Symbolic math and proof explorer for multi-head attention.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("shapes", help="steps of the model with their derived shapes")
    _add_dims(p)
    p.set_defaults(func=cmd_shapes)

    p = sub.add_parser("derive", help="exact steps of a worked example (default: %s)" % DEFAULT_EXAMPLE)
    p.add_argument("--example", choices=EXAMPLE_NAMES, help="a built-in worked example")
    p.add_argument("--decimals-only", action="store_true", help="print only the 4-decimal values (text format)")
    p.add_argument("--format", choices=("text", "tex", "md", "pdf"), default="text",
                   help="text on the terminal (default), a LaTeX or Markdown document, or a PDF (needs pdflatex)")
    p.add_argument("--notation", choices=NOTATION_NAMES, default="vaswani",
                   help="weights as W_i^Q (vaswani), W_Q^i (per-head) or W_{Q1} (numbered)")
    p.add_argument("--transpose", choices=("top", "T"), default="top", help=r"K^\top or K^T")
    p.add_argument("--decimals", type=_bounded_int(0, 30), default=None,
                   help="round matrices to this many places (0 to 30)")
    p.add_argument("--out", default=None, help="directory to write the document to")
    p.add_argument("--all", action="store_true", help="write every standard document (default --out derivations)")
    p.add_argument("--plots", action="store_true",
                   help="also draw PNG pictures beside the document (needs matplotlib) and include them")
    _add_dims(p)
    p.set_defaults(func=cmd_derive)
    _SUBPARSERS["derive"] = p

    p = sub.add_parser("ranks", help="proven rank bounds vs certified ranks; counterexamples; sweeps")
    p.add_argument("--n", type=int, help="tokens (with --d-model and --heads; default 8, 4, 2)")
    p.add_argument("--d-model", type=int, help="model width")
    p.add_argument("--heads", "--num-heads", dest="heads", type=_bounded_int(1, 4096), default=None,
                   help="number of query heads h (with --weights: per layer, default from config.json beside the "
                        "file; --num-heads is the same option)")
    p.add_argument("--sweep", action="store_true", help="the default grid (n 2..64, d_model 4..64, h | d_model)")
    p.add_argument("--kv-heads", type=_bounded_int(1, 4096), default=None,
                   help="grouped-query attention: bounds and witness with g key/value heads")
    p.add_argument("--n-kv", type=_bounded_int(1, 4096), default=None,
                   help="cross-attention: bounds and witness with n_kv keys/values")
    p.add_argument("--mask", choices=MASKS, default=None, help="a key-padding or additive mask")
    p.add_argument("--causal", action="store_true", help="a causal mask")
    p.add_argument("--workers", type=_bounded_int(1, MAX_WORKERS), default=2,
                   help=f"processes for --sweep (default 2, at most {MAX_WORKERS})")
    p.add_argument("--weights", metavar="FILE", default=None,
                   help="a .safetensors checkpoint: exact ranks of every head's W_QK and W_OV (heads numbered from "
                        "1, layers from 0; rotary embeddings, QK-norm and ALiBi are not applied: the circuits are "
                        "those of the projection weights)")
    p.add_argument("--layout", choices=LAYOUTS, default=None,
                   help="how the checkpoint names its attention weights (default: detected from the keys)")
    p.add_argument("--layers", type=int, nargs="+", default=None, help="only these layers (default: all)")
    p.add_argument("--input-n", type=_bounded_int(1, MAX_INPUT_TOKENS), default=None,
                   help="also certify the logits and Concat ranks on a generated n x d_model input")
    p.add_argument("--input", metavar="X.npy", default=None,
                   help="certify the logits and Concat ranks on this n x d_model input (a NumPy .npy file of at most "
                        "64 tokens)")
    p.add_argument("--seed", type=int, default=0, help="seed of the generated input (default 0)")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="spread the layers over a Dask cluster (tcp://host:8786); each worker reads one layer by "
                        "its absolute path. Use only a scheduler you trust: results come back by pickle, so a "
                        "hostile scheduler can run code here")
    p.add_argument("--connect-timeout", type=_bounded_int(1, 600), default=5, metavar="SECONDS",
                   help="how long to wait for the Dask scheduler's handshake and for a worker (default 5)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_ranks)
    _SUBPARSERS["ranks"] = p

    p = sub.add_parser("claims", help="every registered claim of tutorials and papers, decided by the engine")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--source", default=None, help="only claims whose source contains this (e.g. 000_ or Vaswani)")
    p.set_defaults(func=cmd_claims)

    p = sub.add_parser("check", help="adjudicate every formula and number of a tutorial (Markdown/text)")
    p.add_argument("files", nargs="+", help="Markdown or plain-text files (UTF-8; mojibake is repaired)")
    p.add_argument("--json", action="store_true", help="the same as --format json")
    p.add_argument("--format", choices=("table", "markdown", "json"), default="table")
    p.add_argument("--explain", action="store_true",
                   help="after the table, each wrong or inconsistent verdict with the sizes and given values it was "
                        "judged with and the lines that bound them (JSON always holds them, as 'evidence')")
    p.add_argument("--timeout", type=_document_seconds, default="auto",
                   help="seconds for each document (default 'auto': 50 plus 0.02 per non-blank line, at most 3600); "
                        "pieces not reached are reported unchecked and the exit code is 3")
    p.add_argument("--memory-mb", type=_bounded_int(64, 1 << 20), default=1024,
                   help="memory for each document in MiB (default 1024)")
    p.set_defaults(func=cmd_check)
    _SUBPARSERS["check"] = p

    p = sub.add_parser("examples", help="list the built-in worked examples")
    p.set_defaults(func=cmd_examples)
    return parser


def _safe_output() -> None:
    """Characters the terminal's encoding lacks (``≈`` under cp1252) are replaced, never an error."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="replace")  # type: ignore[union-attr]
        except (AttributeError, ValueError):  # not a TextIOWrapper (captured in tests): nothing to do
            pass


def main(argv: Sequence[str] | None = None) -> int:
    _safe_output()
    parser = build_parser()
    args = parser.parse_args(argv)
    _conflicts(parser, args)
    try:
        return int(args.func(args))
    except MHASymbolicError as e:
        print(f"mha-symbolic: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. piped into head
        sys.stderr.close()
        return 0
    except OSError as e:  # --out onto a file, an unwritable directory, ...
        where = f": {e.filename}" if getattr(e, "filename", None) else ""
        print(f"mha-symbolic: error: {e.strerror or e}{where}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("mha-symbolic: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
