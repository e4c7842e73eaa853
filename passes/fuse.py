"""``asc-fuse``: group tensor-level asc ops into ``asc.fusion`` regions (one region = one kernel).

Every op of an operator made of elementwise ops, broadcasts, reshapes and reductions fuses into
ONE ``asc.fusion`` per function: intermediates never leave the chip, so GM traffic is reading
each input once and writing each output once; a slice of an input is read in place (offset +
row stride, ``iteration_space.GmView``), so ``silu(x[..., :h]) * x[..., h:]`` reads ``x``
once. An ``asc.matmul`` and the elementwise work on its
output (its epilogue) form one Cube kernel; see ``_groups`` for where kernels split. Whether
the group can be tiled is decided (and reported, with the op's source line) by ``asc-tile``
(``asc-lower-cube`` for Cube kernels).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue, Use
from xdsl.passes import ModulePass

from pyasc_mlir.dialects import asc, attrs
from pyasc_mlir.passes.cube_plan import TILE_N_MAX
from pyasc_mlir.passes.fuse_split import hoist_casts_over_views, split_unrelated_shapes
from pyasc_mlir.passes.iteration_space import ELEMENTWISE, shape_of
from pyasc_mlir.passes.views import VIEW_OPS, readable_in_place

EPILOGUE_OPS = (
    asc.ConstantOp,
    asc.UnaryOp,
    asc.BinaryOp,
    asc.CompareOp,
    asc.SelectOp,
    asc.CastOp,
    asc.BroadcastOp,
)
"""Ops that may run on a matmul's output tile inside the Cube kernel (elementwise work)."""
TENSOR_OPS = (
    *EPILOGUE_OPS,
    asc.ReduceOp,
    asc.ReshapeOp,
    asc.MatmulOp,
    asc.TransposeOp,
    asc.FlashAttentionOp,
    asc.SliceOp,
)
"""The tensor ops a fusion group is made of: the elementwise ones and the ops that change
shapes (reduce, reshape, matmul, transpose, slice)."""


def _runs(block: Block) -> list[list[Operation]]:
    """Maximal runs of consecutive tensor ops (a non-asc op in between splits the group)."""
    runs: list[list[Operation]] = [[]]
    for op in block.ops:
        if isinstance(op, TENSOR_OPS):
            runs[-1].append(op)
        elif runs[-1]:
            runs.append([])
    return [r for r in runs if r]


def _wrap_layout_ops(block: Block, per_op: bool) -> None:
    """Each concat (and with ``per_op`` each slice) in its own ``asc.fusion`` (inputs in
    operand order), with the ``asc.reshape`` that is its only user (``x[-1]`` = slice +
    reshape: same bytes in GM). NOT transposes nor (fused) slices: ``_groups`` places them
    (a transpose folded into a Cube kernel's GM addressing when it only reshuffles a matmul's
    operands or results, else alone in a data-movement kernel; a slice read in place by the
    vector kernel that consumes it, see ``iteration_space.GmView``)."""
    kinds = (asc.ConcatOp, asc.SliceOp) if per_op else (asc.ConcatOp,)
    for op in [o for o in block.ops if isinstance(o, kinds)]:
        uses = list(op.results[0].uses)
        last: Operation = op
        if (
            len(uses) == 1
            and isinstance(uses[0].operation, asc.ReshapeOp)
            and (uses[0].operation.parent is block)
        ):
            last = uses[0].operation
        inputs = list(dict.fromkeys(op.operands))
        body = Block(arg_types=[v.type for v in inputs])
        fusion = asc.FusionOp(
            operands=[inputs], result_types=[[last.results[0].type]], regions=[Region(body)]
        )
        if asc.LOC_ATTR in op.attributes:
            fusion.attributes[asc.LOC_ATTR] = op.attributes[asc.LOC_ATTR]
        block.insert_op_before(fusion, op)
        last.results[0].replace_all_uses_with(fusion.results[0])
        for o in dict.fromkeys([op, last]):
            o.detach()
            body.add_op(o)
        args = dict(zip(inputs, body.args, strict=True))
        for i, v in enumerate(op.operands):
            op.operands[i] = args[v]
        body.add_op(asc.YieldOp([last.results[0]]))


