"""Optimizers: MindSpore's update formulas (checked against float64 references written here from
MindSpore's documented kernels), eager equal to compiled, parameter groups, learning-rate forms,
the weight-decay filter, and clear errors for bad arguments."""
from __future__ import annotations

import numpy as np
import pytest

import amber
from amber import nn


def make_params(seed: int = 0) -> list[nn.Parameter]:
    rng = np.random.default_rng(seed)
    shapes = {"fc.weight": (3, 4), "fc.bias": (3,), "bn.gamma": (3,), "bn.beta": (3,)}
    return [nn.Parameter(rng.standard_normal(s).astype(np.float32), name)
            for name, s in shapes.items()]


def gradients(step: int, params: list[nn.Parameter]) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(100 + step)
    return tuple(rng.standard_normal(p.shape).astype(np.float32) for p in params)


# -- float64 references of MindSpore's kernels ---------------------------------------------------

def ref_sgd(p, gs, lrs, momentum=0.0, dampening=0.0, wd=(), nesterov=False):
    p = [x.astype(np.float64) for x in p]
    v = [np.zeros_like(x) for x in p]
    for t, (grads, lr) in enumerate(zip(gs, lrs)):
        for i, g in enumerate(grads):
            g = g.astype(np.float64) + (wd[i] * p[i] if wd else 0.0)
            if momentum > 0:
                v[i] = g if t == 0 else momentum * v[i] + (1 - dampening) * g
                g = g + momentum * v[i] if nesterov else v[i]
            p[i] = p[i] - lr * g
    return p


def ref_momentum(p, gs, lrs, momentum, wd=(), nesterov=False):
    p = [x.astype(np.float64) for x in p]
    v = [np.zeros_like(x) for x in p]
    for grads, lr in zip(gs, lrs):
        for i, g in enumerate(grads):
            g = g.astype(np.float64) + (wd[i] * p[i] if wd else 0.0)
            v[i] = momentum * v[i] + g
            p[i] = p[i] - (g * lr + v[i] * momentum * lr if nesterov else lr * v[i])
    return p


def ref_adam(p, gs, lrs, b1=0.9, b2=0.999, eps=1e-8, wd=(), nesterov=False, amsgrad=False):
    p = [x.astype(np.float64) for x in p]
    m = [np.zeros_like(x) for x in p]
    v = [np.zeros_like(x) for x in p]
    vmax = [np.zeros_like(x) for x in p]
    for t, (grads, lr) in enumerate(zip(gs, lrs), start=1):
        lr_t = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        for i, g in enumerate(grads):
            g = g.astype(np.float64) + (wd[i] * p[i] if wd else 0.0)
            m[i] = b1 * m[i] + (1 - b1) * g
            v[i] = b2 * v[i] + (1 - b2) * g * g
            vmax[i] = np.maximum(vmax[i], v[i])
            num = b1 * m[i] + (1 - b1) * g if nesterov else m[i]
            p[i] = p[i] - lr_t * num / (np.sqrt(vmax[i] if amsgrad else v[i]) + eps)
    return p


def run_once_per_step(make_opt, steps: int, compiled: bool) -> list[np.ndarray]:
    params = make_params()
    opt = make_opt(params)
    call = amber.jit(opt) if compiled else opt
    for t in range(steps):
        out = call(gradients(t, params))
        assert out is True or bool(out)
    return [np.array(p) for p in params]


