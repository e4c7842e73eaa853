"""``pyasc cpu-run``: build a hand-written Ascend C kernel file with the CPU runtime and run it.

Usage::

    pyasc cpu-run KERNEL.cpp --entry NAME --block-dim N [options] ARG...

One ``ARG`` per parameter of the ``__global__ __aicore__`` entry (all ``GM_ADDR``), in order:

* ``FILE.npy`` -- an input: the array's bytes in GM (any dtype, C order);
* ``NAME:DTYPE[SHAPE]`` -- an output, zero-filled, written to ``NAME.npy`` (in ``--out-dir``)
  after the run, e.g. ``z:float16[8,2048]``; ``DTYPE`` is a numpy name or ``bfloat16`` (saved
  as its ``uint16`` bit patterns: ``.npy`` has no bfloat16; view them with ``ml_dtypes``);
* ``FILE.bin`` -- raw bytes (e.g. a tiling struct written by host code);
* ``TYPE:V,V,...[+TYPE:V,...]`` -- a packed struct of scalars with C alignment, e.g.
  ``u32:16384,8`` (or, labelled, ``u32:totalLength=16384,tileNum=8``: the labels are not
  checked, the order counts) for ``struct {uint32_t totalLength; uint32_t tileNum;}``;
  ``TYPE`` is one of ``i8 u8 i16 u16 i32 u32 i64 u64 f16 f32 f64``;
* ``tcube:FIELD=V,...`` -- an ``AscendC::tiling::TCubeTiling`` (every field ``int32_t``, the
  documented order; unnamed fields 0);
* ``ws:BYTES`` -- a zero-filled workspace (``16M``, ``64K`` or a number), e.g. the Matmul
  system workspace; ``null`` -- a null pointer.

The kernel is compiled with ``-DASCENDC_CPU_DEBUG=1`` (so host launch code a sample guards with
``#ifndef ASCENDC_CPU_DEBUG`` is left out) and ``-g -DPYASC_CPU_TRACE``: a runtime error is
reported with the Ascend C API's message, the block, and the kernel's ``file:line`` (the
innermost call-stack frame in a user file, found with ``addr2line``). Exit status: 0 on success,
1 when the build or a block fails, 2 on a bad command line. Documented in README.md
("Debugging hand-written Ascend C without CANN") and docs/CPU_RUNTIME.md.
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from pyasc_mlir.errors import PyAscError, SourceLoc
from pyasc_mlir.platform import DEFAULT_PLATFORM, PLATFORMS, get_platform
from pyasc_mlir.runtime.cpu import INCLUDE_DIR, CompileError, build_library
from pyasc_mlir.tools.cpu_run_args import (
    Buffer,
    CpuRunUsageError,
    parse_arg,
)

ENTRY_FILE = "~pyasc_cpu_run_entry.cpp"
"""Name of the generated entry source (sorts after every kernel file name: unity build)."""

TRACE_FLAGS = ("-g", "-DPYASC_CPU_TRACE=1", "-DASCENDC_CPU_DEBUG=1")

KERNEL_TYPES = (
    "AIV_ONLY",
    "AIC_ONLY",
    "MIX_AIV_1_0",
    "MIX_AIC_1_0",
    "MIX_AIC_1_1",
    "MIX_AIC_1_2",
    "AICORE",
    "VECTORCORE",
    "MIX_AICORE",
    "MIX_VECTOR_CORE",
)
"""The ``KernelMetaType`` enumerators ``--kernel-type`` accepts (without ``KERNEL_TYPE_``)."""

_ENTRY_DEF = re.compile(r"\b__global__\b[^;{}()]*?\bvoid\s+(\w+)\s*\(")
_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


class CpuRunError(PyAscError):
    """The kernel did not build or a block failed (exit status 1)."""


def kernel_entries(text: str) -> dict[str, tuple[list[str], int]]:
    """``{name: ([parameter, ...], offset of the name)}`` of the ``__global__`` functions
    defined (or declared) in ``text``."""
    out: dict[str, tuple[list[str], int]] = {}
    for m in _ENTRY_DEF.finditer(text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        params = text[m.end() : i - 1].strip()
        out[m.group(1)] = ([p.strip() for p in params.split(",")] if params else [], m.start(1))
    return out


def build_name(path: Path) -> str:
    """The kernel's file name in the build folder: its own (a ``.cpp``, as the unity build
    includes only those), unless that would not sort before :data:`ENTRY_FILE`."""
    name = path.name if path.suffix == ".cpp" else path.stem + ".cpp"
    return name if name < ENTRY_FILE and not name.startswith(".") else "kernel.cpp"


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def check_entry(path: Path, text: str, entry: str, nargs: int) -> None:
    """Raise :class:`CpuRunUsageError` unless ``entry`` is a ``__global__`` function of the
    file taking ``nargs`` parameters."""
    entries = kernel_entries(text)
    if entry not in entries:
        known = ", ".join(sorted(entries)) or "none"
        raise CpuRunUsageError(
            f"unknown entry {entry!r}: {path} defines no __global__ __aicore__ function of "
            f"that name (found: {known})",
            hint="pass --entry with the name of the kernel function",
        )
    params, pos = entries[entry]
    if len(params) != nargs:
        line = _line_of(text, pos)
        loc = SourceLoc(str(path), line, pos - text.rfind("\n", 0, pos) - 1)
        raise CpuRunUsageError(
            f"{entry} takes {len(params)} arguments ({', '.join(params)}), {nargs} given",
            loc,
            hint="give one ARG per GM_ADDR parameter: FILE.npy, NAME:DTYPE[SHAPE], "
            "TYPE:V,..., tcube:..., ws:BYTES or null",
        )


def local_headers(path: Path) -> dict[str, str]:
    """``{resolved path: text}`` of the quoted ``#include`` files found next to the kernel
    (transitively): part of the build's cache key."""
    seen: dict[str, str] = {}
    todo = [path]
    while todo:
        cur = todo.pop()
        for name in _INCLUDE.findall(cur.read_text(errors="replace")):
            dep = (cur.parent / name).resolve()
            if dep.is_file() and str(dep) not in seen:
                seen[str(dep)] = dep.read_text(errors="replace")
                todo.append(dep)
    return seen


