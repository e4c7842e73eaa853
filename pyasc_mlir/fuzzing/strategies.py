"""Hypothesis strategies of fuzz programs: :func:`programs`.

A program is drawn as ranks 1-4 with tails (1, 7, 33, 513, ...), 1-4 inputs broadcasting
against the first, float16 / float32 / mixed dtypes and value ranges that stress ``exp`` /
``log`` / ``rsqrt``, then a list of ops (each drawn by :func:`draw_nodes` from :data:`KINDS`,
kept in domain by the value intervals of :func:`~pyasc_mlir.fuzzing.program.node_meta`), and
returned values. Choices are ordered simplest first, so Hypothesis shrinks towards small,
simple programs. The order of the draws fixes which program a seed gives: keep it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from pyasc_mlir.fuzzing.program import (
    BIG,
    GUARDED,
    MAX_ELEMS,
    MODELS,
    Input,
    Meta,
    Node,
    Program,
    axes_of,
    bshape,
    node_meta,
)
from pyasc_mlir.fuzzing.source import CMP_SYM
from pyasc_mlir.platform import DEFAULT_PLATFORM

LAST_DIMS = (
    1,
    7,
    33,
    2,
    3,
    4,
    5,
    8,
    16,
    17,
    31,
    64,
    100,
    128,
    129,
    255,
    257,
    513,
    1000,
    1024,
    2049,
    4097,
)
"""Trailing extents, simplest first (Hypothesis shrinks towards the front)."""
LEAD_DIMS = (1, 2, 3, 4, 5, 7, 8, 16, 33, 64)
RANGES = (
    (-1.0, 1.0),
    (-3.0, 3.0),
    (0.0, 1.0),
    (0.5, 2.0),
    (-15.0, 15.0),
    (-100.0, 100.0),
    (-1e4, 1e4),
    (-6e4, 6e4),
    (1.0, 1.0),
)
CONSTS = (
    1.0,
    2.0,
    0.5,
    -1.0,
    0.0,
    3.0,
    -0.5,
    0.25,
    10.0,
    1e-3,
    1e-5,
    -2.5,
    100.0,
    0.1,
    2,
    -3,
    7,
    1e4,
)
GUARD_CONSTS = (1.0, 0.5, 1e-3, 0.1, 1e-5, 2.0)
EPS = (1e-5, 1e-6, 1e-3, 0.1)
_SEEDED_UNARY = (
    "exp",
    "abs",
    "neg",
    "relu",
    "log",
    "sqrt",
    "rsqrt",
    "sigmoid",
    "tanh",
    "erf",
    "square",
    "cube",
    "recip",
    "sin",
    "cos",
)
"""The unary functions in the order earlier seeds drew them (``square``/``cube`` are ``x ** 2``
and ``x ** 3``); the op table's other unary functions follow, so a seed keeps its programs."""
UNARY_FNS = (*_SEEDED_UNARY, *(f for f in MODELS if f not in _SEEDED_UNARY))
BINARY_FNS = ("add", "mul", "sub", "div", "maximum", "minimum")
KINDS = (
    "binary",
    "unary",
    "binary",
    "unary",
    "reduce",
    "compare_where",
    "binary",
    "reduce",
    "cast",
    "where",
    "softmax",
    "layernorm",
    "logsumexp",
    "reshape",
    "mask",
    "unary",
    "binary",
    "reduce",
)


def _valid_meta(m: Meta) -> bool:
    return m.dtype == "bool" or (math.isfinite(m.lo) and math.isfinite(m.hi) and m.mag <= BIG)


def _strategies() -> Any:
    from hypothesis import strategies as st

    return st


def programs(platform: str = DEFAULT_PLATFORM, max_ops: int = 15) -> Any:
    """A Hypothesis strategy of :class:`~pyasc_mlir.fuzzing.program.Program` for ``platform``
    with at most ``max_ops`` ops (plus a cast when a mask is returned)."""
    st = _strategies()

    @st.composite
    def strat(draw: Any) -> Program:
        # Hypothesis's second example of a run differs from the first (the simplest) in its
        # first choice: spend that choice on this unused salt, not on the rank.
        draw(st.integers(0, 255))
        inputs = _draw_inputs(draw, st)
        ms = [Meta(i.shape, i.dtype, i.lo, i.hi) for i in inputs]
        nodes = _draw_ops(draw, st, ms, max_ops)
        outs = _draw_outputs(draw, st, ms, len(inputs))
        db = draw(st.integers(0, 4)) != 4
        seed = draw(st.integers(0, 2**31 - 1))
        return Program(tuple(inputs), tuple(nodes), tuple(outs), platform, db, seed)

    return strat()