def _sink_operand_views(block: Block) -> None:
    """Move every operand view (:func:`_operand_views` over the whole block) to just before
    its first user. A data-movement fusion (a concat: RoPE's halves) ends a run of tensor ops,
    and ``_groups`` places views per run: a head split written before the concat
    (``v = (h @ wv.T).view(...).transpose(1, 2)``) would otherwise stay in the projection's run,
    away from the attention that reads it, and become a result view the Cube kernel cannot
    write (a split of its output axis) or a transpose kernel. A view only re-indexes its
    operand, which is defined earlier, so moving it later is always valid."""
    ops: list[Operation] = [o for o in block.ops if isinstance(o, TENSOR_OPS)]
    views = _operand_views(ops)
    for op in reversed(ops):  # users first: a view's own users are in place when it moves
        if op not in views:
            continue
        users = [u.operation for u in op.results[0].uses]
        first = min(users, key=lambda u: block.get_operation_index(u))
        if op.next_op is not first:
            op.detach()
            block.insert_op_before(op, first)


def _fuse_block(block: Block, per_op: bool = False) -> None:
    if not per_op:
        hoist_casts_over_views(block)
    _wrap_layout_ops(block, per_op)
    if not per_op:
        _sink_operand_views(block)
    for ops in _runs(block):
        if per_op:
            for op in ops:
                if isinstance(op, asc.ConstantOp):
                    continue
                group: list[Operation] = []
                for i, v in enumerate(op.operands):
                    if isinstance(v.owner, asc.ConstantOp):  # splats travel with their user
                        c = v.owner.clone()
                        block.insert_op_before(c, op)
                        op.operands[i] = c.results[0]
                        group.append(c)
                _fuse_run(block, [*group, op])
            for op in ops:
                if isinstance(op, asc.ConstantOp) and not op.results[0].uses:
                    op.detach()
                    op.erase()
        else:
            ops = _unshare_views(block, ops)
            for group in _groups(ops, _operand_views(ops)):
                _fuse_run(block, group)
    term = block.last_op
    if (
        not per_op
        and not _runs(block)
        and isinstance(term, func.ReturnOp)
        and any(isinstance(v, BlockArgument) and v.block is block for v in term.operands)
    ):
        _fuse_run(block, [])  # only inputs are returned: a kernel that copies them


def _fits_output(op: Operation, shape: tuple[int, ...]) -> bool:
    """Every tensor ``op`` touches broadcasts to the matmul output ``shape``."""
    return all(
        asc.broadcast_shapes(shape_of(v), shape) == shape for v in [*op.operands, *op.results]
    )


def _epilogue_ok(op: Operation, shape: tuple[int, ...], members: set[Operation]) -> bool:
    """``op`` can join a Cube kernel whose matmul output has ``shape``: elementwise work on
    values broadcastable to it, or another matmul of the same output shape whose operands come
    from GM (SwiGLU's two projections of one input)."""
    if isinstance(op, asc.MatmulOp):
        return False  # placed by _groups
    if isinstance(op, asc.ReduceOp):  # over N, whole rows in one block: e.g. softmax(q k^T)
        return (
            shape_of(op.input) == shape
            and op.axis_list == (len(shape) - 1,)
            and op.keeps_dims
            and shape[-1] <= TILE_N_MAX
            and op.kind.data in ("sum", "max", "min")
            and _fits_output(op, shape)
        )
    if isinstance(op, asc.ConstantOp) and shape_of(op.result) != shape:
        # A Cube kernel writes only tiles of its output shape: a smaller constant another
        # matmul reads from GM (the ``ones`` column of a row sum, maybe through a reshape)
        # is made by a vector kernel.
        return not _read_by_cube(op.result)
    return isinstance(op, EPILOGUE_OPS) and _fits_output(op, shape)


