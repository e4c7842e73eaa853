"""Translation validation: a pass must not change what the IR computes.

``validate_pass`` interprets a module before and after one registered pass on the same random
inputs and reports the first differing element (output, index, both values).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.passes import ModulePass

from pyasc_mlir.interpreter.core import run_function
from pyasc_mlir.pipeline import make_context
from pyasc_mlir.types import np_dtype_of


@dataclass
class Mismatch:
    """The first element where two runs disagree."""

    output: int
    index: tuple[int, ...]
    before: float
    after: float

    def __str__(self) -> str:
        return (
            f"output {self.output} differs first at index {self.index}: "
            f"before {self.before!r}, after {self.after!r}"
        )


def random_inputs(
    module: ModuleOp, name: str, seed: int = 0, low: float = -3.0, high: float = 3.0
) -> list[np.ndarray]:
    """Uniform random arrays for the tensor arguments of ``func.func @name``."""
    rng = np.random.default_rng(seed)
    f = next(op for op in module.walk() if isinstance(op, func.FuncOp) and op.sym_name.data == name)
    arrays = []
    for t in f.function_type.inputs.data:
        assert isinstance(t, TensorType)
        arrays.append(rng.uniform(low, high, t.get_shape()).astype(np_dtype_of(t.element_type)))
    return arrays


def first_mismatch(
    before: Sequence[np.ndarray], after: Sequence[np.ndarray], rtol: float, atol: float
) -> Mismatch | None:
    """``None`` when every output agrees within ``|a - b| <= atol + rtol * |b|``."""
    for i, (b, a) in enumerate(zip(before, after, strict=True)):
        b64 = np.asarray(b, np.float64)
        a64 = np.asarray(a, np.float64).reshape(b64.shape)
        bad = ~(np.abs(a64 - b64) <= atol + rtol * np.abs(b64))
        bad &= ~(np.isnan(a64) & np.isnan(b64))
        if bad.any():
            idx = tuple(int(x) for x in np.argwhere(bad)[0])
            return Mismatch(i, idx, float(b64[idx]), float(a64[idx]))
    return None


def validate_pass(
    module: ModuleOp,
    pass_: ModulePass,
    name: str,
    inputs: Sequence[np.ndarray] | None = None,
    rtol: float = 1e-6,
    atol: float = 1e-6,
) -> ModuleOp:
    """Apply ``pass_`` to a copy of ``module``; check both compute the same ``@name``.

    Returns the transformed module.

    Raises:
        AssertionError: naming the pass and the first differing element.
    """
    args = list(inputs) if inputs is not None else random_inputs(module, name)
    before = run_function(module, name, [a.copy() for a in args])
    after_module = module.clone()
    pass_.apply(make_context(), after_module)
    after_module.verify()
    after = run_function(after_module, name, [a.copy() for a in args])
    bad = first_mismatch(before, after, rtol, atol)
    if bad is not None:
        raise AssertionError(f"pass {pass_.name} changed the result: {bad}")
    return after_module
