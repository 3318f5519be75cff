"""The Numba tier of codegen: loop regions whose values are numeric arrays of static shape and
numbers become functions compiled by `numba.njit`, which the NumPy module calls (see
`select` for which regions, `kernel` for how one is written). Nothing here imports Numba: it
writes source text that does.
"""
from .kernel import DECORATOR, HELPER_DECORATOR, Kernel, build_kernel
from .select import BACKENDS, loop_regions, select_regions, why_not, worth_compiling
from .types import NotNative, may_be_0d_array

__all__ = ["BACKENDS", "DECORATOR", "HELPER_DECORATOR", "Kernel", "NotNative", "build_kernel",
           "loop_regions", "may_be_0d_array", "select_regions", "why_not", "worth_compiling"]