def _operand_views(ops: list[Operation]) -> set[Operation]:
    """Reshapes/transposes whose results only feed matmul operands (directly or through other
    such views): the Cube kernel reads the operand through them in place."""
    views: set[Operation] = set()
    for op in reversed(ops):
        if (
            isinstance(op, VIEW_OPS)
            and op.results[0].uses
            and all(_reads_in_place(u) or u.operation in views for u in op.results[0].uses)
        ):
            views.add(op)
    for mm in ops:  # a chain the Cube cannot read in place is not a view: it gets a kernel
        if isinstance(mm, asc.MatmulOp | asc.FlashAttentionOp):
            for v in mm.operands[:3]:
                if isinstance(v.owner, Operation) and v.owner in views and not readable_in_place(v):
                    while isinstance(v.owner, Operation) and v.owner in views:
                        views.discard(v.owner)
                        v = v.owner.operands[0]
    return views


def _read_by_cube(v: SSAValue) -> bool:
    """Some use of ``v``, directly or through reshapes/transposes, is a Cube operand."""
    return any(
        _reads_in_place(u)
        or (isinstance(u.operation, VIEW_OPS) and _read_by_cube(u.operation.results[0]))
        for u in v.uses
    )


def _unshare_views(block: Block, ops: list[Operation]) -> list[Operation]:
    """``ops`` with every operand view (:func:`_operand_views`) used more than once cloned
    per extra use, users first (a clone's own operand view then gets one more use and is
    cloned in turn): each matmul's chain of views is its own, so matmuls in different kernels
    never share one (a backward reads ``q`` through its head-split view in ``q k^T`` and in
    ``dS q``). A view only re-addresses GM, so a clone costs nothing at run time."""
    views = _operand_views(ops)
    out = list(ops)
    for op in reversed(ops):
        if op not in views:
            continue
        for use in list(op.results[0].uses)[1:]:
            twin = op.clone()
            block.insert_op_after(twin, op)
            out.insert(out.index(op) + 1, twin)
            use.operation.operands[use.index] = twin.results[0]
    return out


def _reads_in_place(use: Use) -> bool:
    """``use`` is a Cube operand read from GM: a matmul operand, or ``q``/``k``/``v`` of a
    fused attention (its mask is copied in as it is stored)."""
    op = use.operation
    return isinstance(op, asc.MatmulOp) or (isinstance(op, asc.FlashAttentionOp) and use.index < 3)


def _mask_cast(op: Operation, fa: asc.FlashAttentionOp) -> bool:
    """``op`` is the cast of ``fa``'s mask to f32 and feeds nothing else: the attention
    kernel casts each mask block in UB."""
    return (
        isinstance(op, asc.CastOp)
        and fa.mask is op.result
        and all(u.operation is fa for u in op.result.uses)
    )


def _view_root(v: SSAValue, views: set[Operation]) -> SSAValue:
    while isinstance(v.owner, Operation) and v.owner in views:
        v = v.owner.operands[0]
    return v


def _trivial_reshape(op: asc.ReshapeOp) -> bool:
    """Only adds or drops size-1 dims (a vector kernel handles it in place)."""
    return [d for d in shape_of(op.operands[0]) if d != 1] == [
        d for d in shape_of(op.results[0]) if d != 1
    ]


def _slice_foldable(op: asc.SliceOp) -> bool:
    """A vector kernel can read slice ``op`` in place: its innermost dim of extent > 1 is
    contiguous in the input (rows of the view are runs of consecutive elements)."""
    shape, src = shape_of(op.result), shape_of(op.input)
    dims = [d for d, e in enumerate(shape) if e > 1]
    return not dims or all(e == 1 for e in src[dims[-1] + 1 :])


def _row_view(op: asc.SliceOp) -> Operation | None:
    """The ``asc.broadcast`` that spreads slice ``op`` (through same-shape elementwise ops)
    over a dim after its innermost dim of extent > 1, or ``None``. With that broadcast in the
    same kernel, the slice's innermost dim is a row (or ``M``) axis of the iteration space,
    never the contiguous ``L`` axis: each row of the view is one GM block, read in place
    with a gap (``x * x[:, :1]``), however far apart its elements are in the input."""
    shape = shape_of(op.result)
    dims = [d for d, e in enumerate(shape) if e > 1]
    if not dims:
        return None
    stack, seen = [op.results[0]], set()
    while stack:
        for use in stack.pop().uses:
            u = use.operation
            if isinstance(u, asc.BroadcastOp):
                out = shape_of(u.result)
                if any(e > 1 for e in out[dims[-1] + len(out) - len(shape) + 1 :]):
                    return u
            elif isinstance(u, ELEMENTWISE) and u not in seen and shape_of(u.results[0]) == shape:
                seen.add(u)
                stack.append(u.results[0])
    return None