def entry_source(entry: str, nargs: int, kernel_type: str | None) -> str:
    """The generated entry: a wrapper (declaring ``kernel_type`` when given) called by
    ``PYASC_CPU_ENTRY``, and ``pyasc_cpu_run_trace`` (library offsets of the last error's
    call stack)."""
    params = ", ".join(f"GM_ADDR a{i}" for i in range(nargs))
    call = ", ".join(f"a{i}" for i in range(nargs))
    declare = f"  KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_{kernel_type});\n" if kernel_type else ""
    return f"""#include <dlfcn.h>
#include "kernel_operator.h"
static void pyasc_cpu_run_target({params}) {{
{declare}  {entry}({call});
}}
PYASC_CPU_ENTRY(pyasc_cpu_run_target)
extern "C" int pyasc_cpu_run_trace(uint64_t* out, int max) {{
  Dl_info self;
  if (!dladdr(reinterpret_cast<void*>(&pyasc_cpu_run_trace), &self)) return 0;
  const auto& t = ::AscendC::cpu::LastTrace();
  int k = 0;
  for (int i = 0; i < t.n && k < max; ++i) {{
    Dl_info info;
    if (dladdr(t.pc[i], &info) && info.dli_fbase == self.dli_fbase)
      out[k++] = static_cast<uint64_t>(static_cast<char*>(t.pc[i]) -
                                       static_cast<char*>(self.dli_fbase));
  }}
  return k;
}}
extern "C" void pyasc_cpu_run_clear_trace() {{ ::AscendC::cpu::LastTrace().n = 0; }}
"""


