"""Every form of `grad`, `value_and_grad` and `GradOperation` returns MindSpore 2.x's structure
(checked element by element: a bare array is not a 1-tuple), with values equal to float64
finite differences; compiled, eager (`jit_enabled=False`), and called inside compiled code."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import amber
import numeric
from amber import nn, ops

RNG = np.random.default_rng(1)
X, Y = RNG.standard_normal(3), RNG.standard_normal(3)


class Net(nn.Cell):
    """sum(w * x * x + b * tanh(y)): two inputs, two weights, a scalar output."""

    def __init__(self) -> None:
        super().__init__()
        self.w = amber.Parameter(RNG.standard_normal(3), name="w")
        self.b = amber.Parameter(RNG.standard_normal(3), name="b")

    def construct(self, x, y):
        return (self.w * x * x + self.b * ops.tanh(y)).sum()


class WithAux(Net):
    """The same output and two auxiliary values."""

    def construct(self, x, y):
        out = (self.w * x * x + self.b * ops.tanh(y)).sum()
        return out, x * 2.0, self.w + y


class Vector(Net):
    """A non-scalar output (needs sens)."""

    def construct(self, x, y):
        return self.w * x * x + self.b * ops.tanh(y)


class NoInputs(Net):
    def construct(self):
        return (self.w * self.b).sum()


def _fd_input(net: Any, args: tuple, p: int, sens: Any = None) -> np.ndarray:
    return numeric.gradient(lambda *a: _first(net.construct(*a)), args, p, sens)


def _fd_weight(net: Any, args: tuple, w: Any, sens: Any = None) -> np.ndarray:
    return numeric.parameter_gradient(lambda *a: _first(net.construct(*a)), args, w, sens)


def _first(out: Any) -> Any:
    return out[0] if isinstance(out, tuple) else out


SENS = RNG.standard_normal(3)

# name -> (net class, how to make the gradient function, arguments, the expected structure
# as a function of (net, args) built from finite differences)
FORMS: dict[str, tuple[type, Callable[[Any], Any], tuple, Callable[[Any, tuple], Any]]] = {
    "grad-default": (Net, lambda n: amber.grad(n), (X, Y),
                     lambda n, a: _fd_input(n, a, 0)),
    "grad-int": (Net, lambda n: amber.grad(n, 1), (X, Y),
                 lambda n, a: _fd_input(n, a, 1)),
    "grad-tuple": (Net, lambda n: amber.grad(n, (0, 1)), (X, Y),
                   lambda n, a: (_fd_input(n, a, 0), _fd_input(n, a, 1))),
    "grad-tuple-of-one": (Net, lambda n: amber.grad(n, (1,)), (X, Y),
                          lambda n, a: (_fd_input(n, a, 1),)),
    "grad-weights": (Net, lambda n: amber.grad(n, None, n.trainable_params()), (X, Y),
                     lambda n, a: (_fd_weight(n, a, n.w), _fd_weight(n, a, n.b))),
    "grad-parameter-tuple": (
        Net, lambda n: amber.grad(n, None, amber.ParameterTuple(n.trainable_params())), (X, Y),
        lambda n, a: (_fd_weight(n, a, n.w), _fd_weight(n, a, n.b))),
    "grad-one-weight": (Net, lambda n: amber.grad(n, None, n.b), (X, Y),
                        lambda n, a: _fd_weight(n, a, n.b)),
    "grad-int-and-weights": (
        Net, lambda n: amber.grad(n, 0, n.trainable_params()), (X, Y),
        lambda n, a: (_fd_input(n, a, 0), (_fd_weight(n, a, n.w), _fd_weight(n, a, n.b)))),
    "grad-tuple-and-one-weight": (
        Net, lambda n: amber.grad(n, (0, 1), n.w), (X, Y),
        lambda n, a: ((_fd_input(n, a, 0), _fd_input(n, a, 1)), _fd_weight(n, a, n.w))),
    "grad-int-and-no-weights": (Net, lambda n: amber.grad(n, 0, []), (X, Y),
                                lambda n, a: (_fd_input(n, a, 0), ())),
    "grad-has-aux": (WithAux, lambda n: amber.grad(n, has_aux=True), (X, Y),
                     lambda n, a: (_fd_input(n, a, 0), n.construct(*a)[1:])),
    "grad-tuple-has-aux-weights": (
        WithAux, lambda n: amber.grad(n, (0, 1), n.trainable_params(), has_aux=True), (X, Y),
        lambda n, a: (((_fd_input(n, a, 0), _fd_input(n, a, 1)),
                       (_fd_weight(n, a, n.w), _fd_weight(n, a, n.b))), n.construct(*a)[1:])),
    "value-and-grad": (Net, lambda n: amber.value_and_grad(n), (X, Y),
                       lambda n, a: (n.construct(*a), _fd_input(n, a, 0))),
    "value-and-grad-has-aux": (
        WithAux, lambda n: amber.value_and_grad(n, 1, has_aux=True), (X, Y),
        lambda n, a: (n.construct(*a), _fd_input(n, a, 1))),
    "value-and-grad-weights": (
        Net, lambda n: amber.value_and_grad(n, None, n.trainable_params()), (X, Y),
        lambda n, a: (n.construct(*a), (_fd_weight(n, a, n.w), _fd_weight(n, a, n.b)))),
    "value-and-grad-both-has-aux": (
        WithAux, lambda n: amber.value_and_grad(n, 0, n.trainable_params(), has_aux=True),
        (X, Y), lambda n, a: (n.construct(*a), (_fd_input(n, a, 0),
                                                 (_fd_weight(n, a, n.w), _fd_weight(n, a, n.b))))),
    "gradop-default": (Net, lambda n: ops.GradOperation()(n), (X, Y),
                       lambda n, a: _fd_input(n, a, 0)),
    "gradop-get-all": (Net, lambda n: ops.GradOperation(get_all=True)(n), (X, Y),
                       lambda n, a: (_fd_input(n, a, 0), _fd_input(n, a, 1))),
    "gradop-get-by-list": (
        Net, lambda n: ops.GradOperation(get_by_list=True)(n, n.trainable_params()), (X, Y),
        lambda n, a: (_fd_weight(n, a, n.w), _fd_weight(n, a, n.b))),
    "gradop-get-by-list-one-parameter": (
        Net, lambda n: ops.GradOperation(get_by_list=True)(n, n.w), (X, Y),
        lambda n, a: _fd_weight(n, a, n.w)),
    "gradop-get-by-list-none": (Net, lambda n: ops.GradOperation(get_by_list=True)(n, None),
                                (X, Y), lambda n, a: ()),
    "gradop-both": (
        Net, lambda n: ops.GradOperation(get_all=True, get_by_list=True)(
            n, n.trainable_params()), (X, Y),
        lambda n, a: ((_fd_input(n, a, 0), _fd_input(n, a, 1)),
                      (_fd_weight(n, a, n.w), _fd_weight(n, a, n.b)))),
    "gradop-both-one-parameter": (
        Net, lambda n: ops.GradOperation(get_all=True, get_by_list=True)(n, n.b), (X, Y),
        lambda n, a: ((_fd_input(n, a, 0), _fd_input(n, a, 1)), _fd_weight(n, a, n.b))),
    "gradop-sens": (
        Vector, lambda n: ops.GradOperation(sens_param=True)(n), (X, Y, SENS),
        lambda n, a: _fd_input(n, a[:2], 0, SENS)),
    "gradop-all-list-sens": (
        Vector, lambda n: ops.GradOperation(True, True, True)(n, n.trainable_params()),
        (X, Y, SENS),
        lambda n, a: ((_fd_input(n, a[:2], 0, SENS), _fd_input(n, a[:2], 1, SENS)),
                      (_fd_weight(n, a[:2], n.w, SENS), _fd_weight(n, a[:2], n.b, SENS)))),
    "gradop-default-no-inputs": (NoInputs, lambda n: ops.GradOperation()(n), (),
                                 lambda n, a: ()),
    "gradop-get-all-no-inputs": (NoInputs, lambda n: ops.GradOperation(get_all=True)(n), (),
                                 lambda n, a: ()),
    "gradop-both-no-inputs": (
        NoInputs, lambda n: ops.GradOperation(get_all=True, get_by_list=True)(
            n, n.trainable_params()), (),
        lambda n, a: ((), (_fd_weight(n, a, n.w), _fd_weight(n, a, n.b)))),
}


class Calls(nn.Cell):
    """Calls a gradient function inside its own compiled construct."""

    def __init__(self, net: Any, gradient: Any) -> None:
        super().__init__()
        self.net = net
        self.gradient = gradient

    def construct(self, *args):
        return self.gradient(*args)


@pytest.mark.parametrize("mode", ["compiled", "eager", "inside"])
@pytest.mark.parametrize("form", sorted(FORMS))
def test_form_returns_mindsporess_structure_and_finite_differences(form: str, mode: str):
    cls, make, args, want = FORMS[form]
    net = cls()
    expected = want(net, args)
    if mode == "eager":
        amber.set_context(jit_enabled=False)
    gradient = make(net)
    got = amber.jit(Calls(net, gradient))(*args) if mode == "inside" else gradient(*args)
    numeric.close(got, expected, rtol=1e-6, atol=1e-8)
    numeric.close(gradient(*args) if mode != "inside" else got, expected, rtol=1e-6, atol=1e-8)


def test_sens_by_keyword():
    net = Vector()
    gradient = ops.GradOperation(sens_param=True)(net)
    numeric.close(gradient(X, Y, sens=SENS), gradient(X, Y, SENS), rtol=0, atol=0)


GLOBAL_NET = Net()
GLOBAL_SCALE = amber.Parameter(np.array(1.5), name="scale")


def global_forward(x, y):
    return GLOBAL_NET(x, y) * GLOBAL_SCALE - (x * y).sum(), x


@pytest.mark.parametrize("mode", ["compiled", "eager"])
def test_a_function_with_weights_of_global_cells_and_parameters(mode):
    """MindSpore 2.x's functional style: grad of a function using a model defined outside."""
    amber.set_context(jit_enabled=mode == "compiled")
    weights = [*GLOBAL_NET.trainable_params(), GLOBAL_SCALE]
    got = amber.value_and_grad(global_forward, 1, weights, has_aux=True)(X, Y)
    loss = lambda x, y: global_forward(x, y)[0]  # noqa: E731
    want = (global_forward(X, Y), (numeric.gradient(loss, (X, Y), 1),
                                   tuple(numeric.parameter_gradient(loss, (X, Y), w)
                                         for w in weights)))
    numeric.close(got, want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("bad, error", [
    (lambda n: amber.grad(n, None, None), ValueError),
    (lambda n: amber.grad(n, -1), ValueError),
    (lambda n: amber.grad(n, (0, 0)), ValueError),
    (lambda n: amber.grad(n, ()), ValueError),
    (lambda n: amber.grad(n, 1.0), TypeError),
    (lambda n: amber.grad(n, [0, 1]), TypeError),
    (lambda n: amber.grad(n, 0, [n.w, np.ones(3)]), TypeError),
    (lambda n: amber.grad(n, 0, 3), TypeError),
    (lambda n: amber.grad(n, 0, has_aux=1), TypeError),
])
def test_bad_arguments_are_refused_when_making_the_gradient_function(bad, error):
    with pytest.raises(error):
        bad(Net())
