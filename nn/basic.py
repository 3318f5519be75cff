"""Basic layers: `Dense`, `Flatten`, `Dropout`, `Pad` and `Embedding` (MindSpore names and
defaults). Configuration lives in plain attributes; `construct` is compilable Python."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import ops
from ..common.seed import spawn_generator
from .activation import get_activation
from .cell import Cell
from .checks import (check_bool, check_choice, check_dim, check_float, check_int, check_rank,
                     layer_error, make_param, static_shape)


class Dense(Cell):
    """Fully connected layer: `activation(x @ weight.T + bias)`, weight shaped [out, in]."""

    def __init__(self, in_channels: int, out_channels: int, weight_init: Any = "normal",
                 bias_init: Any = "zeros", has_bias: bool = True,
                 activation: str | Cell | None = None) -> None:
        super().__init__()
        self.in_channels = check_int("Dense", "in_channels", in_channels)
        self.out_channels = check_int("Dense", "out_channels", out_channels)
        self.has_bias = check_bool("Dense", "has_bias", has_bias)
        self.weight = make_param("Dense", "weight_init", weight_init,
                                 (self.out_channels, self.in_channels), "weight")
        self.bias = None
        if self.has_bias:
            self.bias = make_param("Dense", "bias_init", bias_init, (self.out_channels,), "bias")
        if isinstance(activation, str):
            activation = get_activation(activation)
        if activation is not None and not isinstance(activation, Cell):
            raise TypeError(f"Dense: activation must be a name, a Cell or None, got "
                            f"{type(activation).__name__}")
        self.activation = activation
        self.activation_flag = activation is not None

    def check_inputs(self, x: Any) -> None:
        shape = static_shape(x)
        if shape is not None and not shape:
            raise layer_error(self, "input must have rank >= 1, got a 0-d value")
        check_dim(self, shape, -1, self.in_channels, "input last dim")

    def construct(self, x: np.ndarray) -> np.ndarray:
        x = ops.dense(x, self.weight, self.bias)
        if self.activation_flag:
            x = self.activation(x)
        return x

    def extend_repr(self) -> str:
        text = f"in_channels={self.in_channels}, out_channels={self.out_channels}"
        if not self.has_bias:
            text += ", has_bias=False"
        if self.activation_flag:
            text += f", activation={self.activation.cls_name}"
        return text


class Flatten(Cell):
    """Collapse every dim but the first: [N, ...] -> [N, prod(...)]."""

    def check_inputs(self, x: Any) -> None:
        shape = static_shape(x)
        if shape is not None and not shape:
            raise layer_error(self, "input must have rank >= 1, got a 0-d value")

    def construct(self, x: np.ndarray) -> np.ndarray:
        return ops.flatten(x)


class Dropout(Cell):
    """Zero each element with probability `p` and scale the rest by 1/(1-p) while training;
    the identity otherwise. `keep_prob` (MindSpore 1.x) is the older spelling of `1 - p`.

    Each Dropout owns a random generator seeded from amber's global seed (`amber.set_seed`)."""

    def __init__(self, keep_prob: float = 0.5, p: float | None = None) -> None:
        super().__init__()
        if p is None:
            keep_prob = check_float("Dropout", "keep_prob", keep_prob, 0.0, 1.0,
                                    include_low=False)
            p = 1.0 - keep_prob
        else:
            p = check_float("Dropout", "p", p, 0.0, 1.0, include_high=False)
        self.p = p
        self.keep_prob = 1.0 - p
        self.generator = spawn_generator()

    def construct(self, x: np.ndarray) -> np.ndarray:
        if self.training:
            return ops.dropout(x, self.generator, p=self.p)
        return x

    def extend_repr(self) -> str:
        return f"p={self.p}"


class Pad(Cell):
    """Pad each dim by `paddings[d] = (before, after)`; mode 'CONSTANT' (zeros), 'REFLECT'
    (mirror without the edge) or 'SYMMETRIC' (mirror with the edge)."""

    def __init__(self, paddings: tuple[tuple[int, int], ...], mode: str = "CONSTANT") -> None:
        super().__init__()
        if not isinstance(paddings, tuple | list) or not all(
                isinstance(p, tuple | list) and len(p) == 2 for p in paddings):
            raise TypeError(f"Pad: paddings must be a tuple of (before, after) pairs, got "
                            f"{paddings!r}")
        self.paddings = tuple(tuple(check_int("Pad", "paddings", v, 0) for v in pair)
                              for pair in paddings)
        self.mode = check_choice("Pad", "mode", mode.upper() if isinstance(mode, str) else mode,
                                 ("CONSTANT", "REFLECT", "SYMMETRIC"))
        # NOTE: np.pad, as amber.ops has no functional pad with modes (its Pad is constant only)
        self.np_mode = self.mode.lower()

    def check_inputs(self, x: Any) -> None:
        shape = check_rank(self, x, (len(self.paddings),))
        limit = {"CONSTANT": None, "REFLECT": 1, "SYMMETRIC": 0}[self.mode]
        for axis, (dim, pads) in enumerate(zip(shape or (), self.paddings)):
            if limit is not None and isinstance(dim, int) and max(pads) > dim - limit:
                raise layer_error(self, f"padding {pads} of axis {axis} is too large for size "
                                        f"{dim} in mode {self.mode} (input shape {shape})")

    def construct(self, x: np.ndarray) -> np.ndarray:
        return np.pad(x, self.paddings, mode=self.np_mode)

    def extend_repr(self) -> str:
        return f"paddings={self.paddings}, mode={self.mode}"


class Embedding(Cell):
    """Look rows of `embedding_table` [vocab_size, embedding_size] up by integer ids."""

    def __init__(self, vocab_size: int, embedding_size: int, use_one_hot: bool = False,
                 embedding_table: Any = "normal", dtype: Any = np.int32,
                 padding_idx: int | None = None) -> None:
        super().__init__()
        self.vocab_size = check_int("Embedding", "vocab_size", vocab_size)
        self.embedding_size = check_int("Embedding", "embedding_size", embedding_size)
        self.use_one_hot = check_bool("Embedding", "use_one_hot", use_one_hot)
        self.dtype = np.dtype(dtype)  # the ids' dtype in MindSpore; any integer ids work here
        self.padding_idx = padding_idx
        table = make_param("Embedding", "embedding_table", embedding_table,
                           (self.vocab_size, self.embedding_size), "embedding_table")
        if padding_idx is not None:
            check_int("Embedding", "padding_idx", padding_idx, minimum=0)
            if padding_idx >= vocab_size:
                raise ValueError(f"Embedding: padding_idx must be < vocab_size={vocab_size}, "
                                 f"got {padding_idx}")
            table[padding_idx] = 0.0
        self.embedding_table = table

    def check_inputs(self, ids: Any) -> None:
        dtype = getattr(ids, "dtype", None)
        if dtype is not None and np.dtype(dtype).kind not in "iu":
            raise TypeError(f"Embedding({self.extend_repr()}): ids must be integers, got "
                            f"{np.dtype(dtype)}")
        # NOTE: out-of-range ids are caught by the embedding op itself, eagerly and compiled

    def construct(self, ids: np.ndarray) -> np.ndarray:
        return ops.embedding(ids, self.embedding_table)

    def extend_repr(self) -> str:
        return f"vocab_size={self.vocab_size}, embedding_size={self.embedding_size}"