def _settle_row_views(groups: list[list[Operation]]) -> None:
    """A slice folded for :func:`_row_view` whose broadcast ended up in another kernel is a
    data-movement kernel of its own after all, placed just before the kernel that reads it
    (its input comes from an earlier kernel or the caller)."""
    for i in range(len(groups) - 1, -1, -1):
        group = groups[i]
        for op in list(group):
            if isinstance(op, asc.SliceOp) and not _slice_foldable(op):
                if _row_view(op) not in group:
                    group.remove(op)
                    groups.insert(i, [op])


def _split_escaping_rows(groups: list[list[Operation]]) -> None:
    """A Cube kernel writes only values of its matmul's output shape: when an epilogue value
    of another shape is read after the kernel (a backward reads the softmax's row sums of
    ``q k^T`` again, or the count of each row's maxima), that op and the epilogue after it
    become a vector kernel of their own, run right after the Cube kernel (it reads the values
    it needs, of the output shape, from GM). Not done when a matmul or a result view would
    move (``asc-lower-cube`` then reports the value)."""
    for i in range(len(groups) - 1, -1, -1):
        group = groups[i]
        mms = [k for k, o in enumerate(group) if isinstance(o, asc.MatmulOp)]
        if not mms:
            continue
        cut = _first_escaping_row(group, mms[-1] + 1, len(group))
        while cut < len(group) and (k := _first_escaping_row(group, mms[-1] + 1, cut)) < cut:
            cut = k  # what the moved ops read from the kept ones escapes now too
        if cut < len(group) and not any(
            isinstance(o, (*VIEW_OPS, asc.MatmulOp)) for o in group[cut:]
        ):
            groups[i : i + 1] = [group[:cut], group[cut:]]


def _first_escaping_row(group: list[Operation], start: int, end: int) -> int:
    """The first index in ``group[start:end]`` whose op has a result not of the matmul's
    output shape (``group[start - 1]``) read outside ``group[:end]``; ``end`` if none."""
    shape, members = shape_of(group[start - 1].results[0]), set(group[:end])
    for k in range(start, end):
        for r in group[k].results:
            if shape_of(r) != shape and any(u.operation not in members for u in r.uses):
                return k
    return end


