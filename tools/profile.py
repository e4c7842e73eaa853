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
from typing import Any, NoReturn

import numpy as np

import pyasc_mlir as pa
from pyasc_mlir.platform import DEFAULT_PLATFORM


def _package_root(path: Path) -> tuple[Path, str] | None:
    """For a file inside a package (its folder has ``__init__.py``): the folder above the
    outermost package (walking up while ``__init__.py`` exists) and the file's dotted module
    name; ``None`` for a standalone file."""
    parts = [] if path.stem == "__init__" else [path.stem]
    folder = path.parent
    if not (folder / "__init__.py").is_file():
        return None
    while (folder / "__init__.py").is_file():
        parts.insert(0, folder.name)
        folder = folder.parent
    return folder, ".".join(parts)


def _import_module(path: Path) -> Any:
    """Import ``path`` as its package module (relative imports work) when it lives in a
    package, with the package root put on ``sys.path``; else load it standalone."""
    pkg = _package_root(path)
    if pkg is not None:
        root, dotted = pkg
        if str(root) not in sys.path:
            sys.path.insert(0, str(root))
        module = importlib.import_module(dotted)
        got = Path(getattr(module, "__file__", "") or "").resolve()
        if got != path:
            raise SystemExit(
                f"pyasc: importing {path} as {dotted!r} found another module "
                f"({got}); rename the package or run from its root"
            )
        return module
    mod_spec = importlib.util.spec_from_file_location(path.stem, path)
    assert mod_spec is not None and mod_spec.loader is not None
    module = importlib.util.module_from_spec(mod_spec)
    sys.modules[mod_spec.name] = module
    mod_spec.loader.exec_module(module)
    return module


def usage_error(prog: str, message: str) -> NoReturn:
    """Print ``prog: error: message`` to stderr and exit with code 2 (a usage error)."""
    print(f"{prog}: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def load_function(spec: str, prog: str = "pyasc profile") -> Any:
    """``path/to/file.py::func`` -> the function object. A file inside a package (folders
    with ``__init__.py``) is imported as its package module, so its relative imports work;
    the folder above the outermost package goes on ``sys.path``. ``prog`` names the
    subcommand in messages.

    Raises:
        SystemExit: the file or the function does not exist (usage error, exit code 2).
    """
    path, _, name = spec.partition("::")
    if not name or not Path(path).is_file():
        usage_error(prog, f"expected FILE.py::FUNC, got {spec!r}")
    module = _import_module(Path(path).resolve())
    fn = getattr(module, name, None)
    if fn is None:
        usage_error(prog, f"{path} has no function {name!r}")
    return fn


def _shape(text: str) -> tuple[int, ...]:
    """``"8,1024"`` -> ``(8, 1024)`` (argparse ``type=``; non-negative ints)."""
    try:
        dims = tuple(int(d) for d in text.split(","))
    except ValueError:
        dims = ()
    if not dims or any(d < 0 for d in dims):
        raise argparse.ArgumentTypeError(
            f"invalid shape {text!r}: give comma-separated non-negative ints, e.g. 8,1024"
        )
    return dims


def _const(text: str) -> Any:
    """A compile-time argument as a Python literal (argparse ``type=``)."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise argparse.ArgumentTypeError(
            f"invalid constant {text!r}: give a Python literal such as 3.0, 64, True or "
            "'gelu' (quote strings)"
        ) from None


def target_parser(prog: str, doc: str | None) -> argparse.ArgumentParser:
    """The arguments ``pyasc profile`` and ``pyasc tune`` share: ``FILE.py::FUNC``, shapes,
    dtype, compile-time constants and the platform."""
    p = argparse.ArgumentParser(
        prog=prog, description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("target", help="FILE.py::FUNC")
    p.add_argument(
        "--shape", action="append", default=[], type=_shape, help="e.g. 8,1024,1024 (repeat)"
    )
    p.add_argument(
        "--dtype",
        default="float16",
        choices=("float16", "float32"),
        help="float16 (default) or float32",
    )
    p.add_argument(
        "--const",
        action="append",
        default=[],
        type=_const,
        help="a compile-time argument as a Python literal (repeat, in order)",
    )
    p.add_argument("--platform", default=DEFAULT_PLATFORM)
    return p


def run_profile(argv: list[str] | None = None) -> int:
    p = target_parser("pyasc profile", __doc__)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    args = p.parse_args(argv)
    fn = load_function(args.target, p.prog)
    shapes, consts = args.shape, args.const
    op = pa.compile(
        fn, [*(pa.TensorDesc(s, args.dtype) for s in shapes), *consts], platform=args.platform
    )
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
