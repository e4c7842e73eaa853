"""The ``ARG`` specs of ``pyasc cpu-run`` (see ``pyasc_mlir.tools.cpu_run``): each becomes a
:class:`Buffer`, the GM memory handed to one ``GM_ADDR`` parameter of the kernel.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from pathlib import Path

import ml_dtypes
import numpy as np

from pyasc_mlir.errors import PyAscUsageError

SCALAR_TYPES = {
    "i8": "b",
    "u8": "B",
    "i16": "h",
    "u16": "H",
    "i32": "i",
    "u32": "I",
    "i64": "q",
    "u64": "Q",
    "f16": "e",
    "f32": "f",
    "f64": "d",
}
"""Scalar field types of a packed-struct ARG -> ``struct`` format codes (little endian)."""

TCUBE_FIELDS = (
    "usedCoreNum M N Ka Kb singleCoreM singleCoreN singleCoreK baseM baseN baseK depthA1 "
    "depthB1 stepM stepN isBias transLength iterateOrder shareMode shareL1Size shareL0CSize "
    "shareUbSize batchM batchN singleBatchM singleBatchN stepKa stepKb depthAL1CacheUB "
    "depthBL1CacheUB dbL0A dbL0B dbL0C"
).split()
"""``TCubeTiling`` fields in the documented order (``pyasc_cpu/matmul.h``), each ``int32_t``."""

FORMS = "FILE.npy, NAME:DTYPE[SHAPE], FILE.bin, TYPE:V,..., tcube:FIELD=V,..., ws:BYTES, null"

_OUTPUT = re.compile(r"^(?P<name>[A-Za-z_][\w.-]*):(?P<dtype>\w+)\[(?P<shape>[\d,\s]*)\]$")
_SIZE = re.compile(r"^(\d+)([KMG]?)$", re.I)
_STRUCT_PIECE = re.compile(r"^(?P<type>[a-z]\d+):(?P<values>.+)$")


class CpuRunUsageError(PyAscUsageError):
    """A bad command line of ``pyasc cpu-run`` (exit status 2)."""


@dataclass
class Buffer:
    """GM memory for one kernel parameter. ``data`` is ``None`` for a null pointer;
    ``output`` the ``NAME`` of an output (saved as ``NAME.npy``)."""

    data: np.ndarray | None
    output: str | None = None

    def address(self) -> int | None:
        return None if self.data is None else int(self.data.ctypes.data)

    def save(self, out_dir: Path) -> Path:
        assert self.data is not None and self.output is not None
        path = out_dir / f"{self.output}.npy"
        data = self.data
        if data.dtype == np.dtype(ml_dtypes.bfloat16):  # .npy has no bfloat16: the bits
            data = data.view(np.uint16)
        np.save(path, data)
        return path


def _bad(index: int, text: str, why: str) -> CpuRunUsageError:
    return CpuRunUsageError(f"argument {index} {text!r}: {why}", hint=f"an ARG is one of: {FORMS}")


def _dtype(name: str) -> np.dtype:
    if name in ("bfloat16", "bf16"):
        return np.dtype(ml_dtypes.bfloat16)
    try:
        dt = np.dtype(name)
    except TypeError:
        raise ValueError(f"unknown dtype {name!r}") from None
    if dt.kind not in "biuf":
        raise ValueError(f"dtype {name!r} is not a number type")
    return dt


def _output(index: int, text: str, m: re.Match[str]) -> Buffer:
    try:
        dt = _dtype(m["dtype"])
    except ValueError as exc:
        raise _bad(index, text, str(exc)) from None
    dims = [d.strip() for d in m["shape"].split(",") if d.strip()]
    shape = tuple(int(d) for d in dims)
    if not shape or any(d < 1 for d in shape):
        raise _bad(index, text, "an output shape needs at least one dimension, each >= 1")
    return Buffer(_aligned(np.zeros(shape, dt)), m["name"])


def _aligned(arr: np.ndarray, align: int = 64) -> np.ndarray:
    """A C-contiguous copy of ``arr`` whose data starts on an ``align``-byte boundary (GM
    allocations on the device are at least 32-byte aligned; numpy's are not always)."""
    raw = np.zeros(arr.nbytes + align, np.uint8)
    start = (-raw.ctypes.data) % align
    out = raw[start : start + arr.nbytes].view(arr.dtype).reshape(arr.shape)
    out[...] = arr
    return out


def _packed(index: int, text: str) -> Buffer:
    """``TYPE:V,...[+TYPE:V,...]``: fields laid out as a C struct (natural alignment)."""
    blob = b""
    for piece in text.split("+"):
        m = _STRUCT_PIECE.match(piece)
        if m is None or m["type"] not in SCALAR_TYPES:
            raise _bad(index, text, f"{piece!r} is not TYPE:V,... ({' '.join(SCALAR_TYPES)})")
        code = SCALAR_TYPES[m["type"]]
        size = struct.calcsize(code)
        for item in m["values"].split(","):
            value = item.partition("=")[2] if "=" in item else item  # `name=V`: a label only
            try:
                num = float(value) if code in "efd" else int(value, 0)
                blob += b"\0" * (-len(blob) % size) + struct.pack("<" + code, num)
            except (ValueError, struct.error) as exc:
                raise _bad(index, text, f"{value!r} is not a {m['type']}: {exc}") from None
    return Buffer(_aligned(np.frombuffer(blob, np.uint8)))


def _tcube(index: int, text: str) -> Buffer:
    fields = dict.fromkeys(TCUBE_FIELDS, 0)
    for item in text.split(",") if text else []:
        key, _, value = item.partition("=")
        key = key.strip()
        if key not in fields:
            raise _bad(index, text, f"{key!r} is not a TCubeTiling field")
        try:
            fields[key] = int(value, 0)
        except ValueError:
            raise _bad(index, text, f"{key}={value!r} is not an integer") from None
    return Buffer(_aligned(np.array(list(fields.values()), np.int32)))


def _workspace(index: int, text: str) -> Buffer:
    m = _SIZE.match(text)
    if m is None or int(m[1]) < 1:
        raise _bad(index, text, "ws:BYTES needs a positive size (e.g. 16M, 64K, 4096)")
    scale = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[m[2].upper()]
    return Buffer(_aligned(np.zeros(int(m[1]) * scale, np.uint8)))


def _file(index: int, text: str) -> Buffer:
    path = Path(text)
    if not path.is_file():
        raise _bad(index, text, "no such file")
    if path.suffix == ".npy":
        try:
            arr = np.load(path, allow_pickle=False)
        except (ValueError, OSError) as exc:
            raise _bad(index, text, f"not a .npy array: {exc}") from None
        return Buffer(_aligned(np.ascontiguousarray(arr)))
    return Buffer(_aligned(np.frombuffer(path.read_bytes(), np.uint8)))


def parse_arg(text: str, index: int) -> Buffer:
    """The :class:`Buffer` of the ``index``-th ARG.

    Raises:
        CpuRunUsageError: ``text`` is none of the forms, or names a missing file.
    """
    if text == "null":
        return Buffer(None)
    m = _OUTPUT.match(text)
    if m is not None:
        return _output(index, text, m)
    if text.startswith("tcube:"):
        return _tcube(index, text[len("tcube:") :])
    if text.startswith("ws:"):
        return _workspace(index, text[3:])
    if text.endswith((".npy", ".bin")):
        return _file(index, text)
    if _STRUCT_PIECE.match(text.split("+")[0]):
        return _packed(index, text)
    raise _bad(index, text, "not a known form")
