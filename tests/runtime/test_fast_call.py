"""The call's fast path stays exact: the last call's binding is taken only for the same instance
and an equal key (its guards still checked), and the guard plan leaves out only the items of
pinned tuples. Every change a user can make between calls is seen: attribute writes (also
through `object.__setattr__`), replaced methods and tuples, list mutation, other instances."""
from __future__ import annotations

import gc
import weakref

import numpy as np

import amber
from amber import nn
from amber.frontend.guards import AttrReader, Guard, SameObjectReader, resolve_path, structure
from amber.runtime.guards import GuardPlan


@amber.jit
class Scale(nn.Cell):
    def __init__(self, factor: float) -> None:
        super().__init__()
        self.w = amber.Parameter(np.full(3, factor, np.float32))
        self.shift = 1.0
        self.steps = [1.0]

    def construct(self, x):
        y = x * self.w + self.shift
        for s in self.steps:
            y = y * s
        return y


def eager(net: Scale, x: np.ndarray) -> np.ndarray:
    return net.construct(x)


def test_the_last_binding_is_taken_only_for_its_instance_and_key() -> None:
    a, b = Scale(2.0), Scale(3.0)
    x3, x2 = np.ones(3, np.float32), np.ones((2, 3), np.float32)
    for _ in range(2):  # NOTE: alternating instances and keys: no call reuses the last binding
        for net, x in ((a, x3), (b, x3), (a, x2), (b, x2), (b, x2), (a, x3)):
            np.testing.assert_array_equal(net(x), eager(net, x))


def subtract_shift(self, x):
    return x - self.shift


def test_changes_between_calls_are_seen_on_the_fast_path() -> None:
    class Replaced(Scale):
        pass

    net, x = Replaced(2.0), np.ones(3, np.float32)
    changes = [
        lambda: setattr(net, "shift", 5.0),
        lambda: object.__setattr__(net, "shift", 7.0),  # NOTE: no Cell.__setattr__ runs
        lambda: net.steps.append(0.5),  # a list mutated in place
        lambda: object.__setattr__(net, "w", amber.Parameter(np.full(3, 4.0, np.float32))),
        lambda: setattr(Replaced, "construct", subtract_shift),  # a replaced method
    ]
    net(x), net(x)
    for change in changes:
        change()
        np.testing.assert_array_equal(net(x), eager(net, x))
        np.testing.assert_array_equal(net(x), eager(net, x))  # ... and again, fast


def test_a_dead_instance_leaves_no_parameters_behind() -> None:
    net = Scale(2.0)
    net(np.ones(3, np.float32))
    weight = weakref.ref(net.w)
    del net
    gc.collect()
    gc.collect()  # NOTE: the guard plan's function and its namespace are a cycle of their own
    assert weight() is None


class Tuples(nn.Cell):
    def __init__(self, params: tuple) -> None:
        super().__init__()
        self.a = amber.Parameter(np.ones(2, np.float32), name="a")
        self.b = amber.Parameter(np.ones(2, np.float32), name="b")
        self.pair = params


class Rotating(tuple):
    """A tuple whose `t[i]` is not what it holds at i: its items stay checked one by one."""
    offset = 0

    def __getitem__(self, i):
        return tuple.__getitem__(self, (i + Rotating.offset) % len(self))


def _same(path: str, first: str, root: nn.Cell) -> Guard:
    return Guard(f"self.{path} is self.{first}", SameObjectReader(path, first), True)


def _attr(path: str, root: nn.Cell) -> Guard:
    return Guard(f"self.{path}", AttrReader(path), structure(resolve_path(root, path)))


def test_pinned_tuples_need_no_item_checks_but_a_replaced_tuple_is_seen() -> None:
    net = Tuples(())
    net.pair = amber.ParameterTuple([net.a, net.b])
    guards = [_attr("pair", net), _same("pair.0", "a", net), _same("pair.1", "b", net)]
    plan = GuardPlan(guards, net)
    assert plan.holds(net)
    object.__setattr__(net, "pair", amber.ParameterTuple([net.b, net.a]))
    assert not plan.holds(net)  # the tuple is pinned by identity
    class Plain(amber.ParameterTuple):
        pass

    net.pair = Plain([net.a, net.b])
    plan = GuardPlan(guards, net)
    assert plan.holds(net)
    Plain.__getitem__ = Rotating.__getitem__  # NOTE: the same tuple now reads (b, a)
    assert not plan.holds(net)
    net.pair = Rotating((net.a, net.b))
    plan = GuardPlan(guards, net)
    assert plan.holds(net)
    Rotating.offset = 1
    try:
        assert not plan.holds(net)
    finally:
        Rotating.offset = 0


