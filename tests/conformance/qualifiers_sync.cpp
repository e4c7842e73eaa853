// Conformance kernel: qualifiers, kernel type, ASSERT, event ids, synchronisation and the
// globally visible names, used as real kernels write them (no `using namespace AscendC`).
// The tiling selects a case; o[0..3] receive results. Written here from the Ascend C API
// documentation.
#include "kernel_operator.h"
#include "kernel_tiling/kernel_tiling.h"

namespace qual {
struct Tiling {
  int32_t op;
  int32_t arg;
};
}  // namespace qual

extern "C" __global__ __aicore__ __mix__(1, 2) void qual_kernel(GM_ADDR o,
                                                                GM_ADDR __kfc_workspace__ workspace,
                                                                GM_ADDR tiling) {
  const auto& t = *reinterpret_cast<const qual::Tiling*>(tiling);
  auto* out = reinterpret_cast<int32_t*>(o);
  AscendC::TPipe pipe;
  switch (t.op) {
    case 0:  // declare a type; report the recorded one, the block and the pipe
      KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
      InitSocState();
      out[0] = static_cast<int32_t>(AscendC::cpu::DeclaredKernelType());
      out[1] = static_cast<int32_t>(GetBlockIdx());
      out[2] = static_cast<int32_t>(GetBlockNum());
      out[3] = GetTPipePtr() == &pipe ? 1 : 0;
      break;
    case 1:  // nothing declared in this block (the previous block's declaration is gone)
      out[0] = static_cast<int32_t>(AscendC::cpu::DeclaredKernelType());
      break;
    case 2:  // two different declarations
      KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
      KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);
      break;
    case 3: ASSERT(t.arg == 0); break;
    case 4: ASSERT(t.arg == 0, "arg is %d", t.arg); break;
    case 5: {  // every event id 0..7 on every vector-side event, then an id given by the tiling
      const AscendC::TEventID id = GetTPipePtr()->FetchEventID(AscendC::HardEvent::V_MTE3);
      AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(id);
      AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(id);
      const event_t ids[] = {EVENT_ID0, EVENT_ID1, EVENT_ID2, EVENT_ID3,
                             EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7};
      for (event_t e : ids) {
        AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(e);
        AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(e);
        AscendC::SetFlag<AscendC::HardEvent::V_MTE2>(e);
        AscendC::WaitFlag<AscendC::HardEvent::V_MTE2>(e);
        AscendC::SetFlag<AscendC::HardEvent::S_V>(e);
        AscendC::WaitFlag<AscendC::HardEvent::S_V>(e);
        AscendC::SetFlag<AscendC::HardEvent::MTE3_S>(e);
        AscendC::WaitFlag<AscendC::HardEvent::MTE3_S>(e);
      }
      AscendC::PipeBarrier<PIPE_ALL>();
      AscendC::PipeBarrier<PIPE_V>();
      AscendC::PipeBarrier<PIPE_MTE2>();
      AscendC::PipeBarrier<PIPE_MTE3>();
      AscendC::PipeBarrier<PIPE_S>();
      if (t.arg >= 0) AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(t.arg);
      else AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(-t.arg);
      out[0] = 1;
      break;
    }
    case 6: {  // tiling structures visible as in the real kernel_tiling.h
      TCubeTiling a{};
      AscendC::tiling::TCubeTiling b{};
      a.M = 3;
      b.M = 4;
      out[0] = a.M + b.M;
      break;
    }
    default: AscendC::cpu::Fail("test: bad op ", t.op);
  }
}
