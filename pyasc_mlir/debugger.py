"""``python -m pyasc_mlir.debugger script.py [args...]``: run a script with the kernel
language's debugger mode on (``PYASC_DEBUG=1``; keeps ``PYASC_DEBUG=compare`` when set):
every ``@lang.kernel`` body runs as plain Python over NumPy, so ``print`` and
``breakpoint()`` work inside it (see :mod:`pyasc_mlir.language.debug`)."""

from __future__ import annotations

import os
import runpy
import sys
from collections.abc import Sequence

from pyasc_mlir.language.debug import ENV

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``argv[0]`` as ``__main__`` with ``argv`` as its ``sys.argv``; the exit status:
    0, 2 for a usage error (no script, a missing file)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print("usage: python -m pyasc_mlir.debugger script.py [args...]", file=sys.stderr)
        return 2
    if not os.path.isfile(args[0]):
        print(f"pyasc_mlir.debugger: error: no script {args[0]!r}", file=sys.stderr)
        return 2
    if os.environ.get(ENV, "").strip().lower() != "compare":
        os.environ[ENV] = "1"
    sys.argv = args
    runpy.run_path(args[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