def build(
    path: Path,
    entry: str,
    nargs: int,
    platform: str,
    memcheck: bool,
    kernel_type: str | None,
    defines: list[str],
) -> Path:
    """Compile the kernel file with the CPU runtime (cached); returns the ``lib.so``.

    Raises:
        CpuRunUsageError: unknown entry or wrong argument count.
        CpuRunError: g++ rejected the kernel (its diagnostics, with the user's paths).
    """
    text = path.read_text(errors="replace")
    check_entry(path, text, entry, nargs)
    name = build_name(path)
    sources = {name: text, ENTRY_FILE: entry_source(entry, nargs, kernel_type)}
    deps = local_headers(path)
    flags = [*TRACE_FLAGS, *(f"-D{d}" for d in defines)]
    if deps:  # its own headers: found next to it, and part of the cache key (as a flag)
        flags.append(f"-I{path.parent.resolve()}")
        digest = hashlib.sha256("\0".join(f"{k}\0{v}" for k, v in sorted(deps.items())).encode())
        flags.append(f"-DPYASC_CPU_RUN_DEPS=0x{digest.hexdigest()[:16]}")
    try:
        return build_library(  # -D flags: a one-off precompiled header would not pay off
            sources,
            get_platform(platform),
            memcheck=memcheck,
            extra_flags=flags,
            pch=not defines and not deps,
        )
    except CompileError as exc:
        raise CpuRunError(
            f"g++ rejected {path}:\n{_user_diagnostics(exc.diagnostics, name, path)}",
            hint="the CPU runtime implements the API subset of docs/CPU_RUNTIME.md",
        ) from None


def _user_diagnostics(text: str, name: str, path: Path) -> str:
    """g++ output with the build folder's file names replaced by the user's paths."""
    lines = []
    for line in text.splitlines():
        if line.startswith("In file included from unity.cc") or "unity.cc:" in line:
            continue
        if line.startswith("                 from unity.cc"):
            continue
        line = re.sub(rf"(?<![\w/.~-]){re.escape(name)}:", f"{path}:", line)
        lines.append(line.replace(str(INCLUDE_DIR) + "/", "<pyasc runtime>/"))
    return "\n".join(lines).strip()


class _Library:
    """The built kernel, loaded with ctypes."""

    def __init__(self, so: Path, grid: bool = False):
        self.so = so
        lib = ctypes.CDLL(str(so))
        # a kernel that calls SyncAll runs as a whole launch (blocks that wait for each other)
        self.run_grid = getattr(lib, "pyasc_run_grid", None) if grid else None
        if self.run_grid is not None:
            self.run_grid.restype = ctypes.c_int
            self.run_grid.argtypes = [
                ctypes.c_int64,
                ctypes.POINTER(ctypes.c_void_p),
                ctypes.c_int64,
                ctypes.POINTER(ctypes.c_int64),
            ]
        self.run_block = lib.pyasc_run_block
        self.run_block.restype = ctypes.c_int
        self.run_block.argtypes = [
            ctypes.c_int64,
            ctypes.c_int64,
            ctypes.POINTER(ctypes.c_void_p),
            ctypes.c_int64,
        ]
        self.last_error = lib.pyasc_last_error
        self.last_error.restype = ctypes.c_char_p
        self.kind = lib.pyasc_last_error_kind
        self.kind.restype = ctypes.c_int
        self.ratio = lib.pyasc_task_ratio
        self.ratio.restype = ctypes.c_int
        self.trace = lib.pyasc_cpu_run_trace
        self.trace.restype = ctypes.c_int
        self.trace.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_int]
        self.clear_trace = lib.pyasc_cpu_run_clear_trace
        self.gm_reset = lib.pyasc_gm_reset
        self.gm_register = lib.pyasc_gm_register
        self.gm_register.argtypes = [ctypes.c_void_p, ctypes.c_uint64]
        self.gm_report_count = lib.pyasc_gm_report_count
        self.gm_report_count.restype = ctypes.c_int64
        self.gm_report = lib.pyasc_gm_report
        self.gm_report.restype = ctypes.c_char_p
        self.gm_report.argtypes = [ctypes.c_int64]

    def gm_reports(self) -> list[str]:
        """The memory-check reports of GM accesses past a SetGlobalBuffer size (allowed)."""
        return [
            (self.gm_report(i) or b"").decode(errors="replace")
            for i in range(self.gm_report_count())
        ]

    def offsets(self) -> list[int]:
        buf = (ctypes.c_uint64 * 64)()
        n = self.trace(buf, 64)
        return [int(buf[i]) for i in range(n)]


