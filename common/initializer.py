"""Weight initializers with MindSpore's names (`Normal`, `XavierUniform`, 'he_uniform', ...).

`initializer(init, shape, dtype)` turns a name, an `Initializer`, a number or an array into a new
array. Random draws come from amber's global generator, so they are reproducible after
`amber.set_seed(n)`.
"""
from __future__ import annotations

import math
import numbers
from typing import Any, Sequence

import numpy as np

from .seed import get_generator

Shape = tuple[int, ...]


class Initializer:
    """Base class. amber's initializers define `values(shape, rng, dtype)` (a new array); one
    written MindSpore's way defines `_initialize(self, arr)`, filling a zero array of the target
    shape and dtype in place (the zoo's `var_init.py` does). Either works everywhere: as
    `weight_init=`, in `initializer(init, shape, dtype)`, and called on an array (`init(arr)`
    fills `arr` in place and returns it)."""

    def __init__(self, **kwargs: Any) -> None:
        self._kwargs = kwargs  # NOTE: MindSpore keeps the constructor arguments here too

    def values(self, shape: Shape, rng: np.random.Generator, dtype: np.dtype) -> np.ndarray:
        """An array of `shape` from this initializer's distribution, computed in float64 when
        `dtype` is float64 and in float32 otherwise (drawing float32 is several times faster).
        For a MindSpore-style subclass: a zero array of `dtype` filled by `_initialize`."""
        if _defines_initialize(self):
            arr = np.zeros(shape, dtype)
            self._initialize(arr)
            return arr
        raise NotImplementedError(f"{type(self).__name__} defines neither values() nor "
                                  f"_initialize(arr)")

    def _initialize(self, arr: np.ndarray) -> None:
        """MindSpore's protocol: fill `arr` in place (amber's own initializers via `values`)."""
        arr[...] = self.values(arr.shape, get_generator(), arr.dtype)

    def __call__(self, arr: np.ndarray) -> np.ndarray:
        """Fill `arr` in place (MindSpore's calling convention) and return it."""
        self._initialize(arr)
        return arr

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({fields})"


def _defines_initialize(init: Initializer) -> bool:
    """True when a subclass (MindSpore style) overrides `_initialize`."""
    return type(init)._initialize is not Initializer._initialize


def _assignment(arr: np.ndarray, num: Any) -> np.ndarray:
    """MindSpore's helper for `_initialize` methods: write `num` (a number or an array of the
    same shape) into `arr` in place, a 0-d `arr` included; returns `arr`."""
    arr[...] = num
    return arr


