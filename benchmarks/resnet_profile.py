"""Where the ResNet of benchmarks/resnet.py spends its time in amber: cProfile's time per op of
the generated code (`--profile`) and wall time per generated line (`--lines`, at any thread
count). Each runs in the process `resnet.py` starts for it, with its thread settings.

    python benchmarks/resnet.py --profile
    python benchmarks/resnet.py --lines [--threads N]
"""
from __future__ import annotations

import os
import sys
import time
from typing import Any


def profile_ops(batch: int = 32, calls: int = 10, top: int = 14) -> None:
    """Where amber's forward and train step spend their time, per call: cProfile's own time
    of each function of the generated code (its kernels, and the entry function, whose own
    time is the inline NumPy expressions) and of the NumPy methods they call (`reshape` here
    is mostly the copies that build convolution columns; a GEMM counts in its caller)."""
    import cProfile
    import pstats

    from resnet import _warmed_up
    fns, inputs = _warmed_up(batch)
    for kind, args in inputs.items():
        profiler = cProfile.Profile(time.process_time)  # NOTE: CPU time: fair on a busy machine
        profiler.enable()
        for _ in range(calls):
            fns[kind](*args)
        profiler.disable()
        stats = pstats.Stats(profiler).stats
        rows = sorted(((own / calls, name if file.startswith("<amber:") else
                        f"{file.rsplit('/', 1)[-1]}:{name}" if line else name)
                       for (file, line, name), (_, _, own, _, _) in stats.items()),
                      reverse=True)[:top]
        total = sum(own for (_, _, own, _, _) in stats.values()) / calls
        print(f"\n{kind}, batch {batch}, 1 thread: {total * 1e3:.1f} ms of CPU a call under "
              "cProfile")
        for own, name in rows:
            print(f"  {own * 1e3:7.2f} ms  {name}")


def profile_lines(batch: int = 32, threads: int = 2, calls: int = 20, top: int = 16) -> None:
    """Wall time per statement of the generated entry function (kernels count in the line
    that calls them): its code is compiled again with a `perf_counter` stamp after each
    top-level statement. Wall time, so at 2 threads it shows what the threads saved; the
    stamps add about 1 us a statement."""
    import ast
    import linecache

    import amber
    amber.set_context(num_threads=threads)
    from resnet import _warmed_up
    fns, inputs = _warmed_up(batch)
    for kind, args in inputs.items():
        compiled = fns["jit"][kind]
        entry = [node for node in ast.parse(compiled.code).body
                 if isinstance(node, ast.FunctionDef)][-1]
        found: dict[str, Any] = {}

        def trace(frame: Any, event: str, arg: Any) -> None:
            if frame.f_code.co_name == entry.name and \
                    frame.f_code.co_filename == compiled.last.filename:  # NOTE: a disk
                # cache entry's module is named by its file, a fresh one "<amber:...>"
                found.setdefault("frame", (frame.f_code.co_filename, frame.f_globals))
        sys.setprofile(trace)
        fns[kind](*args)
        sys.setprofile(None)
        filename, module = found["frame"]
        spent: dict[int, float] = {}
        last = [0.0]

        def stamp(line: int) -> None:
            now = time.perf_counter()
            if line:
                spent[line] = spent.get(line, 0.0) + now - last[0]
            last[0] = now
        body = [ast.parse("_stamp(0)").body[0]]
        for statement in entry.body:
            body += [statement, ast.parse(f"_stamp({statement.lineno})").body[0]]
        entry.body, entry.decorator_list = body, []
        namespace: dict[str, Any] = {}
        module["_stamp"] = stamp  # NOTE: the swapped code reads the module's globals
        exec(compile(ast.fix_missing_locations(ast.Module([entry], [])), filename, "exec"),
             module, namespace)
        target = module[entry.name]
        while hasattr(target, "__wrapped__"):  # NOTE: @one_blas_thread, @reuses_buffers
            target = target.__wrapped__
        plain, target.__code__ = target.__code__, namespace[entry.name].__code__
        try:
            fns[kind](*args)
            spent.clear()
            start = time.perf_counter()
            for _ in range(calls):
                fns[kind](*args)
            total = (time.perf_counter() - start) / calls
        finally:
            target.__code__ = plain
            del module["_stamp"]
        print(f"\n{kind}, batch {batch}, {threads} thread(s): {total * 1e3:.1f} ms wall a call "
              f"(load {os.getloadavg()[0]:.1f})")
        for line, seconds in sorted(spent.items(), key=lambda item: -item[1])[:top]:
            text = linecache.getline(filename, line).strip() or compiled.code.splitlines()[
                line - 1].strip()
            print(f"  {seconds / calls * 1e3:7.2f} ms  {text[:90]}")