def run_blocks(
    lib: _Library, block_dim: int, buffers: list[Buffer], progress: int | None = None
) -> tuple[int, str, int]:
    """Run every block; ``(-1, "", 0)`` on success, else ``(block, message, kind)``. With
    ``progress`` (a pipe's write end) the number of each block is written before it runs."""
    ptrs = [b.address() for b in buffers]
    argv = (ctypes.c_void_p * max(len(ptrs), 1))(*ptrs)
    lib.gm_reset()  # the GM bounds are the host buffers (docs/CPU_RUNTIME.md, "GM bounds")
    for b in buffers:
        if b.data is not None and b.data.nbytes:
            lib.gm_register(b.address(), b.data.nbytes)
    if lib.run_grid is not None:  # one call: the blocks switch at SyncAll (pyasc_cpu/grid.h)
        lib.clear_trace()
        if progress is not None:
            os.write(progress, b"0\n")
        failed = ctypes.c_int64(0)
        if lib.run_grid(block_dim, argv, len(ptrs), ctypes.byref(failed)) != 0:
            msg = lib.last_error()
            return failed.value, msg.decode(errors="replace") if msg else "", lib.kind()
        return -1, "", 0
    block, total = 0, block_dim
    while block < total:
        lib.clear_trace()
        if progress is not None:
            os.write(progress, f"{block}\n".encode())
        if lib.run_block(block, block_dim, argv, len(ptrs)) != 0:
            msg = lib.last_error()
            return block, msg.decode(errors="replace") if msg else "", lib.kind()
        if block == 0:
            total = block_dim * lib.ratio()
        block += 1
    return -1, "", 0


def run_isolated(
    lib: _Library, ns: argparse.Namespace, buffers: list[Buffer]
) -> tuple[int, str, int, list[int], list[Path]]:
    """Run the blocks in a child process (so a kernel that crashes the process — a raw pointer
    outside every buffer, an integer division by zero — is reported, not fatal), which also
    saves the outputs: ``(block, message, kind, trace offsets, files written)``.

    Raises:
        CpuRunError: the kernel killed the child (the signal and the block are named).
    """
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: run, save, report as one JSON line after the progress lines
        os.close(r)
        status = 0
        try:
            block, msg, kind = run_blocks(lib, ns.block_dim, buffers, progress=w)
            files: list[str] = []
            if block < 0:
                for report in lib.gm_reports():  # memory-check builds: allowed, worth knowing
                    print(f"pyasc cpu-run: warning: {report}", file=sys.stderr, flush=True)
                ns.out_dir.mkdir(parents=True, exist_ok=True)
                files = [str(b.save(ns.out_dir)) for b in buffers if b.output is not None]
            offsets = lib.offsets() if block >= 0 else []
            os.write(w, (json.dumps([block, msg, kind, offsets, files]) + "\n").encode())
        except BaseException:  # noqa: BLE001 - the parent reports a missing result
            status = 1
        finally:
            os._exit(status)
    os.close(w)
    with os.fdopen(r) as pipe:
        lines = pipe.read().splitlines()
    _, wait_status = os.waitpid(pid, 0)
    last = next((x for x in reversed(lines) if x.startswith("[")), None)
    if last is None or not os.WIFEXITED(wait_status):
        started = [x for x in lines if x.isdigit()]
        where = f"block {started[-1]} of {ns.block_dim}" if started else "before block 0"
        sig = os.WTERMSIG(wait_status) if os.WIFSIGNALED(wait_status) else None
        what = signal.Signals(sig).name if sig is not None else "an internal error"
        raise CpuRunError(
            f"the kernel crashed ({what}) in {where} ({ns.entry}): an access the runtime does not "
            "check (a raw pointer outside every buffer, an integer division by zero, ...)",
            None,
            hint="run with --memory-check; check the pointer arithmetic and the tiling values "
            "the kernel reads (a tiling shorter than its struct reads zeros)",
        )
    block, msg, kind, offsets, files = json.loads(last)
    return block, msg, kind, offsets, [Path(f) for f in files]


def locate(so: Path, offsets: list[int], kernel: Path, name: str) -> SourceLoc | None:
    """The innermost call-stack location in a user file (not the runtime headers, not the
    system, not the generated entry), as a path the user knows; ``None`` when unknown."""
    tool = shutil.which("addr2line")
    if tool is None or not offsets:
        return None
    addrs = [hex(off if i == 0 else off - 1) for i, off in enumerate(offsets)]
    proc = subprocess.run([tool, "-e", str(so), "-i", "-a", *addrs], capture_output=True, text=True)
    for line in proc.stdout.splitlines():
        m = re.match(r"(.+):(\d+)(?: \(discriminator \d+\))?$", line.strip())
        if m is None or m.group(2) == "0":
            continue
        file = m.group(1)
        base = Path(file).name
        if base == ENTRY_FILE or file.startswith("/usr/") or str(INCLUDE_DIR) in file:
            continue
        if "pyasc_cpu/" in file or base in ("kernel_operator.h", "unity.cc"):
            continue
        user = kernel if base == name else (kernel.parent / file)
        line_no = int(m.group(2))
        try:
            src = user.read_text(errors="replace").splitlines()[line_no - 1]
        except (OSError, IndexError):
            src = ""
        return SourceLoc(str(user), line_no, len(src) - len(src.lstrip()))
    return None


