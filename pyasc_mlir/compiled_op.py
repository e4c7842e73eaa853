"""A compiled operator (:class:`CompiledOp`) and how it runs: the CPU build, block by block, or
the IR interpreter at any stage.

Inputs: see :meth:`CompiledOp.__call__` (dtype conversion rule, views, zero-size dimensions).
A multi-kernel operator runs its launch plan (``op.json``'s ``launches``,
:func:`pyasc_mlir.artifacts.steps_of`) one kernel after another.
"""

from __future__ import annotations

import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from pyasc_mlir.artifacts import Step, steps_of
from pyasc_mlir.cache import cache_enabled
from pyasc_mlir.checks import (
    check_outputs,
    memory_check_enabled,
    nonfinite_origin,
    numeric_check_enabled,
)
from pyasc_mlir.device import aligned_empty
from pyasc_mlir.dynamic import DynamicTiling, ShapeMismatch
from pyasc_mlir.errors import PyAscUsageError, caller_loc, user_facing
from pyasc_mlir.integrity import RECOMPILE, check_ir, signature_problem
from pyasc_mlir.interop import same_kind_as, torch_to_numpy
from pyasc_mlir.interpreter.core import make_interpreter, run_function
from pyasc_mlir.interpreter.tile_grid import run_blocks
from pyasc_mlir.interpreter.tile_impls import kernel_ub_bytes
from pyasc_mlir.output import library_path
from pyasc_mlir.pipeline import STAGES, make_context
from pyasc_mlir.platform import get_platform
from pyasc_mlir.profiler import notify as notify_profilers
from pyasc_mlir.runtime import cpu
from pyasc_mlir.types import TensorDesc, astype, is_float_dtype


@dataclass
class Launch:
    """What one call needs besides the arrays: the tiling struct (bytes and values), the
    number of blocks and the output shapes."""

    tiling_bytes: bytes
    tiling: dict[str, int]
    block_dim: int
    out_shapes: list[tuple[int, ...]]


new_output: Callable[[tuple[int, ...], np.dtype], np.ndarray] = aligned_empty
"""Allocates a kernel's result array in device memory (64-byte aligned), uninitialised: every
kernel writes every element of its results (``tests/test_multi_kernel.py`` checks that with a
stand-in that fills NaN). Called with device tensors, an operator returns these arrays as
``pa.Tensor``s (no copy)."""


BACKENDS = ("cpu", "interp")
"""The executors a compiled operator runs on (``op(*arrays, backend=...)``)."""


