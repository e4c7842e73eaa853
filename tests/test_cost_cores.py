"""The cost model walks every core and models a kernel at its slowest core; causal attention
deals its work units to the cores by cost (issue 14, ``pyasc_mlir/cost_walker.py``,
``passes/attention_causal.py``).

Checked: the memoized walk (tile iterations alike walked once) gives exactly the costs of a
full walk of every tile on every core (causal attention, an unevenly split elementwise
kernel); the in-order causal split (re-created here) is modeled at its most loaded core, whose
key blocks are counted from the walk and from the split by hand; the dealt split gives every
core the same key blocks within one and a lower modeled time. Times are MODELED.
"""

from __future__ import annotations

import math

import pytest
from xdsl.ir import SSAValue

import pyasc_mlir as pa
from pyasc_mlir import cost_model
from pyasc_mlir.cost_walker import EDGE_TILES, PROBE_TILES, SCALAR_TILE_CYCLES, TileCost, Walker
from pyasc_mlir.dialects import asc
from pyasc_mlir.emitter import kernels, tiling_fields
from pyasc_mlir.passes import lower_attention
from pyasc_mlir.passes.ir_builder import IRBuilder
from pyasc_mlir.pipeline import lower
from pyasc_mlir.platform import get_platform

PLAT = get_platform("910B2")
HEADS, S, D = 4, 1024, 64


def causal(q, k, v):
    return pa.scaled_dot_product_attention(q, k, v, is_causal=True)


def add(x, y):
    return x + y


class _FullWalker(Walker):
    """Walks every tile iteration (no reuse of alike iterations, no probing of long loops)."""

    def _tiles(self, body, us):  # type: ignore[no-untyped-def]
        return [self._tile(body, u) for u in us]

    def _tile(self, body, u):  # type: ignore[no-untyped-def]
        self.env[body.args[0]] = u
        c = TileCost(s=SCALAR_TILE_CYCLES)
        self._block(body, c)
        return c


def _kernel(fn, shapes, dtype, block_dim):  # type: ignore[no-untyped-def]
    descs = [pa.TensorDesc(s, dtype) for s in shapes]
    stages, _, _ = lower(fn, descs, fn.__name__, "910B2", True, block_dim=block_dim)
    (kernel,) = kernels(stages["ascendc"])
    return kernel


def _attention(block_dim: int, heads: int = HEADS, s: int = S):  # type: ignore[no-untyped-def]
    return _kernel(causal, [(1, heads, s, D)] * 3, "float16", block_dim)


def _in_order(
    ix: IRBuilder, i: SSAValue, bid: SSAValue, heads: int, n: int
) -> tuple[SSAValue, SSAValue]:
    """The split before dealing: core ``bid``'s ``i``-th unit is unit ``start + i``."""
    per = ix.add_value(asc.TilingFieldOp("units_per_core"))
    rem = ix.add_value(asc.TilingFieldOp("units_rem"))
    u = ix.addi(ix.addi(ix.muli(bid, per), ix.mini(bid, rem)), i)
    return ix.divi(u, n), ix.remi(u, n)


def _key_blocks(work: cost_model.CoreWork) -> float:
    """Key blocks a core computes: two Matmul Iterates (S = Q K^T, P V) per key block."""
    return sum(i.count for t in work.tiles for i in t.iterates) / 2


def _blocks_by_hand(block_dim: int, bq: int, bk: int) -> list[int]:
    """Key blocks of each core under the in-order split: block i runs ceil(i bq / bk) + 1."""
    n = S // bq
    units = HEADS * n
    per, rem = divmod(units, block_dim)
    out = []
    for b in range(block_dim):
        start = b * per + min(b, rem)
        us = range(start, start + per + (b < rem))
        out.append(sum(math.ceil(u % n * bq / bk) + 1 for u in us))
    return out


@pytest.mark.parametrize("case", ["causal", "uneven add", "long add"])
def test_reused_iterations_cost_what_a_full_walk_costs(case: str) -> None:
    if case == "causal":
        kernel = _attention(3, 2, 520)  # a tail query block of 8 rows
    elif case == "uneven add":
        kernel = _kernel(add, [(37, 1000), (37, 1000)], "float32", 5)
    else:  # more tile iterations per core than the walker walks: ends walked, middle probed
        kernel = _kernel(add, [(2**23 + 7,)] * 2, "float32", 2)
    walk = cost_model.walk_kernel(kernel, PLAT)
    if case == "long add":
        assert len(walk.works[0].tiles) > 2 * EDGE_TILES + PROBE_TILES
    full = _FullWalker(kernel, PLAT)
    by_core = {b: w for w in walk.works for b in w.cores}
    assert sorted(by_core) == list(range(walk.block_dim))
    for b in range(walk.block_dim):
        pre, tiles = full.run(b)
        assert repr(pre) == repr(by_core[b].pre)
        assert [repr(t) for t in tiles] == [repr(t) for t in by_core[b].tiles], b
    assert len(walk.works) < walk.block_dim or case != "uneven add"


def _walk(in_order: bool) -> tuple[cost_model.KernelWalk, dict[str, int]]:
    """The causal kernel on 3 cores, walked; ``in_order``: with the split before dealing."""
    with pytest.MonkeyPatch.context() as mp:
        if in_order:
            mp.setattr(lower_attention, "dealt_unit", _in_order)
        kernel = _attention(3)
    return cost_model.walk_kernel(kernel, PLAT), tiling_fields(kernel)


def _per_core(walk: cost_model.KernelWalk) -> list[cost_model.CoreWork]:
    by_core = {b: w for w in walk.works for b in w.cores}
    return [by_core[b] for b in range(walk.block_dim)]


def test_in_order_causal_split_is_modeled_at_its_most_loaded_core() -> None:
    """B1 N4 S1024 D64 on 3 cores, units in order: the last core holds most of the long
    query blocks; the kernel's modeled time is that core's, not core 0's (MODELED)."""
    walk, t = _walk(in_order=True)
    cores = _per_core(walk)
    blocks = [_key_blocks(w) for w in cores]
    assert blocks == _blocks_by_hand(3, t["tile_m"], t["block_kv"])
    assert blocks[2] > blocks[1] > blocks[0]
    times = [
        cost_model.time_walk(
            cost_model.KernelWalk("k", 3, walk.buffers, [w], walk.cube_unique_bytes), PLAT
        ).time_us
        for w in cores
    ]
    e = cost_model.time_walk(walk, PLAT)
    assert e.core == 2 and e.time_us == max(times) == times[2]
    assert e.cores_us == (min(times), times[2]) and times[0] < 0.9 * times[2]


def test_dealt_causal_split_balances_key_blocks() -> None:
    """The kernel as built (units dealt by cost): every core within one key block of the
    others, the same key blocks in all, and a lower modeled time than in order (MODELED)."""
    walk, t = _walk(in_order=False)
    blocks = [_key_blocks(w) for w in _per_core(walk)]
    by_hand = _blocks_by_hand(3, t["tile_m"], t["block_kv"])
    assert sum(blocks) == sum(by_hand) and max(blocks) - min(blocks) <= 1, blocks
    e = cost_model.time_walk(walk, PLAT)
    assert e.cores_us[1] - e.cores_us[0] < 0.03 * e.time_us
    in_order = cost_model.time_walk(_walk(in_order=True)[0], PLAT)
    assert e.time_us < 0.95 * in_order.time_us, (e.time_us, in_order.time_us)
