"""Translation validation of every registered pass: interpret before == interpret after."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import softmax

import pyasc_mlir as pa
from pyasc_mlir.frontend.ast_frontend import build_module
from pyasc_mlir.passes.registry import PASSES, PIPELINES
from pyasc_mlir.validation import random_inputs, validate_pass


def layernorm(x, r, w, b):
    h = x + r
    mu = h.mean(-1, keepdim=True)
    d = h - mu
    return d * pa.rsqrt((d * d).mean(-1, keepdim=True) + 1e-5) * w + b


def gelu_tanh_sigmoid(x):
    return 0.5 * x * (1 + pa.tanh(0.7978845608 * (x + 0.044715 * x * x * x))) + pa.sigmoid(x)


def erf_where(x, y):
    return pa.where(x > y, pa.erf(x), pa.abs(y) * 2.0)


def broadcast_add(a, b):
    return a + b


def masked_sum(x, m):
    return (x * m).sum(1)


def var_std(x):
    return pa.sqrt(x.var(-1, keepdim=True) + 1.0) + x.min(-1, keepdim=True)


def linear_gelu(x, w, b):
    h = pa.matmul(x, w, transpose_b=True) + b
    return 0.5 * h * (1 + pa.erf(h * 0.7071067811865476))


def attention_heads(q, k, v):
    B, S, HD = q.shape
    heads = 2
    qh = q.reshape(B, S, heads, HD // heads).transpose(1, 2)
    kh = k.reshape(B, S, heads, HD // heads).transpose(1, 2)
    vh = v.reshape(B, S, heads, HD // heads).transpose(1, 2)
    s = pa.matmul(qh, kh, transpose_b=True) * 0.25
    return s, (s @ vh).transpose(1, 2).reshape(B, S, HD)


def swiglu(x, w, v, bg, bu):
    g = x @ w + bg
    return g * pa.sigmoid(g) * (x @ v + bu)


CASES = [
    (linear_gelu, [(33, 17), (7, 17), (7,)]),
    (attention_heads, [(2, 15, 32), (2, 15, 32), (2, 15, 32)]),
    (swiglu, [(4, 40), (40, 100), (40, 100), (100,), (100,)]),
    (layernorm, [(7, 33), (7, 33), (33,), (33,)]),
    (layernorm, [(3, 513), (3, 513), (513,), (513,)]),
    (softmax, [(5, 1023)]),
    (gelu_tanh_sigmoid, [(4097,)]),
    (erf_where, [(2, 100), (2, 100)]),
    (broadcast_add, [(4, 1, 7), (1, 5, 1)]),
    (masked_sum, [(2, 5, 33), (2, 5, 1)]),
    (var_std, [(6, 100)]),
    (broadcast_add, [(13243,), (13243,)]),
]
PIPELINE = PIPELINES["asc-to-ascendc"]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize(("fn", "shapes"), CASES, ids=lambda c: getattr(c, "__name__", str(c)))
def test_every_pass_preserves_semantics(fn, shapes, dtype):
    module, _ = build_module(fn, [pa.TensorDesc(s, dtype) for s in shapes])
    name = fn.__name__
    args = random_inputs(module, name, seed=1)
    tol = 2e-3 if dtype == "float16" else 1e-5
    for pass_name in PIPELINE:
        opts = {"platform": "910B2"} if pass_name in ("asc-tile", "asc-lower-cube") else {}
        module = validate_pass(module, PASSES[pass_name]()(**opts), name, args, tol, tol)
    assert any(op.name == "asc.launch" for op in module.walk())


def test_validation_reports_first_difference():
    module, _ = build_module(softmax, [pa.TensorDesc((2, 40), "float32")])

    class Breaks(PASSES["asc-decompose"]()):  # a pass that corrupts the IR
        def apply(self, ctx, op):
            for o in op.walk():
                if o.name == "asc.reduce" and o.kind.data == "sum":
                    from xdsl.dialects.builtin import StringAttr

                    o.kind = StringAttr("max")

    with pytest.raises(AssertionError, match=r"first at index \(0, \d+\)"):
        validate_pass(module, Breaks(), "softmax", random_inputs(module, "softmax"))


def test_double_buffer_off_and_on_agree():
    module, _ = build_module(softmax, [pa.TensorDesc((64, 129), "float16")])
    args = random_inputs(module, "softmax")
    for p in ["asc-decompose", "asc-fuse", "asc-tile"]:
        module = validate_pass(module, PASSES[p]()(), "softmax", args)
    off = validate_pass(module, PASSES["asc-double-buffer"]()(enable=False), "softmax", args)
    on = validate_pass(module, PASSES["asc-double-buffer"]()(enable=True), "softmax", args)
    bufs = lambda m: sorted(
        o.buffers.value.data
        for o in m.walk()
        if o.name == "asc.alloc"  # noqa: E731
        and o.role.data in ("in", "out")
    )
    assert set(bufs(off)) == {1} and set(bufs(on)) == {2}
    np.testing.assert_equal(len(bufs(off)), len(bufs(on)))


def two_lines(x):
    y = x * 3.0
    return pa.exp(y)


def test_lowered_ops_keep_their_own_source_line():
    import inspect

    from pyasc_mlir.emitter import emit_kernel_source
    from pyasc_mlir.pipeline import lower

    first = inspect.getsourcelines(two_lines)[1]
    exp_line = first + 2
    stages, _, _ = lower(two_lines, [pa.TensorDesc((4, 40), "float32")], "two_lines", "910B2", True)
    locs = {
        op.name
        + ":"
        + getattr(
            getattr(op, "kind", None), "data", getattr(getattr(op, "api", None), "data", "")
        ): op.attributes["asc.loc"].data
        for st in ("tile", "ascendc")
        for op in stages[st].walk()
        if op.name in ("asc.vunary", "ascendc.vec_unary")
    }
    assert locs["asc.vunary:exp"].endswith(f":{exp_line}:12")
    assert locs["ascendc.vec_unary:Exp"].endswith(f":{exp_line}:12")
    assert f':{exp_line}:12");' in emit_kernel_source(stages["ascendc"])