def _draw_inputs(draw: Any, st: Any) -> list[Input]:
    """The parameters: the first has the full shape, the others broadcast against it."""
    rank = draw(st.integers(1, 4))
    budget = MAX_ELEMS
    last = draw(st.sampled_from([d for d in LAST_DIMS if d <= budget]))
    dims = [last]
    for _ in range(rank - 1):
        room = budget // math.prod(dims)
        dims.insert(0, draw(st.sampled_from([d for d in LEAD_DIMS if d <= max(room, 1)])))
    base = tuple(dims)
    mode = draw(st.sampled_from(("float16", "float32", "mixed")))
    n_in = draw(st.integers(1, 4))
    inputs = []
    for j in range(n_in):
        if j == 0:
            shape = base
        else:
            r = draw(st.integers(1, rank))
            shape = tuple(
                d if d == 1 or draw(st.booleans()) is False else 1 for d in base[rank - r :]
            )
        dt = mode if mode != "mixed" else draw(st.sampled_from(("float16", "float32")))
        lo, hi = draw(st.sampled_from(RANGES))
        dist = draw(st.sampled_from(("uniform", "grid", "normal")))
        inputs.append(Input(shape, dt, lo, hi, dist))
    return inputs


def _draw_ops(draw: Any, st: Any, ms: list[Meta], max_ops: int) -> list[Node]:
    """The op list; appends each result's meta to ``ms``. The last value is a float (a mask is
    cast)."""
    nodes: list[Node] = []
    # List-style length: a "go on" choice before every op after the first (7 in 8: about
    # 8 ops on average, at most max_ops), so the shrinker can delete one op's choices.
    while len(nodes) < max_ops and (not nodes or draw(st.integers(0, 7)) != 0):
        new = None
        for _attempt in range(3):
            new = _draw_nodes(draw, st, ms)
            if new is not None:
                break
        if new is None:  # always valid: a bounded function of the latest float value
            src = max(i for i, m in enumerate(ms) if m.dtype != "bool")
            new = [Node("unary", (("v", src),), (("fn", "tanh"),))]
        for node in new[: max_ops - len(nodes)]:  # a truncated chain leaves a dead mask
            nodes.append(node)
            ms.append(node_meta(node, ms))
    # The last value is returned; a mask is returned as a float.
    if ms[-1].dtype == "bool":
        node = Node(
            "cast",
            (("v", len(ms) - 1),),
            (("form", 0), ("to", draw(st.sampled_from(("float32", "float16"))))),
        )
        nodes.append(node)
        ms.append(node_meta(node, ms))
    return nodes


def _draw_outputs(draw: Any, st: Any, ms: Sequence[Meta], n_in: int) -> list[int]:
    """The returned values: the last value, up to 2 more, rarely an input; in any order."""
    outs = [len(ms) - 1]
    extra = draw(st.integers(0, 2))
    floats = [i for i, m in enumerate(ms) if m.dtype != "bool" and i >= n_in]
    # Mostly full-size extra outputs (an output that does not span the leading dims is a
    # compile limit: a few of those are enough).
    big = max(math.prod(ms[i].shape) for i in floats)
    full = [i for i in floats if math.prod(ms[i].shape) == big]
    for _ in range(extra):
        i = draw(st.sampled_from(full if draw(st.integers(0, 3)) else floats))
        if i not in outs or draw(st.integers(0, 9)) == 9:  # rare (and not the simplest)
            outs.append(i)
    if draw(st.integers(0, 19)) == 19:
        outs.append(draw(st.integers(0, n_in - 1)))  # an input returned unchanged
    return draw(st.permutations(outs)) if len(outs) > 1 else outs


def _is_float(i: int, m: Meta) -> bool:
    return m.dtype != "bool"


def _pick(draw: Any, st: Any, ms: Sequence[Meta], ok: Callable[[int, Meta], bool]) -> int | None:
    """A value id satisfying ``ok``, the latest first (None if there is none)."""
    cands = [i for i, m in enumerate(ms) if ok(i, m)]
    if not cands:
        return None
    return cands[len(cands) - 1 - draw(st.integers(0, len(cands) - 1))]


