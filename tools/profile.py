"""``pyasc profile FILE::FUNC --shape 8,1024 [--shape ...]``: modeled NPU profile of one operator.

Compiles the operator for the given tensor shapes (one ``--shape`` per tensor parameter, in
order; ``--const VALUE`` for compile-time parameters, in order after the tensors), runs its CPU
build ``--repeats`` times on random inputs inside ``pyasc_mlir.profiler()`` and prints, per
kernel: modeled time and bound pipe, GM bytes, UB peak, blockDim, the bandwidth-roofline time
(all NPU figures MODELED by ``pyasc_mlir.cost_model``) and the measured CPU-build time.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np


def load_function(spec: str) -> Any:
    """``path/to/file.py::func`` -> the function object.

    Raises:
        SystemExit: the file or the function does not exist (usage error, exit code 2).
    """
    path, _, name = spec.partition("::")
    if not name or not Path(path).is_file():
        raise SystemExit(f"pyasc profile: expected FILE.py::FUNC, got {spec!r}")
    mod_spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    assert mod_spec is not None and mod_spec.loader is not None
    module = importlib.util.module_from_spec(mod_spec)
    sys.modules[mod_spec.name] = module
    mod_spec.loader.exec_module(module)
    fn = getattr(module, name, None)
    if fn is None:
        raise SystemExit(f"pyasc profile: {path} has no function {name!r}")
    return fn


def run_profile(argv: list[str] | None = None) -> int:
    import pyasc_mlir as pa

    p = argparse.ArgumentParser(prog="pyasc profile", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("target", help="FILE.py::FUNC")
    p.add_argument("--shape", action="append", default=[], help="e.g. 8,1024,1024 (repeat)")
    p.add_argument("--dtype", default="float16", help="float16 (default) or float32")
    p.add_argument("--const", action="append", default=[],
                   help="a compile-time argument as a Python literal (repeat, in order)")
    p.add_argument("--platform", default="910B2")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    args = p.parse_args(argv)
    fn = load_function(args.target)
    shapes = [tuple(int(d) for d in s.split(",")) for s in args.shape]
    consts = [ast.literal_eval(c) for c in args.const]
    op = pa.compile(fn, [*(pa.TensorDesc(s, args.dtype) for s in shapes), *consts],
                    platform=args.platform)
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(args.dtype) for s in shapes]
    op(*arrays)  # warm-up
    with pa.profiler() as prof:
        for _ in range(args.repeats):
            op(*arrays)
    if args.json:
        print(json.dumps(prof.report(), indent=2))
    else:
        print(prof.table())
    return 0
