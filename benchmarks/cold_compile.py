"""One cold compile in a fresh process (run by ``run.py`` as a subprocess; prints JSON).

    PYASC_CACHE_DIR=<dir> python benchmarks/cold_compile.py WORKLOAD [--no-cache]

Measures the ``import pyasc_mlir`` time and one ``pyasc_mlir.compile`` of the workload at its
seed shape: the driver's ``stage_ms`` (frontend and every pass), the emitter functions (timed by
wrapping them), and every g++ run -- the precompiled-header build and the kernel builds --
timed and counted through a stand-in for the ``subprocess`` module of
``pyasc_mlir.runtime.cpu``. With ``--no-cache`` the compile uses ``cache=False`` (which
re-runs g++ by the driver's contract).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

t_import = time.perf_counter()
import pyasc_mlir as pa  # noqa: E402

import_ms = (time.perf_counter() - t_import) * 1e3
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _timed(fn, timings, bucket):  # noqa: ANN001, ANN202
    def wrapper(*a, **k):  # noqa: ANN002, ANN003, ANN202
        t0 = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            timings[bucket] += (time.perf_counter() - t0) * 1e3

    return wrapper


class GxxCounter:
    """Stands in for the ``subprocess`` module inside ``pyasc_mlir.runtime.cpu``: times and
    counts g++ runs (header precompilation and kernel builds; ``--version`` is not counted)."""

    def __init__(self, timings: dict[str, float], counts: dict[str, int]):
        self._timings, self._counts = timings, counts

    def __getattr__(self, name: str):  # noqa: ANN204
        return getattr(subprocess, name)

    def run(self, cmd, *a, **k):  # noqa: ANN001, ANN002, ANN003, ANN201
        t0 = time.perf_counter()
        try:
            return subprocess.run(cmd, *a, **k)
        finally:
            ms = (time.perf_counter() - t0) * 1e3
            argv = [str(x) for x in cmd] if isinstance(cmd, list | tuple) else [str(cmd)]
            if "--version" in argv:
                pass
            elif "c++-header" in argv:
                self._timings["pch_ms"] += ms
                self._counts["pch_builds"] += 1
            else:
                self._timings["gxx_compile_ms"] += ms
                self._counts["gxx_compiles"] += 1


def main() -> None:
    import pyasc_mlir.emit_host as emit_host
    import pyasc_mlir.emitter as emitter
    import pyasc_mlir.runtime.cpu as cpu
    from benchmarks.workloads import BY_KEY

    key = sys.argv[1]
    use_cache = "--no-cache" not in sys.argv[2:]
    w = BY_KEY[key]
    timings: dict[str, float] = {"emit_ms": 0.0, "pch_ms": 0.0, "gxx_compile_ms": 0.0}
    counts = {"gxx_compiles": 0, "pch_builds": 0}

    for mod, f in (
        (emitter, "emit_kernel_source"),
        (emit_host, "emit_host_source"),
        (emit_host, "emit_cpu_entry"),
    ):
        setattr(mod, f, _timed(getattr(mod, f), timings, "emit_ms"))
    cpu.subprocess = GxxCounter(timings, counts)  # every g++ run of the CPU build

    t_ws = time.perf_counter()
    descs = w.descs(w.seed_shape)
    workload_import_ms = (time.perf_counter() - t_ws) * 1e3
    t0 = time.perf_counter()
    op = pa.compile(w.fn, descs, cache=use_cache)
    wall_ms = (time.perf_counter() - t0) * 1e3
    info = op.info
    from pyasc_mlir import cache

    out = {
        "workload": key,
        "cache": use_cache,
        "import_ms": import_ms,
        "fingerprint": cache.compiler_fingerprint()[:16],
        "key": info.get("key"),
        "workload_setup_ms": workload_import_ms,
        "compile_wall_ms": wall_ms,
        "cache_hit": bool(info.get("cache_hit")),
        **timings,
        **counts,
    }
    if not info.get("cache_hit"):
        out.update(lower_ms=info["lower_ms"], gxx_ms=info["gxx_ms"], stage_ms=info["stage_ms"])
    else:
        out.update(cached_compile_ms=info["compile_ms"])
    print(json.dumps(out))


if __name__ == "__main__":
    main()
