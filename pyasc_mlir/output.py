"""Where a compile puts its result, and a relocatable output folder.

An output folder (``compile(..., output_dir=d)``, or the temporary folder of a compile with the
cache disabled) holds everything needed to load and run the operator: the emitted sources,
every stage's IR, ``op.json`` and its own copy of the CPU library (``lib-<sha256[:16]>.so``,
named by content because ``dlopen`` caches libraries by path). ``op.json``'s ``library`` is
then the file name, relative to the folder (:func:`library_path` resolves it), so the folder
can be copied anywhere, to a machine with an empty cache too. A cache entry
(``<cache>/ops/<key>``) instead points at the shared library cache (an absolute path).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyasc_mlir.cache import atomic_write, cache_dir, file_sha256

LIBRARY_PREFIX = "lib-"
"""The name of an output folder's copy of the CPU library: ``lib-<sha256[:16]>.so``."""


@dataclass
class Entry:
    """Where one ``compile`` call puts its result: the cache key, the output folder (``keep``:
    the temporary folder holding it when the cache is disabled), whether g++ runs even where
    the library cache has the build (``fresh``), whether the library is published into the
    library cache (``shared``) and whether the folder keeps its own library (``local``)."""

    key: str
    directory: Path
    keep: tempfile.TemporaryDirectory[str] | None
    fresh: bool
    shared: bool
    local: bool


def entry(
    output_dir: str | Path | None, key: str, name: str, read_cache: bool, write_cache: bool
) -> Entry:
    """The output folder: ``output_dir``, the cache entry of ``key``, or (cache disabled) a
    temporary folder."""
    keep: tempfile.TemporaryDirectory[str] | None = None
    if output_dir is not None:
        directory = Path(output_dir)
    elif write_cache:
        directory = cache_dir() / "ops" / key
    else:  # PYASC_CACHE_DISABLE=1: nothing goes to (or comes from) the cache
        keep = tempfile.TemporaryDirectory(prefix=f"pyasc-{name}-")
        directory = Path(keep.name)
    local = output_dir is not None or not write_cache
    return Entry(key, directory, keep, not read_cache, write_cache, local)


def place_library(lib: Path, where: Entry) -> str:
    """``op.json``'s ``library`` for the built library ``lib``: in a local folder, the name of
    its content-named copy there (made when missing); in a cache entry, ``lib``'s absolute
    path."""
    if not where.local or not lib.is_file():
        return str(lib.resolve()) if lib.is_file() else str(lib)
    if lib.parent.resolve() == where.directory.resolve():
        return lib.name
    name = f"{LIBRARY_PREFIX}{file_sha256(lib)[:16]}.so"
    target = where.directory / name
    if not target.is_file() or file_sha256(target) != file_sha256(lib):
        atomic_write(target, lib.read_bytes())
    return name


def drop_stale_libraries(directory: Path, info: dict[str, Any]) -> None:
    """Remove the library copies of earlier compiles into ``directory`` (not the one ``info``
    names), so a library folder holds what it uses only."""
    keep = info.get("library")
    for f in directory.glob(f"{LIBRARY_PREFIX}*.so"):
        if f.name != keep:
            f.unlink(missing_ok=True)


def library_path(directory: Path, info: dict[str, Any]) -> Path:
    """The CPU library of the operator ``info`` (``op.json`` of ``directory``) describes:
    ``library`` relative to the folder (an absolute path stays as it is)."""
    return directory / str(info["library"])
