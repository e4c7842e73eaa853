"""Artifacts that cannot be fed garbage: the checksum of ``op.json``, the library's signature,
and the checks ``load_op`` and the cache make before they trust a compiled operator.

Three records tie a compiled folder together:

- ``op.json``'s ``checksum`` (:func:`seal`, :func:`info_checksum`): SHA-256 over the whole
  ``op.json`` content but the checksum itself, in canonical JSON. It covers the SHA-256 of the
  library (``library_sha256``), of the emitted sources (``source_sha256``) and of every stage's
  IR (``ir_sha256``), so an edited or damaged file is noticed without trusting any of them.
- The library's own signature (:func:`signature`): what the CPU build runs by, i.e. name,
  platform, input/output shapes and dtypes (``None`` for dynamic dims), kernels, their argument
  order, blockDim, tiling, launch plan and the dynamic tiling recipe. ``cpu_entry.cpp`` returns
  it from ``pyasc_signature()``, and its entries refuse a launch with another block count or
  tiling (:func:`pyasc_mlir.emit_host.emit_cpu_entry`), so even a re-sealed ``op.json`` cannot
  make the library over-read or compute garbage.
- The library file's SHA-256 (``library_sha256``) and ELF sanity
  (:func:`pyasc_mlir.runtime.library.library_problem`: a truncated file is never loaded).

:func:`verify_folder` (``load_op``) raises a :class:`PyAscUsageError` naming the file and what
differs; the cache (:func:`pyasc_mlir.artifacts.read_cached_info`) rebuilds with a
``CacheWarning`` instead.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pyasc_mlir.cache import file_sha256, text_sha256
from pyasc_mlir.errors import PyAscUsageError, caller_loc
from pyasc_mlir.output import library_path
from pyasc_mlir.pipeline import STAGES
from pyasc_mlir.runtime import cpu
from pyasc_mlir.runtime.library import library_problem

SIGNATURE_KEYS = (
    "name",
    "platform",
    "inputs",
    "outputs",
    "kernel_names",
    "kernel_args",
    "block_dim",
    "tiling",
    "launches",
    "returns",
    "dynamic",
)
"""The ``op.json`` keys the CPU build runs by: the library's :func:`signature`."""

RECOMPILE = "compile the operator again (pyasc_mlir.compile(..., output_dir=...))"


def canonical(value: Any) -> str:
    """``value`` as canonical JSON (sorted keys, no spaces): equal data, equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


def signature(info: dict[str, Any]) -> str:
    """The signature of the operator ``info`` describes (:data:`SIGNATURE_KEYS`, canonical
    JSON): what ``cpu_entry.cpp`` embeds and ``pyasc_signature()`` returns."""
    return canonical({k: info.get(k) for k in SIGNATURE_KEYS})


def info_checksum(info: dict[str, Any]) -> str:
    """SHA-256 (hex) of ``info`` without its ``checksum`` entry, in canonical JSON."""
    body = {k: v for k, v in info.items() if k != "checksum"}
    return hashlib.sha256(canonical(body).encode()).hexdigest()


def seal(info: dict[str, Any], directory: Path | None = None) -> dict[str, Any]:
    """Record in ``info`` the SHA-256 of every stage's IR file in ``directory``
    (``ir_sha256``, stage -> digest) and then the ``checksum`` of the whole; returns ``info``.
    Call it last, just before ``op.json`` is written."""
    if directory is not None:
        info["ir_sha256"] = {
            s: file_sha256(directory / f"{s}.mlir")
            for s in STAGES
            if (directory / f"{s}.mlir").is_file()
        }
    info["checksum"] = info_checksum(info)
    return info


def _diff(mine: Any, theirs: Any, path: str) -> Iterator[tuple[str, Any, Any]]:
    """``(path, mine, theirs)`` for each leaf where two JSON values differ, in order."""
    if isinstance(mine, dict) and isinstance(theirs, dict):
        for k in [*mine, *(k for k in theirs if k not in mine)]:
            yield from _diff(mine.get(k), theirs.get(k), f"{path}.{k}" if path else k)
    elif (
        isinstance(mine, list)
        and isinstance(theirs, list)
        and len(mine) == len(theirs)
        and mine != theirs
    ):
        for i, (a, b) in enumerate(zip(mine, theirs, strict=True)):
            yield from _diff(a, b, f"{path}[{i}]")
    elif mine != theirs:
        yield path, mine, theirs


def signature_problem(
    info: dict[str, Any], lib_signature: str | None, lib: Path, where: Path
) -> str | None:
    """``None`` when the library's signature is the one ``info`` (read from ``where``)
    describes, else what differs: ``"<where>: inputs[0].shape is [33, 41] but the CPU library
    lib.so was compiled for [33, 40]"``."""
    if lib_signature is None:
        return (
            f"the CPU library {lib} of {where} exports no signature (built by an older "
            "pyasc-mlir or not by compile)"
        )
    try:
        theirs = json.loads(lib_signature)
    except ValueError:
        return f"the CPU library {lib} of {where} has an unreadable signature"
    normal = json.loads(signature(info))  # tuples as lists, as the library has them
    mine = {k: normal[k] for k in SIGNATURE_KEYS}  # the name first
    diffs = list(_diff(mine, theirs, ""))
    if not diffs:
        return None
    path, a, b = diffs[0]
    more = f" (and {len(diffs) - 1} more difference(s))" if len(diffs) > 1 else ""
    what = (
        f"operator {b!r}, not {a!r}"
        if path == "name"
        else f"{json.dumps(b)}; {where.name} says {json.dumps(a)}"
    )
    return f"{where}: {path} differs: the CPU library {lib.name} was compiled for {what}{more}"


