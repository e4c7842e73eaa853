"""The ``pyasc`` command: ``pyasc demo`` runs every example on real MiniLM activations;
``pyasc fuzz`` runs the differential fuzzer (``pyasc_mlir.fuzzing``); ``pyasc profile`` and
``pyasc tune`` give the modeled profile and autotune one operator (``FILE::FUNC --shape ...``);
``pyasc cpu-run KERNEL.cpp --entry NAME --block-dim N ARG...`` builds a hand-written Ascend C
kernel with the CPU runtime and runs it (``pyasc_mlir.tools.cpu_run``).
``pyasc ops list`` lists the operators of the operator libraries (``pyasc_mlir.op_library``).

Usage: ``pyasc demo [options]``; ``pyasc fuzz --programs N --seed S [options]``;
``pyasc --version``. Exit code 0 when every result is within tolerance (fuzz: no mismatch or
crash), 1 otherwise, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from pyasc_mlir import __version__
from pyasc_mlir.errors import PyAscError, log_level
from pyasc_mlir.fuzzing import main as fuzz_main
from pyasc_mlir.tools.cpu_run import run_cpu_run
from pyasc_mlir.tools.demo import run_demo
from pyasc_mlir.tools.ops import run_ops
from pyasc_mlir.tools.profile import run_profile
from pyasc_mlir.tools.tune import run_tune

_TARGET_COMMANDS: dict[str, Callable[[list[str]], int]] = {
    "profile": run_profile,
    "tune": run_tune,
    "ops": run_ops,
}
"""The commands on one operator ``FILE::FUNC``; a :class:`PyAscError` they raise is printed
(exit code 1)."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pyasc", description=__doc__)
    parser.add_argument("--version", action="store_true", help="print the version")
    sub = parser.add_subparsers(dest="command")
    sub.add_parser(
        "demo",
        help="compile every example and run it on MiniLM data "
        "(other options go to the demo; see `pyasc demo --help`)",
        add_help=False,
    )
    sub.add_parser(
        "fuzz",
        help="differential fuzzer: random operators checked at every stage "
        "(see `pyasc fuzz --help`)",
        add_help=False,
    )
    sub.add_parser(
        "profile",
        help="modeled NPU profile of FILE::FUNC for given shapes (see `pyasc profile --help`)",
        add_help=False,
    )
    sub.add_parser(
        "tune",
        help="autotune tile, blockDim and buffers of FILE::FUNC (see `pyasc tune --help`)",
        add_help=False,
    )
    sub.add_parser(
        "cpu-run",
        help="build a hand-written Ascend C kernel with the CPU runtime and run it on .npy "
        "inputs (see `pyasc cpu-run --help`)",
        add_help=False,
    )
    sub.add_parser(
        "ops",
        help="`pyasc ops list`: name, version and signatures of the registered operators",
        add_help=False,
    )
    args, rest = parser.parse_known_args(argv)
    args.rest = rest
    if args.version:
        print(f"pyasc-mlir {__version__}")
        return 0
    if args.command == "fuzz":
        try:
            return fuzz_main(args.rest)
        except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
            return int(exc.code or 0)
    if args.command == "cpu-run":
        return run_cpu_run(args.rest)
    if args.command in _TARGET_COMMANDS:
        try:
            return _TARGET_COMMANDS[args.command](args.rest)
        except PyAscError as exc:
            print(exc, file=sys.stderr)
            return 1
    if args.command != "demo":
        parser.print_help()
        return 2
    try:
        return run_demo(args.rest)
    except PyAscError as exc:
        if log_level() >= 2:
            raise
        print(exc, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