def _groups(ops: list[Operation], views: set[Operation]) -> list[list[Operation]]:
    """Split a run of tensor ops into kernels, in program order.

    A matmul's operands are read from GM by the Cube unit, so a matmul starts a new Cube
    kernel unless the elementwise ops gathered so far can all run as its epilogue (then they
    join it, e.g. an attention mask's scaling). Reshapes/transposes feeding only matmul
    operands (``views``) travel with their matmul: it reads through them in place. Elementwise
    ops on the matmul's output (and broadcasts of inputs to it) join the Cube kernel as its
    epilogue, and reshapes/transposes of its results are folded into the copy-out (result
    views); anything else (a reduction, another reshape, a matmul that needs a value computed
    in the kernel) starts a new vector kernel. A slice joins the vector kernel that reads it
    (a GM view of the kernel's input) unless its input is computed in that kernel or by a Cube
    kernel being built (then it starts a new vector kernel), or its rows are not contiguous in
    the input and no broadcast in the kernel makes them rows of the iteration space
    (:func:`_row_view`; then it is a data-movement kernel of its own, placed before the
    kernel that reads it).
    Everything else fuses into one vector kernel as before.
    """
    groups: list[list[Operation]] = [[]]
    cube: tuple[int, ...] | None = None
    result_views: set[Operation] = set()

    def chain(mm: asc.MatmulOp | asc.FlashAttentionOp) -> list[Operation]:
        found: list[Operation] = []
        for v in mm.operands[:3]:
            while isinstance(v.owner, Operation) and v.owner in views:
                found.append(v.owner)
                v = v.owner.operands[0]
        return sorted(set(found), key=ops.index)

    placed: set[Operation] = set()
    attention = False  # the open Cube group is a fused attention: elementwise epilogue only
    for op in ops:
        if op in views or op in placed:
            continue  # placed with the matmul that reads through it / with its transpose
        cur = groups[-1]
        members = set(cur)
        if isinstance(op, asc.FlashAttentionOp):  # one kernel: views, the mask's cast, it
            pre = [o for o in cur if _mask_cast(o, op)]
            for o in pre:
                cur.remove(o)
            groups.append([*chain(op), *pre, op])
            cube, result_views, attention = shape_of(op.result), set(), True
            continue
        if attention and isinstance(op, asc.MatmulOp | asc.ReduceOp):
            groups.append([])
            cube, result_views, attention = None, set(), False
        if isinstance(op, asc.MatmulOp):
            shape = shape_of(op.result)
            roots = [_view_root(v, views) for v in op.operands]
            fresh = not any(r.owner in members for r in roots)
            if cube is None and fresh and all(_epilogue_ok(o, shape, set()) for o in cur):
                cube = shape
            elif not (cube == shape and fresh):
                groups.append([])
                cube, result_views, attention = shape, set(), False
            groups[-1].extend([*chain(op), op])
            continue
        if cube is not None and isinstance(op, VIEW_OPS):
            src = op.operands[0].owner
            if src in members and (src in result_views or shape_of(op.operands[0]) == cube):
                result_views.add(op)
                cur.append(op)
                continue
        if isinstance(op, asc.ReshapeOp) and not _trivial_reshape(op):
            # Regrouping dims: a copy kernel (an identity slice + the reshape) in GM's layout.
            copy = asc.SliceOp(
                op.operands[0], [0] * len(shape_of(op.operands[0])), shape_of(op.operands[0])
            )
            if asc.LOC_ATTR in op.attributes:
                copy.attributes[asc.LOC_ATTR] = op.attributes[asc.LOC_ATTR]
            assert op.parent is not None
            op.parent.insert_op_before(copy, op)
            op.operands[0] = copy.results[0]
            groups += [[copy, op], []]
            cube, result_views, attention = None, set(), False
            continue
        if isinstance(op, asc.SliceOp):  # read in place (a GM view) by a vector kernel
            foldable = _slice_foldable(op) or _row_view(op) is not None
            if not foldable and op.input.owner not in members:
                groups.insert(len(groups) - 1, [op])  # a data-movement kernel, run first
                continue
            if cube is not None or op.input.owner in members or not foldable:
                groups.append([])
                cube, result_views, attention = None, set(), False
            if not foldable:
                groups += [[op], []]  # a data-movement kernel (asc-lower-layout)
                continue
            groups[-1].append(op)
            continue
        if isinstance(op, asc.TransposeOp):  # a data-movement kernel of its own, with the
            uses = list(op.results[0].uses)  # reshape that is its only user (same bytes)
            tail = (
                [uses[0].operation]
                if len(uses) == 1
                and isinstance(uses[0].operation, asc.ReshapeOp)
                and uses[0].operation in ops
                else []
            )
            groups += [[op, *tail], []]
            placed.update(tail)
            cube, result_views, attention = None, set(), False
            continue
        if cube is not None and (
            not _epilogue_ok(op, cube, members) or any(v.owner in result_views for v in op.operands)
        ):
            groups.append([])
            cube, result_views, attention = None, set(), False
        groups[-1].append(op)
    _settle_row_views(groups)
    split_unrelated_shapes(groups)
    _split_escaping_rows(groups)
    return [g for g in groups if g]


