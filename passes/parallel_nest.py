"""The body of a ``@lang.parallel`` kernel as one ``asc_loop.nest`` (for ``asc-raise-loops``).

A parallel kernel's statements run on every worker, its distributed loops split across them,
its ``asc_loop.allreduce`` ops combine partials across them (``dialects/asc_loop.py``,
"Parallel nests"): the whole body is one SPMD program, so it is not raised op by op but kept
whole as one nest, which ``asc-lower-loops`` turns into one kernel on ``W`` cores. The nest's
inputs are the function's arguments, its results the local arrays the function returns.

Each core runs its shares as scalar loops (``GetValue``/``SetValue``: about one scalar
instruction per element access, not vectorised), which a located
:class:`~pyasc_mlir.errors.PyAscPerformanceWarning` at the first distributed loop says.

Errors (located :class:`PyAscCompileError`): a returned value that is not a local array
(e.g. an argument returned as it is).
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.ir import Block, SSAValue

from pyasc_mlir.dialects import asc, asc_loop
from pyasc_mlir.errors import PyAscCompileError
from pyasc_mlir.passes.common import loc_of
from pyasc_mlir.passes.raise_fallback import warn_slow

__all__ = ["PARALLEL_HINT", "is_parallel", "parallel_nest"]

PARALLEL_HINT = (
    "keep @lang.parallel for work that needs several cores' scalar units (a cross-core "
    "combine of partials through the GM workspace); an elementwise map or a row reduction "
    "(s[i] += x[i, j], up to about 23k fp32 elements a row) written without "
    "lang.distributed_range is raised to vector ops and tiled over the cores by the compiler"
)
"""The hint of the warning :func:`parallel_nest` gives."""


def is_parallel(fop: func.FuncOp) -> bool:
    """Whether ``fop`` has a distributed loop (a ``@lang.parallel`` kernel)."""
    return any(isinstance(o, asc_loop.ForOp) and o.num_workers for o in fop.walk())


def parallel_nest(fop: func.FuncOp) -> None:
    """Replace ``fop``'s body by one ``asc_loop.nest`` holding it, then the return; warn
    (located at the first distributed loop) that the cores run their shares as scalar loops."""
    first = next(o for o in fop.walk() if isinstance(o, asc_loop.ForOp) and o.num_workers)
    warn_slow(
        loc_of(first),
        f"this distributed loop runs as scalar loops on each of the {first.num_workers} cores "
        "(GetValue/SetValue, about one scalar instruction per element access: @lang.parallel "
        "shares are not vectorised)",
        PARALLEL_HINT,
    )
    old = fop.body.block
    ret = old.last_op
    assert isinstance(ret, func.ReturnOp)
    arrays: list[SSAValue] = []
    for v in ret.arguments:
        owner = v.owner
        if not isinstance(owner, asc_loop.ToTensorOp):
            raise PyAscCompileError(
                "a @lang.parallel kernel returns local arrays (or scalars it reduced)",
                loc_of(ret),
                "copy the value into a local array (out = lang.empty_like(x)) and return it",
            )
        arrays.append(owner.array)
    nest = asc_loop.NestOp(list(fop.body.block.args), [v.type for v in ret.arguments])
    body = nest.body.block
    mapping: dict[SSAValue, SSAValue] = dict(zip(old.args, body.args, strict=True))
    for o in list(old.ops):
        if o is ret or isinstance(o, asc_loop.ToTensorOp) and o.result in ret.arguments:
            continue
        body.add_op(o.clone(value_mapper=mapping))
    body.add_op(asc_loop.NestYieldOp([mapping[a] for a in arrays]))
    if asc.LOC_ATTR in ret.attributes:
        nest.attributes[asc.LOC_ATTR] = ret.attributes[asc.LOC_ATTR]
    new = Block(arg_types=[a.type for a in old.args])
    for arg, was in zip(new.args, old.args, strict=True):
        arg.name_hint = was.name_hint
    nest.operands = list(new.args)
    new.add_op(nest)
    new_ret = func.ReturnOp(*nest.outputs)
    new_ret.attributes.update(ret.attributes)
    new.add_op(new_ret)
    fop.body.detach_block(old)
    fop.body.add_block(new)
