"""A fuzz run: chunks of programs checked in worker processes, failures shrunk and written as
regression tests; the ``pyasc fuzz`` command line (:func:`main`)."""

from __future__ import annotations

import argparse
import os
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from pyasc_mlir.fuzzing.isolation import warnings_ignored
from pyasc_mlir.fuzzing.program import Program
from pyasc_mlir.fuzzing.regression import write_regression_test
from pyasc_mlir.fuzzing.report import FuzzReport, reject_reason
from pyasc_mlir.fuzzing.runner import check_programs
from pyasc_mlir.fuzzing.seeds import CHUNK, Chunk, Spec, generate, generate_one
from pyasc_mlir.fuzzing.shrinking import shrink
from pyasc_mlir.fuzzing.verdicts import Verdict
from pyasc_mlir.platform import ceil_div

DEFAULT_OUT = "fuzz_failures"
"""Default folder of the regression tests of failures."""

ChunkResult = list[tuple[str, Verdict]]
"""A checked chunk: (program JSON, verdict) per program, in order."""


def _fuzz_chunk(chunk: Chunk) -> tuple[Chunk, ChunkResult]:
    progs = generate(chunk)
    verdicts = check_programs(progs)
    return chunk, [(p.to_json(), v) for p, v in zip(progs, verdicts, strict=True)]


def _check_chunks(
    chunks: Sequence[Chunk], workers: int, say: Callable[[str], None], t0: float
) -> dict[int, ChunkResult]:
    """Check every chunk (in a fork pool when ``workers`` > 1), logging each as it ends."""
    results: dict[int, ChunkResult] = {}

    def take(chunk: Chunk, res: ChunkResult) -> None:
        results[chunk.index] = res
        c = Counter(v.status for _, v in res)
        say(
            f"[chunk {len(results)}/{len(chunks)}] {chunk.platform}: {len(res)} programs, "
            + ", ".join(f"{n} {s}" for s, n in sorted(c.items()))
            + f" ({time.perf_counter() - t0:.0f} s)"
        )
        for spec, (js, v) in zip(chunk.specs(), res, strict=True):
            if v.failed:
                say(
                    f"  {v.status} at {v.where}: program #{spec.number} "
                    f"{Program.from_json(js).name}: {v.detail.splitlines()[0][:240]}"
                )

    if workers <= 1:
        for ch in chunks:
            take(*_fuzz_chunk(ch))
    else:
        import concurrent.futures as cf
        import multiprocessing as mp

        with (
            warnings_ignored(),
            cf.ProcessPoolExecutor(workers, mp_context=mp.get_context("fork")) as pool,
        ):
            for fut in cf.as_completed([pool.submit(_fuzz_chunk, ch) for ch in chunks]):
                take(*fut.result())
    return results


def _tally(
    report: FuzzReport, chunks: Sequence[Chunk], results: dict[int, ChunkResult]
) -> list[tuple[Spec, Program, Verdict]]:
    """Count every verdict into ``report``; return the failures in program order."""
    failing: list[tuple[Spec, Program, Verdict]] = []
    for ch in chunks:
        for spec, (js, v) in zip(ch.specs(), results[ch.index], strict=True):
            p = Program.from_json(js)
            report.programs += 1
            report.by_platform[p.platform] += 1
            if v.ratio > report.max_ratio:
                report.max_ratio = v.ratio
                report.max_ratio_program = f"program #{spec.number} {p.name}"
            report.unchecked_programs += v.unchecked > 0
            if v.status == "ok":
                report.ok += 1
            elif v.status == "rejected":
                report.rejected += 1
                report.reject_reasons[reject_reason(v.detail)] += 1
            else:
                report.mismatches += v.status == "mismatch"
                report.crashes += v.status == "crash"
                failing.append((spec, p, v))
    return failing


