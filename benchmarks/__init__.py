"""pyasc-mlir benchmark suite (not tests). Run ``python benchmarks/run.py [--quick]``."""
