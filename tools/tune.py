"""``pyasc tune FILE::FUNC --shape 8,1024,1024 [--shape ...]``: autotune one operator.

Searches tile size, blockDim and double-buffer depth, and the output block (``tile_m`` x
``tile_n``) of matmul (Cube) kernels (``pyasc_mlir.autotune``): candidates are
lowered in parallel (``--workers``), ranked by the MODELED NPU time of ``pyasc_mlir.cost_model``,
and the best ``--measure K`` are built and timed on the CPU. Prints the ranked table (modeled µs,
bound pipe, mode, tile, tile_m/tile_n for Cube kernels, block_dim, buffers, measured CPU-build
µs) and how to pin the winner. A FILE inside a package is imported as its package module.
One ``--shape`` per tensor parameter, in order; ``--const VALUE`` for compile-time parameters,
in order after the tensors. The winner is cached per signature (``--force`` searches again).
"""

from __future__ import annotations

import json

import pyasc_mlir as pa
from pyasc_mlir.autotune import tune
from pyasc_mlir.tools.profile import load_function, target_parser


def run_tune(argv: list[str] | None = None) -> int:
    p = target_parser("pyasc tune", __doc__)
    p.add_argument(
        "--measure",
        type=int,
        default=0,
        metavar="K",
        help="build and time the best K candidates on the CPU (default 0)",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="processes lowering candidates (default: min(cpu count, 8))",
    )
    p.add_argument("--top", type=int, default=20, help="table rows to print (default 20)")
    p.add_argument("--force", action="store_true", help="search even if a winner is cached")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    args = p.parse_args(argv)
    fn = load_function(args.target, p.prog)
    shapes, consts = args.shape, args.const
    res = tune(
        fn,
        [*(pa.TensorDesc(s, args.dtype) for s in shapes), *consts],
        platform=args.platform,
        measure=args.measure,
        workers=args.workers,
        progress=False if args.no_progress else None,
        cache=not args.force,
    )
    if args.json:
        print(
            json.dumps(
                {**res.to_json(), "winner": res.winner.knobs.pin, "from_cache": res.from_cache},
                indent=2,
            )
        )
    else:
        print(res.table(args.top))
        print(res.summary())
    return 0