def _write_failures(
    report: FuzzReport,
    failing: Sequence[tuple[Spec, Program, Verdict]],
    seed: int,
    out: Path,
    shrink_budget: float,
    max_shrink: int,
    say: Callable[[str], None],
) -> None:
    """Shrink the first failure of each signature (at most ``max_shrink``) and write one
    regression test per failure."""
    shrunk_sigs: set[str] = set()
    for spec, p, v in failing:
        best = (p, v)
        if len(shrunk_sigs) < max_shrink and v.signature not in shrunk_sigs:
            shrunk_sigs.add(v.signature)
            say(f"shrinking {p.name} ({v.signature}) ...")
            t1 = time.perf_counter()
            found = shrink(spec, v.signature, {p.key: v}, shrink_budget)
            if found is not None:
                best = found
                say(
                    f"  -> {len(best[0].nodes)} ops (from {len(p.nodes)}) in "
                    f"{time.perf_counter() - t1:.0f} s"
                )
        path = write_regression_test(
            best[0], best[1], out, f"seed {seed}, program #{spec.number}, {p.name}"
        )
        report.failures.append((best[0], best[1], path))


def run_fuzz(
    programs: int = 200,
    seed: int = 0,
    workers: int = 1,
    out_dir: str | Path = DEFAULT_OUT,
    shrink_budget: float = 120.0,
    max_shrink: int = 3,
    max_ops: int = 15,
    log: Callable[[str], None] | None = print,
) -> FuzzReport:
    """Generate ``programs`` random operators (reproducible in ``seed``), check each at every
    stage, shrink up to ``max_shrink`` failures and write a regression test per failure.

    ``workers`` > 1 checks chunks in a process pool (fork); 1 runs in this process (what
    tests that monkeypatch the compiler need)."""
    say = log or (lambda s: None)
    t0 = time.perf_counter()
    chunks = [
        Chunk(seed, i, min(CHUNK, programs - i * CHUNK), max_ops)
        for i in range(ceil_div(programs, CHUNK))
    ]
    report = FuzzReport()
    results = _check_chunks(chunks, workers, say, t0)
    failing = _tally(report, chunks, results)
    _write_failures(report, failing, seed, Path(out_dir), shrink_budget, max_shrink, say)
    report.seconds = time.perf_counter() - t0
    say(report.summary())
    return report


def main(argv: Sequence[str] | None = None) -> int:
    """``pyasc fuzz``: exit status 0 when no mismatch or crash, 1 otherwise."""
    ap = argparse.ArgumentParser(
        prog="pyasc fuzz",
        description=(
            "Differential fuzzer: random operators checked against a NumPy reference at every "
            "compiler stage and on the CPU build."
        ),
    )
    ap.add_argument("--programs", type=int, default=200, help="programs to generate (200)")
    ap.add_argument("--seed", type=int, default=0, help="seed; same seed, same programs (0)")
    ap.add_argument(
        "--workers",
        type=int,
        default=min(2, os.cpu_count() or 1),
        help="worker processes (default: min(2, CPUs))",
    )
    ap.add_argument(
        "--out",
        default=DEFAULT_OUT,
        help=f"folder for regression tests of failures ({DEFAULT_OUT})",
    )
    ap.add_argument("--max-ops", type=int, default=15, help="ops per program, at most (15)")
    ap.add_argument(
        "--shrink-budget", type=float, default=120.0, help="seconds of shrinking per failure (120)"
    )
    ap.add_argument(
        "--max-shrink",
        type=int,
        default=3,
        help="distinct failures to shrink (3); the others are written unshrunk",
    )
    ap.add_argument(
        "--show",
        type=int,
        default=None,
        metavar="I",
        help="print the source of program I of the run and exit",
    )
    args = ap.parse_args(argv)
    if args.show is not None:
        plat = Chunk(args.seed, args.show // CHUNK, 1).platform
        print(generate_one(Spec(args.seed, args.show, plat, args.max_ops)).source())
        return 0
    print(f"pyasc fuzz: {args.programs} programs, seed {args.seed}, {args.workers} workers")
    report = run_fuzz(
        args.programs,
        args.seed,
        args.workers,
        args.out,
        args.shrink_budget,
        args.max_shrink,
        args.max_ops,
    )
    return 1 if report.failed else 0
