"""The compile cache: what its key covers, corrupt entries, concurrent compilations and the
switches (``PYASC_CACHE_DIR``, ``PYASC_CACHE_DISABLE=1``, ``always_compile=True``).

Every test runs against a private cache folder (``PYASC_CACHE_DIR``) that shares only the
precompiled runtime header with the default cache. To keep the file fast, rebuilds of the one
kernel ``scale_shift`` (whose library is built for real once) copy that library instead of
running g++ again: same sources, same bytes; the cache logic around the build is unchanged.
"""

from __future__ import annotations

import json
import multiprocessing
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import pyasc_mlir as pa
from pyasc_mlir import cache, driver, pipeline, version
from pyasc_mlir.errors import CacheWarning
from pyasc_mlir.runtime import cpu, library

F32 = np.float32
X = np.linspace(-3, 3, 4 * 48, dtype=F32).reshape(4, 48)
DESC = [pa.TensorDesc((4, 48), "float32")]


def scale_shift(x):
    return x * 3.0 - 1.0


def new_cache(root: Path) -> Path:
    """An empty cache folder whose precompiled-header folder is the default cache's."""
    shared = cpu.default_cache_dir() / "cpu" / "pch"
    shared.mkdir(parents=True, exist_ok=True)
    (root / "cpu").mkdir(parents=True)
    (root / "cpu" / "pch").symlink_to(shared, target_is_directory=True)
    return root


@pytest.fixture(scope="module")
def shared_root(tmp_path_factory):
    return new_cache(tmp_path_factory.mktemp("cache"))


@pytest.fixture(autouse=True)
def cache_env(shared_root, monkeypatch):
    monkeypatch.setenv("PYASC_CACHE_DIR", str(shared_root))
    monkeypatch.delenv("PYASC_CACHE_DISABLE", raising=False)
    driver.clear_memory_cache()
    yield shared_root
    driver.clear_memory_cache()


@pytest.fixture(scope="module")
def pristine(shared_root):
    """The sources and library bytes of ``scale_shift``, built for real once."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYASC_CACHE_DIR", str(shared_root))
        mp.delenv("PYASC_CACHE_DISABLE", raising=False)
        op = pa.compile(scale_shift, DESC)
    sources = {n: (op.directory / n).read_text() for n in ("kernel.cpp", "cpu_entry.cpp")}
    return sources, Path(op.info["library"]).read_bytes()


@pytest.fixture
def gxx_runs(monkeypatch, pristine):
    """A list that gets one entry per compilation of a kernel library (g++, or the copy of
    the pristine ``scale_shift`` library for exactly its sources)."""
    runs: list[list[str]] = []
    real = cpu._compile
    sources, data = pristine

    def counting(workdir, srcs, *args, **kwargs):
        runs.append(sorted(srcs))
        if srcs == sources:
            (Path(workdir) / cpu.LIBRARY_NAME).write_bytes(data)
            return None
        return real(workdir, srcs, *args, **kwargs)

    monkeypatch.setattr(cpu, "_compile", counting)
    return runs


def check_result(op) -> None:
    np.testing.assert_allclose(op(X), X * F32(3) - F32(1), rtol=1e-6)


def corrupt(path: Path, data: bytes) -> None:
    """Replace ``path`` by ``data`` as a new file (a library this process has loaded keeps its
    old, intact mapping; overwriting it in place would crash the process, not test the cache).
    """
    tmp = path.with_name(path.name + ".corrupt")
    tmp.write_bytes(data)
    tmp.replace(path)


def check_entry(op) -> None:
    """The on-disk entry of ``op`` is complete and consistent."""
    info = json.loads((op.directory / "op.json").read_text())
    lib = Path(info["library"])
    assert lib.is_file() and cache.file_sha256(lib) == info["library_sha256"]
    assert library.library_problem(lib) is None
    assert not list(op.directory.glob(".*.tmp"))  # no half-written files left


# ------------------------------------------------------------------------------ the key


def key(fn, inputs=DESC, **options):
    opts = {"platform": "910B2", "double_buffer": True, "name": fn.__name__, **options}
    return cache.cache_key(fn, inputs, opts)


def test_key_covers_compiler_version(monkeypatch):
    before = key(scale_shift)
    cache.compiler_fingerprint.cache_clear()
    monkeypatch.setattr(version, "__version__", "99.0")
    try:
        assert key(scale_shift) != before
    finally:
        cache.compiler_fingerprint.cache_clear()
    monkeypatch.undo()
    cache.compiler_fingerprint.cache_clear()
    assert key(scale_shift) == before
    monkeypatch.setattr(cache, "compiler_fingerprint", lambda: "another compiler build")
    assert key(scale_shift) != before


HELPERS = """
SCALE = {scale}
OFFSET = (1.0, {offset})


