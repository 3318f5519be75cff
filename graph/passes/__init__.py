"""The pass registry and the pipeline of each optimization level.

This is the only list of passes: an explicit name -> function table and one tuple per level.
-O0 runs nothing, -O1 the cleanups, -O2 everything (the default).
"""
from __future__ import annotations

import functools

from .. import ir
from . import (batch_loop_matmuls, cse, dce, fold_constants, fuse, fuse_loss_grad, layout, licm,
               orient_products, pair_gradients, place_gradients, place_threads, plan_memory,
               scale_operand, simplify, stack_tapes, update_in_gemm)
from .manager import Pass, PassError, PassHook, PassManager, PassReport, Step

PASSES: dict[str, Pass] = {
    "fold_constants": fold_constants.run,
    "simplify": simplify.run,
    "cse": cse.run,
    "dce": dce.run,
    "licm": licm.run,
    "batch_loop_matmuls": batch_loop_matmuls.run,
    "fuse": fuse.run,
    "scale_operand": scale_operand.run,
    "update_in_gemm": update_in_gemm.run,
    "fuse_loss_grad": fuse_loss_grad.run,
    "layout": layout.run,
    "pair_gradients": pair_gradients.run,
    "place_threads": place_threads.run,
    "stack_tapes": stack_tapes.run,
    "place_gradients": place_gradients.run,
    "orient_products": orient_products.run,
    "plan_memory": plan_memory.run,
}

CLEANUPS = ("fold_constants", "simplify", "cse", "dce")

PIPELINES: dict[int, tuple[Step, ...]] = {
    0: (),
    1: (CLEANUPS,),  # a group: repeated until a round changes nothing
    # NOTE: plan_memory comes last: in-place marks assume no pass reorders nodes after it
    2: ((*CLEANUPS, "licm", "batch_loop_matmuls", "fuse", "scale_operand", "update_in_gemm",
         "fuse_loss_grad", "layout"), "pair_gradients", "place_threads", "stack_tapes",
        "orient_products", "place_gradients", "plan_memory"),
}

DEFAULT_LEVEL = 2

__all__ = ["PASSES", "PIPELINES", "DEFAULT_LEVEL", "Pass", "PassError", "PassHook",
           "PassManager", "PassReport", "Step", "optimize"]


def optimize(graph: ir.Graph, level: int = DEFAULT_LEVEL, verify_each: bool = False,
             on_pass: PassHook | None = None, threads: int = 1,
             native: bool = False) -> ir.Graph:
    """Run the pipeline for optimization `level` (0, 1 or 2) over `graph`, in place.

    `on_pass(report, graph)` is called after each pass (how `amber dump --stage all` shows the IR
    after every pass); `verify_each` runs the verifier after each pass; `threads` is how many
    threads the convolution kernels may use (the layout pass writes it on them), `native`
    whether their parts may run as native code (the compile's backend may use Numba)."""
    if level not in PIPELINES:
        raise ValueError(f"optimization level must be one of {sorted(PIPELINES)}, not {level!r}")
    table = PASSES if threads == 1 and not native else {
        **PASSES, "layout": functools.partial(layout.run, threads=threads, native=native),
        "pair_gradients": functools.partial(pair_gradients.run, threads=threads)}
    return PassManager(PIPELINES[level], table, verify_each, on_pass).run(graph)
