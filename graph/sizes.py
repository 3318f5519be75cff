"""Where a graph's symbolic sizes come from, and what a call must satisfy: each symbol is read
from the first input whose type has it as a whole dim (`x: f32[N,1,32,32]` gives `N =
x.shape[0]`); every other dim of every input is a relation the call's arguments must meet
(`y: i32[N]` must have `y.shape[0] == N`). Interpreter, codegen and the runtime all bind sizes
through this module.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ..ops.symbolic import Sym, substitute
from .types import Tensor, Type


@dataclass(frozen=True)
class Source:
    """`symbol` is `inputs[input].shape[axis]`."""
    symbol: str
    input: int
    axis: int


def plain_symbol(d: Any) -> str | None:
    """The name of a dim that is one symbol (`N`), else None (`N+1`, ints, '?')."""
    if isinstance(d, Sym) and d.const == 0 and len(d.terms) == 1:
        atom, coef = d.terms[0]
        if isinstance(atom, str) and coef == 1:
            return atom
    return None


def size_sources(types: Sequence[Type]) -> dict[str, Source]:
    """Each symbol of the input types, with the first input and axis holding it as a dim."""
    sources: dict[str, Source] = {}
    for i, t in enumerate(types):
        if isinstance(t, Tensor):
            for axis, d in enumerate(t.shape):
                name = plain_symbol(d)
                if name is not None and name not in sources:
                    sources[name] = Source(name, i, axis)
    return sources


def bind_sizes(types: Sequence[Type], args: Sequence[Any],
               names: Sequence[str] | None = None) -> dict[str, int]:
    """The symbols' sizes in a call with `args` (arrays for the tensor inputs), after checking
    every input's rank and dims against its type; ValueError naming the argument and the
    expected relation when they do not hold."""
    sources = size_sources(types)
    sizes = {s.symbol: _shape(args[s.input])[s.axis] for s in sources.values()
             if len(_shape(args[s.input])) == len(types[s.input].shape)}
    for i, (t, arg) in enumerate(zip(types, args)):
        if isinstance(t, Tensor):
            check_argument(t, _shape(arg), sizes, sources,
                           names[i] if names is not None else f"input {i}", names)
    return sizes


def check_argument(t: Tensor, shape: tuple[int, ...], sizes: dict[str, int],
                   sources: dict[str, Source], name: str,
                   names: Sequence[str] | None = None) -> None:
    """ValueError unless an argument of `shape` fits type `t` under `sizes`."""
    if len(shape) != t.rank:
        raise ValueError(f"argument {name}: expected a {t.rank}-d array of shape "
                         f"{describe_shape(t.shape)}, got shape {tuple(shape)}")
    for axis, (want, got) in enumerate(zip(t.shape, shape)):
        if isinstance(want, str):  # UNKNOWN: anything goes
            continue
        value = substitute(want, sizes)
        if isinstance(value, int) and value != got:
            raise ValueError(f"argument {name}: expected shape {describe_shape(t.shape)}, got "
                             f"{tuple(shape)}: axis {axis} must be "
                             f"{_relation(want, value, sizes, sources, names)}")


def describe_shape(shape: Sequence[Any]) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


def _relation(want: Any, value: int, sizes: dict[str, int], sources: dict[str, Source],
              names: Sequence[str] | None) -> str:
    if isinstance(want, int):
        return str(want)
    where = []
    for symbol in sorted(sizes):
        source = sources.get(symbol)
        if source is not None:
            arg = names[source.input] if names is not None else f"input {source.input}"
            where.append(f"{symbol} = {arg}.shape[{source.axis}] = {sizes[symbol]}")
    return f"{want} = {value} ({', '.join(where)})"


def _shape(arg: Any) -> tuple[int, ...]:
    return tuple(getattr(arg, "shape", ()))
