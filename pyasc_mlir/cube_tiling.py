"""The ``TCubeTiling`` our compiler fills for one ``asc.mmad`` (Ascend C high-level ``Matmul``).

One ``asc.mmad`` op becomes one ``Matmul`` object whose tiling describes a *single-core* matrix
product of at most ``m_max x n_max x k_max`` (the op's static maxima); every execution sets the
actual sizes with ``SetTail(m, n, k)`` and computes its whole ``[m, n]`` block with ONE
``Iterate()`` (``m <= baseM``, ``n <= baseN``), then ``GetTensorC`` writes it to UB.

Static maxima of an ``asc.mmad`` (:func:`static_block`), first that applies:

1. the op's integer attributes ``max_m``, ``max_n``, ``max_k`` (set by ``asc-lower-cube``: the
   output block's rows and columns and the K extent; see ``asc.MmadOp``);
2. constant ``m``/``n``/``k`` operands;
3. derived: ``m`` <= destination elements // ``ls``, ``n`` <= ``ls``, ``k`` <= the largest K the
   GM operands can hold at the given leading dimensions.

Each maximum is then capped by the GM operands (``m`` by A's row count, or ``lda`` when A is
transposed; ``k`` by ``lda``, or A's row count; ``n`` by ``ldb``, or B's row count when B is
transposed; ``k`` by B's row count, or ``ldb``): ``TCubeTiling``'s ``M/N/Ka/Kb`` describe the
data (never more rows than it has) and ``singleCoreM/N/K <= M/N/Ka/Kb``.

``ls``, ``lda`` and ``ldb`` must be constants: they become ``baseN`` and the ND row strides.

``TCubeTiling`` fields (Ascend C API reference, "TCubeTiling structure"; the kernel copies them
from ``tiling.mm<i>_<field>``):

* ``M, N, Ka, Kb``: the original ND matrices. A is ``[M, Ka]`` row-major (``[Ka, M]`` when
  transposed) and B ``[Kb, N]`` (``[N, Kb]`` when transposed), so the row stride of A is ``Ka``
  (``M`` transposed) = ``lda`` and that of B is ``N`` (``Kb`` transposed) = ``ldb``; the other
  extent is the static maximum. Documented range: the stride field is in ``[1, 65535]``.
* ``singleCoreM/N/K`` = the static maxima (``usedCoreNum`` = 1: our own loop spreads tiles over
  cores, every block's product is a single-core one).
* ``baseM`` = ``m_max`` rounded up to 16 (the fractal), ``baseN`` = ``ls`` (so ``GetTensorC``'s
  ND block has row stride ``ls``, the layout ``asc.mmad`` promises), ``baseK`` = the largest
  multiple of 16 (at most ``k_max`` rounded up to 16) such that, with ``dbL0A = dbL0B = 2`` when
  it fits (else 1): ``dbL0A * baseM * baseK * sizeof(T) <= L0A`` and
  ``dbL0B * baseK * baseN * sizeof(T) <= L0B``; ``dbL0C * baseM * baseN * 4 <= L0C``
  (``dbL0C`` 2 when it fits). Constraints as documented for ``TCubeTiling``; sizes from
  :mod:`pyasc_mlir.platform`.
* ``stepM = stepN = 1``; ``stepKa = stepKb`` = the most ``baseK`` slices of A and B that L1
  holds double-buffered (``depthA1 = 2 * stepM * stepKa``, ``depthB1 = 2 * stepN * stepKb``,
  ``(depthA1 * baseM + depthB1 * baseN) * baseK * sizeof(T) <= L1``), at most the K slices
  there are; single-buffered (``depth = step``) when two do not fit.
* ``iterateOrder`` 0 (M first), ``isBias`` 0, ``shareMode`` 0, ``shareL1Size`` = the L1 bytes
  used, ``shareL0CSize`` = the L0C bytes used, ``shareUbSize`` 0.
* ``transLength``: 0 on split cores (dav-c220: GM -> L1 by MTE2 of the cube core). On coupled
  cores (dav-m200, 310P) the ND -> NZ conversion passes through UB: ``transLength`` = the
  largest A/B slice in L1 or C block in bytes, and the kernel's UB starts with that many bytes
  for the Matmul library (:func:`ub_reserve_bytes`, honoured by ``asc-buffer-alloc``).

``GetTensorC`` into UB needs ``baseM * baseN`` f32 elements of destination (documented: "the C
address space must be at least baseM * baseN"); ``asc-buffer-alloc`` reserves that much for an
``asc.mmad`` destination (:func:`dst_reserve_bytes`) even when the tile holds fewer rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, MemRefType
from xdsl.ir import Operation, SSAValue

from pyasc_mlir.dialects import asc
from pyasc_mlir.dialects.attrs import kernel_workspace_bytes
from pyasc_mlir.errors import PyAscCompileError
from pyasc_mlir.passes.common import loc_of
from pyasc_mlir.platform import (
    CUBE_FRACTAL,
    DATA_BLOCK_BYTES,
    LIB_API_WORKSPACE_BYTES,
    ND_STRIDE_MAX,
    Platform,
    ceil_div,
    round_up,
)
from pyasc_mlir.platform import MAX_MATMUL_OBJECTS as MAX_MATMUL_OBJECTS  # passes/ use ct.*

MAX_ATTRS = {"m": "max_m", "n": "max_n", "k": "max_k"}
"""``asc.mmad`` attributes holding static maxima of ``m``, ``n``, ``k`` (optional)."""
TCUBE_FIELDS = (
    "usedCoreNum",
    "M",
    "N",
    "Ka",
    "Kb",
    "singleCoreM",
    "singleCoreN",
    "singleCoreK",
    "baseM",
    "baseN",
    "baseK",
    "depthA1",
    "depthB1",
    "stepM",
    "stepN",
    "stepKa",
    "stepKb",
    "isBias",
    "transLength",
    "iterateOrder",
    "shareMode",
    "shareL1Size",
    "shareL0CSize",
    "shareUbSize",
    "dbL0A",
    "dbL0B",
    "dbL0C",
)
"""The ``TCubeTiling`` fields we fill (all others stay 0), in the order the kernel copies
them."""
C_BYTES = 4
"""L0C / C element size: f32 accumulation."""


def round16(n: int) -> int:
    """``n`` rounded up to a multiple of the Cube fractal edge (16 elements)."""
    return round_up(n, CUBE_FRACTAL)


def field_name(index: int, field: str) -> str:
    """Name of a TCubeTiling field of Matmul object ``index`` in the kernel's tiling struct."""
    return f"mm{index}_{field}"


