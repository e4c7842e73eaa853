"""Hints and messages of the frontend's compile errors, shared by its modules.

Each hint tells the person writing an operator what to do about an error
(:class:`pyasc_mlir.errors.PyAscCompileError` carries it as ``hint``).
"""

from __future__ import annotations

WHERE_HINT = (
    "use pyasc_mlir.where(cond, a, b) to choose between values elementwise; Python "
    "`if`/`while`/`and`/`or`/`not` run at compile time, on compile-time values only"
)
MASK_HINT = (
    "use pyasc_mlir.where(mask, a, b), or pyasc_mlir.cast(mask, pyasc_mlir.float32) for 1.0/0.0"
)
PY_HINT = (
    "this expression runs in Python at compile time on compile-time values; fix it as "
    "ordinary Python"
)
RAN_HINT = (
    "it ran at compile time on compile-time values; check the shapes and arguments the "
    "operator is called with"
)
ITER_HINT = "iterate over range(n), or a tuple or list of compile-time values or tensors"
CALL_HINT = "call pyasc_mlir functions, helpers defined with def, or builtins"
RESHAPE_HINT = "give positive compile-time ints (from x.shape or constants), at most one -1"
MATCH_HINT = "call the operator with a tensor of that shape (None accepts any size)"
RANK_HINT = "pass tensors of one rank; reshape one first, e.g. x.reshape(1, n)"

UNSUPPORTED_STMTS: dict[str, tuple[str, str | None]] = {
    "Try": (
        "try/except is not supported in a compiled operator",
        "mistakes in an operator are compile errors; remove the try block",
    ),
    "TryStar": ("try/except* is not supported in a compiled operator", None),
    "With": ("'with' statements are not supported in a compiled operator", None),
    "AsyncWith": ("'async with' is not supported in a compiled operator", None),
    "AsyncFor": ("'async for' is not supported in a compiled operator", None),
    "FunctionDef": (
        "nested function definitions are not supported in a compiled operator",
        "define the helper at module level; helpers called with tensors are inlined",
    ),
    "AsyncFunctionDef": (
        "nested function definitions are not supported in a compiled operator",
        None,
    ),
    "ClassDef": ("class definitions are not supported in a compiled operator", None),
    "Global": (
        "'global' declarations are not supported in a compiled operator",
        "an operator cannot change Python state; pass values as arguments",
    ),
    "Nonlocal": (
        "'nonlocal' declarations are not supported in a compiled operator",
        "an operator cannot change Python state; pass values as arguments",
    ),
    "Delete": ("'del' is not supported in a compiled operator", None),
    "Match": (
        "'match' statements are not supported in a compiled operator",
        "use if/elif on compile-time values",
    ),
}
"""Statement kinds (``ast`` class names) a compiled operator cannot hold: (message, hint)."""

UNSUPPORTED_EXPRS: dict[str, tuple[str, str | None]] = {
    "Lambda": (
        "lambda expressions are not supported in a compiled operator",
        "define a helper function with def at module level; it is inlined",
    ),
    "Yield": ("'yield' is not supported in a compiled operator", None),
    "YieldFrom": ("'yield from' is not supported in a compiled operator", None),
    "Await": ("'await' is not supported in a compiled operator", None),
    "Starred": ("a starred expression is only supported in calls and tuple/list displays", None),
}
"""Expression kinds (``ast`` class names) a compiled operator cannot hold: (message, hint)."""
