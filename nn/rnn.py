"""Recurrent layers `RNN` and `LSTM` (multi-layer, optionally bidirectional), written as explicit
Python loops over time steps so the compiler sees ordinary `for` loops.

Parameters use the MindSpore/PyTorch names `weight_ih_l{k}`, `weight_hh_l{k}`, `bias_ih_l{k}`,
`bias_hh_l{k}` (suffix `_reverse` for the backward direction); LSTM gates are ordered i, f, g, o.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import ops
from ..common.initializer import Uniform
from .basic import Dropout
from .cell import Cell, Parameter
from .checks import (check_bool, check_choice, check_dim, check_float, check_int, check_rank,
                     layer_error, make_param, static_shape)


class _RNNBase(Cell):
    """Shared configuration and parameters; `_gates` is how many hidden-size blocks a step
    computes (1 for RNN, 4 for LSTM)."""
    _gates = 1

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 has_bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False) -> None:
        super().__init__()
        layer = self.cls_name
        self.input_size = check_int(layer, "input_size", input_size)
        self.hidden_size = check_int(layer, "hidden_size", hidden_size)
        self.num_layers = check_int(layer, "num_layers", num_layers)
        self.has_bias = check_bool(layer, "has_bias", has_bias)
        self.batch_first = check_bool(layer, "batch_first", batch_first)
        self.dropout = check_float(layer, "dropout", dropout, 0.0, 1.0, include_high=False)
        self.bidirectional = check_bool(layer, "bidirectional", bidirectional)
        self.num_directions = 2 if self.bidirectional else 1
        self.dropout_flag = self.dropout > 0.0 and self.num_layers > 1
        if self.dropout_flag:
            self.dropout_op = Dropout(p=self.dropout)
        # per layer, per direction: (reverse, weight_ih, weight_hh, bias_ih, bias_hh)
        self.layer_params = tuple(self._make_layer(k) for k in range(self.num_layers))

    def _make_layer(self, k: int) -> tuple[tuple[Any, ...], ...]:
        gate_size = self._gates * self.hidden_size
        in_size = self.input_size if k == 0 else self.hidden_size * self.num_directions
        init = Uniform(1.0 / math.sqrt(self.hidden_size))
        directions = []
        for reverse in (False, True)[:self.num_directions]:
            suffix = f"_l{k}" + ("_reverse" if reverse else "")
            weights: list[Parameter | None] = [
                self._param(init, (gate_size, in_size), "weight_ih" + suffix),
                self._param(init, (gate_size, self.hidden_size), "weight_hh" + suffix)]
            for name in ("bias_ih", "bias_hh"):
                weights.append(self._param(init, (gate_size,), name + suffix)
                               if self.has_bias else None)
            directions.append((reverse, *weights))
        return tuple(directions)

    def _param(self, init: Any, shape: tuple[int, ...], name: str) -> Parameter:
        param = make_param(self.cls_name, name, init, shape, name)
        setattr(self, name, param)
        return param

    def _gates_of(self, x_t: np.ndarray, h: np.ndarray, w_ih: np.ndarray, w_hh: np.ndarray,
                  b_ih: np.ndarray | None, b_hh: np.ndarray | None) -> np.ndarray:
        """x_t @ w_ih.T + h @ w_hh.T (+ biases): every gate's pre-activation at once."""
        return ops.dense(x_t, w_ih, b_ih) + ops.dense(h, w_hh, b_hh)

    def _join_directions(self, outputs: list[np.ndarray], k: int) -> np.ndarray:
        """The next layer's input: both directions side by side, dropout between layers."""
        if self.bidirectional:
            x = ops.concat(outputs, -1)
        else:
            x = outputs[0]
        if self.dropout_flag and k < self.num_layers * self.num_directions:
            x = self.dropout_op(x)
        return x

    def _state_shape(self, x: Any) -> tuple[int, ...] | None:
        shape = static_shape(x)
        if shape is None:
            return None
        batch = shape[0] if self.batch_first else shape[1]
        return (self.num_layers * self.num_directions, batch, self.hidden_size)

    def _check_x(self, x: Any) -> None:
        shape = check_rank(self, x, (3,))
        check_dim(self, shape, -1, self.input_size, "input last dim (input_size)")

    def _check_state(self, x: Any, h: Any, what: str) -> None:
        expected, shape = self._state_shape(x), static_shape(h)
        if expected is None or shape is None:
            return
        if len(shape) != 3 or any(isinstance(a, int) and isinstance(b, int) and a != b
                                  for a, b in zip(shape, expected)):
            raise layer_error(self, f"{what} has shape {shape}, expected {expected}")

    def extend_repr(self) -> str:
        text = (f"input_size={self.input_size}, hidden_size={self.hidden_size}, "
                f"num_layers={self.num_layers}")
        if self.batch_first:
            text += ", batch_first=True"
        return text + (", bidirectional=True" if self.bidirectional else "")


