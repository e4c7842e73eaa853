"""``pyasc demo``: compile every example operator and run it on real all-MiniLM-L6-v2 data.

For each example case and dtype (float32, float16, bfloat16) the demo compiles the operator with
``pyasc_mlir.compile``, runs the CPU build of the emitted Ascend C and the IR interpreter on the
final (ascendc-level) IR, and compares both with the example's float64 NumPy reference. It
prints one row per kernel:

* ``kernels``: kernels after fusion; ``GM bytes``: what the fused kernels read and write, next
  to the sum over tensor-level ops of their operand and result bytes (op-by-op, unfused);
  ``UB bytes``: Unified Buffer the kernel allocates per core;
* ``interp err`` / ``cpu err``: max |got - ref|; the row passes when
  ``max(|got - ref| - tol * |ref|) <= tol`` for both (``tol`` = rtol = atol, printed);
* ``cold ms``: a compile with ``PYASC_CACHE_DISABLE=1`` after clearing the memory cache;
  ``cached ms``: median compile time of an on-disk cache hit (memory cache cleared each time);
* ``cpu ms`` / ``numpy ms``: medians of ``--repeats`` runs of the CPU build and of the NumPy
  reference (float64).

Then (unless ``--only``) the whole all-MiniLM-L6-v2 encoder, (unless ``--only`` without
``--train-steps``) one line of ``examples/train_block.py``: a transformer block trained
``--train-steps`` SGD steps with pyasc forward and backward kernels next to torch autograd
(worst per-step relative loss difference), and (unless ``--only`` without ``--lang``, or
``--no-lang``) the kernel-language examples of ``examples/kernel_language.py``: loop-written
kernels (vector add, the triple-loop matmul at 1024^3, GELU, softmax, SwishGLU, saxpy, the
blocked matmul, the 4-core parallel sum, the fused MLP) run on the CPU build against float64
NumPy, with their kernels, kernel type and blockDim. ``--lang [NAMES]`` without ``--only``
runs those examples alone (no operator rows, encoder or training unless ``--train-steps``).

Exit status: 0 when every row is within tolerance, 1 otherwise (or when a row fails to
compile or run, or a training step's loss is not within relative 1e-4 of torch's, or the loss
did not fall, or a kernel-language example is outside its tolerance), 2 on a usage error.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

import pyasc_mlir as pa

REPO_ROOT = Path(__file__).resolve().parents[1]
DTYPES = ("float32", "float16", "bfloat16")


def _import_examples() -> ModuleType:
    """The repository's ``examples`` package (importable from any working directory)."""
    if "examples" in sys.modules:
        return sys.modules["examples"]
    init = REPO_ROOT / "examples" / "__init__.py"
    if not init.exists():
        import examples

        return examples
    spec = importlib.util.spec_from_file_location(
        "examples", init, submodule_search_locations=[str(init.parent)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["examples"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules["examples"]
        raise
    return module


# --------------------------------------------------------------------------- demo data


@dataclass
class DemoRow:
    """One kernel run: the case, its float32 inputs (cast per dtype) and what they are."""

    case: Any
    arrays: tuple[np.ndarray, ...]
    data: str
    label: str = ""

    @property
    def name(self) -> str:
        return self.label or self.case.name


def build_rows(ex: ModuleType, md: ModuleType) -> tuple[list[DemoRow], str]:
    """The demo's rows on MiniLM data, and a one-line description of the batch."""
    batch = md.load()
    act = md.layer0_activations(batch)
    b, s, h = batch.shape
    lens = ", ".join(str(int(n)) for n in batch.attention_mask.sum(1))
    pairs = sum(isinstance(x, tuple) for x in batch.sentences)
    about = (
        f"all-MiniLM-L6-v2: {b} sequences ({pairs} of them sentence pairs) padded to "
        f"S={s} tokens (lengths {lens}), H={h}, "
        f"layer_norm_eps={batch.eps:g}"
    )
    case = ex.get_case

    def with_consts(name: str, **consts: Any) -> Any:
        c = case(name)
        return dataclasses.replace(c, consts={**c.consts, **consts})

    emb_ln_w, emb_ln_b = batch.ln_weight, batch.ln_bias
    hidden = act.hidden
    x128 = np.ascontiguousarray(hidden[:, :, :128])
    rows = [
        DemoRow(
            with_consts("residual_layernorm", eps=batch.eps),
            (batch.word + batch.position, batch.token_type, emb_ln_w, emb_ln_b),
            "x = word + position embeddings, residual = token-type embeddings, "
            "weight/bias = embeddings.LayerNorm, eps from config (the model's embedding "
            "LayerNorm)",
        ),
        DemoRow(
            case("rmsnorm"),
            (act.attn_out, act.attn_ln_weight),
            "x = layer-0 attention output (after its dense), weight = "
            "encoder.layer.0.attention.output.LayerNorm.weight",
        ),
        DemoRow(
            case("softmax"),
            (act.scores,),
            "layer-0 attention logits q.k/sqrt(32) + padding mask (-10000), "
            f"[B, 12 heads, S, S], softmax over keys (rows of {s})",
        ),
        DemoRow(
            case("gelu_erf"),
            (act.ffn_pre,),
            "layer-0 FFN pre-activation (intermediate.dense output, the model's GELU input)",
        ),
        DemoRow(
            case("gelu_tanh"),
            (act.ffn_pre,),
            "layer-0 FFN pre-activation (same as gelu_erf), tanh-form GELU",
        ),
        DemoRow(
            case("silu_mul"),
            (
                np.ascontiguousarray(act.ffn_pre[..., :768]),
                np.ascontiguousarray(act.ffn_pre[..., 768:]),
            ),
            "a = first 768, b = last 768 channels of the layer-0 FFN pre-activation "
            "(as a gate/up pair)",
        ),
        DemoRow(
            case("masked_sum"),
            (hidden, batch.attention_mask[:, :, None]),
            "x = embedding LayerNorm output, mask = attention mask [B, S, 1]: the "
            "masked mean-pooling numerator",
        ),
        DemoRow(
            with_consts("norm_family.layer", eps=batch.eps),
            (batch.embeddings, emb_ln_w, emb_ln_b),
            "variant=layer: x = word + position + token-type embeddings, "
            "embeddings.LayerNorm weight/bias (= the model's embedding LayerNorm)",
        ),
        DemoRow(
            case("norm_family.rms"),
            (act.attn_out, act.attn_ln_weight, act.attn_ln_bias),
            "variant=rms: x = layer-0 attention output, attention.output.LayerNorm weight/bias",
        ),
        DemoRow(
            case("norm_family.instance"),
            (x128, emb_ln_w[None, :128].copy(), emb_ln_b[None, :128].copy()),
            "variant=instance, axes=(1,): first 128 channels of the embedding LayerNorm "
            "output [B, S, 128], each channel normalised over the S positions "
            "(weight/bias = embeddings.LayerNorm[:128])",
        ),
        DemoRow(
            case("norm_family.instance_trailing"),
            (
                np.ascontiguousarray(hidden.transpose(0, 2, 1)),
                emb_ln_w[:, None].copy(),
                emb_ln_b[:, None].copy(),
            ),
            "variant=instance, axes=(2,): embedding LayerNorm output transposed to "
            "[B, 384, S], each channel normalised over S (weight/bias = "
            "embeddings.LayerNorm)",
        ),
        DemoRow(
            case("conditional_scale"),
            (act.ffn_pre,),
            "x = layer-0 FFN pre-activation, where(x > 0.25, 1.7 x, x)",
        ),
    ]
    return rows, about


# --------------------------------------------------------------------------- measuring


@dataclass
class Result:
    name: str
    dtype: str
    shape: str
    data: str
    tol: float
    kernels: int | None = None
    gm_bytes: int | None = None
    unfused_gm_bytes: int | None = None
    ub_bytes: int | None = None
    err_interp: float | None = None
    err_cpu: float | None = None
    ok_interp: bool = False
    ok_cpu: bool = False
    cold_ms: float | None = None
    cached_ms: float | None = None
    cpu_ms: float | None = None
    numpy_ms: float | None = None
    error: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None and self.ok_interp and self.ok_cpu


def _median_ms(fn: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


class _CacheDisabled:
    """``PYASC_CACHE_DISABLE=1`` for the duration of a ``with`` block."""

    def __enter__(self) -> None:
        self.old = os.environ.get("PYASC_CACHE_DISABLE")
        os.environ["PYASC_CACHE_DISABLE"] = "1"

    def __exit__(self, *exc: object) -> None:
        if self.old is None:
            os.environ.pop("PYASC_CACHE_DISABLE", None)
        else:
            os.environ["PYASC_CACHE_DISABLE"] = self.old


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    first = next((ln for ln in text if ln.strip()), "")
    return f"{type(exc).__name__}: {first}"[:300]


def measure(ex: ModuleType, row: DemoRow, dtype: str, repeats: int, interp: bool) -> Result:
    """Compile and run one row in one dtype; never raises (errors land in ``error``)."""
    case = row.case
    arrays = tuple(np.ascontiguousarray(a.astype(dtype)) for a in row.arrays)
    res = Result(
        row.name, dtype, "x".join(str(d) for d in arrays[0].shape), row.data, case.tolerance(dtype)
    )
    try:
        ref = case.reference(*arrays)
        res.numpy_ms = _median_ms(lambda: case.reference(*arrays), repeats)
        inputs = case.args([pa.TensorDesc(a.shape, dtype) for a in arrays])
        with _CacheDisabled():
            pa.driver.clear_memory_cache()
            t0 = time.perf_counter()
            op = pa.compile(case.kernel, inputs)
            res.cold_ms = (time.perf_counter() - t0) * 1e3

        def cached() -> None:
            pa.driver.clear_memory_cache()
            pa.compile(case.kernel, inputs)

        res.cached_ms = _median_ms(cached, repeats)
        info = op.info
        res.kernels = int(info["kernels"])
        res.gm_bytes = int(info["gm_bytes"])
        res.unfused_gm_bytes = int(info["unfused_gm_bytes"])
        res.ub_bytes = int(info["ub_bytes"])
    except Exception as exc:  # noqa: BLE001 - report every failure as a failed row
        res.error = _short(exc)
        return res
    errors = []
    try:
        got = op(*arrays, backend="cpu")
        res.err_cpu = ex.max_abs_error(got, ref)
        res.ok_cpu = ex.within_tolerance(got, ref, res.tol)
        res.cpu_ms = _median_ms(lambda: op(*arrays, backend="cpu"), repeats)
    except Exception as exc:  # noqa: BLE001
        errors.append(f"CPU build: {_short(exc)}")
    if interp:
        try:
            got_i = op(*arrays, backend="interp")
            res.err_interp = ex.max_abs_error(got_i, ref)
            res.ok_interp = ex.within_tolerance(got_i, ref, res.tol)
        except Exception as exc:  # noqa: BLE001
            errors.append(f"interpreter: {_short(exc)}")
    else:
        res.ok_interp = True
        res.notes.append("interpreter skipped")
    if errors:
        res.error = "; ".join(errors)
    return res


# --------------------------------------------------------------------------- printing

COLUMNS = (
    "kernel",
    "dtype",
    "shape",
    "kernels",
    "GM bytes fused/unfused",
    "UB bytes",
    "interp err",
    "cpu err",
    "tol",
    "cold ms",
    "cached ms",
    "cpu ms",
    "numpy ms",
    "ok",
)


def _fmt_err(v: float | None, ok: bool) -> str:
    if v is None:
        return "-"
    return f"{v:.2e}" + ("" if ok else " !")


def _fmt_ms(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v:.1f}" if v < 100 else f"{v:.0f}"


def _cells(r: Result) -> list[str]:
    if r.gm_bytes is not None and r.unfused_gm_bytes:
        gm = (
            f"{r.gm_bytes:,} / {r.unfused_gm_bytes:,} "
            f"({r.unfused_gm_bytes / max(r.gm_bytes, 1):.1f}x less)"
        )
    else:
        gm = "-"
    return [
        r.name,
        r.dtype,
        r.shape,
        "-" if r.kernels is None else str(r.kernels),
        gm,
        "-" if r.ub_bytes is None else f"{r.ub_bytes:,}",
        _fmt_err(r.err_interp, r.ok_interp),
        _fmt_err(r.err_cpu, r.ok_cpu),
        f"{r.tol:g}",
        _fmt_ms(r.cold_ms),
        _fmt_ms(r.cached_ms),
        _fmt_ms(r.cpu_ms),
        _fmt_ms(r.numpy_ms),
        "ok" if r.ok else "FAIL",
    ]


def _print_plain(results: Sequence[Result], out: Any) -> None:
    table = [list(COLUMNS), *(_cells(r) for r in results)]
    widths = [max(len(row[i]) for row in table) for i in range(len(COLUMNS))]
    right = {3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
    for k, row in enumerate(table):
        cells = [
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        print("  ".join(cells).rstrip(), file=out)
        if k == 0:
            print("  ".join("-" * w for w in widths), file=out)


def _print_rich(results: Sequence[Result], title: str) -> bool:
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        return False
    table = Table(title=title, show_lines=False)
    for i, col in enumerate(COLUMNS):
        table.add_column(col, justify="right" if 3 <= i <= 12 else "left")
    for r in results:
        cells = _cells(r)
        cells[-1] = "[green]ok[/green]" if r.ok else "[bold red]FAIL[/bold red]"
        table.add_row(*cells)
    Console().print(table)
    return True


def print_report(
    results: Sequence[Result], rows: Sequence[DemoRow], about: str, plain: bool, out: Any = None
) -> None:
    out = out or sys.stdout
    title = "pyasc-mlir examples on real MiniLM activations"
    print(about, file=out)
    # rich sizes its table to the terminal (80 columns when redirected): plain text off a tty
    tty = getattr(out, "isatty", lambda: False)()
    if plain or out is not sys.stdout or not tty or not _print_rich(results, title):
        print(title, file=out)
        _print_plain(results, out)
    print("\nData per row:", file=out)
    for row in rows:
        print(f"  {row.name:30s} {row.data}", file=out)
    print(
        "\nTolerance: rtol = atol = tol; a result passes when max over elements of "
        "|got - ref| - tol*|ref| <= tol (fp16: 1e-3; bf16: 8e-3; fp32: 1e-5, reductions 1e-4). "
        "'!' marks an error outside tolerance. The reference is float64 NumPy on the same "
        "(dtype-rounded) inputs, rounded to the dtype.",
        file=out,
    )
    print(
        "cold ms: compile with PYASC_CACHE_DISABLE=1 (the g++ library cache may still "
        "hit; --fresh-cache uses an empty cache folder so g++ runs); cached ms: on-disk "
        "cache hit. cpu/numpy ms: medians of the runs.",
        file=out,
    )
    for r in results:
        if r.error:
            print(f"FAIL {r.name} {r.dtype}: {r.error}", file=out)
        elif not r.ok:
            which = [
                n for n, ok in (("interpreter", r.ok_interp), ("CPU build", r.ok_cpu)) if not ok
            ]
            print(
                f"FAIL {r.name} {r.dtype}: {' and '.join(which)} outside tolerance {r.tol:g}",
                file=out,
            )
        for note in r.notes:
            print(f"note {r.name} {r.dtype}: {note}", file=out)


# --------------------------------------------------------------------------- entry point


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="pyasc demo",
        description="Compile every example operator and run it on real "
        "all-MiniLM-L6-v2 activations (CPU build and IR interpreter vs NumPy).",
    )
    p.add_argument(
        "--dtypes",
        default=",".join(DTYPES),
        help="comma-separated dtypes (default: float32,float16,bfloat16)",
    )
    p.add_argument(
        "--only", default="", help="comma-separated case names (e.g. softmax,norm_family.rms)"
    )
    p.add_argument(
        "--repeats", type=int, default=3, help="runs per timing; medians are printed (default 3)"
    )
    for flag, text in (
        ("--no-interp", "skip the IR interpreter (CPU build only)"),
        ("--plain", "plain text even if rich is installed (always when stdout is not a tty)"),
        ("--no-model", "skip the whole-model part (all-MiniLM-L6-v2 sentence embeddings)"),
        ("--fresh-cache", "compile into an empty temporary cache folder (cold g++ builds)"),
        ("--no-lang", "skip the kernel-language examples"),
        ("--list", "list the rows and their data, then exit"),
    ):
        p.add_argument(flag, action="store_true", help=text)
    p.add_argument(
        "--train-steps",
        type=int,
        default=None,
        help="steps of the transformer-block training vs torch (default 50, or none with "
        "--only; 0 skips it)",
    )
    p.add_argument(
        "--lang",
        nargs="?",
        const="all",
        default=None,
        metavar="NAMES",
        help="run the kernel-language examples, all or a comma-separated subset (--lang "
        "vector_add,parallel_sum); without --only, these alone (default: all, after the rest)",
    )
    return p


def run_demo(argv: Sequence[str] | None = None) -> int:
    """Run the demo; returns the process exit status (see the module docstring)."""
    parser = _parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
    except SystemExit as exc:
        return int(exc.code or 0) if exc.code in (0, None) else 2
    dtypes = [d.strip() for d in args.dtypes.split(",") if d.strip()]
    bad = [d for d in dtypes if d not in DTYPES]
    if bad or not dtypes:
        print(
            f"pyasc demo: unknown dtype(s) {', '.join(bad) or '(none)'}; use {', '.join(DTYPES)}",
            file=sys.stderr,
        )
        return 2
    ex = _import_examples()
    from examples import kernel_language as kl
    from examples import minilm_data as md

    try:
        lang_names = kl.select(args.lang or "all")
    except ValueError as exc:
        print(f"pyasc demo: {exc}", file=sys.stderr)
        return 2

    lang_only = args.lang is not None and not args.only  # --lang alone: those examples only
    try:
        rows, about = ([], "") if lang_only and not args.list else build_rows(ex, md)
    except md.ModelDataMissing as exc:
        print(f"pyasc demo: {exc}", file=sys.stderr)
        return 2
    if args.only:
        wanted = {n.strip() for n in args.only.split(",") if n.strip()}
        unknown = wanted - {r.name for r in rows}
        if unknown:
            print(
                f"pyasc demo: unknown case(s) {', '.join(sorted(unknown))}; known: "
                f"{', '.join(r.name for r in rows)}",
                file=sys.stderr,
            )
            return 2
        rows = [r for r in rows if r.name in wanted]
    if args.list:
        print(about)
        for r in rows:
            print(f"{r.name:30s} {'x'.join(map(str, r.arrays[0].shape)):12s} {r.data}")
        return 0

    old_dir = os.environ.get("PYASC_CACHE_DIR")
    tmp = tempfile.TemporaryDirectory(prefix="pyasc-demo-") if args.fresh_cache else None
    if tmp is not None:
        os.environ["PYASC_CACHE_DIR"] = tmp.name
    try:
        results = [
            measure(ex, row, dtype, args.repeats, not args.no_interp)
            for dtype in dtypes
            for row in rows
        ]
        quick = args.only or lang_only  # a subset: no model or training unless asked
        model_ok = _model_demo(dtypes) if not (args.no_model or quick) else True
        steps = args.train_steps if args.train_steps is not None else 0 if quick else 50
        if steps > 0:
            from examples.train_block import demo_line

            line, train_ok = demo_line(steps)
            print("\n" + line)
            model_ok = model_ok and train_ok
        if not args.no_lang and (args.lang or not args.only):
            text, lang_ok = kl.demo_line(lang_names)
            print("\n" + text)
            model_ok = model_ok and lang_ok
    finally:
        if tmp is not None:
            if old_dir is None:
                os.environ.pop("PYASC_CACHE_DIR", None)
            else:
                os.environ["PYASC_CACHE_DIR"] = old_dir
            tmp.cleanup()
    failed = sum(not r.ok for r in results)
    if rows:
        print_report(results, rows, about, args.plain)
        print(f"\n{len(results) - failed}/{len(results)} kernels within tolerance")
    return 1 if failed or not model_ok else 0


def _model_demo(dtypes: Sequence[str]) -> bool:
    """The whole all-MiniLM-L6-v2 encoder in pyasc kernels (``examples/minilm``): prints the
    embeddings' cosine similarity to the reference and the per-kernel table; ``False`` when a
    sentence falls below the threshold of its dtype."""
    from examples.minilm.demo import THRESHOLDS, report_with_status

    text, ok = report_with_status(dtypes=tuple(dtypes))
    print("\n" + text)
    print(
        "\nMiniLM embeddings "
        + ("within" if ok else "BELOW")
        + " the thresholds ("
        + ", ".join(f"{d}: cos >= {THRESHOLDS[d]}" for d in dtypes)
        + ")"
    )
    return ok


def main() -> None:  # pragma: no cover
    sys.exit(run_demo())


if __name__ == "__main__":  # pragma: no cover
    main()
