# RUN: %python %s | filecheck %s
"""pyasc-opt's registry: passes, named pipelines (also usable as pass classes) and targets."""

from xdsl.context import Context
from xdsl.parser import Parser

from pyasc_mlir.passes.registry import PASSES, PIPELINES
from pyasc_mlir.tools.pyasc_opt import PyAscOptMain

tool = PyAscOptMain(args=[])

# Every pass and pipeline of the registry, plus xDSL's generic cleanups, is registered.
# CHECK: missing: []
expected = [*PASSES, *PIPELINES, "canonicalize", "cse", "dce", "licm"]
print("missing:", [p for p in expected if p not in tool.available_passes])
# CHECK: passes: {{.*}}asc-decompose asc-fuse asc-lower-layout asc-lower-cube asc-tile asc-double-buffer asc-buffer-alloc
print("passes:", " ".join(tool.available_passes))
# CHECK: pipelines as in the registry: True
print("pipelines as in the registry:", tool.pipelines == PIPELINES)
# CHECK: asc-to-tile = asc-decompose,asc-flash-attention,asc-fuse,asc-lower-layout,asc-lower-attention,asc-lower-cube,asc-tile
print("asc-to-tile =", ",".join(tool.pipelines["asc-to-tile"]))
# CHECK: targets: mlir ascendc
print("targets:", " ".join(tool.available_targets))

# A named pipeline is also a ModulePass class, for use from Python.
ctx: Context = tool.ctx
module = Parser(
    ctx,
    """
func.func @f(%x: tensor<64xf32>) -> tensor<64xf32> {
  %y = asc.unary "sigmoid" %x : tensor<64xf32>
  func.return %y : tensor<64xf32>
}""",
).parse_module()
pipeline = tool.available_passes["asc-to-tile"]()
# CHECK: pipeline pass: asc-to-tile
print("pipeline pass:", pipeline.name)
pipeline().apply(ctx, module)
# CHECK: asc.launch @f_kernel<1 : i64> (%x) : (tensor<64xf32>) -> tensor<64xf32>
# CHECK: asc.vunary "reciprocal"
print(module)
