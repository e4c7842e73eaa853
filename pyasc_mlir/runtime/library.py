"""An operator's CPU library: the content-addressed library cache and fresh, published builds.

:func:`operator_library` builds the emitted sources with
:func:`pyasc_mlir.runtime.cpu.build_library` into ``<cache>/cpu/<sha256>``; a cached library
that is truncated or not a shared library (:func:`library_problem`) is rebuilt with a
:class:`CacheWarning`. Fresh builds run g++ in a private folder and are published atomically
(:func:`publish`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Literal

from pyasc_mlir.cache import atomic_write, cache_dir, warn_cache
from pyasc_mlir.platform import get_platform
from pyasc_mlir.runtime import cpu


def library_problem(lib: Path) -> str | None:
    """``None`` when ``lib`` looks like a complete ELF shared library, else what is wrong. A
    truncated file loses the section header table at its end, so this catches truncation
    without loading the library into the process."""
    try:
        size = lib.stat().st_size
        with open(lib, "rb") as f:
            head = f.read(64)
    except OSError as exc:
        return str(exc)
    if len(head) < 64 or head[:4] != b"\x7fELF" or head[4] not in (1, 2) or head[5] not in (1, 2):
        return "not an ELF shared library"
    order: Literal["little", "big"] = "little" if head[5] == 1 else "big"
    if head[4] == 2:  # 64-bit
        shoff, shentsize, shnum = (
            int.from_bytes(head[a:b], order) for a, b in ((0x28, 0x30), (0x3A, 0x3C), (0x3C, 0x3E))
        )
    else:
        shoff, shentsize, shnum = (
            int.from_bytes(head[a:b], order) for a, b in ((0x20, 0x24), (0x2E, 0x30), (0x30, 0x32))
        )
    end = shoff + shentsize * shnum
    if shnum == 0 or end > size:
        return f"truncated: {size} bytes, its section headers end at byte {end}"
    return None


def publish(entry: Path, files: dict[str, str | bytes]) -> None:
    """Put ``files`` into the library cache entry ``entry`` atomically: a whole new folder
    renamed into place, or, where the entry exists (possibly corrupt), each file replaced."""
    for attempt in range(3):
        try:
            if entry.is_dir():
                for fname, data in files.items():
                    atomic_write(entry / fname, data)
                return
            entry.parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=".tmp-publish-", dir=entry.parent))
            try:
                for fname, data in files.items():
                    (tmp / fname).write_bytes(data.encode() if isinstance(data, str) else data)
                os.replace(tmp, entry)
                return
            finally:
                if tmp.exists():
                    shutil.rmtree(tmp, ignore_errors=True)
        except OSError:
            if attempt == 2:
                raise  # after retries: a real failure, not a race with another builder


def operator_library(
    sources: dict[str, str], platform: str, directory: Path, fresh: bool, shared: bool
) -> Path:
    """The CPU library of ``sources``.

    Not ``fresh``: the content-addressed library cache (``<cache>/cpu/<sha256>``), rebuilt with
    a :class:`CacheWarning` when the cached file is truncated or not a shared library.
    ``fresh``: g++ runs in a private folder (only the precompiled runtime header is shared);
    the library is then published atomically into the library cache (``shared``) or copied
    into ``directory`` (cache disabled)."""
    plat = get_platform(platform)
    if not fresh:
        lib = cpu.build_library(sources, plat)
        problem = library_problem(lib) if lib.is_file() else None
        if problem is None:
            return lib
        warn_cache(f"the cached CPU library {lib} is unusable ({problem}); rebuilding it")
    common = cache_dir() / "cpu"
    (common / "pch").mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="pyasc-build-") as tmp:
        root = Path(tmp)
        (root / "cpu").mkdir()
        (root / "cpu" / "pch").symlink_to(common / "pch", target_is_directory=True)
        built = cpu.build_library(sources, plat, cache_dir=root)
        if not built.is_file():  # nothing was built (a stand-in build_library)
            return built
        data = built.read_bytes()
        if shared:
            entry = common / built.parent.name
            publish(entry, {**sources, cpu.LIBRARY_NAME: data})
            return entry / cpu.LIBRARY_NAME
        lib = directory / f"lib-{built.parent.name[:16]}.so"  # content-named: dlopen caches
        atomic_write(lib, data)  # libraries by path
        return lib