WD = (0.01, 0.01, 0.0, 0.0)  # no decay on gamma and beta: MindSpore's default filter
CASES = {
    "sgd": (lambda ps: nn.SGD(ps, 0.1), lambda p, g: ref_sgd(p, g, [0.1] * len(g))),
    "sgd-momentum-dampening-wd": (
        lambda ps: nn.SGD(ps, 0.05, momentum=0.9, dampening=0.2, weight_decay=0.01),
        lambda p, g: ref_sgd(p, g, [0.05] * len(g), 0.9, 0.2, WD)),
    "sgd-nesterov": (
        lambda ps: nn.SGD(ps, 0.05, momentum=0.8, nesterov=True),
        lambda p, g: ref_sgd(p, g, [0.05] * len(g), 0.8, nesterov=True)),
    "momentum": (lambda ps: nn.Momentum(ps, 0.1, 0.9, weight_decay=0.01),
                 lambda p, g: ref_momentum(p, g, [0.1] * len(g), 0.9, WD)),
    "momentum-nesterov": (lambda ps: nn.Momentum(ps, 0.1, 0.9, use_nesterov=True),
                          lambda p, g: ref_momentum(p, g, [0.1] * len(g), 0.9, nesterov=True)),
    "adam": (lambda ps: nn.Adam(ps, 0.01), lambda p, g: ref_adam(p, g, [0.01] * len(g))),
    "adam-wd-nesterov": (
        lambda ps: nn.Adam(ps, 0.01, beta1=0.8, beta2=0.99, eps=1e-6, weight_decay=0.01,
                           use_nesterov=True),
        lambda p, g: ref_adam(p, g, [0.01] * len(g), 0.8, 0.99, 1e-6, WD, nesterov=True)),
    "adam-amsgrad": (lambda ps: nn.Adam(ps, 0.01, use_amsgrad=True),
                     lambda p, g: ref_adam(p, g, [0.01] * len(g), amsgrad=True)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_updates_follow_mindspore_formulas_eager_and_compiled(case):
    make_opt, reference = CASES[case]
    steps = 4
    start = [np.array(p) for p in make_params()]
    expected = reference(start, [gradients(t, start) for t in range(steps)])
    eager = run_once_per_step(make_opt, steps, compiled=False)
    compiled = run_once_per_step(make_opt, steps, compiled=True)
    for e, c, r in zip(eager, compiled, expected):
        np.testing.assert_allclose(e, r, rtol=2e-5, atol=2e-6)
        np.testing.assert_array_equal(c, e)  # the same NumPy operations, in the same order
        assert c.dtype == np.float32


def test_compiled_update_is_in_place_and_unrolled():
    params = make_params()
    opt = nn.Momentum(params, 0.1, 0.9)
    ids = [id(p) for p in params]
    call = amber.jit(opt)
    call(gradients(0, params))
    assert [id(p) for p in opt.parameters] == ids
    assert not np.all(opt.moments[0] == 0)  # the state was written in place
    code = call.code
    assert "for " not in code and "while " not in code  # one statement group per parameter
    assert code.count("moments_") >= len(params)


def test_param_groups_have_their_own_lr_and_weight_decay():
    def make(ps):
        return nn.SGD([{"params": ps[:2], "lr": 0.5, "weight_decay": 0.1},
                       {"params": ps[2:]}], learning_rate=0.1, weight_decay=0.0)
    start = [np.array(p) for p in make_params()]
    grads = [gradients(t, start) for t in range(3)]
    first = ref_sgd(start[:2], [g[:2] for g in grads], [0.5] * 3, wd=(0.1, 0.1))
    second = ref_sgd(start[2:], [g[2:] for g in grads], [0.1] * 3)
    for compiled in (False, True):
        got = run_once_per_step(make, 3, compiled)
        for g, r in zip(got, first + second):
            np.testing.assert_allclose(g, r, rtol=2e-5, atol=2e-6)


def test_group_weight_decay_applies_to_gamma_and_beta_when_asked():
    params = make_params()
    opt = nn.SGD([{"params": params, "weight_decay": 0.1}])
    assert opt.weight_decay == (0.1, 0.1, 0.1, 0.1)
    plain = nn.SGD(make_params(), weight_decay=0.1)
    assert plain.weight_decay == (0.1, 0.1, 0.0, 0.0)


def test_order_params_sets_the_update_order():
    params = make_params()
    order = [params[3], params[0], params[2], params[1]]
    opt = nn.SGD([{"params": params[:2]}, {"params": params[2:], "lr": 0.2},
                  {"order_params": order}], 0.1)
    assert list(opt.parameters) == order
    assert opt.group_of == (1, 0, 1, 0)


@pytest.mark.parametrize("form", ["list", "tuple", "array", "schedule-fn"])
def test_learning_rate_per_step(form):
    rates = [0.1, 0.05, 0.02, 0.01]
    lr = {"list": rates, "tuple": tuple(rates), "array": np.array(rates, np.float32),
          "schedule-fn": nn.piecewise_constant_lr([1, 2, 3, 4], rates)}[form]
    start = [np.array(p) for p in make_params()]
    expected = ref_sgd(start, [gradients(t, start) for t in range(4)], rates)
    for compiled in (False, True):
        params = make_params()
        opt = nn.SGD(params, lr)
        call = amber.jit(opt) if compiled else opt
        for t in range(4):
            call(gradients(t, params))
        assert opt.global_step[0] == 4 and opt.global_step.dtype == np.int32
        for p, r in zip(params, expected):
            np.testing.assert_allclose(p, r, rtol=2e-5, atol=2e-6)
        before = [np.array(p) for p in params]
        with pytest.raises(ValueError, match="learning rate was given for 4 steps"):
            call(gradients(4, params))
        for p, b in zip(params, before):
            np.testing.assert_array_equal(p, b)  # nothing written past the last rate


@pytest.mark.parametrize("schedule,formula", [
    (lambda: nn.ExponentialDecayLR(0.1, 0.9, 2), lambda s: 0.1 * 0.9 ** (s / 2)),
    (lambda: nn.ExponentialDecayLR(0.1, 0.9, 2, is_stair=True),
     lambda s: 0.1 * 0.9 ** (s // 2)),
    (lambda: nn.NaturalExpDecayLR(0.1, 0.5, 2), lambda s: 0.1 * np.exp(-0.5 * s / 2)),
    (lambda: nn.InverseDecayLR(0.1, 0.5, 2), lambda s: 0.1 / (1 + 0.5 * s / 2)),
    (lambda: nn.CosineDecayLR(0.01, 0.1, 3),
     lambda s: 0.01 + 0.045 * (1 + np.cos(np.pi * min(s, 3) / 3))),
    (lambda: nn.PolynomialDecayLR(0.1, 0.01, 3, 2.0),
     lambda s: 0.09 * (1 - min(s, 3) / 3) ** 2 + 0.01),
    (lambda: nn.WarmUpLR(0.1, 3), lambda s: 0.1 * min(s, 3) / 3),
])
def test_schedules_give_each_steps_rate(schedule, formula):
    rates = [formula(s) for s in range(5)]
    start = [np.array(p) for p in make_params()]
    expected = ref_sgd(start, [gradients(t, start) for t in range(5)], rates)
    for compiled in (False, True):
        params = make_params()
        opt = nn.SGD(params, schedule())
        call = amber.jit(opt) if compiled else opt
        for t in range(5):
            call(gradients(t, params))
        for p, r in zip(params, expected):
            np.testing.assert_allclose(p, r, rtol=2e-5, atol=2e-6)


def test_dynamic_lr_functions_match_mindspore_docs():
    # The examples printed in MindSpore's documentation of each function.
    assert nn.piecewise_constant_lr([2, 5, 10], [0.1, 0.05, 0.01]) == \
        [0.1, 0.1, 0.05, 0.05, 0.05, 0.01, 0.01, 0.01, 0.01, 0.01]
    np.testing.assert_allclose(nn.exponential_decay_lr(0.1, 0.9, 6, 2, 1),
                               [0.1, 0.1, 0.09, 0.09, 0.081, 0.081])
    np.testing.assert_allclose(nn.natural_exp_decay_lr(0.1, 0.9, 6, 2, 2, True),
                               [0.1, 0.1, 0.1, 0.1, 0.016529888822158657,
                                0.016529888822158657])
    np.testing.assert_allclose(nn.inverse_decay_lr(0.1, 0.5, 6, 1, 1, True),
                               [0.1, 0.06666666666666667, 0.05, 0.04, 0.03333333333333333,
                                0.028571428571428574])
    np.testing.assert_allclose(nn.cosine_decay_lr(0.01, 0.1, 6, 2, 2),
                               [0.1, 0.1, 0.055, 0.055, 0.01, 0.01])
    np.testing.assert_allclose(nn.polynomial_decay_lr(0.1, 0.01, 6, 2, 2, 0.5),
                               [0.1, 0.1, 0.07363961030678928, 0.07363961030678928, 0.01, 0.01])
    np.testing.assert_allclose(nn.warmup_lr(0.1, 6, 2, 2), [0.0, 0.0, 0.05, 0.05, 0.1, 0.1])
    with pytest.raises(ValueError, match="milestone must increase"):
        nn.piecewise_constant_lr([3, 2], [0.1, 0.2])
    with pytest.raises(ValueError, match="total_step must be a positive int"):
        nn.exponential_decay_lr(0.1, 0.9, 0, 1, 1)


def test_fixed_learning_rate_is_a_parameter_users_can_change():
    params = make_params()
    opt = nn.SGD(params, 0.1)
    assert isinstance(opt.learning_rate, nn.Parameter) and opt.learning_rate.shape == ()
    call = amber.jit(opt)
    call(gradients(0, params))
    opt.learning_rate.set_data(np.float32(0.0))
    before = [np.array(p) for p in params]
    call(gradients(1, params))
    assert call.stats.specializations == 1  # a new rate is data, not a recompile
    for p, b in zip(params, before):
        np.testing.assert_array_equal(p, b)


def test_state_is_named_like_mindspore_and_not_trainable():
    params = make_params()
    adam = nn.Adam(params)
    names = {p.name for _, p in adam.parameters_and_names()}
    assert {"beta1_power", "beta2_power", "learning_rate", "moment1.fc.weight",
            "moment2.bn.beta"} <= names
    assert all(not p.requires_grad for p in (*adam.moment1, *adam.moment2, adam.beta1_power))
    sgd = nn.SGD(make_params(), [0.1, 0.2], momentum=0.9)
    names = {p.name for _, p in sgd.parameters_and_names()}
    assert {"accum.fc.weight", "global_step", "learning_rate"} <= names


@pytest.mark.parametrize("make,error,match", [
    (lambda ps: nn.SGD([]), ValueError, "params is empty"),
    (lambda ps: nn.SGD([ps[0], ps[1], ps[0]]), ValueError,
     "parameter 'fc.weight' is given twice"),
    (lambda ps: nn.SGD([{"params": ps[:2]}, {"params": ps[1:]}]), ValueError, "given twice"),
    (lambda ps: nn.SGD([np.ones(3)]), TypeError, r"params\[0\] is a ndarray, not a Parameter"),
    (lambda ps: nn.SGD(ps[0]), TypeError, "params must be a list"),
    (lambda ps: nn.SGD(ps, "0.1"), TypeError, "learning_rate must be a float"),
    (lambda ps: nn.SGD(ps, None), TypeError, "learning_rate must be a float"),
    (lambda ps: nn.SGD(ps, True), TypeError, "learning_rate must be a float"),
    (lambda ps: nn.SGD(ps, -0.1), ValueError, "learning_rate must be a finite number >= 0"),
    (lambda ps: nn.SGD(ps, float("nan")), ValueError, "learning_rate must be a finite"),
    (lambda ps: nn.SGD(ps, ["a"]), TypeError, "one number per step"),
    (lambda ps: nn.SGD(ps, np.ones((2, 2))), ValueError, "non-empty 1-D array"),
    (lambda ps: nn.SGD([{"params": ps, "lr": "x"}]), TypeError, "group 0 'lr' must be a float"),
    (lambda ps: nn.SGD([{"params": ps, "rate": 1}]), ValueError, "unknown keys"),
    (lambda ps: nn.SGD(ps, weight_decay=-1.0), ValueError, "weight_decay must be a finite"),
    (lambda ps: nn.SGD(ps, momentum=-0.5), ValueError, "momentum must be in"),
    (lambda ps: nn.SGD(ps, nesterov=True), ValueError, "nesterov=True needs momentum > 0"),
    (lambda ps: nn.Momentum(ps, 0.1, "0.9"), TypeError, "momentum must be a float"),
    (lambda ps: nn.Adam(ps, beta1=1.0), ValueError, "beta1 must be in"),
    (lambda ps: nn.Adam(ps, eps=0.0), ValueError, "eps must be in"),
    (lambda ps: nn.SGD([nn.Parameter(np.ones(2, np.int32), "i")]), TypeError,
     "only floating-point parameters"),
])
def test_bad_arguments_are_clear_errors(make, error, match):
    with pytest.raises(error, match=match):
        make(make_params())


def test_wrong_gradients_are_rejected_before_any_update():
    params = make_params()
    opt = nn.SGD(params)
    before = [np.array(p) for p in params]
    grads = gradients(0, params)
    with pytest.raises(ValueError, match="expected a tuple of 4 gradients"):
        opt(grads[:3])
    with pytest.raises(ValueError, match=r"the gradient of 'fc.bias' has shape \(4,\), "
                                         r"expected \(3,\)"):
        opt((grads[0], np.ones(4, np.float32), *grads[2:]))
    for p, b in zip(params, before):
        np.testing.assert_array_equal(p, b)
