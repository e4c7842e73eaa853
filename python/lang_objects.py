"""Objects and ``with`` blocks in kernel-language bodies (a mixin of ``LangGen``).

* **Objects**: a class defined at module level and instantiated inside a kernel
  (``cfg = Config(2.0, w)``) becomes an :class:`Obj`, a compile-time record of attributes
  (compile-time values and arrays). ``__init__`` and methods are inlined like helper
  functions (``self`` is the record); a dataclass's fields are bound from the call (defaults
  and ``default_factory`` included) and ``__post_init__`` runs inlined. Properties,
  ``staticmethod`` and ``classmethod`` work; so do methods of objects passed in as
  compile-time arguments (those objects are read-only).
* **``with lang.scope("name"):``** names a region of the body: the ``asc_loop`` ops emitted
  inside carry the attribute ``lang.scope`` (``"outer/inner"`` when nested; the raised tensor
  ops keep it), and a compile error inside says which scope it is in.

Errors (located :class:`PyAscCompileError`): a runtime scalar stored in an attribute, an
attribute assigned inside a loop the object was not created in (the loop body runs once at
compile time), writing an attribute of an object passed in, a ``with`` on any other context
manager, a class defined inside the kernel body.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import types
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Block, Operation

from pyasc_mlir.errors import PyAscCompileError
from pyasc_mlir.frontend.lang_exprs import RUNTIME, ExprGen
from pyasc_mlir.language.builtins import scope

__all__ = ["SCOPE_ATTR", "BoundMethod", "Obj", "ObjectGen"]

SCOPE_ATTR = "lang.scope"
"""The attribute ``with lang.scope(name)`` puts on the ops emitted inside it."""

_LIBRARY_ROOTS = {
    "builtins",
    "collections",
    "dataclasses",
    "decimal",
    "enum",
    "fractions",
    "math",
    "numpy",
    "operator",
    "pyasc_mlir",
    "typing",
}


@dataclass(eq=False)
class Obj:
    """An instance of a user class created inside a kernel: ``cls`` and its attributes;
    ``home``: the block it was created in (attributes may be assigned only there)."""

    cls: type
    attrs: dict[str, Any] = field(default_factory=dict)
    home: Block | None = None

    def __repr__(self) -> str:
        return f"<{self.cls.__name__} object>"


@dataclass(frozen=True)
class BoundMethod:
    """A method looked up on an :class:`Obj` (or a class/static method): ``fn`` is inlined
    with ``first`` (``self``/``cls``; ``None`` for a static method) prepended."""

    fn: types.FunctionType
    first: Any


def is_user_class(v: Any) -> bool:
    """A class defined in user code (not a builtin, library or pyasc-mlir type)."""
    if not isinstance(v, type):
        return False
    root = (getattr(v, "__module__", "") or "").split(".")[0]
    return root not in _LIBRARY_ROOTS


class ObjectGen(ExprGen):
    """The object and ``with`` support of the statement generator."""

    scopes: list[str]

    def call_helper(
        self, fn: types.FunctionType, args: list[Any], kw: dict[str, Any], node: ast.AST
    ) -> Any:
        raise NotImplementedError  # LangGen inlines helpers

    # -- calls -----------------------------------------------------------------------------
    def call_object(self, fn: Any, args: list[Any], kw: dict[str, Any], node: ast.AST) -> Any:
        """A call of a user class, a bound method or a method of a compile-time object;
        ``NotImplemented`` for anything else."""
        if isinstance(fn, BoundMethod):
            first = [] if fn.first is None else [fn.first]
            return self.call_helper(fn.fn, [*first, *args], kw, node)
        if isinstance(fn, types.MethodType) and isinstance(fn.__func__, types.FunctionType):
            if is_user_class(type(fn.__self__)) or is_user_class(fn.__self__):
                return self.call_helper(fn.__func__, [fn.__self__, *args], kw, node)
        if is_user_class(fn):
            return self.instantiate(fn, args, kw, node)
        return NotImplemented

    def instantiate(self, cls: type, args: list[Any], kw: dict[str, Any], node: ast.AST) -> Obj:
        obj = Obj(cls, {}, self.block)
        if dataclasses.is_dataclass(cls):
            self.bind_fields(obj, args, kw, node)
            post = inspect.getattr_static(cls, "__post_init__", None)
            if isinstance(post, types.FunctionType):
                self.call_helper(post, [obj], {}, node)
            return obj
        init = inspect.getattr_static(cls, "__init__", None)
        if isinstance(init, types.FunctionType):
            self.call_helper(init, [obj, *args], kw, node)
        elif args or kw:
            raise self.error(node, f"{cls.__name__}() takes no arguments", "define __init__")
        return obj

    def bind_fields(self, obj: Obj, args: list[Any], kw: dict[str, Any], node: ast.AST) -> None:
        fields = [f for f in dataclasses.fields(obj.cls) if f.init]
        if len(args) > len(fields):
            raise self.error(
                node, f"{obj.cls.__name__}() takes {len(fields)} fields, got {len(args)}", ""
            )
        bound = dict(zip([f.name for f in fields], args, strict=False))
        for k, v in kw.items():
            if k in bound or k not in {f.name for f in fields}:
                raise self.error(node, f"{obj.cls.__name__}(): bad field argument {k!r}", "")
            bound[k] = v
        for f in dataclasses.fields(obj.cls):
            if f.name in bound:
                value = bound[f.name]
            elif f.default is not dataclasses.MISSING:
                value = f.default
            elif f.default_factory is not dataclasses.MISSING:
                value = f.default_factory()
            else:
                raise self.error(node, f"{obj.cls.__name__}() misses field {f.name!r}", "")
            self.check_attr_value(obj, f.name, value, node)
            obj.attrs[f.name] = value

    # -- attributes ------------------------------------------------------------------------
    def object_attribute(self, base: Any, node: ast.Attribute) -> Any:
        """``base.name`` when ``base`` is an :class:`Obj` or a user class; else
        ``NotImplemented``."""
        if isinstance(base, Obj):
            if node.attr in base.attrs:
                return base.attrs[node.attr]
            return self.class_attribute(base.cls, base, node)
        if is_user_class(base):
            return self.class_attribute(base, None, node)
        return NotImplemented

    def class_attribute(self, cls: type, obj: Obj | None, node: ast.Attribute) -> Any:
        try:
            raw = inspect.getattr_static(cls, node.attr)
        except AttributeError:
            raise self.error(
                node,
                f"{cls.__name__} object has no attribute {node.attr!r}",
                "set it in __init__ (self.name = value) or as a dataclass field",
            ) from None
        if isinstance(raw, staticmethod | classmethod):
            fn = raw.__func__
            if isinstance(fn, types.FunctionType):
                return BoundMethod(fn, cls if isinstance(raw, classmethod) else None)
        if isinstance(raw, property) and isinstance(raw.fget, types.FunctionType):
            if obj is None:
                return raw
            return self.call_helper(raw.fget, [obj], {}, node)
        if isinstance(raw, types.FunctionType):
            return raw if obj is None else BoundMethod(raw, obj)
        return getattr(cls, node.attr)

    def assign_attribute(self, target: ast.Attribute, value: Any) -> None:
        obj = self.expr(target.value)
        if not isinstance(obj, Obj):
            raise self.error(
                target,
                f"cannot set an attribute of {self.describe(obj)}",
                "objects passed into a kernel are compile-time values (read-only); create the "
                "object inside the kernel to set its attributes",
            )
        self.check_attr_value(obj, target.attr, value, target)
        if obj.home is not self.block:
            raise self.error(
                target,
                f"{obj.cls.__name__}.{target.attr} is assigned inside a loop the object was "
                "not created in: the loop body is compiled once, so the attribute would not "
                "change per iteration",
                "keep values that change in a loop in local variables or arrays",
            )
        obj.attrs[target.attr] = value

    def check_attr_value(self, obj: Obj, name: str, value: Any, node: ast.AST) -> None:
        if isinstance(value, RUNTIME):
            raise self.error(
                node,
                f"{obj.cls.__name__}.{name} would hold {self.describe(value)}: object "
                "attributes hold compile-time values and arrays",
                "keep runtime scalars in local variables, or store them in an array field",
            )

    # -- with ------------------------------------------------------------------------------
    def stmt_With(self, node: ast.With) -> None:
        entered: list[str] = []
        for item in node.items:
            sc = self.scope_of(item.context_expr)
            if item.optional_vars is not None:
                if not isinstance(item.optional_vars, ast.Name):
                    raise self.error(item.optional_vars, "bind the scope to a name", "")
                self.env[item.optional_vars.id] = sc
            entered.append(sc.name)
        depth = len(self.scopes)
        self.scopes.extend(entered)
        try:
            self.stmts(node.body)  # type: ignore[attr-defined]
        except PyAscCompileError as exc:
            path = "/".join(self.scopes)
            if "(in lang.scope " not in exc.message:
                exc.message += f" (in lang.scope {path!r})"
                exc.args = (exc.format(),)
            raise
        finally:
            del self.scopes[depth:]

    def scope_of(self, ce: ast.expr) -> scope:
        if isinstance(ce, ast.Call):
            f = self.expr(ce.func)
            if f is scope:
                args = [self.expr(a) for a in ce.args]
                kw = {k.arg: self.expr(k.value) for k in ce.keywords if k.arg is not None}
                try:
                    return scope(*args, **kw)
                except (TypeError, ValueError) as exc:
                    raise self.error(ce, str(exc), 'write with lang.scope("name"):') from None
            what = f"{getattr(f, '__name__', f)}(...)"
        else:
            v = self.expr(ce)
            if isinstance(v, scope):
                return v
            what = self.describe(v)
        raise self.error(
            ce,
            f"with works only on lang.scope(...) inside a kernel, not on {what}: a Python "
            "context manager's __enter__/__exit__ cannot run on the device",
            "enter the context manager around the kernel call instead, or name a region "
            'with `with lang.scope("name"):`',
        )

    def add(self, op: Operation, node: ast.AST) -> Operation:
        super().add(op, node)
        if self.scopes:
            op.attributes[SCOPE_ATTR] = StringAttr("/".join(self.scopes))
        return op
