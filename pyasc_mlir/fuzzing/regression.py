"""Regression tests of fuzz failures: :func:`write_regression_test` and the check it calls.

A written test is a ready-to-paste pytest file: the program's source, its ``PROGRAM`` (the op
list and input seed, JSON) and a call of :func:`assert_program_ok`, which compiles the function
with ``pyasc_mlir.compile`` and checks every stage against the fuzzer's reference.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pyasc_mlir.fuzzing.evaluator import make_inputs
from pyasc_mlir.fuzzing.isolation import isolated
from pyasc_mlir.fuzzing.program import Program
from pyasc_mlir.fuzzing.verdicts import STAGES, Verdict, run_checks

_TEST_TEMPLATE = '''"""Regression test written by ``pyasc fuzz`` ({origin}).

{summary}

Observed:
{observed}

Reference: ``pyasc_mlir.fuzzing`` evaluates PROGRAM (the op list this source was rendered from)
in float64 with a per-element error bound; see ``pyasc_mlir.fuzzing.evaluator`` and
``pyasc_mlir.fuzzing.verdicts`` for the tolerances.
"""

{source}

PROGRAM = {program!r}


def test_{name}():
    from pyasc_mlir.fuzzing import assert_program_ok

    assert_program_ok({name}, PROGRAM)
'''


def write_regression_test(p: Program, v: Verdict, out_dir: Path, origin: str) -> Path:
    """Write ``out_dir/test_<name>.py``: the program source, its inputs (PROGRAM holds the
    input seed) and an assertion of every stage against the reference."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"test_{p.name}.py"
    src = p.source().rstrip() + "\n"
    summary = (
        f"{v.status} at {v.where}: {p.platform}, double_buffer={p.double_buffer}, "
        f"inputs " + ", ".join(f"{list(i.shape)} {i.dtype}" for i in p.inputs)
    )
    observed = textwrap.indent(
        textwrap.fill(v.detail[:2000], 95, break_long_words=True, replace_whitespace=False), "    "
    )
    path.write_text(
        _TEST_TEMPLATE.format(
            origin=origin,
            summary=summary,
            observed=observed,
            source=src,
            program=p.to_json(),
            name=p.name,
        )
    )
    return path


def assert_program_ok(
    fn: Callable[..., Any], program: str | Program, stages: Sequence[str] = STAGES
) -> None:
    """Compile ``fn`` with ``pyasc_mlir.compile`` for ``program``'s inputs and platform, run
    every stage (interpreter stages and the CPU build) on its inputs and assert each output is
    within the reference's bound (and the stages agree).

    Raises:
        AssertionError: naming the stage, output, element, expected value, bound and got.
    """
    import pyasc_mlir as pa

    p = program if isinstance(program, Program) else Program.from_json(program)
    descs = [pa.TensorDesc(i.shape, i.dtype) for i in p.inputs]
    op = pa.compile(fn, descs, platform=p.platform, double_buffer=p.double_buffer, cache=False)
    cpu: Any = None
    if "cpu" in stages:

        def run_cpu() -> list[np.ndarray]:
            return op.run_cpu(*make_inputs(p))

        cpu = isolated(run_cpu)
    v = run_checks(p, op, cpu, stages)
    assert not v.failed, f"{v.status} at {v.where}: {v.detail}"
