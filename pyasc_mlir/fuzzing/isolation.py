"""Running code in a forked child, so a kernel that corrupts memory kills the child, not the
fuzzer (or the test that replays a fuzz regression)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from pyasc_mlir.fuzzing.verdicts import exc_text


@contextlib.contextmanager
def warnings_ignored() -> Iterator[None]:
    """Silence warnings (Python warns of fork() in a multi-threaded process: numpy, xdsl)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fork() in a multi-threaded process (numpy, xdsl)
        yield


def _signal_name(code: int) -> str:
    import signal

    try:
        return signal.Signals(-code).name if code < 0 else "exit"
    except ValueError:
        return "unknown"


def crash_text(code: int) -> str:
    """The verdict detail of a child that died with exit code ``code`` (``-N``: signal N)."""
    return (
        f"the CPU build crashed the process (exit code {code}: "
        f"{_signal_name(code)}) -- memory corruption"
    )


def run_forked(fn: Callable[[], Any]) -> tuple[Any, int]:
    """``fn()`` in a forked child: (its result, or None if the child died before sending it;
    the child's exit code). The result must be picklable."""
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)

    def work() -> None:
        send.send(fn())
        send.close()

    proc = ctx.Process(target=work)
    with warnings_ignored():
        proc.start()
    send.close()
    try:
        res = recv.recv()
    except EOFError:
        res = None
    proc.join()
    return res, proc.exitcode or 0


def isolated(fn: Callable[[], Any]) -> Any:
    """``fn()`` in a forked child (its result, or an error text if it raised or died)."""

    def guarded() -> Any:
        try:
            return fn()
        except Exception as exc:  # noqa: BLE001
            return exc_text(exc)

    res, code = run_forked(guarded)
    return crash_text(code) if res is None else res