def _pick_float(
    draw: Any, st: Any, ms: Sequence[Meta], ok: Callable[[int, Meta], bool] = _is_float
) -> int:
    """:func:`_pick` among values that always exist (the inputs are floats)."""
    i = _pick(draw, st, ms, ok)
    assert i is not None
    return i


def _fits(*shapes: tuple[int, ...]) -> tuple[int, ...] | None:
    try:
        s = bshape(*shapes)
    except ValueError:
        return None
    return s if math.prod(s) <= MAX_ELEMS else None


def _params(**kw: Any) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted(kw.items()))


def _draw_unary(draw: Any, st: Any, ms: list[Meta], kind: str, form: int) -> list[Node] | None:
    a = _pick_float(draw, st, ms)
    fn = draw(st.sampled_from(UNARY_FNS))
    m = ms[a]
    guard, c = "none", 0.0
    if fn in GUARDED:
        guard = draw(st.sampled_from(("abs", "max", "where", "none")))
        c = draw(st.sampled_from(GUARD_CONSTS))
        if guard == "none" and m.lo <= 1e-3:
            guard = "abs"
    if fn in MODELS and m.hi > MODELS[fn].max_input:
        return None
    return [Node("unary", (("v", a),), _params(fn=fn, guard=guard, c=c, form=form))]


def _draw_binary(draw: Any, st: Any, ms: list[Meta], kind: str, form: int) -> list[Node] | None:
    a = _pick_float(draw, st, ms)
    fn = draw(st.sampled_from(BINARY_FNS))
    if draw(st.integers(0, 3)) == 0:
        b: tuple[str, Any] = ("c", draw(st.sampled_from(CONSTS)))
        if fn == "div" and b[1] == 0:
            b = ("c", 2.0)
        if draw(st.integers(0, 5)) == 0 and ms[0].shape:  # x0.shape[d] or len(x0)
            b = ("s", (0, draw(st.integers(0, len(ms[0].shape) - 1))))
    else:
        bi = _pick(
            draw, st, ms, lambda i, m: _is_float(i, m) and _fits(m.shape, ms[a].shape) is not None
        )
        if bi is None:
            return None
        b = ("v", bi)
    args: tuple[tuple[str, Any], ...] = (("v", a), b)
    if b[0] == "c" and fn != "div" and draw(st.integers(0, 3)) == 0:
        args = (b, ("v", a))
    guard, c = "none", 0.0
    if fn == "div" and b[0] == "v":
        guard = draw(st.sampled_from(("abs", "max", "none")))
        c = draw(st.sampled_from(GUARD_CONSTS))
        bm = ms[b[1]]
        if guard == "none" and not (bm.lo > 1e-2 or bm.hi < -1e-2):
            guard = "abs"
    return [Node("binary", args, _params(fn=fn, guard=guard, c=c, form=form))]


def _draw_compare(draw: Any, st: Any, ms: list[Meta], kind: str, form: int) -> list[Node] | None:
    """A compare followed by a ``where`` on it (``compare_where``) or mask logic (``mask``)."""
    a = _pick_float(draw, st, ms)
    pred = draw(st.sampled_from(tuple(CMP_SYM)))
    b = ("c", draw(st.sampled_from(CONSTS)))
    if draw(st.booleans()):
        bi = _pick(
            draw,
            st,
            ms,
            lambda i, m: _is_float(i, m) and i != a and _fits(m.shape, ms[a].shape) is not None,
        )
        if bi is not None:
            b = ("v", bi)
    cmp = Node("compare", (("v", a), b), _params(pred=pred))
    ms2 = [*ms, node_meta(cmp, ms)]
    ci = len(ms)
    if kind != "mask":
        return [cmp, _where_after(draw, st, ms2, ci)]
    fn = draw(st.sampled_from(("and_", "or_", "xor", "not")))
    if fn == "not":
        return [cmp, Node("logic", (("v", ci),), _params(fn=fn))]
    mi = _pick(
        draw, st, ms, lambda i, m: m.dtype == "bool" and _fits(m.shape, ms2[ci].shape) is not None
    )
    return [cmp] if mi is None else [cmp, Node("logic", (("v", mi), ("v", ci)), _params(fn=fn))]


def _draw_where(draw: Any, st: Any, ms: list[Meta], kind: str, form: int) -> list[Node] | None:
    c = _pick(draw, st, ms, lambda i, m: m.dtype == "bool")
    if c is None:
        return None
    return [_where_after(draw, st, ms, c)]


