"""An operator with a zero-size input dimension: no kernel, no library (see
:func:`compile_empty`)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any

from pyasc_mlir import pipeline
from pyasc_mlir.artifacts import describe_empty
from pyasc_mlir.cache import atomic_write
from pyasc_mlir.compiled_op import CompiledOp
from pyasc_mlir.output import Entry


def compile_empty(
    fn: Callable[..., Any], inputs: Sequence[object], name: str, platform: str, entry: Entry
) -> CompiledOp:
    """An operator with a zero-size input dimension: the frontend gives the result shapes and
    no kernel is built. Empty results are returned as empty arrays; a result that is not empty
    (e.g. a sum over the zero-size axis) is computed by the tensor-level interpreter.
    ``op.json`` is written into ``entry``'s folder unless it is a temporary one."""
    t0 = time.perf_counter()
    module, outs = pipeline.lower_empty(fn, inputs, name)
    info = describe_empty(
        name,
        platform,
        entry.key,
        pipeline.tensor_descs(inputs),
        outs,
        pipeline.tensor_arg_names(fn, inputs),
        (time.perf_counter() - t0) * 1e3,
    )
    if entry.keep is None:
        atomic_write(entry.directory / "op.json", json.dumps(info, indent=2))
    stages = {"tensor": module}
    return CompiledOp(entry.directory, info, lambda: stages, stages=stages, keep=entry.keep)
