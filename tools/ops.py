"""``pyasc ops list``: the operators of the operator libraries (name, version, platform,
signature, folder).

Libraries: ``--library DIR`` (repeatable), then ``PYASC_OP_PATH``
(:mod:`pyasc_mlir.op_library`). Exit code 0; 2 on a usage error (no library to list, an
unknown subcommand); 1 when a registry is corrupt (the message names it).
"""

from __future__ import annotations

import argparse
import sys

from pyasc_mlir.errors import PyAscError
from pyasc_mlir.op_library import OP_PATH_VAR, library_dirs, rows, signature_text


def run_ops(argv: list[str]) -> int:
    """``pyasc ops list [--library DIR ...]``; returns the exit code."""
    parser = argparse.ArgumentParser(prog="pyasc ops", description=__doc__)
    parser.add_argument("action", choices=["list"], help="list the registered operators")
    parser.add_argument(
        "--library",
        action="append",
        default=[],
        metavar="DIR",
        help=f"an operator library folder (searched before {OP_PATH_VAR})",
    )
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    dirs = library_dirs(args.library)
    if not dirs:
        print(
            f"pyasc ops: no operator library: pass --library DIR or set {OP_PATH_VAR}",
            file=sys.stderr,
        )
        return 2
    try:
        entries = rows(args.library)
    except PyAscError as exc:
        print(exc, file=sys.stderr)
        return 1
    print(f"{len(entries)} operator(s) in {', '.join(map(str, dirs))}")
    for e in entries:
        print(
            f"{e['name']}  version {e['version']}  {e.get('platform')}  "
            f"({signature_text(e)})  {e['library']}/{e['folder']}"
        )
    return 0
