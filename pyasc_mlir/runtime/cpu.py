"""CPU build of the emitted Ascend C: compile with g++ against ``kernel_operator.h`` and run.

The contract is ``docs/CPU_RUNTIME.md``. :func:`build_library` compiles the emitted sources
(``kernel.cpp`` and ``cpu_entry.cpp``) into a shared library, cached on disk under the SHA-256 of
the sources, the runtime header, the flags and the g++ version. :class:`CpuKernel` loads such a
library with ctypes and runs a launch through ``pyasc_run_grid`` (``pyasc_run_block``
per block in libraries without it).

Memory-check builds (``build_library(..., memcheck=True)``, see ``pyasc_mlir.checks``) add
:data:`MEMCHECK_FLAGS` and are cached separately (the flags are part of the key).
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pyasc_mlir.checks import MemoryCheckError
from pyasc_mlir.errors import CacheWarning, PyAscError, SourceLoc
from pyasc_mlir.platform import Platform, header_defines

INCLUDE_DIR = Path(__file__).resolve().parent / "include"
"""Folder holding ``kernel_operator.h`` (passed to g++ with ``-I``)."""

CXX_FLAGS = ("-std=c++17", "-O2", "-shared", "-fPIC")
"""Compiler flags of the contract, besides ``-I`` and the UB size macros."""

MEMCHECK_FLAGS = ("-DPYASC_MEMCHECK=1",)
"""Extra g++ flags of a memory-check build (NaN-filled UB, shadow "defined" map)."""

LIBRARY_NAME = "lib.so"

TILING_PAD = 2048
"""Smallest tiling buffer handed to a kernel, in bytes (256 ``int64_t`` fields)."""


class CompileError(RuntimeError):
    """g++ failed (or is missing). ``diagnostics`` holds its stderr, ``command`` the argv."""

    def __init__(self, message: str, diagnostics: str = "", command: list[str] | None = None):
        super().__init__(message if not diagnostics else f"{message}\n{diagnostics}")
        self.diagnostics = diagnostics
        self.command = command or []


class KernelError(PyAscError, RuntimeError):
    """A block of a kernel threw ``AscendC::cpu::Error`` (or another C++ exception).

    A :class:`~pyasc_mlir.errors.PyAscError`: when the C++ message ends with the
    ``file:line:col`` of the user source the failing call was generated from (as every kernel
    pyasc-mlir emits records), the error is located there and hints that the generated code,
    not the user's, is at fault.

    Attributes:
        block_idx: the block that failed.
        block_num: the block count of the launch.
        detail: the C++ error message (``pyasc_last_error()``).
    """

    def __init__(self, block_idx: int, block_num: int, detail: str, hint: str | None = None):
        if not isinstance(block_idx, int) or not isinstance(detail, str):
            raise TypeError("KernelError(block_idx, block_num, detail)")
        tail = _detail_tail(detail)
        loc = SourceLoc.parse(tail) if tail else None
        if hint is None and loc is not None and type(self) is KernelError:
            hint = GENERATED_CALL_HINT
        super().__init__(f"kernel failed in block {block_idx} of {block_num}: {detail}", loc, hint)
        self.block_idx = block_idx
        self.block_num = block_num
        self.detail = detail


GENERATED_CALL_HINT = (
    "the Ascend C pyasc-mlir generated for this line makes a call the target refuses: a "
    "pyasc-mlir bug, please report it with the kernel; backend='interp' (the IR interpreter) "
    "runs the kernel meanwhile"
)
"""The hint of a located :class:`KernelError` (not a memory error)."""

_LOC = re.compile(r"\S.*:\d+:\d+")


def _detail_tail(detail: str) -> str | None:
    """The ``file:line:col`` a C++ error message ends with (`` at file:line:col``), if any."""
    tail = detail.rsplit(" at ", 1)[-1] if " at " in detail else ""
    return tail if _LOC.fullmatch(tail) else None


class GlobalBoundsWarning(UserWarning):
    """A memory-check run read or wrote GM past the size a kernel gave ``SetGlobalBuffer`` but
    inside the host allocation: legal on the hardware (no error), reported so the kernel author
    can check the intent (docs/CPU_RUNTIME.md, "GM bounds")."""


class KernelMemoryError(KernelError, MemoryCheckError):
    """A block made a memory access violation (``AscendC::cpu::AccessError``): out of bounds,
    misaligned or, in memory-check builds, a read of uninitialised UB.

    Attributes (besides :class:`KernelError`'s): ``op`` the Ascend C call (the message's first
    word, e.g. ``DataCopyPad(UB->GM)``), ``loc`` the ``SourceLoc`` of the ``file:line:col`` the
    message ends with (``None`` when the kernel recorded no location).
    """

    def __init__(self, block_idx: int, block_num: int, detail: str):
        super().__init__(block_idx, block_num, detail)
        self.located(
            detail, detail.split(": ", 1)[0] if ": " in detail else None, _detail_tail(detail)
        )


def default_cache_dir() -> Path:
    """The pyasc cache root: ``$PYASC_CACHE_DIR`` (``~`` expanded), or ``~/.cache/pyasc_mlir``
    when it is unset, empty or blank. Not checked here (``pyasc_mlir.cache.cache_dir`` is)."""
    env = os.environ.get("PYASC_CACHE_DIR", "")
    return Path(env).expanduser() if env.strip() else Path.home() / ".cache" / "pyasc_mlir"


def _compiler() -> str:
    cxx = shutil.which("g++")
    if cxx is None:
        raise CompileError("g++ not found on PATH: the CPU build needs g++ 12 or newer")
    return cxx


@functools.lru_cache(maxsize=4)
def _compiler_version(cxx: str) -> str:
    try:
        out = subprocess.run([cxx, "--version"], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise CompileError(f"cannot run {cxx} --version: {exc}") from exc
    return out.stdout.strip()


def _header_text() -> str:
    parts = []
    for path in sorted(INCLUDE_DIR.rglob("*.h")):
        parts.append(f"{path.relative_to(INCLUDE_DIR).as_posix()}\0{path.read_text()}")
    return "\0".join(parts)


def _flags(platform: Platform, extra: Sequence[str] = ()) -> list[str]:
    return [
        *CXX_FLAGS,
        *header_defines(platform),
        *extra,
    ]


def library_key(
    sources: dict[str, str], platform: Platform, extra_flags: Sequence[str] = ()
) -> str:
    """SHA-256 (hex) cache key of a build: sources, runtime header, flags and g++ version.

    Raises:
        CompileError: g++ is missing.
    """
    h = hashlib.sha256()
    for part in (
        _compiler_version(_compiler()),
        _header_text(),
        "\0".join(_flags(platform, extra_flags)),
        *(f"{name}\0{text}" for name, text in sorted(sources.items())),
    ):
        data = part.encode()
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def _check_names(sources: dict[str, str]) -> None:
    if not any(name.endswith(".cpp") for name in sources):
        raise ValueError("build_library: no .cpp source among " + ", ".join(sorted(sources)))
    for name in sources:
        if not name or "/" in name or "\\" in name or name.startswith(".") or name == LIBRARY_NAME:
            raise ValueError(f"build_library: bad source file name {name!r}")


def _pch_dir(root: Path, platform: Platform, extra: Sequence[str] = ()) -> Path | None:
    """A folder holding ``kernel_operator.h`` precompiled for these flags (built once, cached
    under ``<root>/pch/<key>``); ``None`` when g++ cannot make one (then builds just go slower).
    """
    cxx = _compiler()
    flags = [f for f in _flags(platform, extra) if f != "-shared"]
    key = hashlib.sha256(
        "\0".join([_compiler_version(cxx), _header_text(), *flags]).encode()
    ).hexdigest()[:32]
    entry = root / "pch" / key
    if (entry / "kernel_operator.h.gch").is_file():
        return entry
    entry.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-pch-", dir=entry.parent))
    try:
        header = tmp / "kernel_operator.h"
        shutil.copy(INCLUDE_DIR / "kernel_operator.h", header)
        cmd = [
            cxx,
            *flags,
            f"-I{INCLUDE_DIR}",
            "-x",
            "c++-header",
            str(header),
            "-o",
            str(header) + ".gch",
        ]
        if subprocess.run(cmd, capture_output=True, text=True).returncode != 0:
            return None
        try:
            os.replace(tmp, entry)
        except OSError:
            if not (entry / "kernel_operator.h.gch").is_file():
                return None
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return entry


def _compile(
    workdir: Path,
    sources: dict[str, str],
    platform: Platform,
    pch: Path | None,
    extra: Sequence[str] = (),
) -> None:
    """Compile every ``.cpp`` in ``workdir`` as ONE translation unit (the runtime header is
    parsed once, from its precompiled form when available) and link ``lib.so``."""
    cxx = _compiler()
    cpps = sorted(name for name in sources if name.endswith(".cpp"))
    unity = "\n".join(['#include "kernel_operator.h"', *(f'#include "{n}"' for n in cpps), ""])
    (workdir / "unity.cc").write_text(unity)
    includes = ([f"-I{pch}"] if pch is not None else []) + [f"-I{INCLUDE_DIR}", "-I."]
    cmd = [cxx, *_flags(platform, extra), *includes, "unity.cc", "-o", LIBRARY_NAME]
    proc = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True)
    if proc.returncode != 0:
        raise CompileError(
            f"g++ failed compiling {', '.join(cpps)}", (proc.stdout + proc.stderr).strip(), cmd
        )


def _compile_with_pch(
    workdir: Path,
    sources: dict[str, str],
    platform: Platform,
    pch: Path | None,
    extra: Sequence[str],
) -> None:
    """:func:`_compile`, from the precompiled header when there is one. When that fails the
    build is retried from the plain header: if the retry fails too the sources are at fault and
    its error is raised with the precompiled header left intact (it is shared by every build);
    only a precompiled header proven unusable (the retry succeeds) is dropped."""
    try:
        _compile(workdir, sources, platform, pch, extra)
        return
    except CompileError:
        if pch is None:
            raise
    _compile(workdir, sources, platform, None, extra)  # raises: a kernel error, pch kept
    warnings.warn(
        f"precompiled header {pch} is unusable; dropped (built without it)",
        CacheWarning,
        stacklevel=3,
    )
    shutil.rmtree(pch, ignore_errors=True)


def build_library(
    sources: dict[str, str],
    platform: Platform,
    cache_dir: Path | None = None,
    memcheck: bool = False,
    extra_flags: Sequence[str] = (),
    pch: bool = True,
) -> Path:
    """Compile emitted Ascend C sources into a shared library for the CPU runtime, with caching.

    Args:
        sources: file name -> text, e.g. ``{"kernel.cpp": ..., "cpu_entry.cpp": ...}``. Every
            ``.cpp`` is compiled; other files (headers) are only written next to them.
        platform: fixes the UB arena (``platform.ub_bytes``) and the TPipe bound
            (``platform.ub_usable_bytes``), both in bytes.
        cache_dir: the pyasc cache root (default :func:`default_cache_dir`); libraries live in
            ``<cache_dir>/cpu/<sha256>/lib.so`` next to their sources.
        memcheck: build the memory-check variant (adds :data:`MEMCHECK_FLAGS`).
        extra_flags: more g++ flags (e.g. ``-D`` defines); part of the cache key.
        pch: use (and on first use build, under ``<cache_dir>/cpu/pch``) the precompiled
            runtime header. ``False`` (a one-off build, ``PYASC_CACHE_DISABLE=1``) parses the
            plain header and writes nothing besides the library entry.

    Returns:
        Path of the cached ``lib.so``. A second call with the same inputs returns the same path
        without running g++.

    Raises:
        CompileError: g++ is missing or rejects the sources (the message carries its
            diagnostics).
        ValueError: no ``.cpp`` source, or a file name with a path separator.
    """
    _check_names(sources)
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    root = root / "cpu"
    extra = [*(MEMCHECK_FLAGS if memcheck else ()), *extra_flags]
    key = library_key(sources, platform, extra)
    entry = root / key
    lib = entry / LIBRARY_NAME
    if lib.is_file():
        if _digest_ok(lib):
            return lib
        warnings.warn(
            f"cached CPU library {lib} is corrupt (its SHA-256 does not match the "
            "one recorded at build time); rebuilding it",
            CacheWarning,
            stacklevel=2,
        )
        shutil.rmtree(entry, ignore_errors=True)
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{key[:16]}-", dir=root))
    try:
        for name, text in sources.items():
            (tmp / name).write_text(text)
        pch_dir = _pch_dir(root, platform, extra) if pch else None
        _compile_with_pch(tmp, sources, platform, pch_dir, extra)
        (tmp / (LIBRARY_NAME + ".sha256")).write_text(_sha256(tmp / LIBRARY_NAME))
        if entry.exists() and not lib.is_file():
            shutil.rmtree(entry, ignore_errors=True)  # a broken entry from an older crash
        try:
            os.replace(tmp, entry)  # atomic publish of the whole entry
        except OSError:
            if not lib.is_file():  # not a lost race with another builder: a real failure
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return lib


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _digest_ok(lib: Path) -> bool:
    """The library matches the digest recorded when it was built (entries from before digests
    were recorded are trusted)."""
    record = lib.with_name(LIBRARY_NAME + ".sha256")
    if not record.is_file():
        return True
    try:
        return record.read_text().strip() == _sha256(lib)
    except OSError:
        return False


class CpuKernel:
    """A kernel library built by :func:`build_library`, loaded with ctypes.

    Args:
        so_path: path of the ``lib.so``; it must export the ``entry`` function (default
            ``pyasc_run_block``; ``pyasc_run_block_<kernel>`` in batch libraries) and
            ``pyasc_last_error`` (see docs/CPU_RUNTIME.md).

    Raises:
        OSError: the library cannot be loaded.
        AttributeError: an entry point is missing.
    """

    def __init__(self, so_path: Path | str, entry: str = "pyasc_run_block"):
        self.so_path = Path(so_path)
        self._lib = ctypes.CDLL(str(self.so_path))
        self._run_block = getattr(self._lib, entry)
        self._run_block.restype = ctypes.c_int
        self._run_block.argtypes = [
            ctypes.c_int64,
            ctypes.c_int64,
            ctypes.POINTER(ctypes.c_void_p),
            ctypes.c_int64,
        ]
        # the whole-launch entry (cross-core SyncAll); libraries built before it lack it
        grid_name = entry.replace("pyasc_run_block", "pyasc_run_grid", 1)
        self._run_grid: Any = getattr(self._lib, grid_name, None) if grid_name != entry else None
        if self._run_grid is not None:
            self._run_grid.restype = ctypes.c_int
            self._run_grid.argtypes = [
                ctypes.c_int64,
                ctypes.POINTER(ctypes.c_void_p),
                ctypes.c_int64,
                ctypes.POINTER(ctypes.c_int64),
            ]
        self._last_error = self._lib.pyasc_last_error
        self._last_error.restype = ctypes.c_char_p
        self._last_error.argtypes = []
        # libraries built before memory checks existed lack it
        self._last_error_kind = getattr(self._lib, "pyasc_last_error_kind", None)
        if self._last_error_kind is not None:
            self._last_error_kind.restype = ctypes.c_int
            self._last_error_kind.argtypes = []
        # libraries built before the MIX model existed lack it
        self._task_ratio: Any = getattr(self._lib, "pyasc_task_ratio", None)
        if self._task_ratio is not None:
            self._task_ratio.restype = ctypes.c_int
            self._task_ratio.argtypes = []
        self._tilings: dict[bytes, tuple[np.ndarray, int]] = {}
        # libraries built before the GM allocation registry existed lack it
        self._gm: dict[str, Any] = {}
        for name, res, args in (
            ("pyasc_gm_reset", None, []),
            ("pyasc_gm_register", None, [ctypes.c_void_p, ctypes.c_uint64]),
            ("pyasc_gm_report_count", ctypes.c_int64, []),
            ("pyasc_gm_report", ctypes.c_char_p, [ctypes.c_int64]),
        ):
            fn = getattr(self._lib, name, None)
            if fn is not None:
                fn.restype, fn.argtypes = res, args
                self._gm[name] = fn

    def signature(self) -> str | None:
        """What the library was compiled for (``pyasc_signature()``, canonical JSON, see
        :func:`pyasc_mlir.integrity.signature`); ``None`` when it exports none (batch
        libraries)."""
        return _signature_of(self._lib)

    def run(
        self, block_dim: int, gm_args: list[np.ndarray], tiling: bytes, workspace_bytes: int = 0
    ) -> None:
        """Run the kernel on ``block_dim`` blocks (block 0 first), through the library's
        ``pyasc_run_grid`` when it has one: blocks run one at a time and switch only where one
        waits at a cross-core ``SyncAll`` (docs/CPU_RUNTIME.md, "Cross-core synchronisation");
        older libraries run block after block through ``pyasc_run_block``.

        A kernel that declares ``KERNEL_TYPE_MIX_AIC_1_2`` runs ``2 * block_dim`` vector blocks
        (``GetBlockIdx()`` up to ``2 * block_dim - 1``, ``GetBlockNum()`` = ``block_dim``): the
        count is read from the library (``pyasc_task_ratio()``) after block 0 (docs/CPU_RUNTIME.md,
        "MIX kernels").

        Args:
            block_dim: number of blocks launched (``GetBlockNum()``), at least 1.
            gm_args: the GM tensors in kernel-parameter order; C-contiguous arrays whose memory
                the kernel reads and writes in place.
            tiling: the tiling struct as raw bytes (copied; the kernel gets a pointer to it).
            workspace_bytes: size of the zero-filled GM workspace shared by all blocks (bytes);
                0 passes a null workspace pointer.

        Raises:
            ValueError: bad ``block_dim`` or a non-contiguous array.
            KernelError: a block raised an error; it names the block and the C++ message
                (:class:`KernelMemoryError` for a memory access violation).
        """
        if block_dim < 1:
            raise ValueError(f"block_dim must be >= 1, got {block_dim}")
        if workspace_bytes < 0:
            raise ValueError(f"workspace_bytes must be >= 0, got {workspace_bytes}")
        ptrs: list[int | None] = []
        for i, arr in enumerate(gm_args):
            if not isinstance(arr, np.ndarray) or not arr.flags.c_contiguous:
                raise ValueError(f"gm_args[{i}] must be a C-contiguous numpy array")
            ptrs.append(_address(arr))
        # 64-byte aligned, zero-filled buffers for the workspace and the tiling struct.
        workspace = _aligned_zeros(workspace_bytes) if workspace_bytes else None
        ptrs.append(workspace.ctypes.data if workspace is not None else None)
        ptrs.append(self._tiling_address(tiling))
        tiling_buf = self._tilings[tiling if type(tiling) is bytes else bytes(tiling)][0]
        self._register_gm([*gm_args, tiling_buf], workspace)
        nargs = len(ptrs)
        argv = (ctypes.c_void_p * nargs)(*ptrs)  # per call: the GIL is released while it runs
        if self._run_grid is not None:
            failed = ctypes.c_int64(0)
            if self._run_grid(block_dim, argv, nargs, ctypes.byref(failed)) != 0:
                self._raise(failed.value, block_dim)
            self._warn_gm_reports()
            return
        run_block = self._run_block
        if run_block(0, block_dim, argv, nargs) != 0:
            self._raise(0, block_dim)
        ratio = self._task_ratio() if self._task_ratio is not None else 1
        for block in range(1, block_dim * ratio):
            if run_block(block, block_dim, argv, nargs) != 0:
                self._raise(block, block_dim)
        self._warn_gm_reports()

    def _register_gm(self, gm_args: list[np.ndarray], workspace: np.ndarray | None) -> None:
        """Tell the library which host memory the GM pointers point into (every argument array,
        the tiling buffer and the workspace), so a GM access past a ``SetGlobalBuffer`` size but
        inside that memory is not refused, and one outside all of it is (docs/CPU_RUNTIME.md,
        "GM bounds")."""
        if len(self._gm) < 4:
            return
        self._gm["pyasc_gm_reset"]()
        for arr in [*gm_args, *([workspace] if workspace is not None else [])]:
            if arr.nbytes:
                self._gm["pyasc_gm_register"](_address(arr), arr.nbytes)

    def _warn_gm_reports(self) -> None:
        """Issue a :class:`GlobalBoundsWarning` per GM access past a ``SetGlobalBuffer`` size
        that a memory-check build recorded during the launch."""
        if len(self._gm) < 4:
            return
        for i in range(self._gm["pyasc_gm_report_count"]()):
            text = self._gm["pyasc_gm_report"](i)
            warnings.warn(
                GlobalBoundsWarning(text.decode(errors="replace") if text else ""), stacklevel=3
            )

    def _tiling_address(self, tiling: bytes) -> int:
        """Address of a 64-byte aligned, zero-padded copy of ``tiling`` (at least
        :data:`TILING_PAD` bytes: a kernel that reads more fields than it was given reads
        zeros, which a checked entry refuses, never memory past the buffer).

        The buffer is made once per distinct tiling and kept (``_tilings``); its bytes are
        written again on every call, so a kernel that wrote into it cannot leak into the next.
        """
        key = tiling if type(tiling) is bytes else bytes(tiling)
        hit = self._tilings.get(key)
        if hit is None:
            buf = _aligned_zeros(max(len(key), TILING_PAD))
            if len(self._tilings) > 4096:
                self._tilings.clear()
            hit = self._tilings[key] = (buf, buf.ctypes.data)
        ctypes.memmove(hit[1], key, len(key))
        return hit[1]

    def _raise(self, block: int, block_dim: int) -> None:
        """Raise the error block ``block`` reported (``pyasc_last_error``)."""
        msg = self._last_error()
        detail = msg.decode(errors="replace") if msg else ""
        if self._last_error_kind is not None and self._last_error_kind() == 1:
            raise KernelMemoryError(block, block_dim, detail)
        raise KernelError(block, block_dim, detail)


def _signature_of(lib: ctypes.CDLL) -> str | None:
    try:
        fn = lib.pyasc_signature
    except AttributeError:
        return None
    fn.restype = ctypes.c_char_p
    fn.argtypes = []
    text = fn()
    return text.decode(errors="replace") if text is not None else None


def library_signature(so_path: Path | str) -> str | None:
    """The ``pyasc_signature()`` of the library at ``so_path`` (loaded with ctypes), ``None``
    when it exports none.

    Raises:
        OSError: the library cannot be loaded."""
    return _signature_of(ctypes.CDLL(str(so_path)))


def _address(arr: np.ndarray) -> int:
    """The data address of a C-contiguous array (through the buffer protocol, which is several
    times cheaper than ``arr.ctypes.data``; read-only or empty arrays take the slow way)."""
    try:
        # numpy's stubs declare ndarray.__buffer__ for Python >= 3.12 only, hence the ignore
        return ctypes.addressof(ctypes.c_char.from_buffer(arr))  # type: ignore[arg-type]
    except (TypeError, ValueError, BufferError):
        return arr.ctypes.data


def _aligned_zeros(nbytes: int, align: int = 64) -> np.ndarray:
    raw = np.zeros(nbytes + align, dtype=np.uint8)
    start = (-raw.ctypes.data) % align
    return raw[start : start + nbytes]
