# RUN: %python %s %S/Inputs/one-op.mlir 2>&1 | filecheck %s
# RUN: env PYASC_LOG_LEVEL=2 %python %s %S/Inputs/one-op.mlir 2>&1 | filecheck %s --check-prefix=STACK
# ruff: noqa: E501  (RUN lines cannot be wrapped)
"""An exception escaping a pass (a bug) is a diagnostic naming the pass and the op it was
working on, at that op's location; the Python stack only with PYASC_LOG_LEVEL=2."""

import sys
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from pyasc_mlir.dialects import asc
from pyasc_mlir.tools.pyasc_opt import PyAscOptMain, main


@dataclass(frozen=True)
class CrashPass(ModulePass):
    name = "crash"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for inner in op.walk():
            if isinstance(inner, asc.UnaryOp):
                self.visit(inner)

    def visit(self, op: asc.UnaryOp) -> None:
        table: dict[str, int] = {}
        table[op.kind.data] += 1  # KeyError: a bug


class Tool(PyAscOptMain):
    def register_all_passes(self) -> None:
        super().register_all_passes()
        self.register_pass("crash", lambda: CrashPass)


status = main([sys.argv[1], "-p", "crash"], tool=Tool)
# CHECK:      one-op.mlir:3:3: error: internal error in pass 'crash' on 'asc.unary': KeyError: 'exp'
# CHECK-NEXT:   %y = asc.unary "exp" %x : tensor<16xf32>
# CHECK-NEXT:   ^
# CHECK-NEXT: note: this is a bug in pyasc-mlir; PYASC_LOG_LEVEL=2 shows the Python stack
# CHECK-NOT:  Traceback
# CHECK:      exit status 1
# STACK:      one-op.mlir:3:3: error: internal error in pass 'crash' on 'asc.unary': KeyError: 'exp'
# STACK:      Traceback (most recent call last):
# STACK:        table[op.kind.data] += 1
# STACK:      exit status 1
print("exit status", status)
