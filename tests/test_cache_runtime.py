"""The CPU-library cache survives damaged entries: a corrupt library or precompiled header is
detected, reported with a CacheWarning and rebuilt."""

from __future__ import annotations

import pytest

from pyasc_mlir.errors import CacheWarning
from pyasc_mlir.platform import get_platform
from pyasc_mlir.runtime.cpu import build_library

SRC = {"kernel.cpp": '#include "kernel_operator.h"\nextern "C" int answer() { return 42; }\n'}


def test_truncated_library_and_broken_pch_are_rebuilt(tmp_path):
    import ctypes

    plat = get_platform()
    lib = build_library(SRC, plat, cache_dir=tmp_path)
    good = lib.read_bytes()
    lib.write_bytes(good[: len(good) // 3])  # truncated: loading it could crash the process
    with pytest.warns(CacheWarning, match="corrupt"):
        lib2 = build_library(SRC, plat, cache_dir=tmp_path)
    assert ctypes.CDLL(str(lib2)).answer() == 42

    for gch in (tmp_path / "cpu" / "pch").rglob("*.gch"):
        gch.write_bytes(gch.read_bytes()[:1000])  # damaged precompiled header
    src2 = {"kernel.cpp": SRC["kernel.cpp"] + "// another build\n"}
    with pytest.warns(CacheWarning, match="precompiled header"):
        lib3 = build_library(src2, plat, cache_dir=tmp_path)
    assert ctypes.CDLL(str(lib3)).answer() == 42
