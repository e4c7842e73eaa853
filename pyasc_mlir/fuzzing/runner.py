"""Checking fuzz programs: lower, build many kernels per library, run every stage, judge.

:func:`check_programs` writes each program's source to a ``.py`` file and imports it (the
frontend reads source), lowers it through the compiler's stages and emits its Ascend C; the
kernels of one platform share one g++ translation unit (``PYASC_CPU_ENTRY_NAMED``), so a batch
of programs costs one library build. The CPU builds run in a forked child
(:mod:`pyasc_mlir.fuzzing.isolation`); every stage is then judged by
:func:`pyasc_mlir.fuzzing.verdicts.run_checks`.

A program's lowered op is a ``CompiledOp`` built from its stages (``pyasc_mlir.pipeline.lower``,
``pyasc_mlir.artifacts.describe``) without a compile cache or a library of its own; its CPU
kernel is an entry of the batch library (``CompiledOp.use_cpu_kernels``).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyasc_mlir.fuzzing.evaluator import make_inputs
from pyasc_mlir.fuzzing.isolation import crash_text, run_forked
from pyasc_mlir.fuzzing.program import Program
from pyasc_mlir.fuzzing.verdicts import STAGES, Verdict, exc_text, run_checks

_MODULE_DIR: Path | None = None


def _module_dir() -> Path:
    """A temporary folder for the programs' ``.py`` files (removed at exit)."""
    global _MODULE_DIR
    if _MODULE_DIR is None or not _MODULE_DIR.exists():
        import atexit

        _MODULE_DIR = Path(tempfile.mkdtemp(prefix="pyasc-fuzz-"))
        owner, path = os.getpid(), _MODULE_DIR

        def remove() -> None:  # in the process that made it (not in forked workers)
            if os.getpid() == owner:
                shutil.rmtree(path, True)

        atexit.register(remove)
    return _MODULE_DIR


