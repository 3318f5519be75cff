"""Running an unchanged MindSpore model file on amber.

amber's modules sit where MindSpore's do (`amber.nn`, `amber.ops`, `amber.ops.operations`,
`amber.ops.functional`, `amber.common.initializer`, `amber.common.dtype`,
`amber.common.tensor`, `amber.common.parameter`, `amber.numpy`, `amber.context`,
`amber.train.callback`), so replacing `mindspore` by `amber` in the import lines is enough.

To leave the file itself untouched, `alias_mindspore()` makes `import mindspore...` import
amber's module of the same path, in this process only:

    import amber.compat
    amber.compat.alias_mindspore()
    import my_mindspore_model          # its `import mindspore.nn as nn` gets amber.nn

or from the shell, `python -m amber.compat my_script.py args...`. Nothing named `mindspore` is
ever installed: a real MindSpore in the same environment is unaffected, except in a process that
asked for the alias (where a real MindSpore already imported is an error instead).
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import runpy
import sys
from types import ModuleType
from typing import Any

__all__ = ["alias_mindspore", "MindSporeAlias"]

ALIAS = "mindspore"
TARGET = (__spec__.name if __spec__ else __name__).rsplit(".", 1)[0]
"""The package aliased: "amber" (also when this file runs as `python -m amber.compat`)."""


class _Existing(importlib.abc.Loader):
    """Hands out an already imported amber module under the MindSpore name (the module keeps
    its own `__spec__`, which the import system overwrites while loading)."""

    def __init__(self, module: ModuleType) -> None:
        self.module = module
        self.spec = module.__spec__

    def create_module(self, spec: Any) -> ModuleType:
        return self.module

    def exec_module(self, module: ModuleType) -> None:
        module.__spec__ = self.spec


class MindSporeAlias(importlib.abc.MetaPathFinder):
    """`mindspore.<path>` -> `amber.<path>`: the same module object under both names."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != ALIAS and not fullname.startswith(ALIAS + "."):
            return None
        real = TARGET + fullname[len(ALIAS):]
        try:
            module = importlib.import_module(real)
        except ModuleNotFoundError as err:
            if err.name is not None and (err.name == real or real.startswith(err.name + ".")):
                raise ModuleNotFoundError(
                    f"amber has no counterpart of {fullname} (imported as {real}); see the "
                    f"table in amber's docs/mindspore.md", name=fullname) from None
            raise
        return importlib.util.spec_from_loader(fullname, _Existing(module),
                                               is_package=hasattr(module, "__path__"))


def alias_mindspore() -> None:
    """Make `import mindspore[.x.y]` import `amber[.x.y]` in this process (idempotent); results
    are then Tensors as MindSpore's are, numbers included (`common.tensor.numbers_as_tensors`)."""
    if any(isinstance(f, MindSporeAlias) for f in sys.meta_path):
        return
    loaded = sys.modules.get(ALIAS)
    if loaded is not None and not getattr(loaded, "__name__", "").startswith(TARGET):
        raise RuntimeError("alias_mindspore: the real MindSpore is already imported in this "
                           "process; call alias_mindspore() before anything imports mindspore")
    sys.meta_path.insert(0, MindSporeAlias())
    # NOTE: MindSpore has no NumPy numbers: a script's `loss.asnumpy()` needs a 0-d Tensor
    importlib.import_module(f"{TARGET}.common.tensor").numbers_as_tensors()


def main(argv: list[str] | None = None) -> None:
    """`python -m amber.compat script.py [args...]`: run a MindSpore script on amber."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print("usage: python -m amber.compat SCRIPT.py [ARGS...]\n"
              "Runs SCRIPT with `import mindspore...` resolved to amber's modules.")
        raise SystemExit(0 if args else 2)
    alias_mindspore()
    sys.argv = args
    runpy.run_path(args[0], run_name="__main__")


if __name__ == "__main__":
    main()