def _main_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="pyasc cpu-run",
        description="Build a hand-written Ascend C kernel with the pyasc CPU runtime and run "
        "it on .npy inputs (see README: Debugging hand-written Ascend C without CANN).",
        epilog="ARG forms: FILE.npy | NAME:DTYPE[SHAPE] (output) | FILE.bin | "
        "TYPE:V,...[+TYPE:V,...] | tcube:FIELD=V,... | ws:BYTES | null",
    )
    p.add_argument("kernel", type=Path, help="the kernel .cpp file")
    p.add_argument("--entry", required=True, help="the __global__ __aicore__ function")
    p.add_argument("--block-dim", type=int, required=True, help="blocks launched (blockDim)")
    p.add_argument("args", nargs="*", help="one per GM_ADDR parameter, in order")
    p.add_argument("--out-dir", type=Path, default=Path("."), help="where outputs go")
    p.add_argument("--memory-check", action="store_true", help="shadow-memory checks of UB")
    p.add_argument(
        "--kernel-type",
        type=_kernel_type,
        help="declare KERNEL_TYPE_X for every block (as KERNEL_TASK_TYPE_DEFAULT would), e.g. "
        "MIX_AIC_1_2 runs 2 * blockDim vector blocks",
    )
    p.add_argument("--platform", default=DEFAULT_PLATFORM, choices=list(PLATFORMS))
    p.add_argument("-D", dest="defines", action="append", default=[], help="NAME[=VALUE]")
    ns = p.parse_intermixed_args(argv)
    if ns.block_dim < 1:
        p.error(f"--block-dim must be >= 1, got {ns.block_dim}")
    return ns


def _kernel_type(text: str) -> str:
    name = text.upper().removeprefix("KERNEL_TYPE_").replace("-", "_")
    if name not in KERNEL_TYPES:
        raise argparse.ArgumentTypeError(
            f"unknown kernel type {text!r}; known: {', '.join(KERNEL_TYPES)}"
        )
    return name


def cpu_run(ns: argparse.Namespace) -> list[Path]:
    """Build and run; returns the output files written.

    Raises:
        CpuRunUsageError: a bad argument, entry or file.
        CpuRunError: the build or a block failed.
    """
    if not ns.kernel.is_file():
        raise CpuRunUsageError(f"kernel file {ns.kernel} does not exist")
    buffers = [parse_arg(text, i) for i, text in enumerate(ns.args)]
    so = build(
        ns.kernel,
        ns.entry,
        len(buffers),
        ns.platform,
        ns.memory_check,
        ns.kernel_type,
        ns.defines,
    )
    lib = _Library(so, grid="SyncAll" in ns.kernel.read_text(errors="replace"))
    block, msg, kind, offsets, written = run_isolated(lib, ns, buffers)
    if block >= 0:
        loc = locate(so, offsets, ns.kernel, build_name(ns.kernel))
        access = "memory check" if ns.memory_check else "memory access error"
        what = access if kind == 1 else "kernel error"
        raise CpuRunError(
            f"{what} in block {block} of {ns.block_dim} ({ns.entry}): {msg}",
            loc,
            hint=None
            if kind != 1
            else "an out-of-bounds, misaligned, uninitialised or unsynchronised access",
        )
    return written


def run_cpu_run(argv: list[str]) -> int:
    """Entry of ``pyasc cpu-run`` (exit status 0 / 1 / 2)."""
    try:
        ns = _main_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    try:
        written = cpu_run(ns)
    except CpuRunUsageError as exc:
        print(f"pyasc cpu-run: {exc}", file=sys.stderr)
        return 2
    except (CpuRunError, OSError) as exc:
        print(f"pyasc cpu-run: {exc}", file=sys.stderr)
        return 1
    for out in written:
        print(f"wrote {out}")
    return 0
