"""Functions codegen itself copies into generated modules, beside the ops' helpers."""
from __future__ import annotations


def unbound_local(name: str) -> None:
    """Raise what Python raises on reading a local variable that no path has assigned."""
    raise UnboundLocalError(
        f"cannot access local variable {name!r} where it is not associated with a value")


PRELUDE = (unbound_local,)
"""Every prelude function; their names are reserved in every generated module."""