def load_function(p: Program, source: str | None = None) -> Callable[..., Any]:
    """Write the program's source to a ``.py`` file and import its function."""
    path = _module_dir() / f"{p.name}.py"
    text = source if source is not None else p.source()
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
    mod_name = f"_pyasc_fuzz_{p.name}"
    spec = importlib.util.spec_from_file_location(mod_name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module
    spec.loader.exec_module(module)
    return getattr(module, p.name)


@dataclass
class Lowered:
    """A program lowered and emitted: its op (a ``CompiledOp`` without a library), the names
    of its kernel functions (one, or several when the operator does not fuse into one) and
    the kernel source holding them."""

    prog: Program
    op: Any  # CompiledOp
    kernel_names: tuple[str, ...]
    kernel_src: str


def lower_program(p: Program, fn: Callable[..., Any] | None = None) -> Lowered | Verdict:
    """Lower ``p`` (its function ``fn``, by default imported from its source) and emit its
    kernel, host and CPU-entry sources; a ``rejected`` verdict for a compile error while
    lowering, a ``crash`` verdict for any other failure."""
    from pyasc_mlir.artifacts import describe
    from pyasc_mlir.compiled_op import CompiledOp
    from pyasc_mlir.emit_host import emit_cpu_entry, emit_host_source
    from pyasc_mlir.emitter import emit_kernel_source, kernels
    from pyasc_mlir.errors import PyAscCompileError
    from pyasc_mlir.pipeline import lower
    from pyasc_mlir.types import TensorDesc

    descs = [TensorDesc(i.shape, i.dtype) for i in p.inputs]
    where = "lower"
    try:
        fn = fn if fn is not None else load_function(p)
        stages, _, _ = lower(fn, descs, p.name, p.platform, p.double_buffer)
        where = "emit"
        module = stages["ascendc"]
        kernel_src = emit_kernel_source(module)
        emit_host_source(module, [list(d.static_shape) for d in descs])
        emit_cpu_entry(module)
        info = describe(stages, p.name, descs, p.platform)
        names = tuple(k.sym_name.data for k in kernels(module))
    except PyAscCompileError as exc:
        if where == "lower":
            return Verdict("rejected", "lower", exc.message)
        return Verdict("crash", where, exc_text(exc))
    except Exception as exc:  # noqa: BLE001 - every other exception is a compiler failure
        return Verdict("crash", where, exc_text(exc))
    info["library"] = ""
    op = CompiledOp(_module_dir(), info, lambda: stages, stages=stages)
    return Lowered(p, op, names, kernel_src)


def lower_only(p: Program) -> Verdict:
    """The verdict of lowering ``p`` alone (``ok`` if it lowers and emits)."""
    r = lower_program(p)
    return r if isinstance(r, Verdict) else Verdict("ok")


def batch_source(kernel_sources: Sequence[str], kernel_names: Sequence[str]) -> str:
    """One translation unit holding several emitted kernels, with one named CPU entry each."""
    parts = list(kernel_sources)
    parts += [f"PYASC_CPU_ENTRY_NAMED({n})" for n in kernel_names]
    parts += ["PYASC_CPU_LAST_ERROR()", ""]
    return "\n".join(parts)


_GXX_ERROR = re.compile(r"kernels\.cpp:(\d+):\d+: error")


def blame(diagnostics: str, kernel_sources: Sequence[str]) -> set[int]:
    """The indices of the kernels of a :func:`batch_source` that g++'s ``diagnostics`` report
    an error in (by line number; empty if none is named)."""
    starts, line = [], 1
    for src in kernel_sources:
        starts.append(line)
        line += src.count("\n") + 1
    out = set()
    for m in _GXX_ERROR.finditer(diagnostics):
        n = int(m.group(1))
        i = max((j for j, s in enumerate(starts) if s <= n), default=-1)
        if 0 <= i < len(kernel_sources) and n < starts[i] + kernel_sources[i].count("\n") + 1:
            out.add(i)
    return out


def _fuzz_cache() -> Path:
    from pyasc_mlir.runtime.cpu import default_cache_dir

    return default_cache_dir() / "fuzz"


def _build(lowered: Sequence[Lowered], platform: str) -> tuple[Path | None, dict[str, str]]:
    """Build one library for ``lowered``; on a g++ failure, build each kernel alone and name
    the culprits. Returns (library or None, {program key: g++ error})."""
    from pyasc_mlir.platform import get_platform
    from pyasc_mlir.runtime.cpu import build_library

    plat = get_platform(platform)
    src = batch_source(
        [x.kernel_src for x in lowered], [n for x in lowered for n in x.kernel_names]
    )
    try:
        return build_library({"kernels.cpp": src}, plat, cache_dir=_fuzz_cache()), {}
    except Exception as exc:  # noqa: BLE001
        if len(lowered) == 1:
            return None, {lowered[0].prog.key: exc_text(exc)[:4000]}
        bad = blame(str(exc), [x.kernel_src for x in lowered])
        if bad and len(bad) < len(lowered):  # g++ names the culprits: one more build
            culprits = {lowered[i].prog.key: exc_text(exc)[:4000] for i in bad}
            lib, more = _build([x for i, x in enumerate(lowered) if i not in bad], platform)
            return lib, {**culprits, **more}
    errors: dict[str, str] = {}
    good = []
    for x in lowered:
        lib, err = _build([x], platform)
        if lib is None:
            errors.update(err)
        else:
            good.append(x)
    if not good or len(good) == len(lowered):  # every kernel builds alone: a harness problem
        return None, errors or {
            x.prog.key: "the batch library failed to build; every kernel builds alone"
            for x in lowered
        }
    lib, err = _build(good, platform)
    errors.update(err)
    return lib, errors


def _cpu_outputs(items: Sequence[tuple[Lowered, Path]]) -> dict[str, Any]:
    """Run the CPU build of every item in ONE forked child process (a kernel that corrupts
    memory kills the child, not the fuzzer); if the child dies, each item runs in its own
    child to find the culprit. Returns {program key: outputs, or an error text}."""
    from pyasc_mlir.runtime.cpu import CpuKernel

    def work(todo: Sequence[tuple[Lowered, Path]]) -> dict[str, Any]:
        res: dict[str, Any] = {}
        for x, lib in todo:
            try:
                x.op.use_cpu_kernels(
                    {n: CpuKernel(lib, entry=f"pyasc_run_block_{n}") for n in x.kernel_names}
                )
                res[x.prog.key] = x.op.run_cpu(*make_inputs(x.prog))
            except Exception as exc:  # noqa: BLE001
                res[x.prog.key] = exc_text(exc)
        return res

    if not items:
        return {}
    res, code = run_forked(lambda: work(items))
    if res is not None:
        return res
    out: dict[str, Any] = {}
    for item in items:
        one, code = run_forked(functools.partial(work, [item]))
        out[item[0].prog.key] = one[item[0].prog.key] if one is not None else crash_text(code)
    return out


def _run_cpu_builds(lowered: Sequence[Lowered]) -> dict[str, Any]:
    """Build one library per platform and run every CPU build: {program key: outputs, an
    error text, or a ``crash`` verdict at ``build``}. The batch libraries are removed."""
    cpu: dict[str, Any] = {}
    todo = []
    for plat in sorted({x.prog.platform for x in lowered}):
        group = [x for x in lowered if x.prog.platform == plat]
        lib, errors = _build(group, plat)
        for x in group:
            if x.prog.key in errors:
                cpu[x.prog.key] = Verdict("crash", "build", errors[x.prog.key])
            else:
                assert lib is not None
                todo.append((x, lib))
    cpu.update(_cpu_outputs(todo))
    for lib in {lib for _, lib in todo}:  # batch libraries are not reused: keep the
        shutil.rmtree(lib.parent, ignore_errors=True)  # cache small (the PCH stays)
    return cpu


def check_programs(progs: Sequence[Program], stages: Sequence[str] = STAGES) -> list[Verdict]:
    """Lower, build (one library per platform) and check every program; a duplicate program
    gets a copy of its first occurrence's verdict."""
    verdicts: dict[int, Verdict] = {}
    lowered: dict[int, Lowered] = {}
    spent: dict[int, float] = {}
    first: dict[str, int] = {}
    for i, p in enumerate(progs):
        if first.setdefault(p.key, i) != i:
            continue  # a duplicate: same verdict as its first occurrence
        t0 = time.perf_counter()
        r = lower_program(p)
        spent[i] = time.perf_counter() - t0
        if isinstance(r, Verdict):
            r.seconds = spent[i]
            verdicts[i] = r
        else:
            lowered[i] = r
    cpu: dict[str, Any] = {}
    if "cpu" in stages and lowered:
        t0 = time.perf_counter()
        cpu = _run_cpu_builds(list(lowered.values()))
        share = (time.perf_counter() - t0) / len(lowered)
        for i in lowered:
            spent[i] += share
    for i, x in lowered.items():
        t0 = time.perf_counter()
        c = cpu.get(x.prog.key)
        if isinstance(c, Verdict):
            v = c
        else:
            try:
                v = run_checks(x.prog, x.op, c, stages)
            except Exception as exc:  # noqa: BLE001 - a fuzzer bug: report, do not hide
                v = Verdict("crash", "fuzzer", exc_text(exc))
        v.seconds = spent[i] + time.perf_counter() - t0
        verdicts[i] = v
    return [dataclasses.replace(verdicts[first[p.key]]) for p in progs]
