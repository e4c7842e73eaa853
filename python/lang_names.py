"""The error for a module attribute a kernel body names but the module lacks (``lang.exp2``,
``math.exp3``): said with the name as the source spells the module, and a hint with the closest
names (``difflib``) or, for the kernel language, its element functions."""

from __future__ import annotations

import difflib
import types

from pyasc_mlir.language import builtins as lb

__all__ = ["missing_module_attribute"]


def _element_functions(lang: types.ModuleType) -> list[str]:
    """The element functions ``lang`` exports (``lang.exp``, ``lang.maximum``, ...)."""
    names = {f.__name__ for f in (*lb.UNARY, *lb.BINARY)} | {"cast"}
    return sorted(n for n in names if hasattr(lang, n))


def _public(module: types.ModuleType) -> list[str]:
    """Its public names but submodules and ``from __future__`` features."""
    return [
        n
        for n in dir(module)
        if not n.startswith("_")
        and not isinstance(getattr(module, n), types.ModuleType)
        and n != "annotations"
    ]


def missing_module_attribute(
    module: types.ModuleType, spelled: str, attr: str, called: bool
) -> tuple[str, str]:
    """``(message, hint)`` for ``spelled.attr`` (``spelled``: the module as the source names
    it) that ``module`` does not have; ``called``: the attribute is called."""
    what = "function" if called else "attribute"
    message = f"{spelled} has no {what} {attr!r}"
    lang = module.__name__.split(".")[:2] == ["pyasc_mlir", "language"]
    if lang:
        import pyasc_mlir.language as lang_module
        import pyasc_mlir.language.math as lang_math

        names = sorted(set(_public(lang_module)) | set(_public(lang_math)))
        prefix = spelled.split(".")[0] if module is lang_math else spelled
    else:
        names, prefix = _public(module), spelled
    close = difflib.get_close_matches(attr, names, n=3, cutoff=0.6)
    hint = " or ".join(f"{prefix}.{c}" for c in close)
    hint = f"did you mean {hint}?" if close else ""
    if lang and called:
        listed = ", ".join(f"{prefix}.{f}" for f in _element_functions(lang_module))
        more = f"the element functions are {listed} (also in {prefix}.math)"
        hint = f"{hint} {more[0].upper()}{more[1:]}" if hint else more
    elif lang and not hint:
        hint = f"dir({prefix}) lists the kernel language's names"
    elif not hint:
        hint = f"{spelled} has no such name; check the spelling ({module.__name__})"
    return message, hint
