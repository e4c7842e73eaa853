"""What ``compile`` writes next to the kernel and reads back: ``op.json`` and the launch plan.

``op.json`` describes the lowered operator (:func:`describe`, :func:`describe_dynamic`,
:func:`describe_empty`): its signature, the first kernel's tiling, GM traffic and the host
function as a list of launches (:func:`launch_plan`), which :func:`steps_of` turns back into
:class:`Step` s to run. :func:`write_artifacts` publishes the sources, every stage's IR and
``op.json`` (last: it marks the entry complete); :func:`read_cached_info` checks an entry
before reuse. Kernel queries: :func:`is_cube_kernel`, :func:`kernel_kinds`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType
from xdsl.ir import BlockArgument, Operation, SSAValue

from pyasc_mlir import cost_model
from pyasc_mlir.cache import atomic_write, file_sha256, text_sha256, warn_cache
from pyasc_mlir.cube_tiling import launch_info
from pyasc_mlir.dialects import asc
from pyasc_mlir.dialects import ascendc as ac
from pyasc_mlir.dialects.attrs import DYNAMIC_SPEC_ATTR, kernel_ub_bytes_used
from pyasc_mlir.dynamic import DynamicTiling
from pyasc_mlir.emitter import kernels, tiling_fields
from pyasc_mlir.errors import PyAscUsageError, caller_loc
from pyasc_mlir.integrity import info_checksum, seal
from pyasc_mlir.output import library_path
from pyasc_mlir.passes.autodiff import BACKWARD_ATTR, backward_entry
from pyasc_mlir.pipeline import result_descs, top_function
from pyasc_mlir.types import TensorDesc, np_dtype_of
from pyasc_mlir.version import __version__

REQUIRED_INFO = (
    "name",
    "key",
    "inputs",
    "outputs",
    "library",
    "library_sha256",
    "block_dim",
    "tiling",
)
"""The ``op.json`` keys a cached non-empty operator must have."""

_ASC_OPS = tuple(asc.Asc.operations)


def asc_ops(module: ModuleOp) -> Iterator[Operation]:
    """The ops of the ``asc`` dialect in ``module``, in walk order."""
    return (op for op in module.walk() if isinstance(op, _ASC_OPS))


def is_cube_kernel(kernel: func.FuncOp) -> bool:
    """Whether an ``ascendc``-level kernel runs on the Cube unit (it drives a Matmul object,
    as ``asc-lower-cube``'s kernels do); the others are vector kernels."""
    return any(isinstance(op, ac.MatmulObjectOp) for op in kernel.walk())


def kernel_kinds(ks: list[func.FuncOp]) -> str:
    """``"it compiles to one Cube (matmul) kernel"`` or ``"... to 3 kernels: 1 Cube (matmul),
    2 vector"``: what the operator's ``ascendc``-level kernels are."""
    cube = sum(is_cube_kernel(k) for k in ks)
    if len(ks) == 1:
        return (
            "it compiles to one Cube (matmul) kernel"
            if cube
            else "it compiles to one vector kernel without a dynamic tiling recipe"
        )
    return f"it compiles to {len(ks)} kernels: {cube} Cube (matmul), {len(ks) - cube} vector"


def tensor_bytes(t: TensorType) -> int:
    """Bytes of a static-shaped tensor."""
    return math.prod(t.get_shape()) * np_dtype_of(t.element_type).itemsize


def unfused_bytes(module: ModuleOp) -> int:
    """GM bytes if every tensor-level op ran as its own kernel (operands read, result written)."""
    total = 0
    for op in asc_ops(module):
        if op.results and isinstance(op.results[0].type, TensorType):
            for v in [*op.operands, *op.results]:
                if isinstance(v.type, TensorType):
                    total += tensor_bytes(v.type)
    return total


def const_reread_bytes(tile: ModuleOp, kernels_by_name: dict[str, func.FuncOp]) -> int:
    """Extra GM bytes when every core of a tile-level kernel re-reads its broadcast (``const``)
    inputs: the copied rows times ``block_dim - 1`` (``block_dim`` from the ``ascendc``-level
    kernel of the same name in ``kernels_by_name``)."""
    per_core = 0
    for tile_k in kernels(tile):
        cores = tiling_fields(kernels_by_name[tile_k.sym_name.data])["block_dim"]
        for a in tile_k.walk():
            if isinstance(a, asc.AllocOp) and a.role.data == "const":
                for use in a.results[0].uses:
                    src = use.operation.operands[0]
                    if isinstance(use.operation, asc.CopyInOp):
                        per_core += (
                            src.type.get_shape()[0]
                            * np_dtype_of(src.type.element_type).itemsize
                            * (cores - 1)
                        )
    return per_core


def _argument_numbers(launch: asc.LaunchOp) -> list[int]:
    """The host-function arguments ``launch`` passes (their numbers, kernel-parameter order);
    for an operator's first launch, which reads only the operator's inputs."""
    numbers = []
    for v in launch.inputs:
        assert isinstance(v, BlockArgument), "the first launch takes the operator's inputs"
        numbers.append(v.index)
    return numbers


def describe(
    stages: dict[str, ModuleOp], name: str, descs: list[TensorDesc], platform: str
) -> dict[str, Any]:
    """``op.json``'s description of the lowered operator (``stages`` as ``pipeline.lower``
    returns them, ``descs`` the tensor inputs). ``block_dim``, ``tiling``, ``ub_bytes`` and
    ``kernel_args`` describe the first kernel launched; ``launches`` and ``returns`` the whole
    host function (see :func:`launch_plan`)."""
    module = stages["ascendc"]
    ks = kernels(module)
    launches = [op for op in module.walk() if isinstance(op, asc.LaunchOp)]
    top = top_function(module, name)
    outs = result_descs(top)
    gm = 0
    for launch in launches:
        for v in [*launch.inputs, *launch.outputs]:
            assert isinstance(v.type, TensorType)  # asc.launch's operand/result constraint
            gm += tensor_bytes(v.type)
    by_name = {x.sym_name.data: x for x in ks}
    k = by_name[launches[0].callee.root_reference.data]
    tiling = tiling_fields(k)
    ub_bytes = kernel_ub_bytes_used(k)
    assert ub_bytes is not None  # set on every kernel by asc-buffer-alloc
    plan, returns = launch_plan(top, by_name)
    extra = {} if BACKWARD_ATTR not in top.attributes else {"backward": backward_entry(top)}
    return {
        **extra,
        "name": name,
        "platform": platform,
        "inputs": [{"shape": list(d.shape), "dtype": d.dtype} for d in descs],
        "outputs": [{"shape": list(d.shape), "dtype": d.dtype} for d in outs],
        "kernels": len(ks),
        "kernel_names": [x.sym_name.data for x in ks],
        "kernel_args": _argument_numbers(launches[0]),
        "block_dim": tiling["block_dim"],
        "tiling": tiling,
        "ub_bytes": ub_bytes,
        "gm_bytes": gm,
        "gm_bytes_per_core_consts": const_reread_bytes(stages["tile"], by_name),
        "unfused_gm_bytes": unfused_bytes(stages["tensor"]),
        "fused_ops": sum(1 for _ in asc_ops(stages["tensor"])),
        "launches": plan,
        "returns": returns,
        "modeled_us": modeled_times(module, platform),
        **launch_info(k),  # kernel_type, workspace_bytes, block mapping of the first launch
    }


def modeled_times(module: ModuleOp, platform: str) -> dict[str, Any]:
    """``op.info["modeled_us"]``: the cost model's MODELED device time of each kernel and of
    all of them (µs, ``pyasc_mlir.cost_model``, constants calibrated to published 910B2
    measurements: ``platform.COST_910B2``), one launch of each kernel, on ``platform``."""
    ests = cost_model.estimate(module, platform)
    return {
        "platform": platform,
        "label": "MODELED",
        "kernels": {e.name: round(e.time_us, 3) for e in ests},
        "total": round(sum(e.time_us for e in ests), 3),
    }


def describe_dynamic(
    info: dict[str, Any], stages: dict[str, ModuleOp], descs: list[TensorDesc], strict: bool
) -> None:
    """``info["dynamic"]`` (the kernel's tiling recipe, struct fields, compiled shapes) and
    ``None`` for the dynamic dims of ``info["inputs"]``/``["outputs"]``. Without a recipe
    (not one vector kernel, e.g. matmul) and without ``None`` dims (``strict``), the operator
    stays static: ``dynamic=True`` only offered its dims.

    Raises:
        PyAscUsageError: ``None`` dims, but the operator's kernel has no dynamic tiling recipe
            (matmul)."""
    ks = kernels(stages["ascendc"])
    recipe = ks[0].attributes.get(DYNAMIC_SPEC_ATTR) if len(ks) == 1 else None
    if not isinstance(recipe, StringAttr):
        if not strict:
            return
        raise PyAscUsageError(
            f"{info['name']}: dynamic dims are supported for one fused vector "
            f"kernel only; {kernel_kinds(ks)}",
            caller_loc(),
            "give static sizes in the TensorDesc instead of None, or use "
            "@pa.jit(dynamic=True), which compiles such an operator once per "
            "shape",
        )
    dyn = {
        "spec": json.loads(recipe.data),
        "fields": list(info["tiling"]),
        "shapes": [list(d.shape) for d in descs],
    }
    tiling = DynamicTiling(dyn["spec"], dyn["fields"], dyn["shapes"], info["arg_names"])
    info["dynamic"] = dyn
    info["inputs"] = [
        {"shape": list(s), "dtype": d["dtype"]}
        for s, d in zip(tiling.input_shapes(), info["inputs"], strict=True)
    ]
    info["outputs"] = [
        {"shape": list(s), "dtype": d["dtype"]}
        for s, d in zip(tiling.output_shapes(), info["outputs"], strict=True)
    ]


def launch_plan(
    top: func.FuncOp, kernels_by_name: dict[str, func.FuncOp]
) -> tuple[list[dict[str, Any]], list[int]]:
    """The host function ``top`` as data: ``asc.launch`` ops in order and the returned values.

    Values are numbered in a table: the operator's tensor inputs first (0, 1, ...), then each
    launch's results in order. Each launch is ``{"kernel", "block_dim", "tiling" (the kernel's
    tiling struct fields in struct order, name -> value), "args" (value ids, kernel-parameter
    order), "results" ([{"id", "shape", "dtype"}]), and the launch facts of
    :func:`pyasc_mlir.cube_tiling.launch_info` ("kernel_type", "workspace_bytes",
    "vector_blocks", "cube_blocks", "block_mapping")}``; the second list holds the value id of
    each returned value (an input or any launch result).

    Raises:
        NotImplementedError: the host function holds an op other than launches (a compiler
            bug: every tensor computation is inside a kernel).
    """
    ids: dict[SSAValue, int] = {a: i for i, a in enumerate(top.body.block.args)}
    plan: list[dict[str, Any]] = []
    returns: list[int] = []
    for op in top.body.block.ops:
        if isinstance(op, asc.LaunchOp):
            kname = op.callee.root_reference.data
            tiling = tiling_fields(kernels_by_name[kname])
            results = []
            for r in op.outputs:
                ids[r] = len(ids)
                results.append(
                    {
                        "id": ids[r],
                        "shape": list(r.type.get_shape()),
                        "dtype": np_dtype_of(r.type.element_type).name,
                    }
                )
            plan.append(
                {
                    "kernel": kname,
                    "block_dim": tiling["block_dim"],
                    "tiling": tiling,
                    "args": [ids[v] for v in op.inputs],
                    "results": results,
                    **launch_info(kernels_by_name[kname]),
                }
            )
        elif isinstance(op, func.ReturnOp):
            returns = [ids[v] for v in op.operands]
        else:
            raise NotImplementedError(f"host op {op.name} in {top.sym_name.data}")
    return plan, returns


@dataclass
class Step:
    """One launch of a multi-kernel operator (see :func:`launch_plan`): value ids of the
    arguments, ``(shape, dtype)`` of the results (value ids follow on from the earlier ones)."""

    kernel: str
    block_dim: int
    tiling_bytes: bytes
    args: list[int]
    results: list[tuple[tuple[int, ...], np.dtype]]


def steps_of(launches: list[dict[str, Any]], n_inputs: int, returns: list[int]) -> list[Step]:
    """``op.json``'s ``launches`` as :class:`Step` s, checked: every value id refers to an
    input or an earlier launch's result, result ids are consecutive.

    Raises:
        ValueError, KeyError, TypeError: malformed launches."""
    steps = []
    known = n_inputs
    for la in launches:
        if any(not 0 <= int(i) < known for i in la["args"]):
            raise ValueError(f"{la['kernel']} reads a value that is not computed before it")
        for r in la["results"]:
            if r["id"] != known:
                raise ValueError(f"{la['kernel']}: result id {r['id']}, expected {known}")
            known += 1
        if int(la["block_dim"]) < 1:
            raise ValueError(f"{la['kernel']}: block_dim {la['block_dim']}")
        steps.append(
            Step(
                str(la["kernel"]),
                int(la["block_dim"]),
                np.array(list(la["tiling"].values()), dtype=np.int64).tobytes(),
                [int(i) for i in la["args"]],
                [(tuple(int(d) for d in r["shape"]), np.dtype(r["dtype"])) for r in la["results"]],
            )
        )
    if any(not 0 <= int(i) < known for i in returns):
        raise ValueError("a returned value is not computed")
    return steps


def read_cached_info(directory: Path, key: str) -> tuple[dict[str, Any] | None, bool]:
    """The ``op.json`` of the operator cached in ``directory`` for ``key`` (its sources and
    library checked), or ``(None, corrupt_library)``.

    A truncated or corrupt ``op.json``, one whose content does not match its checksum (an edit,
    e.g. of one digit of a tiling value), a missing library or one whose SHA-256 differs from
    the recorded one is reported with a :class:`CacheWarning` and rebuilt by the caller
    (``corrupt_library``: the library cache entry itself must be rebuilt with g++)."""
    info_path = directory / "op.json"
    if not info_path.exists():
        return None, False
    try:
        info = json.loads(info_path.read_text())
        if not isinstance(info, dict):
            raise ValueError("not a JSON object")
        missing = [k for k in REQUIRED_INFO if k not in info]
        if missing and not info.get("empty"):
            raise ValueError(f"missing {', '.join(missing)}")
        if len(info.get("launches", ())) > 1 or info.get("kernels", 1) > 1:
            try:
                steps_of(info["launches"], len(info["inputs"]), info["returns"])
            except (KeyError, TypeError) as exc:
                raise ValueError(f"bad launches: {exc!r}") from exc
    except (OSError, ValueError) as exc:
        warn_cache(f"{info_path} is truncated or corrupt ({exc}); rebuilding it")
        return None, False
    if info.get("key") != key or info.get("empty"):
        return None, False  # another operator's output folder, or an empty-input operator
    if info.get("checksum") != info_checksum(info):
        warn_cache(
            f"{info_path} was edited or is damaged (its content does not match its "
            "checksum); rebuilding it"
        )
        return None, False
    lib = library_path(directory, info)
    if not lib.is_file():
        warn_cache(f"the CPU library {lib} of {info_path} is missing; rebuilding it")
        return None, False
    if info["library_sha256"] is not None and file_sha256(lib) != info["library_sha256"]:
        warn_cache(
            f"the CPU library {lib} of {info_path} is corrupt (its SHA-256 differs "
            "from the recorded one); rebuilding it"
        )
        return None, True
    for fname, digest in info.get("source_sha256", {}).items():
        try:
            ok = text_sha256((directory / fname).read_text()) == digest
        except OSError:
            ok = False
        if not ok:  # the sources rebuild the memory-check variant: they must be intact
            warn_cache(f"{directory / fname} is missing or corrupt; rebuilding the operator")
            return None, False
    return info, False


def write_artifacts(
    directory: Path, sources: dict[str, str], stages: dict[str, ModuleOp], info: dict[str, Any]
) -> None:
    """Publish ``sources`` (file name -> text), every stage's IR (``<stage>.mlir``, so
    ``load_op`` can interpret it) and ``op.json`` into ``directory``, each atomically;
    ``op.json`` last, as it marks the entry complete, sealed (:func:`pyasc_mlir.integrity.seal`:
    the IR digests and the checksum are added to ``info``)."""
    directory.mkdir(parents=True, exist_ok=True)
    for fname, text in sources.items():
        atomic_write(directory / fname, text)
    for stage, module in stages.items():
        atomic_write(directory / f"{stage}.mlir", str(module))
    seal(info, directory)
    atomic_write(directory / "op.json", json.dumps(info, indent=2))


def describe_empty(
    name: str,
    platform: str,
    key: str,
    descs: list[TensorDesc],
    outs: list[TensorDesc],
    arg_names: list[str],
    compile_ms: float,
) -> dict[str, Any]:
    """``op.json`` of an operator with a zero-size input dimension (no kernel, no library):
    ``descs`` its tensor inputs, ``outs`` its results; sealed (it has a checksum)."""
    return seal(
        {
            "name": name,
            "platform": platform,
            "empty": True,
            "key": key,
            "library": None,
            "inputs": [{"shape": list(d.shape), "dtype": d.dtype} for d in descs],
            "outputs": [{"shape": list(d.shape), "dtype": d.dtype} for d in outs],
            "arg_names": arg_names,
            "kernels": 0,
            "kernel_names": [],
            "modeled_us": {"platform": platform, "label": "MODELED", "kernels": {}, "total": 0.0},
            "kernel_args": [],
            "block_dim": 0,
            "tiling": {},
            "ub_bytes": 0,
            "gm_bytes": 0,
            "gm_bytes_per_core_consts": 0,
            "unfused_gm_bytes": 0,
            "fused_ops": 0,
            "compile_ms": compile_ms,
            "cache_hit": False,
            "version": __version__,
        }
    )