class RNN(_RNNBase):
    """Elman RNN: h_t = act(x_t @ W_ih.T + b_ih + h_{t-1} @ W_hh.T + b_hh), act tanh or relu.

    `construct(x, hx=None)` -> (output, h_n): output [seq, batch, dirs * hidden] ([batch, seq,
    ...] when batch_first), h_n [layers * dirs, batch, hidden]."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", has_bias: bool = True, batch_first: bool = False,
                 dropout: float = 0.0, bidirectional: bool = False) -> None:
        super().__init__(input_size, hidden_size, num_layers, has_bias, batch_first, dropout,
                         bidirectional)
        self.nonlinearity = check_choice("RNN", "nonlinearity", nonlinearity, ("tanh", "relu"))

    def check_inputs(self, x: Any, hx: Any = None) -> None:
        self._check_x(x)
        if hx is not None:
            self._check_state(x, hx, "hx")

    def construct(self, x: np.ndarray, hx: np.ndarray | None = None) -> Any:
        if self.batch_first:
            x = ops.transpose(x, (1, 0, 2))
        if hx is None:
            hx = ops.zeros((self.num_layers * self.num_directions, x.shape[1],
                            self.hidden_size), x.dtype)
        finals = []
        k = 0
        for layer in self.layer_params:
            outputs = []
            for weights in layer:
                out, h = self._scan(x, hx[k], weights)
                outputs.append(out)
                finals.append(h)
                k = k + 1
            x = self._join_directions(outputs, k)
        if self.batch_first:
            x = ops.transpose(x, (1, 0, 2))
        return x, ops.stack(finals, 0)

    def _scan(self, x: np.ndarray, h: np.ndarray, weights: tuple[Any, ...]) -> Any:
        reverse, w_ih, w_hh, b_ih, b_hh = weights
        if reverse:
            x = x[::-1]
        outputs = []
        for t in range(x.shape[0]):
            pre = self._gates_of(x[t], h, w_ih, w_hh, b_ih, b_hh)
            if self.nonlinearity == "tanh":
                h = ops.tanh(pre)
            else:
                h = ops.relu(pre)
            outputs.append(h)
        out = ops.stack(outputs, 0)
        if reverse:
            out = out[::-1]
        return out, h


class LSTM(_RNNBase):
    """Long short-term memory: gates i, f, g, o; c_t = f * c + i * g, h_t = o * tanh(c_t).

    `construct(x, hx=None)` with hx = (h_0, c_0) -> (output, (h_n, c_n)), shapes as for RNN."""
    _gates = 4

    def check_inputs(self, x: Any, hx: Any = None) -> None:
        self._check_x(x)
        if hx is not None:
            if not isinstance(hx, tuple | list) or len(hx) != 2:
                raise layer_error(self, "hx must be a tuple (h_0, c_0)")
            self._check_state(x, hx[0], "h_0")
            self._check_state(x, hx[1], "c_0")

    def construct(self, x: np.ndarray, hx: Any = None) -> Any:
        if self.batch_first:
            x = ops.transpose(x, (1, 0, 2))
        if hx is None:
            h0 = ops.zeros((self.num_layers * self.num_directions, x.shape[1], self.hidden_size),
                           x.dtype)
            c0 = h0
        else:
            h0 = hx[0]
            c0 = hx[1]
        final_h = []
        final_c = []
        k = 0
        for layer in self.layer_params:
            outputs = []
            for weights in layer:
                out, h, c = self._scan(x, h0[k], c0[k], weights)
                outputs.append(out)
                final_h.append(h)
                final_c.append(c)
                k = k + 1
            x = self._join_directions(outputs, k)
        if self.batch_first:
            x = ops.transpose(x, (1, 0, 2))
        return x, (ops.stack(final_h, 0), ops.stack(final_c, 0))

    def _scan(self, x: np.ndarray, h: np.ndarray, c: np.ndarray,
              weights: tuple[Any, ...]) -> Any:
        reverse, w_ih, w_hh, b_ih, b_hh = weights
        if reverse:
            x = x[::-1]
        n = self.hidden_size
        outputs = []
        for t in range(x.shape[0]):
            gates = self._gates_of(x[t], h, w_ih, w_hh, b_ih, b_hh)
            i = ops.sigmoid(gates[:, :n])
            f = ops.sigmoid(gates[:, n:2 * n])
            g = ops.tanh(gates[:, 2 * n:3 * n])
            o = ops.sigmoid(gates[:, 3 * n:])
            c = f * c + i * g
            h = o * ops.tanh(c)
            outputs.append(h)
        out = ops.stack(outputs, 0)
        if reverse:
            out = out[::-1]
        return out, h, c