class CompiledOp:
    """A compiled operator: callable on NumPy arrays.

    Attributes:
        name: kernel base name.
        inputs, outputs: ``TensorDesc`` of the runtime arguments and results.
        info: the ``op.json`` content (see ``compile``).
        directory: folder holding ``kernel.cpp``, ``host.cpp``, ``cpu_entry.cpp``, ``op.json``.

    ``rebuild`` lowers the operator again when its IR is needed (:meth:`stages`; without it the
    ``<stage>.mlir`` files are read); ``stages``: the IR already at hand; ``keep``: an object
    that must live as long as the operator (the ``TemporaryDirectory`` holding its files when
    the cache is disabled).
    """

    def __init__(
        self,
        directory: Path,
        info: dict[str, Any],
        rebuild: Callable[[], dict[str, ModuleOp]] | None = None,
        *,
        stages: dict[str, ModuleOp] | None = None,
        keep: Any = None,
    ):
        self.directory = directory
        self.info = info
        self.name = info["name"]
        self.inputs = [TensorDesc(d["shape"], d["dtype"]) for d in info["inputs"]]
        self.outputs = [TensorDesc(d["shape"], d["dtype"]) for d in info["outputs"]]
        self._in_specs = [(d.shape, d.np_dtype) for d in self.inputs]
        self._out_dtypes = [d.np_dtype for d in self.outputs]
        self._rebuild = rebuild
        self._stages = stages
        self._cpu: cpu.CpuKernel | None = None
        self._keep = keep
        self._dyn: DynamicTiling | None = None
        self._launches: dict[tuple, Launch] = {}
        self._steps: list[Step] | None = None
        self._cpu_multi: dict[bool, dict[str, Any]] = {}
        self.tiling_computations = 0
        """How often the host tiling was computed (dynamic dims: once per new shape)."""
        if info.get("dynamic"):
            self._dyn = DynamicTiling(
                info["dynamic"]["spec"],
                info["dynamic"]["fields"],
                info["dynamic"]["shapes"],
                info.get("arg_names") or [],
            )

    @property
    def library(self) -> Path:
        """The CPU library file (``op.json``'s ``library``, relative to :attr:`directory`)."""
        return library_path(self.directory, self.info)

    @property
    def dynamic(self) -> bool:
        """Whether the kernel has dynamic dims (``None`` in ``inputs``/``outputs``)."""
        return self._dyn is not None

    def accepts(self, shapes: Sequence[tuple[int, ...]]) -> bool:
        """Whether input arrays of these shapes fit the compiled kernel (dynamic dims: ranks and
        static dims; other kernels: the exact shapes). Dynamic dims that the kernel treats as
        one dimension must also be equal."""
        if self._dyn is None:
            return [tuple(s) for s in shapes] == [d.shape for d in self.inputs]
        if isinstance(shapes, tuple) and shapes in self._launches:
            return True
        try:
            self._launch_for(tuple(tuple(s) for s in shapes))
        except PyAscUsageError:
            return False
        return True

    def _launch(self, args: list[np.ndarray]) -> Launch:
        """Tiling bytes, block_dim and output shapes for these inputs (dynamic dims: computed
        on the first call with each new shape, then cached)."""
        return self._launch_for(tuple(a.shape for a in args))

    def _launch_for(self, shapes: tuple[tuple[int, ...], ...]) -> Launch:
        hit = self._launches.get(shapes)
        if hit is not None:
            return hit
        if self._dyn is None:
            tiling = self.info["tiling"]
            outs = [d.static_shape for d in self.outputs]
        else:
            try:
                tiling, outs = self._dyn.compute(shapes)
            except ShapeMismatch as exc:
                raise PyAscUsageError(
                    f"{self.name}(): {exc.message}",
                    caller_loc(),
                    f"{exc.hint}; compiled signature: ({self._signature()})",
                ) from None
            self.tiling_computations += 1
        launch = Launch(
            np.array(list(tiling.values()), dtype=np.int64).tobytes(),
            dict(tiling),
            int(tiling["block_dim"]),
            outs,
        )
        if len(self._launches) > 4096:
            self._launches.clear()
        self._launches[shapes] = launch
        return launch

    # -- argument handling -----------------------------------------------------------------
    def _signature(self) -> str:
        names = self.info.get("arg_names") or [f"arg{i}" for i in range(len(self.inputs))]
        return ", ".join(
            f"{n}: {list(d.shape)} {d.dtype}" for n, d in zip(names, self.inputs, strict=False)
        )

    def _arg_name(self, i: int) -> str:
        names = self.info.get("arg_names") or []
        return f"argument {i} ({names[i]!r})" if i < len(names) else f"argument {i}"

    def _check(self, arrays: Sequence[Any]) -> list[np.ndarray]:
        """The arguments as C-contiguous arrays of the compiled dtypes (see ``__call__``).

        The common case (plain C-contiguous arrays of the compiled dtypes and, for static
        kernels, shapes) is checked inline; anything else takes :meth:`_check_slow`."""
        specs = self._in_specs
        if len(arrays) == len(specs):
            static = self._dyn is None
            for a, (shape, dtype) in zip(arrays, specs, strict=True):
                if not (
                    type(a) is np.ndarray
                    and a.dtype == dtype
                    and a.flags.c_contiguous
                    and a.ndim
                    and (not static or a.shape == shape)
                ):  # 0-d: made 1-d
                    return self._check_slow(arrays)
            return list(arrays)
        return self._check_slow(arrays)

    def _check_slow(self, arrays: Sequence[Any]) -> list[np.ndarray]:
        """:meth:`_check` for any arguments: count, shapes, torch tensors, dtype conversion,
        copies of non-contiguous views."""
        if len(arrays) != len(self.inputs):
            n = len(self.inputs)
            raise PyAscUsageError(
                f"{self.name}() takes {n} tensor argument{'s' if n != 1 else ''}, got "
                f"{len(arrays)}",
                caller_loc(),
                f"the operator was compiled for ({self._signature()})",
            )
        out = []
        for i, (a, d) in enumerate(zip(arrays, self.inputs, strict=True)):
            arr = (
                a
                if isinstance(a, np.ndarray)
                else np.asarray(torch_to_numpy(a, f"{self._arg_name(i)} of {self.name}()"))
            )
            if tuple(arr.shape) != d.shape and self._dyn is None:
                raise PyAscUsageError(
                    f"{self._arg_name(i)} of {self.name}() has shape {list(arr.shape)} but the "
                    f"operator was compiled for {list(d.shape)}",
                    caller_loc(),
                    f"compiled signature: ({self._signature()}); compile again for the new "
                    "shape (a @jit function does that by itself)",
                )
            out.append(np.ascontiguousarray(self._convert(i, arr, d)))
        return out

    def _convert(self, i: int, arr: np.ndarray, d: TensorDesc) -> np.ndarray:
        """The documented input rule: an array of the compiled dtype is used as is; another
        float or integer array is converted with ``astype`` (rounding to nearest) unless a
        finite value would overflow to inf; bool, complex and other arrays are refused."""
        if arr.dtype == d.np_dtype:
            return arr
        what = f"{self._arg_name(i)} of {self.name}()"
        if arr.dtype.kind not in "fiu" and not is_float_dtype(arr.dtype):
            raise PyAscUsageError(
                f"{what} has dtype {arr.dtype}; the operator was compiled for {d.dtype}",
                caller_loc(),
                f"float and integer arrays are converted to {d.dtype}; convert "
                f"this one explicitly, e.g. x.astype(np.{d.dtype})",
            )
        with np.errstate(over="ignore", invalid="ignore"):
            conv = astype(arr, d.np_dtype)
        bad = ~np.isfinite(conv)
        if is_float_dtype(arr.dtype):
            bad &= np.isfinite(arr)
        if bad.any():
            idx = tuple(int(k) for k in np.argwhere(bad)[0])
            top = float(ml_dtypes.finfo(d.np_dtype).max)
            raise PyAscUsageError(
                f"{what} holds {arr.dtype} value {arr[idx].item()!r} at index {list(idx)}, "
                f"outside the {d.dtype} range (largest finite {top:g}); "
                "converting it would give inf",
                caller_loc(),
                "scale the input, or compile the operator for float32",
            )
        return conv

    def _run_empty(self, args: list[np.ndarray]) -> list[np.ndarray]:
        """Outputs of an operator with a zero-size input dimension (no kernel)."""
        if all(0 in d.shape for d in self.outputs):
            return [np.zeros(d.static_shape, d.np_dtype) for d in self.outputs]
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # mean of an empty axis: NaN
            outs = run_function(self.stages()["tensor"], self.name, args)
        return [
            np.asarray(o).astype(d.np_dtype).reshape(d.static_shape)
            for o, d in zip(outs, self.outputs, strict=True)
        ]

    @staticmethod
    def _result(outs: list[np.ndarray]) -> np.ndarray | tuple[np.ndarray, ...]:
        return outs[0] if len(outs) == 1 else tuple(outs)

    # -- execution ---------------------------------------------------------------------------
    def stages(self) -> dict[str, ModuleOp]:
        """IR modules after the frontend (tensor), tiling (tile) and conversion (ascendc)."""
        if self._stages is None:
            self._stages = self._rebuild() if self._rebuild is not None else self._read_ir()
        return self._stages

    def _read_ir(self) -> dict[str, ModuleOp]:
        """The stage modules ``compile`` wrote next to ``op.json`` (``<stage>.mlir``), each
        checked against the digest ``op.json`` records (:func:`pyasc_mlir.integrity.check_ir`)."""
        stages = {}
        for stage in STAGES:
            path = self.directory / f"{stage}.mlir"
            if not path.is_file():
                raise PyAscUsageError(
                    f"{path} is missing, so this loaded operator cannot run in the interpreter",
                    None,
                    "compile it again with pyasc_mlir.compile(..., output_dir=...) to write its IR",
                )
            text = path.read_text()
            check_ir(self.info, path, text)
            stages[stage] = Parser(make_context(), text, str(path)).parse_module()
        return stages

    @user_facing
    def run_stage(self, stage: str, *arrays: Any) -> list[np.ndarray]:
        """Run the IR of ``stage`` ("tensor", "tile" or "ascendc") in the interpreter."""
        if stage not in STAGES:
            raise PyAscUsageError(f"unknown stage {stage!r}; use one of {STAGES}")
        args = self._check(arrays)
        if self.info.get("empty"):
            return self._run_empty(args)
        if self._dyn is not None:
            outs = self._interp_dynamic(stage, args)
            self._numeric_check(outs, args, f"interpreter, {stage} stage")
            return outs
        outs = run_function(self.stages()[stage], self.name, args)  # memory check: BlockState
        outs = [
            np.asarray(o).reshape(d.static_shape) for o, d in zip(outs, self.outputs, strict=True)
        ]
        self._numeric_check(outs, args, f"interpreter, {stage} stage")
        return outs

    def _interp_dynamic(self, stage: str, args: list[np.ndarray]) -> list[np.ndarray]:
        """Interpret the kernel of a ``tile``/``ascendc`` stage directly, block by block, with
        the tiling computed for these shapes (the top-level function is specialised to the
        compile-time stand-in shapes)."""
        if stage == "tensor":
            raise PyAscUsageError(
                f"{self.name}() has dynamic dims; its tensor stage is specialised to the "
                "compile-time stand-in sizes",
                caller_loc(),
                "run the 'tile' or 'ascendc' stage, or compile with static shapes",
            )
        launch = self._launch(args)
        outs = [
            np.zeros(s, d.np_dtype) for s, d in zip(launch.out_shapes, self.outputs, strict=True)
        ]
        if launch.tiling.get("units", 1) == 0:
            return outs
        module = self.stages()[stage]
        (kname,) = self.info["kernel_names"]
        kernel = next(
            o
            for o in module.body.block.ops
            if isinstance(o, func.FuncOp) and o.sym_name.data == kname
        )
        ins = [args[i] for i in self.info.get("kernel_args", range(len(args)))]
        flat = tuple(a.reshape(-1) for a in [*ins, *outs])
        interp = make_interpreter(module)  # blocks in order; as threads around a SyncAll()
        run_blocks(interp, kernel, flat, launch.block_dim, launch.tiling, kernel_ub_bytes(kernel))
        return outs

    def _numeric_check(self, outs: list[np.ndarray], args: list[np.ndarray], where: str) -> None:
        """Numeric-check mode (``pyasc_mlir.checks``): NaN/Inf in an output raises."""
        if not numeric_check_enabled():
            return

        def origin() -> tuple[str, str | None] | None:
            if self._stages is None and self._rebuild is None:
                return None  # loaded without its source
            return nonfinite_origin(self.stages()["tensor"], self.name, args)

        check_outputs(outs, self.name, where, origin)

    def _cpu_kernel(self, memcheck: bool = False) -> Any:
        """The loaded CPU library; ``memcheck``: its memory-check build (``-DPYASC_MEMCHECK=1``,
        built from ``kernel.cpp``/``cpu_entry.cpp`` on first use and cached like any build)."""
        if memcheck:
            if getattr(self, "_cpu_memcheck", None) is None:
                self._cpu_memcheck = self._checked(cpu.CpuKernel(self._memcheck_library()))
            return self._cpu_memcheck
        if self._cpu is None:
            self._cpu = self._checked(cpu.CpuKernel(self.library))
        return self._cpu

    def _checked(self, kernel: cpu.CpuKernel) -> cpu.CpuKernel:
        """``kernel``, once its library's signature is found equal to ``info``'s.

        Raises:
            PyAscUsageError: the library was compiled for another operator, shapes, dtypes or
                tiling (an ``op.json`` edited after compile)."""
        problem = signature_problem(
            self.info, kernel.signature(), kernel.so_path, self.directory / "op.json"
        )
        if problem is not None:
            raise PyAscUsageError(problem, caller_loc(), RECOMPILE)
        return kernel

    def _cpu_entries(self, memcheck: bool) -> dict[str, Any]:
        """Several kernels: kernel name -> its entry (``pyasc_run_block_<kernel>``) in the
        CPU library (``memcheck``: the memory-check build, see :meth:`_cpu_kernel`)."""
        hit = self._cpu_multi.get(memcheck)
        if hit is None:
            lib = self._memcheck_library() if memcheck else self.library
            hit = {
                k: self._checked(cpu.CpuKernel(lib, entry=f"pyasc_run_block_{k}"))
                for k in dict.fromkeys(step.kernel for step in self._plan())
            }
            self._cpu_multi[memcheck] = hit
        return hit

    def _plan(self) -> list[Step]:
        """``info["launches"]`` as :class:`Step` s (built once).

        Raises:
            PyAscUsageError: the launches are malformed (a hand-edited ``op.json``)."""
        if self._steps is None:
            try:
                self._steps = steps_of(
                    self.info["launches"], len(self.inputs), self.info["returns"]
                )
            except (KeyError, TypeError, ValueError) as exc:
                raise PyAscUsageError(
                    f"{self.directory / 'op.json'}: bad launches ({exc})",
                    None,
                    "compile the operator again",
                ) from exc
        return self._steps

    def _memcheck_library(self) -> Path:
        try:
            sources = {f: (self.directory / f).read_text() for f in ("kernel.cpp", "cpu_entry.cpp")}
        except OSError as exc:
            raise PyAscUsageError(
                f"memory check needs the emitted sources in {self.directory}: {exc}; compile again"
            ) from exc
        root = None
        if not cache_enabled():  # PYASC_CACHE_DISABLE: build privately, next to nothing shared
            self._memcheck_dir = tempfile.TemporaryDirectory(prefix=f"pyasc-{self.name}-mc-")
            root = Path(self._memcheck_dir.name)
        return cpu.build_library(
            sources, get_platform(self.info["platform"]), cache_dir=root, memcheck=True
        )

    @user_facing
    def use_cpu_kernels(self, kernels: dict[str, cpu.CpuKernel]) -> None:
        """Run the CPU build through ``kernels`` (kernel name -> its entry in a library built
        elsewhere, e.g. the fuzzer's batched library: one entry, or one per kernel of the
        launch plan) instead of loading ``info["library"]`` (memory-check runs still build
        their own)."""
        if len(kernels) == 1:
            (self._cpu,) = kernels.values()
        else:
            self._cpu_multi[False] = dict(kernels)

    def run_cpu(self, *arrays: Any) -> list[np.ndarray]:
        """Run the CPU build of the emitted Ascend C, block by block (several kernels: one
        after another, as the host function launches them)."""
        return self._run_cpu(arrays)

    def _run_cpu(self, arrays: Sequence[Any]) -> list[np.ndarray]:
        """:meth:`run_cpu` without the ``user_facing`` wrapper (the call path's own)."""
        args = self._check(arrays)
        info = self.info
        if info.get("empty"):
            return self._run_empty(args)
        if len(info.get("launches", ())) > 1:
            outs = self._run_launches(args)
            self._numeric_check(outs, args, "CPU build")
            return outs
        launch = self._launch(args)
        outs = [
            new_output(s, dt) for s, dt in zip(launch.out_shapes, self._out_dtypes, strict=True)
        ]
        if launch.tiling.get("units", 1) == 0:  # a zero-size dynamic dim: no kernel
            return outs
        order = info.get("kernel_args")
        ins = args if order is None else [args[i] for i in order]
        memcheck = memory_check_enabled()
        kernel = (
            self._cpu if self._cpu is not None and not memcheck else self._cpu_kernel(memcheck)
        )  # may load the library or build the memcheck one
        start = time.perf_counter()
        results = info.get("launches", [{"results": []}])[0]["results"]
        if self._results_lead():  # GM scratch results after the outputs (attention workspace)
            gm = [
                *outs,
                *(
                    new_output(tuple(r["shape"]), np.dtype(r["dtype"]))
                    for r in results[len(outs) :]
                ),
            ]
        else:  # every result the launch yields, the operator's picked by value id
            gm = [new_output(tuple(r["shape"]), np.dtype(r["dtype"])) for r in results]
        kernel.run(
            launch.block_dim,
            [*ins, *gm],
            launch.tiling_bytes,
            int(info.get("workspace_bytes", 0)),
        )  # the Matmul API's system workspace
        if not self._results_lead():
            outs = self._pick_returns([*args, *gm], len(args))
        notify_profilers(self, start)
        self._numeric_check(outs, args, "CPU build")
        return outs

    def _results_lead(self) -> bool:
        """The operator returns the first results of its one launch, in order (what the
        single-launch path passes as outputs, before any GM scratch results). Not so when the
        launch also yields values the operator drops ahead of them (a kernel-language nest's
        scalar variable): those run as a launch plan, by value id."""
        n = len(self.inputs)
        lead = self.info.get("returns", []) == list(range(n, n + len(self.outputs)))
        if not lead and self.info.get("dynamic"):
            raise PyAscUsageError(
                f"{self.info['name']}: a dynamic-shape kernel whose results are not its "
                "operator's leading results cannot run on the CPU build yet",
                None,
                "compile it with static shapes (dynamic=False)",
            )
        return lead

    def _run_launches(self, args: list[np.ndarray]) -> list[np.ndarray]:
        """Several kernels (static shapes): each launch in order, its results in fresh arrays
        that later launches read; returns the values ``info["returns"]`` names (a returned
        input, or a value returned twice, as a copy). One profiler record for the whole op."""
        steps = self._plan()
        entries = self._cpu_entries(memory_check_enabled())  # may build the memcheck library
        values = list(args)
        workspace = [int(la.get("workspace_bytes", 0)) for la in self.info["launches"]]
        start = time.perf_counter()
        for step, ws in zip(steps, workspace, strict=True):
            outs = [new_output(shape, dtype) for shape, dtype in step.results]
            entries[step.kernel].run(
                step.block_dim, [*(values[i] for i in step.args), *outs], step.tiling_bytes, ws
            )
            values += outs
        notify_profilers(self, start)
        return self._pick_returns(values, len(args))

    def _pick_returns(self, values: list[np.ndarray], n_args: int) -> list[np.ndarray]:
        """The values ``info["returns"]`` names (ids into inputs then launch results); a
        returned input, or a value returned twice, as a copy."""
        seen: set[int] = set()
        result = []
        for i in self.info["returns"]:
            result.append(values[i].copy() if i < n_args or i in seen else values[i])
            seen.add(i)
        return result

    @user_facing
    def __call__(self, *arrays: Any, backend: str = "cpu") -> np.ndarray | tuple[np.ndarray, ...]:
        """Run the operator: ``backend="cpu"`` (the CPU build) or ``"interp"`` (the IR
        interpreter). One array per tensor parameter, of the compiled shape.

        Input rule: arrays of the compiled dtype are used as they are; other float or integer
        arrays (float64, int32, ...) are converted with ``astype`` (round to nearest), except
        that a finite value that would overflow the compiled dtype (e.g. 70000.0 for float16)
        is refused; bool, complex and object arrays are refused. Non-contiguous views (slices,
        transposes, negative strides) are copied to C order first. Operators compiled for a
        zero-size dimension return empty results without running a kernel. CPU
        ``torch.Tensor`` arguments are viewed as arrays (``pyasc_mlir.torch.to_numpy``), and
        then the results are ``torch.Tensor``s.

        Raises:
            PyAscUsageError: wrong argument count, shape or dtype (names the calling line).
        """
        return same_kind_as(arrays, self._call(arrays, backend))

    def _call(self, arrays: Sequence[Any], backend: str) -> np.ndarray | tuple[np.ndarray, ...]:
        """:meth:`__call__` without the wrappers: the results as NumPy arrays."""
        if backend == "cpu":
            return self._result(self._run_cpu(arrays))
        if backend == "interp":
            return self._result(self.run_stage("ascendc", *arrays))
        raise PyAscUsageError(
            f"unknown backend {backend!r}",
            caller_loc(),
            "use backend='cpu' (the CPU build of the emitted Ascend C) or 'interp' (the IR "
            "interpreter)",
        )
