"""Activations and special functions MindSpore's model zoo uses beyond the basic elementwise ops:
`relu6`, `leaky_relu`, `softplus` and `erf`. Elementwise with NumPy broadcasting; the result
dtype is what the kernel gives on samples (float32 stays float32)."""
from __future__ import annotations

from typing import Any

import numpy as np

from . import onnx as ox
from .batching import broadcast_batch
from .elementwise import checked, elementwise_infer, primitive, spell
from .opdef import GradContext, OpDef


def relu6_kernel(x: np.ndarray) -> np.ndarray:
    """min(max(x, 0), 6)."""
    return np.clip(x, 0, 6)


def leaky_relu_kernel(x: np.ndarray, alpha: float) -> np.ndarray:
    """x where x > 0, alpha * x elsewhere (for alpha >= 0 this is MindSpore's max(alpha*x, x),
    or min(alpha*x, x) when alpha > 1)."""
    return np.where(x > 0, x, x * alpha)


def softplus_kernel(x: np.ndarray, beta: float, threshold: float) -> np.ndarray:
    """log(1 + exp(beta * x)) / beta, computed without overflow; x itself where
    beta * x > threshold (MindSpore's linear regime)."""
    scaled = x * beta
    return np.where(scaled > threshold, x, np.logaddexp(0, scaled) / beta)


def erf_kernel(x: np.ndarray) -> np.ndarray:
    """The error function, from float64 arithmetic: its Maclaurin series up to |x| = 3 (60 terms;
    rounding error below 1e-12 there), beyond that 1 - erfc(|x|) from erfc's asymptotic series
    (erfc(3) is 2.2e-5 and the terms kept leave an error below 1e-9). Result in the input's float
    dtype (float64 for integers and Python numbers)."""
    a = np.asarray(x, dtype=np.float64)
    z = np.minimum(np.abs(a), 3.0)
    z2 = z * z
    term = z.copy()
    total = z.copy()
    for n in range(1, 60):
        term = term * -z2 / n
        total = total + term / (2 * n + 1)
    series = total * 1.1283791670955126  # 2 / sqrt(pi)
    big = np.maximum(np.abs(a), 3.0)
    inv = 1.0 / (2.0 * big * big)
    tail = np.exp(-big * big) / (big * 1.7724538509055159) * (
        1.0 - inv + 3.0 * inv ** 2 - 15.0 * inv ** 3 + 105.0 * inv ** 4)
    value = np.sign(a) * np.where(np.abs(a) < 3.0, series, 1.0 - tail)
    if not isinstance(x, np.ndarray | np.generic):
        return float(value)
    result = value.astype(x.dtype if x.dtype.kind == "f" else np.float64)
    return result if isinstance(x, np.ndarray) else result[()]


# ---- gradient rules -------------------------------------------------------------------------

def _relu6_grad(ad: GradContext) -> tuple[Any, ...]:
    x = ad.input(0)
    return (ad.g * (x > 0) * (x < 6),)


def _leaky_relu_grad(ad: GradContext) -> tuple[Any, ...]:
    return (ad.op("select", ad.input(0) > 0, ad.g, ad.g * ad.attrs["alpha"]),)


def _softplus_grad(ad: GradContext) -> tuple[Any, ...]:
    beta, threshold = ad.attrs["beta"], ad.attrs["threshold"]
    scaled = ad.input(0) * beta
    return (ad.op("select", scaled > threshold, ad.g, ad.g * ad.op("sigmoid", scaled)),)


def _erf_grad(ad: GradContext) -> tuple[Any, ...]:
    x = ad.input(0)
    return (ad.g * 1.1283791670955126 * ad.op("exp", -(x * x)),)


# ---- ops ------------------------------------------------------------------------------------

def _elementwise(name: str, fn: Any, emit: str, attrs: dict[str, Any] | None = None,
                 inplace: str | None = None, grad: Any = None,
                 helpers: tuple[Any, ...] = (), onnx: Any = None) -> OpDef:
    infer = elementwise_infer(name, fn, numeric=True)
    return OpDef(name, ("x",), kernel=checked(name, fn, infer), infer=infer, emit=emit,
                 attrs=attrs or {}, elementwise=True, fresh=True, inplace=inplace, grad=grad,
                 helpers=helpers, onnx=onnx, batch=broadcast_batch)


relu6 = _elementwise("relu6", relu6_kernel, "np.clip(x, 0, 6)",
                     inplace="np.clip(x, 0, 6, out=out)", grad=_relu6_grad, onnx=ox.relu6)
leaky_relu = _elementwise("leaky_relu", leaky_relu_kernel, "np.where(x > 0, x, x * alpha)",
                          attrs={"alpha": 0.2}, grad=_leaky_relu_grad, onnx=ox.leaky_relu)
softplus = _elementwise("softplus", softplus_kernel, "softplus_kernel(x, beta, threshold)",
                        attrs={"beta": 1, "threshold": 20}, grad=_softplus_grad,
                        helpers=(softplus_kernel,))
erf = _elementwise("erf", erf_kernel, "erf_kernel(x)", grad=_erf_grad, helpers=(erf_kernel,),
                   onnx=ox.floats("Erf"))

OPS = (relu6, leaky_relu, softplus, erf)

FUNCTIONS = (
    spell("relu6", relu6, "x"),
    spell("leaky_relu", leaky_relu, "input, alpha=0.2", input="x"),
    spell("softplus", softplus, "input, beta=1, threshold=20", input="x"),
    spell("erf", erf, "input", input="x"),
)
PRIMITIVES = (
    primitive("ReLU6", relu6),
    primitive("Softplus", softplus),
    primitive("Erf", erf),
)