def check_library(info: dict[str, Any], lib: Path, where: Path) -> None:
    """The library ``lib`` is loadable and was compiled for ``info`` (read from ``where``).

    Raises:
        PyAscUsageError: the file is missing, damaged (truncated, not a shared library),
            cannot be loaded, or its signature differs (names the first difference)."""
    if not lib.is_file():
        raise PyAscUsageError(
            f"the CPU library {lib} of {where} is missing", caller_loc(), RECOMPILE
        )
    problem = library_problem(lib)
    if problem is not None:
        raise PyAscUsageError(
            f"the CPU library {lib} of {where} is damaged ({problem})", None, RECOMPILE
        )
    try:
        got = cpu.library_signature(lib)
    except OSError as exc:
        raise PyAscUsageError(
            f"the CPU library {lib} of {where} cannot be loaded: {exc}", None, RECOMPILE
        ) from None
    problem = signature_problem(info, got, lib, where)
    if problem is not None:
        raise PyAscUsageError(problem, caller_loc(), RECOMPILE)


def check_ir(info: dict[str, Any], path: Path, text: str) -> None:
    """The IR file ``path`` (content ``text``) is the one ``compile`` wrote for ``info``.

    Raises:
        PyAscUsageError: no digest recorded for it, or its content differs."""
    digest = (info.get("ir_sha256") or {}).get(path.stem)
    if digest is None or text_sha256(text) != digest:
        raise PyAscUsageError(
            f"{path} differs from the IR compile wrote (its SHA-256 is not the one op.json "
            "records): it was edited or is damaged",
            caller_loc(),
            RECOMPILE,
        )


def verify_folder(directory: Path) -> dict[str, Any]:
    """The ``op.json`` of a compiled folder, after checking everything the CPU build trusts:
    its checksum, the library (loadable, its signature equals ``op.json``'s, its SHA-256 the
    recorded one) and the emitted sources the memory-check build compiles. The IR files are
    checked when read (:func:`check_ir`).

    Raises:
        PyAscUsageError: a clear message naming the file and what differs (hint: compile
            again): ``op.json`` missing, not JSON, without a checksum, or edited; the library
            missing, damaged, swapped or compiled for other shapes/dtypes/tiling."""
    path = directory / "op.json"
    try:
        info = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise PyAscUsageError(
            f"{path} is missing or corrupt: {exc}", caller_loc(), RECOMPILE
        ) from None
    if not isinstance(info, dict):
        raise PyAscUsageError(f"{path} is corrupt: not a JSON object", caller_loc(), RECOMPILE)
    if "checksum" not in info:
        raise PyAscUsageError(
            f"{path} has no checksum (written by an older pyasc-mlir or by "
            "hand), so it cannot be trusted",
            caller_loc(),
            RECOMPILE,
        )
    if info.get("library"):
        lib = library_path(directory, info)
        check_library(info, lib, path)
        if file_sha256(lib) != info.get("library_sha256"):
            raise PyAscUsageError(
                f"the CPU library {lib} is not the one {path} records (its "
                "SHA-256 differs): it was replaced or damaged",
                caller_loc(),
                RECOMPILE,
            )
    if info_checksum(info) != info["checksum"]:
        raise PyAscUsageError(
            f"{path} was edited or is damaged: its content does not match its checksum",
            caller_loc(),
            RECOMPILE,
        )
    for fname, digest in (info.get("source_sha256") or {}).items():
        try:
            ok = text_sha256((directory / fname).read_text()) == digest
        except (OSError, ValueError):
            ok = False
        if not ok:
            raise PyAscUsageError(
                f"{directory / fname} is missing or differs from the source {path} records",
                caller_loc(),
                RECOMPILE,
            )
    return info
