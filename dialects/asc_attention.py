"""``asc.flash_attention``: ``softmax(q k^T * scale + mask) v`` as one tensor-level op.

Produced by the ``asc-flash-attention`` pass (``pyasc_mlir.passes.flash_attention``) from the
chain the frontend builds for attention; its semantics are the blocked *online softmax* of
FlashAttention (Dao et al. 2022, "FlashAttention: Fast and Memory-Efficient Exact Attention
with IO-Awareness", Algorithm 1), which is what a one-kernel lowering computes:

for each query row, keys are taken in blocks of ``block_kv``; with ``S = q K_blk^T * scale +
mask_blk`` (f32), ``m' = max(m, rowmax S)``, ``P = exp(S - m')``, ``l' = l * exp(m - m') +
rowsum P`` and ``O' = O * exp(m - m') + P V_blk`` (``P`` rounded to the operands' dtype before
the product, as the Cube unit takes it; f32 accumulation); the result is ``O / l``. Rows whose
running max is still ``-inf`` take ``P = 0`` (no ``-inf - -inf`` NaN), so a row masked entirely
with ``-inf`` gives ``0 / 0 = NaN``, as the unfused softmax does.

Shapes: ``q [*batch, Sq, D]``, ``k [*kb, Skv, D]``, ``v [*kb, Skv, Dv]`` (one rank; ``kb``
broadcasts to ``batch`` by NumPy rules: 1 on a head-group axis is grouped-query attention, one
KV head per group of query heads; f16, bf16 or f32, one dtype), an optional additive ``mask``
(f32) broadcastable (NumPy rules) to ``[*batch, Sq, Skv]``; result ``[*batch, Sq, Dv]``,
always f32 (the accumulator's dtype, as ``asc.matmul``). ``scale`` is a float, ``block_kv >= 1``
the key block length. ``causal`` (a unit attribute) masks key ``j`` out of query row ``i``
where ``j > i``: the top-left aligned mask of ``torch.nn.functional.scaled_dot_product_attention
(is_causal=True)`` (also for ``Sq != Skv``); it excludes an explicit ``mask``. Every row keeps
key 0, so no causal row is fully masked.
"""

from __future__ import annotations

from xdsl.dialects.builtin import (
    Float32Type,
    Float64Type,
    FloatAttr,
    IntAttr,
    TensorType,
    UnitAttr,
)
from xdsl.ir import SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from pyasc_mlir.dialects.asc_attrs import float_tensor

__all__ = ["FlashAttentionOp", "broadcastable"]


def broadcastable(shape: tuple[int, ...], to: tuple[int, ...]) -> bool:
    """Whether ``shape`` broadcasts to ``to`` by NumPy's rules (right-aligned, 1 stretches)."""
    if len(shape) > len(to):
        return False
    tail = to[len(to) - len(shape) :]
    return all(s in (1, t) for s, t in zip(shape, tail, strict=True))


@irdl_op_definition
class FlashAttentionOp(IRDLOperation):
    """Fused attention (see the module docstring for the algorithm, shapes and dtypes)."""

    name = "asc.flash_attention"
    irdl_options = (ParsePropInAttrDict(),)
    q = operand_def(TensorType)
    k = operand_def(TensorType)
    v = operand_def(TensorType)
    mask = opt_operand_def(TensorType)
    scale = prop_def(FloatAttr)
    block_kv = prop_def(IntAttr)
    causal = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$q `,` $k `,` $v (`mask` $mask^ `:` type($mask))? attr-dict `:` "
        "`(` type($q) `,` type($k) `,` type($v) `)` `->` type($result)"
    )

    def __init__(
        self,
        q: SSAValue,
        k: SSAValue,
        v: SSAValue,
        mask: SSAValue | None,
        scale: float,
        block_kv: int,
        causal: bool = False,
    ):
        qt, vt = q.type, v.type
        assert isinstance(qt, TensorType) and isinstance(vt, TensorType)
        shape = (*qt.get_shape()[:-1], vt.get_shape()[-1])
        super().__init__(
            operands=[q, k, v, [] if mask is None else [mask]],
            result_types=[TensorType(Float32Type(), shape)],
            properties={
                "scale": FloatAttr(scale, Float64Type()),
                "block_kv": IntAttr(block_kv),
                **({"causal": UnitAttr()} if causal else {}),
            },
        )

    @property
    def scale_value(self) -> float:
        """``scale`` as a Python float."""
        return float(self.scale.value.data)

    @property
    def is_causal(self) -> bool:
        """Whether the top-left causal mask applies (``causal`` attribute present)."""
        return self.causal is not None

    def verify_(self) -> None:
        if self.is_causal and self.mask is not None:
            raise VerifyException(f"{self.name}: causal excludes an explicit mask")
        q = float_tensor(self, self.q.type, "q")
        k = float_tensor(self, self.k.type, "k")
        v = float_tensor(self, self.v.type, "v")
        if not (q.element_type == k.element_type == v.element_type):
            raise VerifyException(f"{self.name}: q, k and v must share one dtype")
        qs, ks, vs = q.get_shape(), k.get_shape(), v.get_shape()
        if len(qs) < 2 or not (len(qs) == len(ks) == len(vs)):
            raise VerifyException(f"{self.name}: q, k and v need one rank >= 2")
        if not broadcastable(ks[:-2], qs[:-2]) or ks[:-1] != vs[:-1] or qs[-1] != ks[-1]:
            raise VerifyException(
                f"{self.name}: shapes q {list(qs)}, k {list(ks)}, v {list(vs)} do not form "
                "attention ([*b, Sq, D], [*kb, Skv, D], [*kb, Skv, Dv], kb broadcast to b)"
            )
        if self.block_kv.data < 1:
            raise VerifyException(f"{self.name}: block_kv must be >= 1")
        if self.mask is not None:
            m = float_tensor(self, self.mask.type, "mask")
            scores = (*qs[:-1], ks[-2])
            if not isinstance(m.element_type, Float32Type) or not broadcastable(
                m.get_shape(), scores
            ):
                raise VerifyException(
                    f"{self.name}: mask must be f32 and broadcast to {list(scores)}"
                )
        expect = TensorType(Float32Type(), (*qs[:-1], vs[-1]))
        if self.result.type != expect:
            raise VerifyException(f"{self.name}: result type must be {expect}")
