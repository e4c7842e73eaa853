"""Operator libraries: compiled operators found by name.

A *library* is a folder holding compiled operator folders (each relocatable, see
:mod:`pyasc_mlir.output`) and ``registry.json``, which lists them::

    {"format": 1, "ops": [{"name": "swiglu", "version": "1", "folder": "swiglu-1-3f2a9c1e",
      "platform": "910B2", "inputs": [{"shape": [4, 512], "dtype": "float16"}, ...],
      "outputs": [...], "arg_names": ["x", ...], "dynamic": false,
      "checksum": "<the op.json checksum>"}, ...]}

``folder`` is relative to the library, so a library is copied or moved as a whole.

- Written by ``pa.compile(fn, inputs, library=lib, version="1")`` (the operator goes into
  ``lib/<name>-<version>-<signature hash>``; the same name, version and signature replaces its
  entry) and by ``pa.compile(..., output_dir=lib/x)`` when ``lib`` already holds a
  ``registry.json``. Updates hold an exclusive lock (``lib/.registry.lock``) and replace the
  file atomically.
- Searched, in order, in the folders given to :func:`add_op_library` (first added, first
  searched), then in ``PYASC_OP_PATH`` (``os.pathsep``-separated, like ``PATH``).
- ``pa.load_op("swiglu")`` (:func:`find`): among the entries of that name (filtered by
  ``version=``, ``inputs=`` and ``platform=`` when given), the highest version (dot-separated
  parts compared as numbers where they are numbers); the first library in search order wins a
  tie. Several signatures left is an error listing them (choose with ``inputs=``). The folder
  is then checked as ``load_op(folder)`` checks any folder, and its ``op.json`` must be the
  compile the registry recorded (its checksum).
- ``pyasc ops list`` prints every entry (:func:`rows`).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pyasc_mlir.cache import atomic_write
from pyasc_mlir.compiled_op import CompiledOp
from pyasc_mlir.errors import PyAscUsageError, caller_loc
from pyasc_mlir.integrity import verify_folder
from pyasc_mlir.types import TensorDesc

REGISTRY = "registry.json"
"""The registry file of a library folder."""

OP_PATH_VAR = "PYASC_OP_PATH"
"""The variable listing library folders (``os.pathsep``-separated)."""

FORMAT = 1
"""The ``format`` of the ``registry.json`` this version writes and reads."""

_SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")

_ADDED: list[Path] = []

_PATH_HINT = f"add the library with pa.add_op_library(dir) or list it in {OP_PATH_VAR}"


def add_op_library(directory: str | Path) -> None:
    """Search the library folder ``directory`` by name in ``load_op`` (before the
    ``PYASC_OP_PATH`` folders; adding it again does nothing).

    Raises:
        PyAscUsageError: ``directory`` is not a folder (located at the caller)."""
    path = Path(directory).resolve()
    if not path.is_dir():
        raise PyAscUsageError(
            f"operator library {directory} is not a folder",
            caller_loc(),
            "pass the folder that holds registry.json (pa.compile(..., library=dir) makes one)",
        )
    if path not in _ADDED:
        _ADDED.append(path)


def library_dirs(extra: Sequence[str | Path] = ()) -> list[Path]:
    """The library folders searched, in order: ``extra``, :func:`add_op_library`'s, then
    ``PYASC_OP_PATH``'s (duplicates dropped)."""
    found: list[Path] = []
    env = [p for p in os.environ.get(OP_PATH_VAR, "").split(os.pathsep) if p]
    for d in [*extra, *_ADDED, *env]:
        path = Path(d).resolve()
        if path not in found:
            found.append(path)
    return found


def check_version(version: object) -> str:
    """``version`` as a folder-safe string (letters, digits, ``.``, ``_``, ``-``).

    Raises:
        PyAscUsageError: anything else (located)."""
    text = str(version)
    if not isinstance(version, str | int) or isinstance(version, bool) or not _SAFE.fullmatch(text):
        raise PyAscUsageError(
            f"operator version {version!r} is not a version string",
            caller_loc(),
            'use letters, digits, ".", "_" and "-", e.g. version="1.2"',
        )
    return text


def folder_for(library: Path, name: str, version: str, inputs: Sequence[object], plat: str) -> Path:
    """The folder of operator ``name`` at ``version`` for ``inputs`` on ``plat`` inside
    ``library``: ``<name>-<version>-<first 8 hex digits of a hash of the signature>``."""
    digest = hashlib.sha256(repr((list(inputs), plat)).encode()).hexdigest()[:8]
    return library / f"{name}-{version}-{digest}"


