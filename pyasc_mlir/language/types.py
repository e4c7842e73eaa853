"""Dtypes, symbolic dims and typed signatures of the kernel language.

``lang.float16[M, N]`` is an :class:`ArraySpec`: a dtype and one dim per axis, each dim a
symbolic name (``M``: bound to the argument's size at the call; the same name must have the
same size everywhere in the signature) or a literal ``int`` (checked at the call).
Annotations are read from the kernel's source with :mod:`ast` (:func:`read_signature`), so a
bare name such as ``M`` need not be defined in the module; modules that evaluate annotations
can import the names (``from pyasc_mlir.language import M, N, K``).
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyasc_mlir.errors import PyAscCompileError, SourceLoc
from pyasc_mlir.types import BF16

__all__ = ["ArraySpec", "DType", "Dim", "KernelSignature", "TensorSpec", "read_signature"]


@dataclass(frozen=True)
class Dim:
    """A symbolic dim name (``M``), bound to a size at the call."""

    name: str

    def __repr__(self) -> str:
        return self.name


@dataclass(frozen=True)
class DType:
    """A kernel-language dtype; ``lang.float16[M, N]`` makes an :class:`ArraySpec`.
    ``supported``: the backend computes with it (``int32`` is declared, not yet compiled)."""

    name: str
    np_dtype: np.dtype
    supported: bool = True

    def __getitem__(self, dims: Any) -> ArraySpec:
        items = dims if isinstance(dims, tuple) else (dims,)
        out: list[int | str] = []
        for d in items:
            if isinstance(d, Dim):
                out.append(d.name)
            elif isinstance(d, int | str):
                out.append(d)
            else:
                raise TypeError(f"a dim is a name or an int, got {d!r}")
        return ArraySpec(self, tuple(out))

    def __repr__(self) -> str:
        return f"lang.{self.name}"


@dataclass(frozen=True)
class ArraySpec:
    """A typed array parameter or result: ``dtype`` and ``dims`` (names or ints); ``loc``:
    where the annotation is in the source."""

    dtype: DType
    dims: tuple[int | str, ...]
    loc: SourceLoc | None = None

    def __repr__(self) -> str:
        return f"{self.dtype!r}[{', '.join(str(d) for d in self.dims)}]"


@dataclass(frozen=True)
class TensorSpec:
    """``lang.Tensor`` (any rank and dtype), ``lang.Tensor[lang.float32]`` (a dtype) or
    ``lang.Tensor[lang.float32, 2]`` (a dtype and a rank): an array parameter whose sizes the
    body reads from ``x.shape`` (for ``@lang.kernel(dynamic_shape=True)``)."""

    dtype: DType | None = None
    rank: int | None = None
    loc: SourceLoc | None = None

    def __getitem__(self, item: Any) -> TensorSpec:
        items = item if isinstance(item, tuple) else (item,)
        if not items or not isinstance(items[0], DType) or len(items) > 2:
            raise TypeError("write lang.Tensor[lang.float32] or lang.Tensor[lang.float32, 2]")
        rank = items[1] if len(items) == 2 else None
        if rank is not None and (not isinstance(rank, int) or rank < 1):
            raise TypeError(f"a rank is an int >= 1, got {rank!r}")
        return TensorSpec(items[0], rank)

    def __repr__(self) -> str:
        if self.dtype is None:
            return "lang.Tensor"
        return f"lang.Tensor[{self.dtype!r}" + (f", {self.rank}]" if self.rank else "]")


Spec = ArraySpec | TensorSpec
"""An array annotation."""

Tensor = TensorSpec()
"""``x: lang.Tensor``: see :class:`TensorSpec`."""

float16 = DType("float16", np.dtype(np.float16))
float32 = DType("float32", np.dtype(np.float32))
bfloat16 = DType("bfloat16", BF16)
int32 = DType("int32", np.dtype(np.int32), supported=False)
DTYPES = {d.name: d for d in (float16, float32, bfloat16, int32)}


@dataclass
class KernelSignature:
    """The typed parameters (name -> spec; untyped ones are compile-time values) and the
    result spec(s) of a kernel, read from its source."""

    params: dict[str, ArraySpec | TensorSpec | None]
    result: Spec | tuple[Spec | None, ...] | None


def _fail(msg: str, loc: SourceLoc | None, hint: str) -> PyAscCompileError:
    return PyAscCompileError(msg, loc, hint)


def _dim(node: ast.expr, env: dict[str, Any], loc: SourceLoc) -> int | str:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return int(node.value)
    if isinstance(node, ast.Name):
        v = env.get(node.id, None)
        if isinstance(v, Dim):
            return v.name
        if isinstance(v, int) and not isinstance(v, bool):
            return int(v)
        return node.id
    raise _fail(
        f"a dim must be a name or an int literal, not {ast.unparse(node)!r}",
        loc,
        "write lang.float16[M, N] (names bound at the call) or lang.float16[128, N]",
    )


def _eval(node: ast.expr, env: dict[str, Any], file: str) -> Any:
    try:
        return eval(compile(ast.Expression(node), file, "eval"), env)  # noqa: S307
    except Exception:  # noqa: BLE001 - a name that is not defined (a bare dim), anything else
        return None


def _spec(
    node: ast.expr, env: dict[str, Any], file: str, line0: int
) -> ArraySpec | TensorSpec | None:
    """The array spec of an annotation, or ``None`` for a compile-time parameter's
    (``float``, ``int``, ``tuple[int, int]``: anything whose base is not a dtype)."""
    loc = SourceLoc(file, node.lineno + line0, node.col_offset)
    whole = _eval(node, env, file)
    if isinstance(whole, TensorSpec):
        return TensorSpec(whole.dtype, whole.rank, loc)
    if isinstance(node, ast.Subscript):
        dtype = _eval(node.value, env, file)
    else:
        dtype = _eval(node, env, file)
        if isinstance(dtype, DType):
            raise _fail(
                f"{ast.unparse(node)!r} needs its dims",
                loc,
                f"write {ast.unparse(node)}[N] (one name or int per axis)",
            )
        return None
    if not isinstance(dtype, DType):
        return None
    sl = node.slice
    items = sl.elts if isinstance(sl, ast.Tuple) else [sl]
    return ArraySpec(dtype, tuple(_dim(d, env, loc) for d in items), loc)


def _function_node(fn: Callable[..., Any]) -> tuple[ast.FunctionDef, str, int]:
    from pyasc_mlir.frontend.source import parse_function

    return parse_function(inspect.unwrap(fn), None)


def read_signature(fn: Callable[..., Any]) -> KernelSignature:
    """The typed signature of ``fn`` from its source (annotations are not evaluated, except
    for the dtype part ``lang.float16`` and dim names bound to ints or :class:`Dim`\\ s).

    Raises:
        PyAscCompileError: at the annotation: a dtype without dims, a dim that is neither a
            name nor an int literal."""
    node, file, line0 = _function_node(fn)
    env = dict(inspect.unwrap(fn).__globals__)
    params: dict[str, ArraySpec | TensorSpec | None] = {}
    for a in node.args.args:
        params[a.arg] = None if a.annotation is None else _spec(a.annotation, env, file, line0)
    result: Spec | tuple[Spec | None, ...] | None = None
    r = node.returns
    if isinstance(r, ast.Tuple):
        result = tuple(_spec(e, env, file, line0) for e in r.elts)
    elif r is not None:
        result = _spec(r, env, file, line0)
    return KernelSignature(params, result)


def check_results(
    sig: KernelSignature,
    results: Sequence[tuple[tuple[int, ...], str]],
    dims: dict[str, int],
    fn_name: str,
) -> None:
    """The arrays a kernel returns (``(shape, dtype name)`` each) against its return
    annotation, dims bound at the call (``dims``; a name no parameter binds matches any size).
    No annotation, or a ``lang.Tensor`` one (dynamic shapes), checks nothing.

    Raises:
        PyAscCompileError: at the annotation: another number of arrays, dtype or shape."""
    specs = sig.result if isinstance(sig.result, tuple) else (sig.result,)
    if sig.result is None or not all(isinstance(s, ArraySpec | None) for s in specs):
        return
    first = next((s for s in specs if isinstance(s, ArraySpec)), None)
    loc = first.loc if first is not None else None
    if len(specs) != len(results):
        raise _fail(
            f"{fn_name}() returns {len(results)} array(s), its annotation declares {len(specs)}",
            loc,
            "return what the annotation declares, or fix the annotation",
        )
    for k, (spec, (shape, dtype)) in enumerate(zip(specs, results, strict=True)):
        if not isinstance(spec, ArraySpec):
            continue
        want = [dims.get(d) if isinstance(d, str) else d for d in spec.dims]
        same = len(want) == len(shape) and all(
            w is None or w == s for w, s in zip(want, shape, strict=True)
        )
        if spec.dtype.name != dtype or not same:
            what = f"result {k} of {fn_name}()" if len(specs) > 1 else f"{fn_name}()'s result"
            raise _fail(
                f"{what} is {dtype}{list(shape)}, declared {spec!r}",
                spec.loc,
                "return an array of the declared dtype and shape (lang.cast for the dtype), "
                "or fix the annotation",
            )
