"""``asc-raise-loops``: raise the kernel language's loop nests (``asc_loop``) to tensor-level
``asc`` ops, so they go through the whole pipeline (fusion, tiling, UB, double buffering,
Cube lowering).

Each function body is walked in program order with the current contents of every local
array as a tensor ("the state"). A store inside loops ``i_1..i_n`` (the iteration space,
each loop ``range(a, b)`` with step 1) whose full index (the loops enclosing the array's
``asc_loop.alloc``, then its subscripts ``i`` or ``i +- c``) names distinct loop variables
and covers the whole array (``y[i - 1]`` for ``i`` in ``range(1, n + 1)`` does) is raised
as one of:

- an **elementwise map**: the index names every loop of the space. The stored value's
  expression is evaluated as a tensor over the space: ``asc_loop.load a[i, j]`` becomes
  ``a`` (sliced to the elements its loops reach: ``x[i + 1]``, a loop over part of an axis;
  cast to f32, transposed to the space's loop order, broadcast over the loops it does
  not name), scalar ops become ``asc.unary``/``asc.binary``/``asc.constant``, ``lang.cast``
  a cast pair. The new state is the value cast to the array's dtype (the store's rounding).
- a **reduction**: the index leaves out loops ``R`` and the value is ``s[idx] <op> f`` with
  ``op`` in ``add sub max min``: ``state = state <op> asc.reduce(op, f, axes R)`` (``sub``
  reduces with ``sum``). A scalar variable outside every loop (``s = 0.0; for i: s +=
  x[i]``) is a one-element tensor, and so is a store outside every loop at index 0 of a
  one-element local array (``out[0] = s / n``): it writes the whole array.
- a **contraction**: an ``add`` reduction over one loop ``k`` whose ``f`` is ``x[i, k] * y[k,
  j]`` (``x[k, i]``/``y[j, k]`` give the transpose flags): ``asc.matmul(x, y)`` (Cube; f32
  accumulation), added to the initial state unless that is a zero fill. The textbook form
  (``acc = 0.0; for k: acc += a[i, k] * b[k, j]; c[i, j] = acc``) is this with a scalar
  variable expanded over ``i, j``.

Loop distribution is legal because every access to an array inside one top-level nest uses
the same loop variables (checked), and a reduced array is read inside its reduction loops
only by the reduction itself. ``asc_loop.to_tensor`` returns the state.

Numerics: as the loop IR (f32 scalars, rounding at stores), except that reductions and
contractions accumulate in f32 (the loop IR rounds an f16 accumulator array at every step;
a scalar accumulator is f32 in both) and in the tensor ops' order.

Not raisable: a nest that is none of these (a strided loop, a partial write, other index
arithmetic or constant indices, a dependence between iterations) runs as scalar loops: it
becomes an ``asc_loop.nest`` (``passes/raise_fallback.py``, lowered by ``asc-lower-loops``)
and a located ``PyAscPerformanceWarning`` names the reason. A ``@lang.parallel`` kernel (a
function with a distributed loop) is not raised: its body becomes one nest as a whole
(``passes/parallel_nest.py``). Errors: a read of an element
before it is ever written, an op outside the loop language (located ``PyAscCompileError``).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import IntegerAttr, MemRefType, ModuleOp, TensorType, f32
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass

from pyasc_mlir.dialects import asc, asc_loop
from pyasc_mlir.errors import PyAscCompileError
from pyasc_mlir.passes.common import loc_of
from pyasc_mlir.passes.parallel_nest import is_parallel, parallel_nest
from pyasc_mlir.passes.raise_fallback import FAST_HINT, try_raise

__all__ = ["AscRaiseLoopsPass"]

_HINT = FAST_HINT
_REDUCE = {"add": "sum", "sub": "sum", "max": "max", "min": "min"}
"""Combination kind of a reduction -> ``asc.reduce`` kind (``s -= f``: ``s - sum(f)``)."""


@dataclass(frozen=True)
class Loop:
    iv: SSAValue
    extent: int
    lb: int = 0


@dataclass
class State:
    """The current contents of a local array: ``value`` (a tensor of the array's dtype over
    ``expand`` + the array's shape; ``None`` before the first write), and whether it is the
    zero fill."""

    expand: tuple[Loop, ...]
    value: SSAValue | None = None
    zero: bool = False
    access: dict[Operation, tuple[SSAValue, ...]] = field(default_factory=dict)


def _fail(op: Operation, why: str) -> PyAscCompileError:
    return PyAscCompileError(
        f"this loop nest cannot be raised to vector ops: {why}", loc_of(op), _HINT
    )


class _Raiser:
    """Raises one function body into ``self.out``."""

    def __init__(self, fop: func.FuncOp):
        self.fop = fop
        self.out = Block(arg_types=fop.function_type.inputs.data)
        for new, old in zip(self.out.args, fop.body.block.args, strict=True):
            new.name_hint = old.name_hint
        self.values: dict[SSAValue, SSAValue] = dict(
            zip(fop.body.block.args, self.out.args, strict=True)
        )
        self.state: dict[SSAValue, State] = {}
        self.captured: dict[Operation, SSAValue | None] = {}
        self.memo: dict[tuple[SSAValue, tuple[SSAValue, ...]], SSAValue] = {}
        self.nest_access: dict[SSAValue, tuple[tuple[SSAValue, ...], tuple[int, ...]]] = {}
        self.loops: dict[SSAValue, Loop] = {}
        self.offsets: dict[Operation, tuple[int, ...]] = {}
        """Per access: the element each axis starts at (loop start + constant offset)."""
        self.anchor: Operation | None = None

    # -- building ---------------------------------------------------------------------------
    def add(self, op: Operation) -> SSAValue:
        self.emit(op)
        return op.results[0]

    def emit(self, op: Operation) -> None:
        for key in (asc.LOC_ATTR, "lang.scope"):  # the source line, lang.scope's region
            if self.anchor is not None and key in self.anchor.attributes:
                op.attributes[key] = self.anchor.attributes[key]
        self.out.add_op(op)

    def cast(self, v: SSAValue, dtype: Attribute) -> SSAValue:
        t = v.type
        assert isinstance(t, TensorType)
        return v if t.element_type == dtype else self.add(asc.CastOp(v, dtype))

    # -- walking ----------------------------------------------------------------------------
    def run(self) -> None:
        for op in list(self.fop.body.block.ops):
            if isinstance(op, asc_loop.ForOp):
                self.nest_access = {}
            if isinstance(op, asc_loop.ForOp | asc_loop.StoreOp | asc_loop.LoadOp):
                try_raise(self, op, functools.partial(self.op, op, ()))  # else scalar loops
            else:
                self.op(op, ())
        self.fop.body.detach_block(self.fop.body.block)
        for dead in reversed(list(self.out.ops)):  # states never read (a zero init)
            if dead.results and not any(r.uses for r in dead.results):
                self.out.erase_op(dead)
        self.fop.body.add_block(self.out)

    def op(self, op: Operation, ctx: tuple[Loop, ...]) -> None:
        self.anchor = op
        if isinstance(op, asc_loop.ForOp):
            lb, ub, step = op.bounds
            if op.bound is not None:
                raise _fail(op, "the loop's bound is an outer loop variable (a triangular loop)")
            if step != 1:
                raise _fail(
                    op, f"the loop runs range({lb}, {ub}, {step}); strided loops are not raised"
                )
            loop = Loop(op.body.block.args[0], ub - lb, lb)
            self.loops[loop.iv] = loop
            inner = (*ctx, loop)
            for o in list(op.body.block.ops):
                self.op(o, inner)
        elif isinstance(op, asc_loop.AllocOp):
            t = op.result.type
            assert isinstance(t, MemRefType)
            st = State(ctx)
            if op.fill_value is not None:
                shape = [lp.extent for lp in ctx] + list(t.get_shape())
                tt = TensorType(t.element_type, shape or [1])  # a scalar: one element
                st.value, st.zero = self.add(asc.ConstantOp(op.fill_value, tt)), op.fill_value == 0
            self.state[op.result] = st
        elif isinstance(op, asc_loop.LoadOp):
            self.load(op, ctx)
        elif isinstance(op, asc_loop.StoreOp):
            self.store(op, ctx)
        elif isinstance(op, asc_loop.ToTensorOp):
            st = self.state[op.array]
            if st.value is None:
                raise _fail(op, "the returned array is never written")
            self.values[op.result] = st.value
        elif isinstance(op, func.ReturnOp):
            self.emit(func.ReturnOp(*(self.values[v] for v in op.operands)))
        elif isinstance(op, asc_loop.YieldOp | asc_loop.ConstOp | asc_loop.UnaryOp):
            return
        elif isinstance(op, asc_loop.BinaryOp | asc_loop.RoundOp):
            return
        elif isinstance(op, arith.ConstantOp | arith.AddiOp | arith.SubiOp | arith.MuliOp):
            return  # index arithmetic: read through the accesses that use it
        else:
            raise _fail(op, f"{op.name} is not part of the loop language")

    def full_index(
        self, op: Operation, arr: SSAValue, idx: Sequence[SSAValue]
    ) -> tuple[SSAValue, ...]:
        """The loop variable of each axis of an access (the loops enclosing the array's
        alloc, then its subscripts); ``self.offsets[op]``: the element each axis starts at
        (a loop's start plus a constant offset, ``x[i + 1]``)."""
        st = self.state.get(arr)
        pre = tuple(lp.iv for lp in st.expand) if st is not None else ()
        parts = [_index_parts(v) for v in idx]
        if any(p is None for p in parts):
            raise _fail(op, "an index is a constant or an expression; index with loop variables")
        ivs = tuple(p[0] for p in parts if p is not None)
        full = (*pre, *ivs)
        if len(set(full)) != len(full):
            raise _fail(op, "a loop variable indexes two axes (a diagonal)")
        starts = [self.loops[v].lb + p[1] for v, p in zip(ivs, parts, strict=True) if p]
        self.offsets[op] = (0,) * len(pre) + tuple(starts)
        return full

    def check_access(self, op: Operation, arr: SSAValue, full: tuple[SSAValue, ...]) -> None:
        key = (full, self.offsets[op])
        seen = self.nest_access.setdefault(arr, key)
        if seen != key:
            raise _fail(
                op,
                "the nest reads or writes one array at different indices "
                "(a dependence between iterations)",
            )

    def load(self, op: asc_loop.LoadOp, ctx: tuple[Loop, ...]) -> None:
        if isinstance(op.array.type, MemRefType):
            full = self.full_index(op, op.array, op.indices)
            self.check_access(op, op.array, full)
            self.captured[op] = self.state[op.array].value
        else:
            self.load_index(op)

    def load_index(self, op: asc_loop.LoadOp) -> tuple[tuple[SSAValue, ...], list[int]]:
        """The loop variables of a load and the size-1 axes of a kernel argument it reads at
        index 0 (``x[i, 0]`` of an ``[N, 1]`` array; dropped by a reshape)."""
        if isinstance(op.array.type, MemRefType):
            return self.full_index(op, op.array, op.indices), []
        t = op.array.type
        assert isinstance(t, TensorType)
        drop = [
            a
            for a, (v, d) in enumerate(zip(op.indices, t.get_shape(), strict=True))
            if d == 1 and _const_index(v) == 0
        ]
        idx = [v for a, v in enumerate(op.indices) if a not in drop]
        return self.full_index(op, op.array, idx), drop

    # -- tensor evaluation ------------------------------------------------------------------
    def deps(self, v: SSAValue) -> frozenset[SSAValue]:
        """The loop variables ``v``'s expression depends on."""
        op = v.owner
        if isinstance(op, asc_loop.LoadOp):
            return frozenset(self.load_index(op)[0])
        if isinstance(op, asc_loop.ConstOp):
            return frozenset()
        if isinstance(op, asc_loop.UnaryOp | asc_loop.RoundOp):
            return self.deps(op.input)
        if isinstance(op, asc_loop.BinaryOp):
            return self.deps(op.lhs) | self.deps(op.rhs)
        raise _fail(op if isinstance(op, Operation) else self.fop, "a value the nest cannot raise")

    def tensor(self, v: SSAValue, space: tuple[Loop, ...]) -> SSAValue:
        """``v`` as an f32 tensor over ``space`` (one axis per loop, in order), computed over
        the loops it depends on and broadcast over the others."""
        dep = self.deps(v)
        own = tuple(lp for lp in space if lp.iv in dep) or space
        key = (v, tuple(lp.iv for lp in own))
        if key not in self.memo:
            self.memo[key] = self.evaluate(v, own)
        x = self.memo[key]
        if len(own) == len(space):
            return x
        x = self.add(asc.ReshapeOp(x, [lp.extent if lp in own else 1 for lp in space]))
        return self.add(asc.BroadcastOp(x, [lp.extent for lp in space]))

    def evaluate(self, v: SSAValue, space: tuple[Loop, ...]) -> SSAValue:
        op = v.owner
        shape = [lp.extent for lp in space] or [1]  # no loop: a scalar, as one element
        if isinstance(op, asc_loop.ConstOp):
            return self.add(asc.ConstantOp(op.value.value.data, TensorType(f32, shape)))
        if isinstance(op, asc_loop.UnaryOp):
            return self.add(asc.UnaryOp(op.kind.data, self.tensor(op.input, space)))
        if isinstance(op, asc_loop.BinaryOp):
            a, b = self.tensor(op.lhs, space), self.tensor(op.rhs, space)
            return self.add(asc.BinaryOp(op.kind.data, a, b))
        if isinstance(op, asc_loop.RoundOp):
            return self.cast(self.add(asc.CastOp(self.tensor(op.input, space), op.dtype)), f32)
        assert isinstance(op, asc_loop.LoadOp)  # deps() refused everything else
        return self.place(op, space)

    def source(self, op: asc_loop.LoadOp) -> tuple[SSAValue, tuple[SSAValue, ...]]:
        """The tensor a load reads (the argument, or the array's captured state) and the loop
        variable of each of its axes."""
        full, drop = self.load_index(op)
        if isinstance(op.array.type, MemRefType):
            src = self.captured.get(op)
            if src is None:
                raise _fail(op, "an element is read before it is written")
        else:
            src = self.values[op.array]
        src = self.window(op, src, drop, full)
        if drop:
            t = src.type
            assert isinstance(t, TensorType)
            keep = [d for a, d in enumerate(t.get_shape()) if a not in drop]
            src = self.add(asc.ReshapeOp(src, keep or [1]))  # [1]: a one-element argument
        return src, full

    def window(
        self, op: asc_loop.LoadOp, src: SSAValue, drop: list[int], full: tuple[SSAValue, ...]
    ) -> SSAValue:
        """``src`` sliced to the elements the load's loops reach on each indexed axis (a loop
        over part of an axis, or an offset index ``x[i + 1]``)."""
        t = src.type
        assert isinstance(t, TensorType)
        if not full:  # a scalar (one element) or a one-element argument
            return src
        shape = list(t.get_shape())
        kept = [a for a in range(len(shape)) if a not in drop]
        starts, sizes = [0] * len(shape), list(shape)
        for a, v, start in zip(kept, full, self.offsets[op], strict=True):
            starts[a], sizes[a] = start, self.loops[v].extent if v in self.loops else shape[a]
            if start < 0 or start + sizes[a] > shape[a]:
                end, size = start + sizes[a], shape[a]
                raise _fail(op, f"the loop reads elements [{start}, {end}) of an axis of {size}")
        if starts == [0] * len(shape) and sizes == shape:
            return src
        return self.add(asc.SliceOp(src, starts, sizes))

    def place(self, op: asc_loop.LoadOp, space: tuple[Loop, ...]) -> SSAValue:
        """A load over exactly the loops it names (``space``, in loop order): the source
        widened to f32 and transposed to that order."""
        src, full = self.source(op)
        order = [lp.iv for lp in space]
        t = src.type
        assert isinstance(t, TensorType)
        for v, d in zip(full, t.get_shape() if full else (), strict=True):
            if v not in order:
                raise _fail(op, "a load uses a loop variable of another nest")
            if space[order.index(v)].extent != d:
                raise _fail(
                    op, f"the loop covers {space[order.index(v)].extent} of {d} elements (a slice)"
                )
        x = self.cast(src, f32)
        if not full:  # a scalar or a one-element argument: broadcast over the space
            target = [lp.extent for lp in space] or [1]
            x = self.add(asc.ReshapeOp(x, [1] * len(space))) if len(space) > 1 else x
            return x if target == [1] * len(target) else self.add(asc.BroadcastOp(x, target))
        perm = sorted(range(len(full)), key=lambda a: order.index(full[a]))
        if perm != list(range(len(full))):
            x = self.add(asc.TransposeOp(x, perm))
        return x

    # -- stores -----------------------------------------------------------------------------
    def store(self, op: asc_loop.StoreOp, ctx: tuple[Loop, ...]) -> None:
        st = self.state[op.array]
        if not ctx and not st.expand and _whole_one_element(op):  # out[0] = s: all of out
            t = op.array.type
            assert isinstance(t, MemRefType)
            value = self.tensor(op.value, ())  # one element
            if list(t.get_shape()) != [1]:
                value = self.add(asc.ReshapeOp(value, list(t.get_shape())))
            st.value, st.zero = self.cast(value, t.element_type), False
            return
        full = self.full_index(op, op.array, op.indices)
        self.check_access(op, op.array, full)
        t = op.array.type
        assert isinstance(t, MemRefType)
        shape = [lp.extent for lp in st.expand] + list(t.get_shape())
        order = [lp.iv for lp in ctx]
        for v, d, start in zip(full, shape, self.offsets[op], strict=True):
            if v not in order or ctx[order.index(v)].extent != d or start != 0:
                raise _fail(op, "the loops do not cover the array (a partial write)")
        reduced = [lp for lp in ctx if lp.iv not in full]
        if not reduced:
            value = self.tensor(op.value, ctx)
            perm = [order.index(v) for v in full]
            if perm != sorted(perm):
                value = self.add(asc.TransposeOp(value, perm))
            c = op.value.owner
            st.value = self.cast(value, t.element_type)
            st.zero = isinstance(c, asc_loop.ConstOp) and c.value.value.data == 0.0
            return
        st.value = self.cast(self.reduction(op, st, full, ctx, reduced), t.element_type)
        st.zero = False

    def reduction(
        self,
        op: asc_loop.StoreOp,
        st: State,
        full: tuple[SSAValue, ...],
        ctx: tuple[Loop, ...],
        reduced: list[Loop],
    ) -> SSAValue:
        comb = op.value.owner
        if not isinstance(comb, asc_loop.BinaryOp) or comb.kind.data not in _REDUCE:
            raise _fail(
                op, "a store inside a loop its index does not name is not a reduction s[i] op= f"
            )
        acc, f = self._split(comb, op)
        if acc is None or f is None:
            raise _fail(op, "the reduction must combine the array's own element with a value")
        self.check_alone(op, acc, reduced[0])
        init = self.captured.get(acc)
        if init is None:
            raise _fail(op, "the reduction's array is read before it is written")
        kind = comb.kind.data
        result = self.contraction(f, full, ctx, reduced) if kind == "add" else None
        if result is None:
            space_f = self.tensor(f, ctx)
            axes = [ctx.index(lp) for lp in reduced]
            result = self.add(asc.ReduceOp(_REDUCE[kind], space_f, axes, not full))
            if not full and len(ctx) > 1:  # a full reduction to a scalar: one element
                result = self.add(asc.ReshapeOp(result, [1]))
            kept = [lp.iv for lp in ctx if lp not in reduced]
            perm = [kept.index(v) for v in full]
            if perm != sorted(perm):
                result = self.add(asc.TransposeOp(result, perm))
        if kind == "add" and st.zero:
            return result
        return self.add(asc.BinaryOp(kind, self.cast(init, f32), result))

    @staticmethod
    def check_alone(store: asc_loop.StoreOp, load: asc_loop.LoadOp, outer: Loop) -> None:
        """Inside the outermost reduced loop, the array is read and written only by the
        reduction itself (s[i] += x; s[i] = max(s[i], y) in one loop is not separable)."""
        loop = outer.iv.owner.parent_op() if isinstance(outer.iv, BlockArgument) else None
        assert isinstance(loop, asc_loop.ForOp)
        for o in loop.walk():
            uses = isinstance(o, asc_loop.LoadOp | asc_loop.StoreOp) and o.array == store.array
            if uses and o is not store and o is not load:
                raise _fail(
                    o, "the reduced array is also read or written inside the reduction's loop"
                )

    @staticmethod
    def _split(
        comb: asc_loop.BinaryOp, store: asc_loop.StoreOp
    ) -> tuple[asc_loop.LoadOp | None, SSAValue | None]:
        orders = [(comb.lhs, comb.rhs)]
        if comb.kind.data != "sub":  # s - f only: f - s is no reduction
            orders.append((comb.rhs, comb.lhs))
        for acc, f in orders:
            ld = acc.owner
            if (
                isinstance(ld, asc_loop.LoadOp)
                and ld.array == store.array
                and tuple(ld.indices) == tuple(store.indices)
                and not _reads(f, store.array)
            ):
                return ld, f
        return None, None

    def contraction(
        self, f: SSAValue, full: tuple[SSAValue, ...], ctx: tuple[Loop, ...], reduced: list[Loop]
    ) -> SSAValue | None:
        mul = f.owner
        if len(reduced) != 1 or len(full) != 2 or not isinstance(mul, asc_loop.BinaryOp):
            return None
        if mul.kind.data != "mul":
            return None
        lx, ly = mul.lhs.owner, mul.rhs.owner
        if not isinstance(lx, asc_loop.LoadOp) or not isinstance(ly, asc_loop.LoadOp):
            return None
        (x, ix), (y, iy) = self.source(lx), self.source(ly)
        i, j, k = full[0], full[1], reduced[0].iv
        if set(ix) == {j, k} and set(iy) == {i, k}:
            (x, ix), (y, iy) = (y, iy), (x, ix)
        if set(ix) != {i, k} or set(iy) != {k, j} or len(ix) != 2 or len(iy) != 2:
            return None
        xt, yt = x.type, y.type
        assert isinstance(xt, TensorType) and isinstance(yt, TensorType)
        if xt.element_type != yt.element_type:
            x, y = self.cast(x, f32), self.cast(y, f32)
        ta, tb = ix != (i, k), iy != (k, j)
        return self.add(asc.MatmulOp(x, y, ta, tb))


def _index_parts(v: SSAValue) -> tuple[SSAValue, int] | None:
    """``(loop variable, constant offset)`` of an index ``i``, ``i + c`` or ``i - c``."""
    if isinstance(v, BlockArgument):
        return v, 0
    op = v.owner
    if isinstance(op, arith.AddiOp | arith.SubiOp) and isinstance(op.lhs, BlockArgument):
        c = _const_index(op.rhs)
        if c is not None:
            return op.lhs, c if isinstance(op, arith.AddiOp) else -c
    return None


def _whole_one_element(op: asc_loop.StoreOp) -> bool:
    """``op`` stores index 0 of every axis of a one-element local array: all of it."""
    t = op.array.type
    return (
        isinstance(t, MemRefType)
        and len(op.indices) == len(t.get_shape()) > 0
        and all(d == 1 for d in t.get_shape())
        and all(_const_index(v) == 0 for v in op.indices)
    )


def _const_index(v: SSAValue) -> int | None:
    """The value of an ``arith.constant : index``, else ``None``."""
    op = v.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return int(op.value.value.data)
    return None


def _reads(v: SSAValue, arr: SSAValue) -> bool:
    """``v``'s expression loads from ``arr``."""
    stack, seen = [v], set()
    while stack:
        cur = stack.pop()
        op = cur.owner
        if not isinstance(op, Operation) or id(op) in seen:
            continue
        seen.add(id(op))
        if isinstance(op, asc_loop.LoadOp) and op.array == arr:
            return True
        if not isinstance(op, asc_loop.LoadOp):
            stack.extend(op.operands)
    return False


@dataclass(frozen=True)
class AscRaiseLoopsPass(ModulePass):
    """Raise ``asc_loop`` nests to tensor-level ``asc`` (see the module docstring); functions
    without ``asc_loop`` ops are left as they are.

    Raises:
        PyAscCompileError: a nest that cannot be raised, located at the op, with the reason."""

    name = "asc-raise-loops"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fop in list(op.walk()):
            if isinstance(fop, func.FuncOp) and is_parallel(fop):
                parallel_nest(fop)  # an SPMD program: one nest, not raised
            elif isinstance(fop, func.FuncOp) and any(
                o.dialect_name() == "asc_loop" for o in fop.walk()
            ):
                _Raiser(fop).run()