def inner(x):
    return x * {inner}


def helper(x):
    return inner(x) * SCALE + OFFSET[1]
"""
KERNELS = """
import helpers_mod
from helpers_mod import helper


def via_name(x):
    return helper(x)


def via_module(x):
    return helpers_mod.helper(x)
"""


def load_variant(tmp_path: Path, tag: str, scale=2.0, offset=0.5, inner="1.0"):
    """Import ``kernels_mod`` (whose text never changes) with a ``helpers_mod`` variant."""
    folder = tmp_path / tag
    folder.mkdir()
    (folder / "helpers_mod.py").write_text(HELPERS.format(scale=scale, offset=offset, inner=inner))
    (folder / "kernels_mod.py").write_text(KERNELS)
    for name in ("helpers_mod", "kernels_mod"):
        sys.modules.pop(name, None)
    sys.path.insert(0, str(folder))
    try:
        import kernels_mod
    finally:
        sys.path.remove(str(folder))
        for name in ("helpers_mod", "kernels_mod"):
            sys.modules.pop(name, None)
    return kernels_mod


def test_key_covers_helpers_and_their_global_constants(tmp_path):
    base = load_variant(tmp_path, "base")
    same = load_variant(tmp_path, "same")
    variants = {
        "helper source": load_variant(tmp_path, "inner", inner="1.5"),  # a helper's helper
        "global constant": load_variant(tmp_path, "scale", scale=2.5),
        "tuple constant": load_variant(tmp_path, "offset", offset=0.25),
    }
    for fn_name in ("via_name", "via_module"):
        k0 = key(getattr(base, fn_name))
        assert key(getattr(same, fn_name)) == k0, fn_name  # same text: same key
        for what, mod in variants.items():
            assert key(getattr(mod, fn_name)) != k0, (fn_name, what)


def test_changed_helper_is_not_served_stale_from_disk(tmp_path, gxx_runs):
    base = load_variant(tmp_path, "base")
    op = pa.compile(base.via_name, DESC)
    np.testing.assert_allclose(op(X), X * 2.0 + 0.5, rtol=1e-6)
    driver.clear_memory_cache()
    changed = load_variant(tmp_path, "changed", scale=4.0)
    op = pa.compile(changed.via_name, DESC)
    assert not op.info["cache_hit"]
    np.testing.assert_allclose(op(X), X * 4.0 + 0.5, rtol=1e-6)
    driver.clear_memory_cache()
    again = load_variant(tmp_path, "again")  # back to the first text: a disk hit
    op = pa.compile(again.via_name, DESC)
    assert op.info["cache_hit"] and len(gxx_runs) == 2
    np.testing.assert_allclose(op(X), X * 2.0 + 0.5, rtol=1e-6)


def _make_closure(c):
    def closed(x):
        return x * c

    return closed


def _with_default(x, eps=1e-5):
    return x + eps


class _Scaled(pa.Op):
    inputs = DESC
    factor = 2.0

    def forward(self, x):
        return x * self.factor


class _Scaled3(_Scaled):
    factor = 3.0


def test_key_covers_closures_defaults_and_op_class_attributes():
    assert key(_make_closure(2.0)) != key(_make_closure(3.0))
    assert key(_make_closure(2.0)) == key(_make_closure(2.0))
    k = key(_with_default)
    _with_default.__defaults__ = (1e-3,)
    try:
        assert key(_with_default) != k
    finally:
        _with_default.__defaults__ = (1e-5,)
    k2 = key(_Scaled.forward, [_Scaled, *DESC], name="scaled")
    k3 = key(_Scaled.forward, [_Scaled3, *DESC], name="scaled")
    assert k2 != k3


# ------------------------------------------------------------------------ corrupt entries


def test_truncated_or_invalid_op_json_is_rebuilt_with_a_warning(gxx_runs):
    op = pa.compile(scale_shift, DESC)
    info_path = op.directory / "op.json"
    for bad in (info_path.read_text()[:40], "[1, 2]", '{"name": "scale_shift"}', ""):
        info_path.write_text(bad)
        driver.clear_memory_cache()
        with pytest.warns(CacheWarning, match="op.json is truncated or corrupt"):
            op = pa.compile(scale_shift, DESC)
        assert not op.info["cache_hit"]
        check_result(op)
        check_entry(op)
    driver.clear_memory_cache()
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        assert pa.compile(scale_shift, DESC).info["cache_hit"]  # repaired: a clean hit
    assert not gxx_runs  # the library itself was fine all along


def test_truncated_library_is_rebuilt_with_a_warning(gxx_runs):
    op = pa.compile(scale_shift, DESC)
    lib = Path(op.info["library"])
    data = lib.read_bytes()
    corrupt(lib, data[: len(data) // 3])
    driver.clear_memory_cache()
    n = len(gxx_runs)
    with pytest.warns(CacheWarning, match="is corrupt"):
        op = pa.compile(scale_shift, DESC)
    assert len(gxx_runs) == n + 1  # g++ ran again even though the library cache had an entry
    assert Path(op.info["library"]) == lib and lib.stat().st_size == len(data)
    check_result(op)
    check_entry(op)


def test_truncated_kernel_source_is_rebuilt_with_a_warning(gxx_runs):
    op = pa.compile(scale_shift, DESC)
    src = op.directory / "kernel.cpp"
    src.write_text(src.read_text()[:500])  # the memory-check build compiles this file
    driver.clear_memory_cache()
    with pytest.warns(CacheWarning, match="kernel.cpp is missing or corrupt"):
        op = pa.compile(scale_shift, DESC)
    assert not op.info["cache_hit"]
    assert "PYASC_LOC" in src.read_text() or "__aicore__" in src.read_text()
    check_result(op)
    check_entry(op)


def test_missing_library_is_rebuilt_with_a_warning(gxx_runs):
    op = pa.compile(scale_shift, DESC)
    Path(op.info["library"]).unlink()
    driver.clear_memory_cache()
    with pytest.warns(CacheWarning, match="is missing"):
        op = pa.compile(scale_shift, DESC)
    check_result(op)
    check_entry(op)


def test_corrupt_library_cache_entry_without_op_json_is_rebuilt(gxx_runs):
    op = pa.compile(scale_shift, DESC)
    lib = Path(op.info["library"])
    data = lib.read_bytes()
    (op.directory / "op.json").unlink()
    for bad in (b"\x7fELF garbage", data[:-100], data[:64]):
        corrupt(lib, bad)
        driver.clear_memory_cache()
        with pytest.warns(CacheWarning, match="is unusable|is corrupt"):
            op = pa.compile(scale_shift, DESC)
        check_result(op)
        check_entry(op)
        (op.directory / "op.json").unlink()
    driver.clear_memory_cache()
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        op = pa.compile(scale_shift, DESC)
    check_result(op)
    check_entry(op)


# --------------------------------------------------------------------------- concurrency


def _compile_in_child(barrier, queue):
    try:
        barrier.wait(timeout=60)
        op = pa.compile(scale_shift, DESC)
        got = op(X)
        np.testing.assert_allclose(got, X * F32(3) - F32(1), rtol=1e-6)
        queue.put(("ok", op.info["library"], op.info["cache_hit"]))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        queue.put(("error", repr(exc), None))
        raise


def test_two_processes_compiling_at_once_leave_a_valid_cache(tmp_path, monkeypatch):
    root = new_cache(tmp_path / "fresh")
    monkeypatch.setenv("PYASC_CACHE_DIR", str(root))
    ctx = multiprocessing.get_context("fork")
    barrier, queue = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_compile_in_child, args=(barrier, queue)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    results = [queue.get(timeout=5) for _ in procs]
    assert [p.exitcode for p in procs] == [0, 0], results
    assert all(r[0] == "ok" for r in results), results
    assert len({r[1] for r in results}) == 1  # one library path
    # what they left behind is one complete entry: a clean cache hit without g++
    driver.clear_memory_cache()
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        op = pa.compile(scale_shift, DESC)
    assert op.info["cache_hit"]
    check_result(op)
    check_entry(op)
    assert len(list((root / "ops").iterdir())) == 1
    assert not [p for p in (root / "cpu").iterdir() if p.name.startswith(".tmp")]


# ------------------------------------------------------------------------------ switches


def test_cache_dir_env_holds_everything(cache_env, gxx_runs):
    root = cache_env
    op = pa.compile(scale_shift, DESC)
    assert op.directory.parent == root / "ops"
    assert Path(op.info["library"]).is_relative_to(root / "cpu")
    driver.clear_memory_cache()
    again = pa.compile(scale_shift, DESC)
    assert again.info["cache_hit"] and again.directory == op.directory
    check_result(again)


def test_cache_disable_reads_and_writes_nothing(cache_env, monkeypatch, gxx_runs):
    root = cache_env
    pa.compile(scale_shift, DESC)  # a valid entry exists ...
    monkeypatch.setenv("PYASC_CACHE_DISABLE", "1")
    entries = sorted(p.name for p in (root / "cpu").iterdir())
    ops_before = sorted((root / "ops").iterdir())
    n = len(gxx_runs)
    a = pa.compile(scale_shift, DESC)  # ... but is not used
    b = pa.compile(scale_shift, DESC)
    assert a is not b and not a.info["cache_hit"] and not b.info["cache_hit"]
    assert len(gxx_runs) == n + 2
    for op in (a, b):
        assert not op.directory.is_relative_to(root)
        assert op.library.is_relative_to(op.directory)  # op.json: relative
        check_result(op)
    assert sorted(p.name for p in (root / "cpu").iterdir()) == entries
    assert sorted((root / "ops").iterdir()) == ops_before


def test_always_compile_recompiles_every_call(monkeypatch, gxx_runs):
    lowered = []
    real = pipeline.lower
    monkeypatch.setattr(pipeline, "lower", lambda *a, **k: lowered.append(1) or real(*a, **k))
    pa.compile(scale_shift, DESC)  # cached ...
    n, m = len(gxx_runs), len(lowered)
    f = pa.jit(scale_shift, always_compile=True)
    for _ in range(2):
        y = f(X)
        np.testing.assert_allclose(y, X * F32(3) - F32(1), rtol=1e-6)
    assert len(lowered) == m + 2 and len(gxx_runs) == n + 2  # ... yet lowered and built again
    # the fresh build refreshed the cache: a plain compile is now a clean hit
    driver.clear_memory_cache()
    op = pa.compile(scale_shift, DESC)
    assert op.info["cache_hit"] and len(lowered) == m + 2
    check_entry(op)
    # a cached jit does not recompile
    g = pa.jit(scale_shift)
    g(X)
    g(X)
    assert len(lowered) == m + 2


def test_output_dir_reuse_and_load_op(tmp_path, gxx_runs):
    out = tmp_path / "out"
    op = pa.compile(scale_shift, DESC, output_dir=out)
    assert {"kernel.cpp", "host.cpp", "cpu_entry.cpp", "op.json"} <= {p.name for p in out.iterdir()}
    check_result(pa.load_op(out))

    # another operator into the same folder replaces it (no stale reuse)
    def other(x):
        return x + 1.0

    op2 = pa.compile(other, DESC, output_dir=out)
    np.testing.assert_allclose(op2(X), X + 1, rtol=1e-6)
    np.testing.assert_allclose(pa.load_op(out)(X), X + 1, rtol=1e-6)
    check_result(op)
    (out / "op.json").write_text("{")
    with pytest.raises(pa.PyAscUsageError, match="missing or corrupt"):
        pa.load_op(out)


def test_source_fingerprints_are_stable_across_processes():
    """No object addresses or other per-process text in the operator part of the key."""
    code = textwrap.dedent(f"""
        import hashlib, sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        import test_cache as t
        from pyasc_mlir import cache
        for fn, inputs in t.FINGERPRINTED:
            print(hashlib.sha256(cache.source_fingerprint(fn, inputs).encode()).hexdigest())
    """)
    import hashlib
    import subprocess

    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == [
        hashlib.sha256(cache.source_fingerprint(fn, inputs).encode()).hexdigest()
        for fn, inputs in FINGERPRINTED
    ]


FINGERPRINTED = [
    (scale_shift, DESC),
    (_Scaled.forward, [_Scaled, *DESC]),
    (_make_closure(2.0), DESC),
    (_with_default, DESC),
]


SCALE_G = 2.0
ROW_G = [1.0, 2.0]


def _scaled(a):
    return a * SCALE_G


def _scaled_via_helper(a, b):
    return _scale_helper(a @ b)


def _scale_helper(h):
    return h * SCALE_G


def _row_scaled(a):
    return a * ROW_G[1]


@pytest.mark.slow
def test_jit_object_notices_a_changed_global_constant():
    """The same @jit object recompiles (or hits the cache entry for the new value) when a
    global it reads is rebound or a small list constant is changed in place."""
    global SCALE_G
    x = np.ones((4, 8), np.float32)
    ops = [pa.jit(_scaled), pa.jit(_scaled_via_helper), pa.jit(_row_scaled)]
    before = [ops[0](x)[0, 0], ops[1](x, x.T)[0, 0], ops[2](x)[0, 0]]
    saved = SCALE_G
    try:
        SCALE_G = 3.0
        ROW_G[1] = 5.0
        after = [ops[0](x)[0, 0], ops[1](x, x.T)[0, 0], ops[2](x)[0, 0]]
    finally:
        SCALE_G = saved
        ROW_G[1] = 2.0
    assert before == [2.0, 16.0, 2.0] and after == [3.0, 24.0, 5.0]
    assert ops[0](x)[0, 0] == 2.0  # and back