def _fuse_run(block: Block, ops: list[Operation]) -> None:
    members = set(ops)
    inputs: list[SSAValue] = []
    for op in ops:
        for v in op.operands:
            owner = v.owner
            if not (isinstance(owner, Operation) and owner in members) and v not in inputs:
                inputs.append(v)
    # Kernel arguments follow the function's parameter order (the launcher relies on it).
    inputs.sort(
        key=lambda v: (0, v.index) if isinstance(v, BlockArgument) and v.block is block else (1, 0)
    )
    escaping = [
        r for op in ops for r in op.results if any(u.operation not in members for u in r.uses)
    ]
    # The kernel's output arguments follow the function's results (the launcher passes the
    # result buffers in return order): returned values come first, in return order, once per
    # returned position (a value returned twice is written twice); a returned input of the
    # last group is copied through the kernel. Other escaping values follow.
    term = block.last_op
    ret_pos: list[int] = []
    outputs: list[SSAValue] = []
    if isinstance(term, func.ReturnOp):
        last = not any(
            isinstance(o, TENSOR_OPS) and o not in members
            for o in _ops_after(ops[-1] if ops else None, block)
        )
        for i, v in enumerate(term.operands):
            passthrough = last and isinstance(v, BlockArgument) and v.block is block
            if v in escaping or passthrough:
                if passthrough and v not in inputs:
                    inputs.append(v)
                ret_pos.append(i)
                outputs.append(v)
        inputs.sort(
            key=lambda v: (
                (0, v.index) if isinstance(v, BlockArgument) and v.block is block else (1, 0)
            )
        )
    outputs += [r for r in escaping if r not in outputs]
    body = Block(arg_types=[v.type for v in inputs])
    fusion = asc.FusionOp(
        operands=[inputs], result_types=[[r.type for r in outputs]], regions=[Region(body)]
    )
    anchor = _insertion_point(block, ops, inputs) if ops else term
    assert anchor is not None
    loc = (ops[0] if ops else anchor).attributes.get(asc.LOC_ATTR)
    if loc is not None:
        fusion.attributes[asc.LOC_ATTR] = loc
    block.insert_op_before(fusion, anchor)
    for k, pos in enumerate(ret_pos):
        assert term is not None  # ret_pos is filled from the function's func.return only
        term.operands[pos] = fusion.results[k]
    for r, new in zip(outputs, fusion.results, strict=True):
        if isinstance(r, BlockArgument):
            continue  # a returned input: only its return positions (above) read the copy
        for use in list(r.uses):
            if use.operation not in members and use.operation is not term:
                use.operation.operands[use.index] = new
    for op in ops:
        op.detach()
        body.add_op(op)
    for v, arg in zip(inputs, body.args, strict=True):
        for use in list(v.uses):
            if use.operation in members:
                use.operation.operands[use.index] = arg
    args = dict(zip(inputs, body.args, strict=True))
    body.add_op(asc.YieldOp([args.get(v, v) for v in outputs]))


def _insertion_point(block: Block, ops: list[Operation], inputs: list[SSAValue]) -> Operation:
    """The first member placed after every input's definition: a group may hold ops from
    earlier in the block (a matmul's operand views), whose own inputs are older, while another
    input (e.g. the other operand) is only computed later."""
    position = {op: i for i, op in enumerate(block.ops)}
    last_def = max(
        (
            position[v.owner]
            for v in inputs
            if isinstance(v.owner, Operation) and v.owner in position
        ),
        default=-1,
    )
    return min((op for op in ops if position[op] > last_def), key=position.__getitem__)


def _ops_after(op: Operation | None, block: Block) -> list[Operation]:
    """The ops of ``block`` after ``op`` (all of them when ``op`` is None)."""
    ops = list(block.ops)
    return ops if op is None else ops[ops.index(op) + 1 :]


@dataclass(frozen=True)
class AscFusePass(ModulePass):
    """Wrap each function's tensor-level asc ops into one ``asc.fusion``. With
    ``per_op=true`` every op becomes its own group (one kernel per op, intermediates through
    GM): the unfused baseline the benchmarks compare against."""

    name = "asc-fuse"
    per_op: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in list(op.walk()):
            if isinstance(f, func.FuncOp) and not attrs.is_kernel(f) and f.body.blocks:
                _fuse_block(f.body.block, self.per_op)