def _fans(init: Initializer, shape: Shape) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight shaped [out, in, *kernel]."""
    if len(shape) < 2:
        raise ValueError(f"{type(init).__name__}: needs a weight shape of rank >= 2 to compute "
                         f"fan in/out, got shape {shape}")
    receptive = math.prod(shape[2:])
    return shape[1] * receptive, shape[0] * receptive


def _work(dtype: np.dtype) -> type:
    """The float type random values are drawn in for a result of `dtype`."""
    return np.float64 if np.dtype(dtype) == np.float64 else np.float32


def _normal(rng: np.random.Generator, shape: Shape, dtype: np.dtype, mean: float,
            std: float) -> np.ndarray:
    z = rng.standard_normal(size=shape, dtype=_work(dtype))
    z *= std
    z += mean
    return z


def _uniform(rng: np.random.Generator, shape: Shape, dtype: np.dtype,
             bound: float) -> np.ndarray:
    """U(-bound, bound)."""
    u = rng.random(size=shape, dtype=_work(dtype))
    u *= 2 * bound
    u -= bound
    return u


def _gain(nonlinearity: str, slope: float) -> float:
    """The recommended scale for a nonlinearity (the values He and Xavier init use)."""
    gains = {"linear": 1.0, "conv2d": 1.0, "sigmoid": 1.0, "tanh": 5.0 / 3.0,
             "relu": math.sqrt(2.0), "leaky_relu": math.sqrt(2.0 / (1.0 + slope ** 2))}
    if nonlinearity not in gains:
        raise ValueError(f"unknown nonlinearity {nonlinearity!r}; expected one of {sorted(gains)}")
    return gains[nonlinearity]


class Zero(Initializer):
    """All zeros."""

    def values(self, shape: Shape, rng: np.random.Generator, dtype: np.dtype) -> np.ndarray:
        return np.zeros(shape, dtype)


class One(Initializer):
    """All ones."""

    def values(self, shape: Shape, rng: np.random.Generator, dtype: np.dtype) -> np.ndarray:
        return np.ones(shape, dtype)


class Constant(Initializer):
    """Every element equal to `value`."""

    def __init__(self, value: float) -> None:
        self.value = value

    def values(self, shape: Shape, rng: np.random.Generator, dtype: np.dtype) -> np.ndarray:
        return np.full(shape, self.value, dtype=dtype)


class Normal(Initializer):
    """N(mean, sigma^2)."""

    def __init__(self, sigma: float = 0.01, mean: float = 0.0) -> None:
        self.sigma = sigma
        self.mean = mean

    def values(self, shape: Shape, rng: np.random.Generator, dtype: np.dtype) -> np.ndarray:
        return _normal(rng, shape, dtype, self.mean, self.sigma)


class TruncatedNormal(Initializer):
    """N(mean, sigma^2) redrawn until inside [mean + a*sigma, mean + b*sigma]."""

    def __init__(self, sigma: float = 0.01, mean: float = 0.0, a: float = -2.0,
                 b: float = 2.0) -> None:
        if not a < b:
            raise ValueError(f"TruncatedNormal: needs a < b, got a={a}, b={b}")
        self.sigma = sigma
        self.mean = mean
        self.a = a
        self.b = b

    def values(self, shape: Shape, rng: np.random.Generator, dtype: np.dtype) -> np.ndarray:
        z = rng.standard_normal(size=shape, dtype=_work(dtype))
        bad = (z < self.a) | (z > self.b)
        while bad.any():  # rejection sampling: each redraw lands inside with p >= 0.95 for +-2
            z[bad] = rng.standard_normal(size=int(bad.sum()), dtype=z.dtype)
            bad = (z < self.a) | (z > self.b)
        z *= self.sigma
        z += self.mean
        return z


class Uniform(Initializer):
    """U(-scale, scale)."""

    def __init__(self, scale: float = 0.07) -> None:
        self.scale = scale

    def values(self, shape: Shape, rng: np.random.Generator, dtype: np.dtype) -> np.ndarray:
        return _uniform(rng, shape, dtype, self.scale)


class XavierUniform(Initializer):
    """U(-b, b) with b = gain * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio)."""

    def __init__(self, gain: float = 1.0) -> None:
        self.gain = gain

    def values(self, shape: Shape, rng: np.random.Generator, dtype: np.dtype) -> np.ndarray:
        fan_in, fan_out = _fans(self, shape)
        bound = self.gain * math.sqrt(6.0 / (fan_in + fan_out))
        return _uniform(rng, shape, dtype, bound)


class XavierNormal(Initializer):
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""

    def __init__(self, gain: float = 1.0) -> None:
        self.gain = gain

    def values(self, shape: Shape, rng: np.random.Generator, dtype: np.dtype) -> np.ndarray:
        fan_in, fan_out = _fans(self, shape)
        return _normal(rng, shape, dtype, 0.0, self.gain * math.sqrt(2.0 / (fan_in + fan_out)))


def _he_config(init: Initializer, negative_slope: float, mode: str, nonlinearity: str) -> None:
    """The settings HeUniform and HeNormal share."""
    _check_mode(init, mode)
    init.negative_slope, init.mode, init.nonlinearity = negative_slope, mode, nonlinearity


def _he_gain_and_fan(init: Initializer, shape: Shape) -> tuple[float, int]:
    """(gain of the nonlinearity, fan_in or fan_out as `init.mode` says) for He init."""
    fan_in, fan_out = _fans(init, shape)
    fan = fan_in if init.mode == "fan_in" else fan_out
    return _gain(init.nonlinearity, init.negative_slope), fan


class HeUniform(Initializer):
    """U(-b, b) with b = gain * sqrt(3 / fan) (He et al., Kaiming uniform)."""

    def __init__(self, negative_slope: float = 0.0, mode: str = "fan_in",
                 nonlinearity: str = "leaky_relu") -> None:
        _he_config(self, negative_slope, mode, nonlinearity)

    def values(self, shape: Shape, rng: np.random.Generator, dtype: np.dtype) -> np.ndarray:
        gain, fan = _he_gain_and_fan(self, shape)
        bound = gain * math.sqrt(3.0 / fan)
        return _uniform(rng, shape, dtype, bound)


class HeNormal(Initializer):
    """N(0, std^2) with std = gain / sqrt(fan) (He et al., Kaiming normal)."""

    def __init__(self, negative_slope: float = 0.0, mode: str = "fan_in",
                 nonlinearity: str = "leaky_relu") -> None:
        _he_config(self, negative_slope, mode, nonlinearity)

    def values(self, shape: Shape, rng: np.random.Generator, dtype: np.dtype) -> np.ndarray:
        gain, fan = _he_gain_and_fan(self, shape)
        std = gain / math.sqrt(fan)
        return _normal(rng, shape, dtype, 0.0, std)


def _check_mode(init: Initializer, mode: str) -> None:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"{type(init).__name__}: mode must be 'fan_in' or 'fan_out', got {mode!r}")


_BY_NAME: dict[str, type[Initializer]] = {
    "zeros": Zero, "zero": Zero, "ones": One, "one": One, "normal": Normal,
    "truncatednormal": TruncatedNormal, "uniform": Uniform, "xavieruniform": XavierUniform,
    "xaviernormal": XavierNormal, "heuniform": HeUniform, "henormal": HeNormal,
}
"""Initializer names, lower-cased without underscores ('xavier_uniform' -> 'xavieruniform')."""


def _canonical_shape(shape: int | Sequence[int] | None) -> Shape:
    dims = (shape,) if isinstance(shape, int | np.integer) else tuple(shape or ())
    if not all(isinstance(d, int | np.integer) and not isinstance(d, bool) and d >= 0
               for d in dims):
        raise ValueError(f"initializer: shape must be non-negative ints, got {shape!r}")
    return tuple(int(d) for d in dims)


def _from_name(name: str) -> Initializer:
    key = name.lower().replace("_", "")
    if key not in _BY_NAME:
        names = ", ".join(repr(n) for n in ("normal", "truncated_normal", "uniform", "zeros",
                                            "ones", "xavier_uniform", "xavier_normal",
                                            "he_uniform", "he_normal"))
        raise ValueError(f"initializer: unknown name {name!r}; known names: {names}")
    return _BY_NAME[key]()


def initializer(init: Any, shape: int | Sequence[int] | None = None,
                dtype: Any = np.float32) -> np.ndarray:
    """A new array of `shape` and `dtype` from `init`: an initializer name ('normal', 'zeros',
    'xavier_uniform', ...), an `Initializer`, a Python number, or an array of that shape."""
    dtype = np.dtype(dtype)
    if isinstance(init, np.ndarray):
        if shape is not None and tuple(init.shape) != _canonical_shape(shape):
            raise ValueError(f"initializer: the given array has shape {tuple(init.shape)}, "
                             f"expected {_canonical_shape(shape)}")
        return np.array(init, dtype=dtype)
    dims = _canonical_shape(shape)
    if isinstance(init, str):
        init = _from_name(init)
    elif isinstance(init, numbers.Number) and not isinstance(init, bool):
        init = Constant(init)
    elif isinstance(init, type) and issubclass(init, Initializer):
        init = init()
    if not isinstance(init, Initializer):
        raise TypeError(f"initializer: init must be a name, an Initializer, a number or an array, "
                        f"got {type(init).__name__}")
    return init.values(dims, get_generator(), dtype).astype(dtype, copy=False)
