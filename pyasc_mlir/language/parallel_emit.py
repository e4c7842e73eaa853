"""Ascend C of a ``@lang.parallel`` distributed reduction (:class:`ParallelPlan`).

One vector kernel on ``workers`` cores (blockDim = workers). Tiling: ``int64 n``. Core ``b``:

1. its share of ``0..n``: the ``ceil(n / align)`` DataBlocks (``align`` elements of 32 bytes)
   split as the work split does (``units // cores`` each, the first ``units % cores`` one more),
   clipped to ``n`` (the last share holds the tail; shares may be empty);
2. GM -> UB in tiles of :data:`TILE` elements (``DataCopyPad``), then a compensated (Kahan)
   float accumulation of ``f(x[i])`` in index order (``max``: a plain maximum), its partial
   ``(sum, compensation)`` into its 32-byte slot of the GM workspace;
3. ``SyncAll`` (soft form: flags in the second half of the workspace, one DataBlock per core,
   zero-initialised by the launch);
4. every core combines the partials of cores ``0..cores-1`` in that order (the same
   compensated sum), so all hold the same result; core 0 writes it to ``out[0]``.

GM workspace: ``2 * cores * kSlot`` bytes (:func:`workspace_bytes`).
"""

from __future__ import annotations

from pyasc_mlir.language.parallel_plan import ParallelPlan
from pyasc_mlir.platform import DATA_BLOCK_BYTES

__all__ = ["TILE", "kernel_source", "workspace_bytes"]

TILE = 4096
"""Elements per GM -> UB copy."""

_CTYPE = {"float32": "float", "float16": "half"}


def workspace_bytes(workers: int) -> int:
    """GM workspace of the kernel: partials and SyncAll flags, 32 bytes per core each."""
    return 2 * workers * DATA_BLOCK_BYTES


def kernel_source(name: str, plan: ParallelPlan, dtype: str, out_dtype: str) -> str:
    """``kernel.cpp`` + the CPU entry of kernel ``name``: input ``dtype``, result
    ``out_dtype`` (``float32`` / ``float16``)."""
    t, o = _CTYPE[dtype], _CTYPE[out_dtype]
    align = DATA_BLOCK_BYTES // (4 if dtype == "float32" else 2)
    init = "-INFINITY" if plan.init == float("-inf") else f"{plan.init!r}f"
    if plan.op == "sum":
        step = "const float y = e - comp; const float s = acc + y; comp = (s - acc) - y; acc = s;"
        combine = (
            "Kahan(total, tcomp, part.GetValue(c * kSlotWords)); "
            "Kahan(total, tcomp, -part.GetValue(c * kSlotWords + 1));"
        )
    else:
        step = "acc = e > acc || e != e ? e : acc;"
        combine = (
            "const float e = part.GetValue(c * kSlotWords); "
            "total = e > total || e != e ? e : total;"
        )
    params = f"DataCopyExtParams(1, static_cast<uint32_t>(len * sizeof({t})), 0, 0, 0)"
    return f"""#include "kernel_operator.h"
#include <cmath>
using namespace AscendC;

namespace {{
constexpr int64_t kAlign = {align};  // elements per 32-byte DataBlock
constexpr int64_t kTile = {TILE};
constexpr int64_t kSlot = {DATA_BLOCK_BYTES};  // bytes of a core's workspace slot
constexpr int64_t kSlotWords = kSlot / 4;
struct Tiling {{
  int64_t n;
}};
__aicore__ inline float Elem(float v) {{ return {plan.cxx}; }}
__aicore__ inline void Kahan(float& acc, float& comp, float e) {{ {
        "const float y = e - comp; const float s = acc + y; comp = (s - acc) - y; acc = s;"
    } }}
}}  // namespace

extern "C" __global__ __aicore__ void {name}(GM_ADDR x, GM_ADDR out, GM_ADDR workspace,
                                              GM_ADDR tiling) {{
  const int64_t n = reinterpret_cast<const Tiling*>(tiling)->n;
  const int64_t b = GetBlockIdx(), cores = GetBlockNum();
  const int64_t units = (n + kAlign - 1) / kAlign, per = units / cores, rem = units % cores;
  const int64_t u0 = b * per + (b < rem ? b : rem), u1 = u0 + per + (b < rem ? 1 : 0);
  const int64_t start = u0 * kAlign < n ? u0 * kAlign : n, end = u1 * kAlign < n ? u1 * kAlign : n;
  GlobalTensor<{t}> xg;
  xg.SetGlobalBuffer((__gm__ {t}*)x, n);
  TPipe pipe;
  TBuf<TPosition::VECIN> in;
  pipe.InitBuffer(in, kTile * sizeof({t}));
  TBuf<TPosition::VECCALC> work;
  pipe.InitBuffer(work, cores * kSlot);
  float acc = {init}, comp = 0.0f;
  for (int64_t t0 = start; t0 < end; t0 += kTile) {{
    const int64_t len = end - t0 < kTile ? end - t0 : kTile;
    LocalTensor<{t}> buf = in.Get<{t}>();
    DataCopyPad(buf, xg[t0], {params},
                DataCopyPadExtParams<{t}>(false, 0, 0, 0));
    PipeBarrier<PIPE_ALL>();  // the scalar reads wait for the copy
    for (int64_t k = 0; k < len; ++k) {{
      const float e = Elem(static_cast<float>(buf.GetValue(k)));
      {step}
    }}
    PipeBarrier<PIPE_ALL>();  // the next copy waits for the reads
  }}
  GlobalTensor<float> part;
  part.SetGlobalBuffer((__gm__ float*)workspace, cores * kSlotWords);
  part.SetValue(b * kSlotWords, acc);
  part.SetValue(b * kSlotWords + 1, comp);
  GlobalTensor<int32_t> flags;
  flags.SetGlobalBuffer((__gm__ int32_t*)(workspace + cores * kSlot), cores * kSlotWords);
  SyncAll(flags, work.Get<int32_t>());  // every partial is written before any is read
  float total = {init}, tcomp = 0.0f;
  for (int64_t c = 0; c < cores; ++c) {{
    {combine}
  }}
  if (b == 0) {{
    GlobalTensor<{o}> og;
    og.SetGlobalBuffer((__gm__ {o}*)out, 1);
    og.SetValue(0, static_cast<{o}>(total));
  }}
}}

PYASC_CPU_ENTRY({name})
"""