def _read(library: Path) -> list[dict[str, Any]]:
    """The entries of ``library``'s registry (none when it has no ``registry.json``).

    Raises:
        PyAscUsageError: the file is not a registry (names it)."""
    path = library / REGISTRY
    if not path.exists():
        return []
    try:
        data = json.loads(path.read_text())
        ops = data["ops"]
        if data.get("format") != FORMAT or not isinstance(ops, list):
            raise ValueError(f"format {data.get('format')!r}, expected {FORMAT}")
        for e in ops:
            for k in ("name", "version", "folder", "inputs", "outputs", "checksum"):
                if k not in e:
                    raise ValueError(f"an entry has no {k!r}")
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise PyAscUsageError(
            f"{path} is not an operator registry: {exc}",
            caller_loc(),
            "restore it, or delete it and compile the operators again with library=",
        ) from None
    return list(ops)


def register(library: Path, folder: Path, info: dict[str, Any], version: str) -> None:
    """Record the operator compiled into ``folder`` (``op.json`` content ``info``) in
    ``library``'s registry, replacing the entry of the same folder.

    Raises:
        PyAscUsageError: ``folder`` is not inside ``library``, or the registry is corrupt."""
    library, folder = library.resolve(), folder.resolve()
    if not folder.is_relative_to(library) or folder == library:
        raise PyAscUsageError(
            f"output folder {folder} is not inside the operator library {library}",
            caller_loc(),
            "leave output_dir out (library= chooses the folder) or put it inside the library",
        )
    entry = {
        "name": info["name"],
        "version": version,
        "folder": folder.relative_to(library).as_posix(),
        "platform": info["platform"],
        "inputs": info["inputs"],
        "outputs": info["outputs"],
        "arg_names": info.get("arg_names") or [],
        "dynamic": bool(info.get("dynamic")),
        "checksum": info["checksum"],
    }
    library.mkdir(parents=True, exist_ok=True)
    with open(library / ".registry.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        ops = [e for e in _read(library) if e["folder"] != entry["folder"]]
        ops.append(entry)
        ops.sort(key=lambda e: (e["name"], _version_key(e["version"]), e["folder"]))
        atomic_write(library / REGISTRY, json.dumps({"format": FORMAT, "ops": ops}, indent=2))


def _version_key(version: str) -> tuple[tuple[int, int | str], ...]:
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in str(version).split("."))


def signature_text(entry: dict[str, Any]) -> str:
    """``x: [4, 512] float16, w: [512, None] float16 -> [4, None] float16``."""

    def desc(d: dict[str, Any]) -> str:
        return f"{json.dumps(d['shape'])} {d['dtype']}"

    names = entry.get("arg_names") or [f"arg{i}" for i in range(len(entry["inputs"]))]
    args = ", ".join(f"{n}: {desc(d)}" for n, d in zip(names, entry["inputs"], strict=False))
    return f"{args} -> {', '.join(desc(d) for d in entry['outputs'])}"


def _fits(entry: dict[str, Any], inputs: Sequence[TensorDesc]) -> bool:
    """The entry's inputs take tensors described by ``inputs`` (``None`` dims: any size)."""
    if len(inputs) != len(entry["inputs"]):
        return False
    for d, e in zip(inputs, entry["inputs"], strict=True):
        if d.dtype != e["dtype"] or len(d.shape) != len(e["shape"]):
            return False
        if any(
            want is not None and got != want for got, want in zip(d.shape, e["shape"], strict=True)
        ):
            return False
    return True


def rows(extra: Sequence[str | Path] = ()) -> list[dict[str, Any]]:
    """Every registry entry of the searched libraries, with its ``library`` folder added."""
    return [{**e, "library": str(lib)} for lib in library_dirs(extra) for e in _read(lib)]


