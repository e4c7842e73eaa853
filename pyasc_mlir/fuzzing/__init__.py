"""Differential fuzzer: random tensor operators, compiled and checked at every stage.

``pyasc fuzz --programs N --seed S`` (and ``tests/test_fuzz.py``) generates random operators
with `Hypothesis <https://hypothesis.readthedocs.io>`_ strategies -- DAGs of 1-15 ops (plus a
cast when a mask is returned) drawn from everything the frontend supports (elementwise
functions including sin/cos, arithmetic with tensors and Python numbers, ``len(x)`` and
``x.shape[d]``, comparisons, masks and ``where``, casts, reductions with and without ``keepdim``,
size-1 reshapes, softmax / layer-norm / logsumexp patterns, inlined helpers, augmented
assignment), ranks 1-4, shapes with tails (1, 7, 33, 513, ...), broadcasting between operands
of different ranks, float16 / float32 inputs and value ranges that stress ``exp``/``log``/
``rsqrt`` (inputs up to +-15 before exponentials, float16 near overflow) -- and compares, on the
same inputs:

* an independent NumPy reference (the fuzzer's own evaluator of the program's op list, float64,
  inputs rounded to their dtype, explicit casts rounding, outputs rounded to the dtype) with a
  per-element forward error bound,
* the IR interpreter at every stage (``tensor``, ``tile``, ``ascendc``),
* the CPU build of the emitted Ascend C (``kernel_operator.h``).

Programs are Python source (the frontend reads source): each is written to a ``.py`` file and
imported. Many kernels share one g++ translation unit (``PYASC_CPU_ENTRY_NAMED``), so a batch of
programs costs one library build.

Verdicts: ``ok``; ``rejected`` -- the compiler refused the program with a
:class:`~pyasc_mlir.errors.PyAscCompileError` (a documented limit such as a row too long for UB
or an unsupported reduction pattern; counted and reported by message, not a failure);
``mismatch`` -- a stage disagrees with the reference or with another stage; ``crash`` -- any other
exception (lowering, emission, g++, a kernel error, an interpreter error, a process killed by
memory corruption: the CPU builds run in a forked child). A mismatch or crash is shrunk by
Hypothesis to a minimal program and written as a ready-to-paste pytest file
``fuzz_failures/test_fz_<hash>.py``. Program ``i`` of seed ``S`` is the second example of a
Hypothesis run seeded with ``(S, i)`` (the first is always the simplest program); shrinking
replays that run with the failure's verdict known, so Hypothesis sees the failure and shrinks it
on its own (new candidates are compiled and checked on the failing stage only).

Usage: ``pyasc fuzz --programs 2000 --seed 1`` (``--workers`` processes, default 2;
``--out`` folder for regression tests; ``--max-ops``; ``--shrink-budget`` seconds per failure;
``--show I`` prints program ``I`` of the seed). Exit status 0 when there is no mismatch and no
crash. The same seed gives the same programs for a given Hypothesis version. Speed on 2 cores:
about 0.2-0.35 s per program, mostly g++ (25 kernels per library build).

Modules, one concern each:

* :mod:`~pyasc_mlir.fuzzing.program` -- the program model (:class:`Input`, :class:`Node`,
  :class:`Program`) and the value intervals that keep ops in their domain,
* :mod:`~pyasc_mlir.fuzzing.source` -- a program's Python source,
* :mod:`~pyasc_mlir.fuzzing.strategies` -- the Hypothesis strategy :func:`programs`,
* :mod:`~pyasc_mlir.fuzzing.seeds` -- which program a seed gives (:class:`Spec`,
  :class:`Chunk`, :func:`generate`, :func:`generate_one`),
* :mod:`~pyasc_mlir.fuzzing.evaluator` -- the reference and its error model ("Tolerances"),
* :mod:`~pyasc_mlir.fuzzing.verdicts` -- judging stage outputs (:class:`Verdict`,
  :func:`compare`),
* :mod:`~pyasc_mlir.fuzzing.runner` -- lowering, batched g++ builds, running every stage
  (:func:`check_programs`); :mod:`~pyasc_mlir.fuzzing.isolation` -- forked children,
* :mod:`~pyasc_mlir.fuzzing.shrinking`, :mod:`~pyasc_mlir.fuzzing.regression` -- minimal
  failing programs and the regression tests written for them,
* :mod:`~pyasc_mlir.fuzzing.report`, :mod:`~pyasc_mlir.fuzzing.run` -- a run
  (:func:`run_fuzz`, :class:`FuzzReport`) and ``pyasc fuzz`` (:func:`main`).
"""

from pyasc_mlir.fuzzing.evaluator import EV, make_inputs, reference
from pyasc_mlir.fuzzing.program import Input, Node, Program
from pyasc_mlir.fuzzing.regression import assert_program_ok, write_regression_test
from pyasc_mlir.fuzzing.report import FuzzReport
from pyasc_mlir.fuzzing.run import main, run_fuzz
from pyasc_mlir.fuzzing.runner import check_programs
from pyasc_mlir.fuzzing.seeds import Chunk, Spec, generate, generate_one
from pyasc_mlir.fuzzing.strategies import UNARY_FNS, programs
from pyasc_mlir.fuzzing.verdicts import Verdict, compare

__all__ = [
    "EV",
    "UNARY_FNS",
    "Chunk",
    "FuzzReport",
    "Input",
    "Node",
    "Program",
    "Spec",
    "Verdict",
    "assert_program_ok",
    "check_programs",
    "compare",
    "generate",
    "generate_one",
    "main",
    "make_inputs",
    "programs",
    "reference",
    "run_fuzz",
    "write_regression_test",
]
