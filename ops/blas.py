"""NumPy's own OpenBLAS, called directly where one call does what NumPy needs two for: an
optimizer's `param -= a @ b` as one GEMM that adds the product into `param` (alpha -1, beta 1)
instead of writing the product to memory and reading it back for the subtraction. For an MLP's
784x256 first layer that saves ~20% of the update (`benchmarks/step_levers.py`).

The GEMM is the one `np.matmul` calls (`cblas_sgemm`/`cblas_dgemm`, row major, its transposes
and leading dimensions), so the product's sums are the same, and alpha -1 is exact. Up to
BLAS's block of the inner dimension (128 in NumPy 1.26's OpenBLAS, more in NumPy 2's) the
result is NumPy's bit for bit; beyond it BLAS adds each block's partial sums into `param` in
turn, where NumPy subtracts their total: the results then agree to float precision (as
`scale_operand`'s reassociation does), not bit for bit. Codegen copies these helpers into
generated modules by source; without an OpenBLAS NumPy exposes (MKL, Accelerate), or for arrays
BLAS cannot take as they are, the kernel runs NumPy's two steps.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .parallel import openblas_libraries


def cblas_gemm(char: str) -> Any:
    """NumPy's OpenBLAS `cblas_<char>gemm` (`char` "s" or "d") with its ctypes signature
    (pointers as 64-bit integers), or None where there is none."""
    import ctypes
    scalar = {"s": ctypes.c_float, "d": ctypes.c_double}[char]
    for lib in openblas_libraries():
        for name, index in ((f"scipy_cblas_{char}gemm64_", ctypes.c_int64),
                            (f"cblas_{char}gemm64_", ctypes.c_int64),
                            (f"cblas_{char}gemm", ctypes.c_int)):
            gemm = getattr(lib, name, None)
            if gemm is not None and ctypes.sizeof(ctypes.c_void_p) == 8:
                address = ctypes.c_int64
                gemm.restype = None
                gemm.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, index, index, index,
                                 scalar, address, index, address, index, scalar, address, index]
                return gemm
    return None


def blas_gemms() -> dict[str, Any]:
    """The process's GEMMs by dtype char ("f", "d"; None where not found), looked up once and
    shared by every generated module through `sys.modules`."""
    import sys
    shared = sys.modules.get("_amber_blas_gemms")
    if shared is None:
        import types
        fresh = types.ModuleType("_amber_blas_gemms")
        fresh.gemms = {"f": cblas_gemm("s"), "d": cblas_gemm("d")}
        shared = sys.modules.setdefault("_amber_blas_gemms", fresh)
    return shared.gemms


def gemm_operand(x: np.ndarray, transpose: bool) -> tuple[int, int] | None:
    """(BLAS transpose flag, leading dimension) of a 2-D operand used as `x.T` if `transpose`
    else `x`, when BLAS can read it in place (C- or Fortran-ordered); else None."""
    if x.flags.c_contiguous:
        return (112 if transpose else 111), max(1, x.shape[1])
    if x.flags.f_contiguous:  # NOTE: a transposed view of a row-major array
        return (111 if transpose else 112), max(1, x.shape[0])
    return None


def subtract_product_kernel(param: np.ndarray, a: np.ndarray, b: np.ndarray, *,
                            transpose_a: bool = False,
                            transpose_b: bool = False) -> np.ndarray:
    """`param -= a @ b` in place (`a.T`, `b.T` where asked), for 2-D operands of param's dtype;
    hands `param` on. One BLAS call for float32 and float64 where the arrays fit it (see the
    module docstring), else NumPy's product and subtraction."""
    gemm = None
    if param.dtype.char in "fd" and param.dtype == a.dtype == b.dtype:
        gemm = blas_gemms().get(param.dtype.char)
    m, n = param.shape
    k = a.shape[0] if transpose_a else a.shape[1]
    fits = gemm is not None and param.flags.c_contiguous and param.flags.writeable and \
        m > 1 and n > 1 and k > 1 and \
        not np.may_share_memory(param, a) and not np.may_share_memory(param, b)
    flags_a = gemm_operand(a, transpose_a) if fits else None
    flags_b = gemm_operand(b, transpose_b) if flags_a else None
    if flags_b is None or np.may_share_memory(a, b):  # NOTE: NumPy takes `x.T @ x` elsewhere
        product = np.matmul(a.T if transpose_a else a, b.T if transpose_b else b)
        return np.subtract(param, product, out=param)
    gemm(101, flags_a[0], flags_b[0], m, n, k, -1.0, a.ctypes.data, flags_a[1],
         b.ctypes.data, flags_b[1], 1.0, param.ctypes.data, n)
    return param


HELPERS = (openblas_libraries, cblas_gemm, blas_gemms, gemm_operand, subtract_product_kernel)
"""What a generated module calling `subtract_product_kernel` needs."""