def test_a_train_step_sees_its_optimizer_replaced() -> None:
    amber.set_seed(0)
    backbone = nn.Dense(4, 3)
    loss = nn.WithLossCell(backbone, nn.SoftmaxCrossEntropyWithLogits(sparse=True,
                                                                      reduction="mean"))
    step = amber.jit(nn.TrainOneStepCell(loss, nn.SGD(backbone.trainable_params(), 0.1)))
    x, y = np.ones((2, 4), np.float32), np.array([0, 2], np.int32)
    step(x, y), step(x, y)
    before = backbone.weight.asnumpy().copy()
    object.__setattr__(step.optimizer, "learning_rate",
                       amber.Parameter(np.array(0.0, np.float32), name="learning_rate"))
    step(x, y)
    np.testing.assert_array_equal(backbone.weight.asnumpy(), before)  # rate 0: no update


def test_a_helper_rebound_or_given_new_code_is_seen_by_the_place_check(tmp_path) -> None:
    """The guard on where an inlined helper is defined is spelled as identities (the module,
    the name's object, its code); every way to change that place still recompiles."""
    import importlib
    import sys

    (tmp_path / "placed_helpers.py").write_text(
        "import amber\n\n\ndef helper(x):\n    return x * 2\n\n\n"
        "def other(x):\n    return x * 3\n\n\n"
        "@amber.jit\ndef run(x):\n    return helper(x) + 1\n")
    sys.path.insert(0, str(tmp_path))
    try:
        mod = importlib.import_module("placed_helpers")
        x = np.ones(2, np.float32)

        def check(expected: float) -> None:
            np.testing.assert_array_equal(mod.run(x), np.full(2, expected, np.float32))
            np.testing.assert_array_equal(mod.run(x), np.full(2, expected, np.float32))
        check(3.0)
        assert not any(b.plan.checks for s in mod.run._states.values()
                       for b in s.bindings.values())  # NOTE: read by the plan, not in full
        original = mod.helper
        mod.helper = mod.other  # the name bound to another def
        check(4.0)
        mod.helper = original
        check(3.0)
        original.__code__ = mod.other.__code__  # the same function, other code
        check(4.0)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("placed_helpers", None)


def test_the_one_frame_fast_call_falls_back_for_what_it_does_not_check() -> None:
    """The last binding's generated fast call (runtime/fast_path.py) takes plain arrays of the
    key's shapes and very dtype objects only; an equal dtype that is another object, keywords,
    a subclass or another arity take the general path, which gives the same results; an error
    in the generated code still names the user's line."""
    net, x = Scale(2.0), np.ones(3, np.float32)
    net(x), net(x)
    runner = type(net).__call__
    assert runner._fast is not None
    other_dtype = np.dtype(np.float32, metadata={"unit": "m"})  # NOTE: equal, not identical
    assert other_dtype == x.dtype and other_dtype is not x.dtype
    for arg in (x.view(other_dtype), x.view(amber.Tensor), x[None], x.astype(np.float64), x):
        np.testing.assert_array_equal(net(arg), eager(net, arg))
    np.testing.assert_array_equal(net(x=x), eager(net, x))
    specializations = runner.stats.specializations
    net(x), net(x.view(other_dtype))
    assert runner.stats.specializations == specializations


def test_an_error_on_the_fast_call_names_the_users_line() -> None:
    class Picky(nn.Cell):
        def construct(self, x, i):
            return x[i] * 2.0

    fast = amber.jit(Picky())
    x, i = np.ones(3, np.float32), np.array(1)
    fast(x, i), fast(x, i)
    try:
        fast(x, np.array(5))
    except IndexError as err:
        assert any("compiled by amber" in note for note in getattr(err, "__notes__", []))
    else:
        raise AssertionError("an index out of range did not raise")
