"""No stale compile-time values (issue 10, item 4).

A ``@jit`` function keys on what the operator actually read while it was compiled: globals,
closure cells, attributes of global objects (classes, instances, namespaces, user modules) and
default arguments. Changing any of them in the same process makes the next call use the new
value (a recompile, or the cache entry for the new value), and the disk cache key changes with
them too. Each test checks real values, before and after.
"""

from __future__ import annotations

import types

import numpy as np
import pytest

import pyasc_mlir as pa
from pyasc_mlir import cache, driver

X = np.linspace(-2, 2, 7 * 33, dtype=np.float32).reshape(7, 33)
DESC = [pa.TensorDesc(X.shape, "float32")]


class Cfg:
    scale = 2.0


class Plain:
    """An object with the default ``repr`` (its address): only its attributes tell values
    apart."""


OBJ = Plain()
OBJ.scale = 2.0
OBJ.sub = Plain()
OBJ.sub.shift = 1.0
NS = types.SimpleNamespace(scale=2.0)


def by_class_attr(x):
    return x * Cfg.scale


def by_instance_attr(x):
    return x * OBJ.scale


def by_nested_attr(x):
    return x + OBJ.sub.shift


def by_namespace(x):
    return x * NS.scale


def by_default(x, s=2.0):
    return x * s


def by_kwdefault(x, *, s=2.0):
    return x * s


def _helper(x, s=2.0):
    return x * s


def via_helper_default(x):
    return _helper(x)


@pytest.fixture(autouse=True)
def restore():
    saved = (
        Cfg.scale,
        OBJ.scale,
        OBJ.sub.shift,
        NS.scale,
        by_default.__defaults__,
        dict(by_kwdefault.__kwdefaults__),
        _helper.__defaults__,
    )
    yield
    (
        Cfg.scale,
        OBJ.scale,
        OBJ.sub.shift,
        NS.scale,
        by_default.__defaults__,
        by_kwdefault.__kwdefaults__,
        _helper.__defaults__,
    ) = saved


def close(got: np.ndarray, want: np.ndarray) -> None:
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)


def test_class_attribute():
    f = pa.jit(by_class_attr)
    close(f(X), X * 2)
    Cfg.scale = 11.0
    close(f(X), X * 11)
    Cfg.scale = 2.0
    close(f(X), X * 2)


def test_instance_attribute_of_an_object_with_the_default_repr():
    f = pa.jit(by_instance_attr)
    close(f(X), X * 2)
    OBJ.scale = 11.0
    close(f(X), X * 11)


def test_nested_attribute():
    f = pa.jit(by_nested_attr)
    close(f(X), X + 1)
    OBJ.sub.shift = 5.0
    close(f(X), X + 5)


def test_namespace_attribute():
    f = pa.jit(by_namespace)
    close(f(X), X * 2)
    NS.scale = 3.0
    close(f(X), X * 3)


def test_changed_defaults():
    f = pa.jit(by_default)
    close(f(X), X * 2)
    by_default.__defaults__ = (5.0,)
    close(f(X), X * 5)
    close(f(X, 4.0), X * 4)  # an explicit value is unaffected


def test_changed_kwdefaults():
    f = pa.jit(by_kwdefault)
    close(f(X), X * 2)
    by_kwdefault.__kwdefaults__["s"] = 6.0  # in place
    close(f(X), X * 6)


def test_changed_default_of_an_inlined_helper():
    f = pa.jit(via_helper_default)
    close(f(X), X * 2)
    _helper.__defaults__ = (9.0,)
    close(f(X), X * 9)


def test_jit_object_whose_first_compile_was_a_cache_hit():
    """A second ``@jit`` object of the same function gets its operator from the cache (no
    frontend run of its own) and still notices a change."""
    close(pa.jit(by_class_attr)(X), X * 2)
    g = pa.jit(by_class_attr)
    close(g(X), X * 2)
    Cfg.scale = 7.0
    close(g(X), X * 7)


def test_disk_key_follows_the_values_read():
    opts = {"platform": "910B2", "double_buffer": True, "name": "f"}
    k1 = cache.cache_key(by_instance_attr, DESC, opts)
    OBJ.scale = 11.0
    k2 = cache.cache_key(by_instance_attr, DESC, opts)
    OBJ.scale = 2.0
    assert k1 != k2 and cache.cache_key(by_instance_attr, DESC, opts) == k1
    OBJ.sub.shift = 4.0
    assert cache.cache_key(by_nested_attr, DESC, opts) != cache.cache_key(
        by_instance_attr, DESC, opts
    )
    k3 = cache.cache_key(by_nested_attr, DESC, opts)
    OBJ.sub.shift = 1.0
    assert cache.cache_key(by_nested_attr, DESC, opts) != k3


def test_new_jit_object_after_a_change_does_not_get_the_old_disk_entry():
    close(pa.jit(by_instance_attr)(X), X * 2)
    OBJ.scale = 11.0
    driver.clear_memory_cache()
    close(pa.jit(by_instance_attr)(X), X * 11)


def test_unrelated_change_does_not_recompile():
    f = pa.jit(by_class_attr)
    close(f(X), X * 2)
    assert f.compilations == 1
    OBJ.scale = 3.0  # not read by by_class_attr
    NS.scale = 4.0
    close(f(X), X * 2)
    assert f.compilations == 1
    Cfg.scale = 3.0
    close(f(X), X * 3)
    assert f.compilations == 2


def _factor():
    return Cfg.scale * 2.0


def by_python_helper(x):
    return x * _factor()  # _factor() runs in Python at compile time


def test_value_read_by_a_helper_run_in_python_at_compile_time():
    f = pa.jit(by_python_helper)
    close(f(X), X * 4)
    Cfg.scale = 5.0
    close(f(X), X * 10)