@dataclass(frozen=True)
class StaticBlock:
    """Static facts of one ``asc.mmad``: maxima of ``m, n, k``; constants ``ls, lda, ldb``;
    operand element size in bytes; transposes."""

    m: int
    n: int
    k: int
    ls: int
    lda: int
    ldb: int
    elem_bytes: int
    trans_a: bool
    trans_b: bool
    base_k: int = 0
    """The person's ``baseK`` (attribute ``base_k``, kernel language; 0: the largest)."""


def _const(v: SSAValue) -> int | None:
    owner = v.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def _fail(op: Operation, what: str, hint: str) -> PyAscCompileError:
    return PyAscCompileError(f"asc.mmad: {what}", loc_of(op), hint)


def _elements(v: SSAValue) -> int:
    t = v.type
    assert isinstance(t, MemRefType)
    n = 1
    for d in t.get_shape():
        n *= d
    return n


def static_block(op: asc.MmadOp) -> StaticBlock:
    """The static maxima and constants of ``op`` (see the module docstring).

    Raises:
        PyAscCompileError: ``ls``, ``lda`` or ``ldb`` is not a constant, a maximum is not
            positive, or ``n`` exceeds ``ls``.
    """
    consts = {}
    for name in ("ls", "lda", "ldb"):
        c = _const(getattr(op, name))
        if c is None or c <= 0:
            raise _fail(
                op,
                f"{name} must be a positive constant for the Matmul tiling",
                "asc-lower-cube gives static leading dimensions and row lengths",
            )
        consts[name] = c
    ls, lda, ldb = consts["ls"], consts["lda"], consts["ldb"]
    a_t, dst_t = op.a.type, op.dst.type
    assert isinstance(a_t, MemRefType) and isinstance(dst_t, MemRefType)
    elem_bytes = asc.element_bits(a_t.element_type) // 8
    given: dict[str, int | None] = {}
    for key, attr_name in MAX_ATTRS.items():
        attr = op.attributes.get(attr_name)
        given[key] = attr.value.data if isinstance(attr, IntegerAttr) else _const(getattr(op, key))
    m = given["m"] if given["m"] is not None else _elements(op.dst) // ls
    n = given["n"] if given["n"] is not None else ls
    size_a, size_b = _elements(op.a), _elements(op.b)
    k_a = size_a // lda if op.trans_a else lda
    k_b = ldb if op.trans_b else size_b // ldb
    k = given["k"] if given["k"] is not None else min(k_a, k_b)
    # the GM operands bound every extent (TCubeTiling's M/N/Ka/Kb describe the data, and
    # singleCore* <= M/N/Ka/Kb): a row spans the stride side, the row count the other
    m = min(m, lda if op.trans_a else size_a // lda)
    n = min(n, size_b // ldb if op.trans_b else ldb)
    k = min(k, k_a, k_b)
    if min(m, n, k) <= 0:
        raise _fail(
            op,
            f"static block maxima m={m} n={n} k={k} must be positive",
            "set the max_m/max_n/max_k attributes on the op",
        )
    if n > ls:
        raise _fail(
            op,
            f"n <= {n} exceeds the row length ls = {ls}",
            "the UB row must hold the block's columns",
        )
    bk = op.attributes.get("base_k")
    base_k = bk.value.data if isinstance(bk, IntegerAttr) else 0
    return StaticBlock(m, n, k, ls, lda, ldb, elem_bytes, op.trans_a, op.trans_b, base_k)


def _largest_base_k(blk: StaticBlock, base_m: int, base_n: int, plat: Platform, db: int) -> int:
    sz = blk.elem_bytes
    limit = min(plat.l0a_bytes // (db * base_m * sz), plat.l0b_bytes // (db * base_n * sz))
    best = min(limit // CUBE_FRACTAL * CUBE_FRACTAL, round16(blk.k))
    if blk.base_k and best >= min(blk.base_k, round16(blk.k)):
        return min(blk.base_k, round16(blk.k))  # the person's block
    return 0 if blk.base_k else best


def _l1_steps(
    blk: StaticBlock, base_m: int, base_n: int, base_k: int, plat: Platform
) -> tuple[int, int]:
    """(step, L1 buffers): K slices of A and B kept in L1, and 2 (double) or 1."""
    slices = ceil_div(blk.k, base_k)
    per_slice = (base_m + base_n) * base_k * blk.elem_bytes
    for db in (2, 1):
        step = min(slices, plat.l1_bytes // (db * per_slice))
        if step >= 1:
            return step, db
    return 0, 1


def cube_tiling(blk: StaticBlock, plat: Platform, where: Operation | None = None) -> dict[str, int]:
    """The TCubeTiling fields (:data:`TCUBE_FIELDS`) for ``blk`` on ``plat``.

    Raises:
        PyAscCompileError: the block cannot be tiled within L0A/L0B/L0C/L1 (located at
            ``where``), or a stride is outside the documented ND range.
    """

    def fail(what: str, hint: str) -> PyAscCompileError:
        return PyAscCompileError(f"asc.mmad: {what}", loc_of(where) if where else None, hint)

    base_m, base_n = round16(blk.m), blk.ls
    if base_n % CUBE_FRACTAL:
        raise fail(
            f"row length ls = {base_n} is not a multiple of {CUBE_FRACTAL}",
            "UB rows are padded to 16 elements",
        )
    c_block = base_m * base_n * C_BYTES
    if c_block > plat.l0c_bytes:
        raise fail(
            f"output block [{base_m}, {base_n}] f32 needs {c_block} bytes of L0C; "
            f"{plat.name} has {plat.l0c_bytes}",
            "use a smaller M or N tile",
        )
    db_c = 2 if 2 * c_block <= plat.l0c_bytes else 1
    base_k, db_ab = 0, 2
    for db_ab in (2, 1):
        base_k = _largest_base_k(blk, base_m, base_n, plat, db_ab)
        if base_k >= CUBE_FRACTAL:
            break
    if base_k < CUBE_FRACTAL and blk.base_k:
        raise fail(
            f"the kernel's K block baseK = {blk.base_k} does not fit L0A/L0B "
            f"({plat.l0a_bytes}/{plat.l0b_bytes} bytes) with baseM={base_m}, baseN={base_n}",
            "use a smaller K block (BK)",
        )
    if base_k < CUBE_FRACTAL:
        raise fail(
            f"no baseK >= {CUBE_FRACTAL} fits L0A/L0B ({plat.l0a_bytes}/{plat.l0b_bytes} "
            f"bytes) with baseM={base_m}, baseN={base_n}",
            "use a smaller M or N tile",
        )
    step_k, db_l1 = _l1_steps(blk, base_m, base_n, base_k, plat)
    if step_k < 1:
        raise fail(
            f"one K slice of A and B ({(base_m + base_n) * base_k * blk.elem_bytes} "
            f"bytes) does not fit L1 ({plat.l1_bytes})",
            "use a smaller M or N tile",
        )
    stride_a, stride_b = blk.lda, blk.ldb
    for name, v in (("lda", stride_a), ("ldb", stride_b)):
        if v > ND_STRIDE_MAX:
            raise fail(
                f"{name} = {v} exceeds the ND stride range [1, {ND_STRIDE_MAX}] of TCubeTiling",
                "split the operand",
            )
    if blk.trans_a:
        m_field, ka_field = stride_a, blk.k
    else:
        m_field, ka_field = blk.m, stride_a
    if blk.trans_b:
        n_field, kb_field = blk.n, stride_b
    else:
        n_field, kb_field = stride_b, blk.k
    depth_a, depth_b = db_l1 * step_k, db_l1 * step_k
    l1_used = (depth_a * base_m + depth_b * base_n) * base_k * blk.elem_bytes
    split = plat.arch == "dav-c220"
    trans_len = 0 if split else max(step_k * base_k * max(base_m, base_n) * blk.elem_bytes, c_block)
    fields = {
        "usedCoreNum": 1,
        "M": m_field,
        "N": n_field,
        "Ka": ka_field,
        "Kb": kb_field,
        "singleCoreM": blk.m,
        "singleCoreN": blk.n,
        "singleCoreK": blk.k,
        "baseM": base_m,
        "baseN": base_n,
        "baseK": base_k,
        "depthA1": depth_a,
        "depthB1": depth_b,
        "stepM": 1,
        "stepN": 1,
        "stepKa": step_k,
        "stepKb": step_k,
        "isBias": 0,
        "transLength": round_up(trans_len, DATA_BLOCK_BYTES),
        "iterateOrder": 0,
        "shareMode": 0,
        "shareL1Size": l1_used,
        "shareL0CSize": db_c * c_block,
        "shareUbSize": 0,
        "dbL0A": db_ab,
        "dbL0B": db_ab,
        "dbL0C": db_c,
    }
    bad = tiling_violations(fields, blk.elem_bytes, blk.trans_a, blk.trans_b, plat)
    if bad:
        raise fail(
            f"the Matmul tiling breaks TCubeTiling constraints: {'; '.join(bad)}",
            "use a smaller M or N tile",
        )
    return fields


def launch_info(kernel: Operation) -> dict[str, Any]:
    """How the host launches an ``ascendc``-level kernel (``op.json`` ``launches[i]`` and the
    host code record it): ``kernel_type`` (``KERNEL_TYPE_<kind>``: ``MIX_AIC_1_1`` for a kernel
    with a Matmul object, which declares it; ``AIV_ONLY`` otherwise, the default of a kernel
    that declares none), ``workspace_bytes`` (the zero-filled GM workspace to pass: the
    Matmul API's system workspace, ``platform.LIB_API_WORKSPACE_BYTES``, when the kernel sets
    one, then the kernel's own ``asc.workspace_bytes``, laid out one after the other without
    overlap, :func:`user_workspace_base`; 0 when neither),
    ``vector_blocks`` / ``cube_blocks`` per launched block, and ``block_mapping`` in words."""
    from pyasc_mlir.dialects import ascendc as ac  # ascendc level only; avoids a cycle

    declared = [o.kind.data for o in kernel.walk() if isinstance(o, ac.KernelTypeOp)]
    kind = declared[0] if declared else "AIV_ONLY"
    cube = kind in ("AIC_ONLY", "MIX_AIC_1_1", "MIX_AIC_1_2")
    vec = {"AIC_ONLY": 0, "MIX_AIC_1_2": 2}.get(kind, 1)
    uses_mm = any(isinstance(o, ac.SetSysWorkspaceOp) for o in kernel.walk())
    served = "i" if vec == 1 else f"i // {vec}"
    mapping = (
        f"blockDim Cube blocks and {vec} x blockDim vector blocks; the Matmul objects "
        f"of vector block i (GetBlockIdx()) run on Cube block {served}"
        if cube and vec
        else "blockDim vector blocks"
        if vec
        else "blockDim Cube blocks"
    )
    return {
        "kernel_type": kind,
        "workspace_bytes": (LIB_API_WORKSPACE_BYTES if uses_mm else 0)
        + (kernel_workspace_bytes(kernel) or 0),
        "vector_blocks": vec,
        "cube_blocks": 1 if cube else 0,
        "block_mapping": mapping,
    }


def user_workspace_base(kernel: Operation) -> int:
    """Byte offset of a kernel's own GM workspace (``asc.workspace_bytes``, the region its
    ``ascendc.workspace`` ops view) in the launch's ``workspace`` argument: after the Matmul
    API's system workspace (``SetSysWorkspace(workspace)`` takes its first
    ``platform.LIB_API_WORKSPACE_BYTES``) when the kernel sets one, else 0."""
    from pyasc_mlir.dialects import ascendc as ac  # ascendc level only; avoids a cycle

    uses_mm = any(isinstance(o, ac.SetSysWorkspaceOp) for o in kernel.walk())
    return LIB_API_WORKSPACE_BYTES if uses_mm else 0


def mmad_ops(kernel: Operation) -> list[asc.MmadOp]:
    """The ``asc.mmad`` ops of a kernel in program order (Matmul object ``i`` is the i-th)."""
    return [o for o in kernel.walk() if isinstance(o, asc.MmadOp)]


def dst_reserve_bytes(alloc: asc.AllocOp) -> int:
    """UB bytes one copy of ``alloc`` needs: its own size, or ``baseM * ls * 4`` when an
    ``asc.mmad`` writes it and that is larger (``GetTensorC`` needs ``baseM * baseN``)."""
    need = alloc.nbytes
    for use in alloc.result.uses:
        op = use.operation
        if isinstance(op, asc.MmadOp) and op.dst is alloc.result:
            blk = static_block(op)
            need = max(need, round16(blk.m) * blk.ls * C_BYTES)
    return need


def ub_reserve_bytes(kernel: Operation, plat: Platform) -> int:
    """UB bytes the Matmul library takes before the kernel's own buffers: the sum of the
    ``transLength`` of every Matmul object (0 on split-core platforms)."""
    total = 0
    for op in mmad_ops(kernel):
        total += cube_tiling(static_block(op), plat, op)["transLength"]
    return total


def tiling_violations(
    t: dict[str, int], elem_bytes: int, trans_a: bool, trans_b: bool, plat: Platform
) -> list[str]:
    """The documented ``TCubeTiling`` constraints ``t`` breaks on ``plat`` for A/B elements of
    ``elem_bytes`` (empty when it is valid). The CPU runtime's ``REGIST_MATMUL_OBJ`` checks the
    same list (``kernel_operator.h``, ``cpu::CheckCubeTiling``)."""
    bad = []
    for name in (
        "M",
        "N",
        "Ka",
        "Kb",
        "singleCoreM",
        "singleCoreN",
        "singleCoreK",
        "baseM",
        "baseN",
        "baseK",
        "depthA1",
        "depthB1",
        "stepM",
        "stepN",
        "stepKa",
        "stepKb",
        "dbL0A",
        "dbL0B",
        "dbL0C",
        "usedCoreNum",
    ):
        if t[name] <= 0:
            bad.append(f"{name} = {t[name]} must be positive")
    if bad:
        return bad
    for name in ("baseM", "baseN", "baseK"):
        if t[name] % CUBE_FRACTAL:
            bad.append(f"{name} = {t[name]} is not a multiple of {CUBE_FRACTAL}")
    checks = [
        (
            "dbL0A * baseM * baseK * sizeof(A)",
            t["dbL0A"] * t["baseM"] * t["baseK"] * elem_bytes,
            "L0A",
            plat.l0a_bytes,
        ),
        (
            "dbL0B * baseK * baseN * sizeof(B)",
            t["dbL0B"] * t["baseK"] * t["baseN"] * elem_bytes,
            "L0B",
            plat.l0b_bytes,
        ),
        (
            "dbL0C * baseM * baseN * 4",
            t["dbL0C"] * t["baseM"] * t["baseN"] * C_BYTES,
            "L0C",
            plat.l0c_bytes,
        ),
        (
            "(depthA1 * baseM + depthB1 * baseN) * baseK * sizeof(A)",
            (t["depthA1"] * t["baseM"] + t["depthB1"] * t["baseN"]) * t["baseK"] * elem_bytes,
            "L1",
            plat.l1_bytes,
        ),
    ]
    for what, need, mem, have in checks:
        if need > have:
            bad.append(f"{what} = {need} bytes exceeds {mem} ({have} bytes)")
    if t["depthA1"] % (t["stepM"] * t["stepKa"]):
        bad.append("depthA1 is not a multiple of stepM * stepKa")
    if t["depthB1"] % (t["stepN"] * t["stepKb"]):
        bad.append("depthB1 is not a multiple of stepN * stepKb")
    for name, big in (
        ("singleCoreM", "M"),
        ("singleCoreN", "N"),
        ("singleCoreK", "Ka"),
        ("singleCoreK", "Kb"),
    ):
        if t[name] > t[big]:
            bad.append(f"{name} = {t[name]} exceeds {big} = {t[big]}")
    stride_a, stride_b = ("M" if trans_a else "Ka"), ("Kb" if trans_b else "N")
    for name in (stride_a, stride_b):
        if t[name] > ND_STRIDE_MAX:
            bad.append(f"{name} = {t[name]} exceeds the ND range [1, {ND_STRIDE_MAX}]")
    if t["iterateOrder"] not in (0, 1):
        bad.append(f"iterateOrder = {t['iterateOrder']} must be 0 or 1")
    if t["isBias"] != 0:
        bad.append("isBias must be 0 (the emitted Matmul objects take no bias)")
    return bad
