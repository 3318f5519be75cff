"""The call path of a jit object's last binding in one Python frame.

A call normally builds its key (`keys.call_key`), compares it with the last call's, checks the
guards and calls the entry, each step a Python frame of its own. Right after a training step's
matrix products have pushed the interpreter's code and objects out of the caches, every frame
and object touched costs several times its tight-loop figure (`benchmarks/dispatch.py`, cold).
`fast_call` generates, once per binding, a function making the same checks straight-line for
that binding's key: the same instance, positional plain arrays of the same shapes and dtypes,
no keywords, the guard plan's test (inline when it covers every guard). Anything else returns
`MISS`, and the call takes the general path, which decides as before (so a dtype equal to the
key's but another object just takes the longer way).
"""
from __future__ import annotations

from typing import Any, Callable, Hashable

import numpy as np

from .guards import GuardPlan

MISS = object()
"""What a fast call returns when the call is not one it can make."""


def fast_call(key: Hashable, ref: Callable[[], Any], plan: GuardPlan, entry: Any,
              arrays: tuple[Any, ...]) -> Callable[[Any, tuple, dict], Any] | None:
    """`(instance, args, kwargs) -> result or MISS` for calls with call key `key` on the instance
    `ref()` whose guards `plan` checks, running `entry` on the parameters `arrays` (read through
    `entry.fn` on each call: a tier switch replaces it); None unless every argument of the key
    is a plain array."""
    if type(key) is not tuple or not all(
            type(k) is tuple and len(k) == 2 and type(k[0]) is tuple for k in key):
        return None
    # NOTE: the guard test reads `s` and `o<k>`; every other name here has a longer prefix
    env: dict[str, Any] = {"ref_": ref, "entry_": entry, "ndarray_": np.ndarray, "MISS_": MISS}
    if plan.inline is None:
        env["holds_"], guards = plan.holds, "holds_(s)"
    else:
        guards, objects = plan.inline
        env.update(objects)
    tests = []
    for i, (shape, dtype) in enumerate(key):
        env[f"shape_{i}"], env[f"dtype_{i}"] = shape, dtype
        tests.append(f"type(arg_{i}) is ndarray_ and arg_{i}.shape == shape_{i} and "
                     f"arg_{i}.dtype is dtype_{i}")
    for i, array in enumerate(arrays):
        env[f"param_{i}"] = array
    args = [f"arg_{i}" for i in range(len(key))]
    unpack = f"    {', '.join(args)}, = args\n" if args else ""
    call = ", ".join([*(f"param_{i}" for i in range(len(arrays))), *args])
    source = (f"def fast(s, args, kwargs, {', '.join(f'{n}={n}' for n in env)}):\n"
              f"    if kwargs or len(args) != {len(key)} or ref_() is not s:\n"
              "        return MISS_\n"
              f"{unpack}"
              f"    if not ({' and '.join(tests) or 'True'}):\n"
              "        return MISS_\n"
              "    try:\n"
              f"        if not ({guards}):\n"
              "            return MISS_\n"
              "    except Exception:  # an attribute is gone, a list got shorter, ...\n"
              "        return MISS_\n"
              "    try:\n"
              f"        return entry_.fn({call})\n"
              "    except Exception as exc:\n"
              "        entry_.annotate(exc)\n"
              "        raise\n")
    namespace = dict(env)
    exec(compile(source, "<amber fast call>", "exec"), namespace)  # noqa: S102 (see above)
    return namespace["fast"]
