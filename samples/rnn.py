"""An RNN cell unrolled by a data-dependent `while` loop: it steps through the sequence and stops
early once the hidden state's norm exceeds a threshold (a tensor condition).

Run `python samples/rnn.py` to build it with seed 0, run it compiled and compare with eager.
"""
from __future__ import annotations

import numpy as np

import amber
from amber import nn, ops


class EarlyStopRNN(nn.Cell):
    """h_t = tanh(W_ih x_t + b + W_hh h_{t-1}), until t == seq_len or |h_t| > threshold.

    `construct(x)` with x [seq_len, batch, input_size] returns (final hidden state, steps taken).
    """

    def __init__(self, input_size: int = 8, hidden_size: int = 16,
                 threshold: float = 3.0) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.threshold = threshold
        self.input_to_hidden = nn.Dense(input_size, hidden_size, weight_init="xavier_uniform")
        self.hidden_to_hidden = nn.Dense(hidden_size, hidden_size, weight_init="xavier_uniform",
                                         has_bias=False)

    def construct(self, x: np.ndarray) -> tuple[np.ndarray, int]:
        seq_len = x.shape[0]
        h = ops.zeros((x.shape[1], self.hidden_size), x.dtype)
        t = 0
        while t < seq_len:
            h = ops.tanh(self.input_to_hidden(x[t]) + self.hidden_to_hidden(h))
            t = t + 1
            if np.sqrt(np.sum(h * h)) > self.threshold:
                break
        return h, t


def example_inputs() -> tuple[np.ndarray, ...]:
    """A 24-step sequence (batch 2, 8 features) whose scale grows over time."""
    rng = np.random.default_rng(0)
    ramp = np.linspace(0.05, 3.0, 24, dtype=np.float32).reshape(24, 1, 1)
    return (rng.standard_normal((24, 2, 8), dtype=np.float32) * ramp,)


def main() -> None:
    """Build with seed 0, run compiled and eagerly, print the final state, the steps taken and the
    largest difference."""
    amber.set_seed(0)
    net = amber.jit(EarlyStopRNN())
    h, steps = net(*example_inputs())
    eager_h, eager_steps = net.__wrapped__.construct(*example_inputs())
    print(f"EarlyStopRNN hidden shape {h.shape}, steps {steps} of {example_inputs()[0].shape[0]}, "
          f"checksum {float(h.sum(dtype=np.float64)):.8g}")
    print(f"compiled vs eager: max abs difference {float(np.max(np.abs(h - eager_h))):.3g}, "
          f"steps {steps} vs {eager_steps}")


if __name__ == "__main__":
    main()