def find(
    name: str,
    version: object | None = None,
    inputs: Sequence[TensorDesc] | None = None,
    platform: str | None = None,
) -> tuple[Path, dict[str, Any]]:
    """The folder and registry entry of operator ``name`` (see the module docstring for the
    choice).

    Raises:
        PyAscUsageError: no library lists ``name`` (or none that fits the filters), or several
            signatures remain (the message lists them)."""
    dirs = library_dirs()
    named = [(lib, e) for lib in dirs for e in _read(lib) if e["name"] == name]
    if not named:
        known = sorted({e["name"] for lib in dirs for e in _read(lib)})
        raise PyAscUsageError(
            f"no operator named {name!r} in the operator libraries "
            f"({', '.join(map(str, dirs)) or 'none'}); known: {', '.join(known) or 'none'}",
            caller_loc(),
            f"{_PATH_HINT}; pa.compile(fn, inputs, library=dir) adds an operator to one",
        )
    want = check_version(version) if version is not None else None
    fits = [
        (lib, e)
        for lib, e in named
        if (want is None or e["version"] == want)
        and (inputs is None or _fits(e, inputs))
        and (platform is None or e.get("platform") == platform)
    ]
    if not fits:
        have = "; ".join(f"version {e['version']}: {signature_text(e)}" for _, e in named)
        raise PyAscUsageError(
            f"operator {name!r} has no entry for the version/inputs/platform asked for; "
            f"the libraries have: {have}",
            caller_loc(),
            "leave version=/inputs=/platform= out to take the latest, or compile it for these",
        )
    top = max(_version_key(e["version"]) for _, e in fits)
    best = [(lib, e) for lib, e in fits if _version_key(e["version"]) == top]
    sigs = {(json.dumps(e["inputs"]), e.get("platform")) for _, e in best}
    if len(sigs) > 1:
        listed = "; ".join(f"{signature_text(e)} ({e.get('platform')})" for _, e in best)
        raise PyAscUsageError(
            f"operator {name!r} version {best[0][1]['version']} has {len(sigs)} signatures: "
            f"{listed}",
            caller_loc(),
            "choose one with load_op(name, inputs=[pa.TensorDesc(shape, dtype), ...]) "
            "(or platform=)",
        )
    lib, e = best[0]
    return lib / e["folder"], e


def check_entry(folder: Path, entry: dict[str, Any], info: dict[str, Any]) -> None:
    """The folder's ``op.json`` (``info``, already verified) is the compile the registry entry
    recorded.

    Raises:
        PyAscUsageError: another operator or another compile (names both)."""
    if info.get("name") != entry["name"] or info.get("checksum") != entry["checksum"]:
        raise PyAscUsageError(
            f"{folder / 'op.json'} is not the compile of {entry['name']!r} version "
            f"{entry['version']} that {REGISTRY} records (it holds {info.get('name')!r}, "
            "checksum differs): the folder was replaced or recompiled outside the library",
            caller_loc(),
            "compile the operator again with pa.compile(..., library=dir, version=...)",
        )


def library_for(library: str | Path | None, output_dir: str | Path | None) -> Path | None:
    """The library a compile registers in: ``library``, else the parent of ``output_dir``
    when it holds a ``registry.json``, else ``None``."""
    if library is not None:
        return Path(library)
    if output_dir is not None and (Path(output_dir).parent / REGISTRY).is_file():
        return Path(output_dir).parent
    return None


def _is_folder(target: str | Path) -> bool:
    """``target`` names a folder (a ``Path``, a string with a path separator, or an existing
    folder), not an operator name."""
    if isinstance(target, Path):
        return True
    seps = [s for s in (os.sep, os.altsep) if s is not None]
    return any(s in target for s in seps) or Path(target).is_dir() or not _SAFE.fullmatch(target)


def load(
    target: str | Path,
    version: object | None,
    inputs: Sequence[TensorDesc] | None,
    platform: str | None,
) -> CompiledOp:
    """``load_op``: the operator in folder ``target``, or the registry entry named ``target``
    (:func:`find`), after the folder checks (:func:`pyasc_mlir.integrity.verify_folder`).

    Raises:
        PyAscUsageError: see ``load_op``; also ``version``/``inputs``/``platform`` given with a
            folder (they choose among registry entries)."""
    if not isinstance(target, str | Path):
        raise PyAscUsageError(
            f"load_op() takes a folder or an operator name, not {type(target).__name__}",
            caller_loc(),
            'pa.load_op("out/my_op") or pa.load_op("swiglu") (a name from an operator library)',
        )
    if _is_folder(target):
        if version is not None or inputs is not None or platform is not None:
            raise PyAscUsageError(
                f"load_op({str(target)!r}): version=, inputs= and platform= choose among the "
                "entries of an operator library; a folder is loaded as it is",
                caller_loc(),
                'drop them, or load by name: pa.load_op("swiglu", version="2")',
            )
        folder = Path(target)
        return CompiledOp(folder, verify_folder(folder))
    folder, e = find(str(target), version, inputs, platform)
    info = verify_folder(folder)
    check_entry(folder, e, info)
    return CompiledOp(folder, info)
