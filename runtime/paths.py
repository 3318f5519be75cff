"""Reading values by path: parameters by attribute path from the instance (`fc1.weight`), and
array inputs by argument path from a call (`0`, `2.1`, a keyword name). Each set of paths becomes
one small generated function, so gathering costs one call, not a walk per value."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ..frontend.guards import path_step


def _no_params(instance: Any) -> tuple[()]:
    return ()


def make_param_getter(instance: Any, paths: Sequence[str]) -> Callable[[Any], tuple[Any, ...]]:
    """A function `instance -> (param, ...)` reading each dotted path; numeric parts index a
    tuple or list when `instance` holds one there, any part keys a dict held there, else a part
    names an attribute (`layers.0`, `heads.mean`)."""
    if not paths:
        return _no_params
    exprs = [access(instance, path)[0] for path in paths]
    return eval(f"lambda s: ({', '.join(exprs)},)", {})  # noqa: S307 (built from checked parts)


def access(instance: Any, path: str) -> tuple[str, Any]:
    """(expression over `s` reading dotted `path` from `instance`, the value found there)."""
    expr, obj = "s", instance
    for part in path.split(".") if path else ():  # NOTE: "" is the instance itself
        kind, obj = path_step(obj, part)
        if kind == "index":
            expr = f"{expr}[{int(part)}]"
        elif kind == "key":  # layers kept in a dict: `heads.mean.weight`
            expr = f"{expr}[{part!r}]"
        elif part.isidentifier():
            expr = f"{expr}.{part}"
        else:  # an attribute name that is not an identifier, e.g. a Sequential's "0"
            expr = f"getattr({expr}, {part!r})"
    return expr, obj


def make_input_gatherer(paths: Sequence[str], nargs: int) -> Callable[[tuple, dict], tuple] | None:
    """A function `(args, kwargs) -> (array, ...)` following the graph's input paths ("0",
    "2.1" for an element of a tuple argument, a keyword name, "0.key" for an item of a dict
    argument, "1.fc.weight" for a parameter of a cell argument); None when the inputs are just
    the positional arguments in order (the common case, passed through untouched)."""
    if list(paths) == [str(i) for i in range(nargs)]:
        return None
    exprs = []
    for path in paths:
        head, *rest = path.split(".")
        if head.isdigit():
            expr = f"a[{int(head)}]"
        elif head.isidentifier():
            expr = f"k[{head!r}]"
        else:
            raise ValueError(f"bad input path {path!r}")
        if not all(rest):
            raise ValueError(f"bad input path {path!r}")
        for part in rest:
            if all(p.isdigit() for p in rest):
                expr += f"[{int(part)}]"
            else:  # NOTE: under a dict or a cell argument: looked up on each call
                expr = f"_part({expr}, {part!r})"
        exprs.append(expr)
    body = ", ".join(exprs) + ("," if exprs else "")
    return eval(f"lambda a, k: ({body})", {"_part": _part})  # noqa: S307 (checked parts)


def _part(obj: Any, part: str) -> Any:
    """Item or attribute `part` of a dict or cell argument, as `access` reads it; a Parameter
    is passed as the plain array sharing its memory."""
    value = path_step(obj, part)[1]
    return value.view(np.ndarray) if type(value) is not np.ndarray and isinstance(
        value, np.ndarray) else value