def _draw_cast(draw: Any, st: Any, ms: list[Meta], kind: str, form: int) -> list[Node] | None:
    a = _pick_float(draw, st, ms, lambda i, m: True)
    to = draw(st.sampled_from(("float16", "float32")))
    m = ms[a]
    if to == "float16" and m.dtype != "bool" and m.mag > 6e4:
        return None
    return [Node("cast", (("v", a),), _params(to=to, form=form))]


def _draw_reduce(draw: Any, st: Any, ms: list[Meta], kind: str, form: int) -> list[Node] | None:
    a = _pick(draw, st, ms, lambda i, m: _is_float(i, m) and len(m.shape) >= 1)
    if a is None:
        return None
    shape = ms[a].shape
    r = len(shape)
    opts: list[Any] = [-1, -1, -1]
    if r >= 2:
        opts += [(-2, -1), -2, -2, 0]
    if r >= 3:
        opts += [(0, r - 1), (1, 2), (0, 1)]
    opts.append(None)
    axis = draw(st.sampled_from(opts))
    fn = draw(st.sampled_from(("sum", "mean", "max", "min", "var")))
    keep = draw(st.sampled_from((True, True, False)))
    axes = axes_of(axis, r)
    cnt = math.prod(shape[i] for i in axes)
    unbiased = fn == "var" and cnt > 1 and draw(st.booleans())
    return [
        Node(
            "reduce",
            (("v", a),),
            _params(fn=fn, axis=axis, keepdim=keep, unbiased=unbiased, form=form),
        )
    ]


def _draw_reshape(draw: Any, st: Any, ms: list[Meta], kind: str, form: int) -> list[Node] | None:
    """Insert or delete a size-1 dimension."""
    a = _pick_float(draw, st, ms)
    shape = list(ms[a].shape)
    ones = [i for i, d in enumerate(shape) if d == 1]
    if ones and (draw(st.booleans()) or len(shape) >= 5):
        del shape[draw(st.sampled_from(ones))]
    else:
        shape.insert(draw(st.integers(0, len(shape))), 1)
    return [Node("reshape", (("v", a),), _params(shape=tuple(shape), form=form))]


def _draw_pattern(draw: Any, st: Any, ms: list[Meta], kind: str, form: int) -> list[Node] | None:
    """softmax, layernorm or logsumexp over the last axis."""
    a = _pick(draw, st, ms, lambda i, m: _is_float(i, m) and len(m.shape) >= 1)
    if a is None:
        return None
    params = _params(eps=draw(st.sampled_from(EPS))) if kind == "layernorm" else ()
    return [Node(kind, (("v", a),), params)]


_DRAW: dict[str, Callable[[Any, Any, list[Meta], str, int], list[Node] | None]] = {
    "unary": _draw_unary,
    "binary": _draw_binary,
    "compare_where": _draw_compare,
    "mask": _draw_compare,
    "where": _draw_where,
    "cast": _draw_cast,
    "reduce": _draw_reduce,
    "reshape": _draw_reshape,
    "softmax": _draw_pattern,
    "layernorm": _draw_pattern,
    "logsumexp": _draw_pattern,
}
"""How each of :data:`KINDS` is drawn."""


def _draw_nodes(draw: Any, st: Any, ms: list[Meta]) -> list[Node] | None:
    """One op (or a compare followed by its where / mask logic), or ``None`` if the drawn
    op is out of domain here (the caller draws again)."""
    kind = draw(st.sampled_from(KINDS))
    form = draw(st.integers(0, 5))
    nodes = _DRAW[kind](draw, st, ms, kind, form)
    if nodes is None:
        return None
    tmp = list(ms)
    for node in nodes:
        try:
            m = node_meta(node, tmp)
        except ValueError:
            return None
        if not _valid_meta(m) or math.prod(m.shape) > MAX_ELEMS:
            return None
        tmp.append(m)
    return nodes


def _where_after(draw: Any, st: Any, ms: list[Meta], c: int) -> Node:
    """``where(ms[c], a, b)`` with each branch a constant or a value broadcasting with the
    condition."""

    def operand() -> tuple[str, Any]:
        if draw(st.integers(0, 3)) == 0:
            return ("c", draw(st.sampled_from(CONSTS)))
        i = _pick(
            draw, st, ms, lambda i, m: _is_float(i, m) and _fits(m.shape, ms[c].shape) is not None
        )
        return ("c", 0.0) if i is None else ("v", i)

    return Node("where", (("v", c), operand(), operand()))
