"""Specialization keys, argument paths and guard plans, as plain functions."""
from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import amber
from amber import nn, ops
from amber.frontend.guards import AttrReader, Guard, resolve_path, structure
from amber.runtime.guards import GuardPlan
from amber.runtime.keys import (call_key, describe_key, key_components, persistable,
                                what_changed)
from amber.runtime.paths import make_input_gatherer, make_param_getter

scalars = st.one_of(st.booleans(), st.integers(-5, 5), st.floats(allow_nan=True, width=32),
                    st.none(), st.text(max_size=3))
args = st.lists(st.one_of(scalars, st.tuples(scalars, scalars)), max_size=4)


@settings(max_examples=50, deadline=None)
@given(args, args)
def test_keys_are_equal_exactly_when_the_values_are_the_same(a: list, b: list) -> None:
    def same(x: object, y: object) -> bool:
        if type(x) is not type(y):
            return False
        if isinstance(x, tuple):
            return len(x) == len(y) and all(map(same, x, y))
        if isinstance(x, float):
            return repr(x) == repr(y)  # nan == nan, 0.0 != -0.0
        return x == y

    equal = len(a) == len(b) and all(map(same, a, b))
    assert (call_key(tuple(a), {}) == call_key(tuple(b), {})) == equal


def test_array_keys_are_shape_and_dtype() -> None:
    x, y = np.zeros((2, 3), np.float32), np.ones((2, 3), np.float32)
    assert call_key((x,), {}) == call_key((y,), {})
    assert call_key((x,), {}) != call_key((x.astype(np.float64),), {})
    assert call_key((x,), {}) != call_key((x.T,), {})
    assert call_key((x,), {}) != call_key((), {"x": x})
    assert call_key((amber.Parameter(x),), {}) == call_key((x,), {})


def test_describe_and_persistable() -> None:
    x = np.zeros((1, 3), np.float32)
    key = call_key((x, 3, (True, None), -0.0, "a"), {"h": np.int64(2)})
    assert describe_key(key) == ("(f32[1,3], int=3, (bool=True, None), float=-0.0, "
                                 "str='a', h=i64[] scalar)")
    assert persistable(key) and not persistable(call_key((object(),), {}))
    assert math.isnan(float(describe_key(call_key((float("nan"),), {}))[7:-1]))


def test_what_changed_names_only_varying_parts() -> None:
    keys = [call_key((np.zeros(n, np.float32), 2), {}) for n in (1, 2, 3)]
    changed = what_changed([key_components(k) for k in keys])
    assert changed == ["arg 0 (f32[1], f32[2], f32[3])"]


def test_input_gatherer_follows_paths() -> None:
    assert make_input_gatherer(["0", "1"], 2) is None  # passed through untouched
    gather = make_input_gatherer(["1", "2.0", "h"], 3)
    a, b = np.zeros(1), np.ones(1)
    got = gather((None, a, (b, 7)), {"h": "hh"})
    assert got[0] is a and got[1] is b and got[2] == "hh"


class Inner(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.w = amber.Parameter(np.ones(2, np.float32))
        self.pool = ops.MaxPool(kernel_size=2, strides=2)
        self.sizes = [1, 2]


class Outer(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.inner = Inner()
        self.cells = (Inner(), Inner())


def _guard(path: str, root: nn.Cell) -> Guard:
    """The guard the frontend records when compiled code reads `self.<path>`."""
    return Guard(f"self.{path}", AttrReader(path), structure(resolve_path(root, path)))


def test_param_getter_reads_attributes_and_tuple_items() -> None:
    net = Outer()
    get = make_param_getter(net, ["inner.w", "cells.1.w"])
    assert get(net) == (net.inner.w, net.cells[1].w)


def test_guard_plan_notices_replacement_and_mutation() -> None:
    net = Outer()
    paths = ["inner", "inner.pool", "inner.sizes", "cells.0", "inner.w"]
    plan = GuardPlan([_guard(p, net) for p in paths], net)
    assert plan.holds(net) and not plan.checks  # every guard read by the snapshot
    net.inner.sizes.append(3)  # a list guarded by contents, mutated in place
    assert not plan.holds(net)
    net.inner.sizes.pop()
    assert plan.holds(net)
    net.inner.pool.attrs["stride"] = (1, 1)  # a primitive's configuration
    assert not plan.holds(net)
    fresh = Outer()
    assert not GuardPlan([_guard("inner", net)], net).holds(fresh)  # another object there


def test_guard_plan_checks_that_parameters_are_the_same_objects() -> None:
    net = Outer()
    plan = GuardPlan([_guard("inner", net)], net, ["inner.w", "cells.1.w"])
    assert plan.holds(net)
    net.cells[1].w.set_data(np.zeros(2, np.float32))  # new values, the same Parameter
    assert plan.holds(net)
    net.cells[1].w = amber.Parameter(np.zeros(2, np.float32))
    assert not plan.holds(net)
    assert GuardPlan([], net, ["inner.w"]).holds(net) and not plan.checks
    del net.inner.w
    assert not GuardPlan([], Outer(), ["inner.w"]).holds(net)  # an attribute gone: False


def test_fingerprints_name_values_the_same_way_in_every_process() -> None:
    from amber.runtime.records import fingerprint
    big = np.zeros(2000, np.float32)
    changed = big.copy()
    changed[1000] = 1  # repr would elide this element
    assert fingerprint(big) != fingerprint(changed)
    assert fingerprint((1, True)) != fingerprint((1, 1)) != fingerprint((1.0, 1))
    assert fingerprint(nn.Dense) == "type:amber.nn.basic.Dense"
    assert fingerprint(np) == "module:numpy" and fingerprint(object()) is None
    assert fingerprint([object()]) is None and fingerprint({"a": (2, 2)}) is not None
