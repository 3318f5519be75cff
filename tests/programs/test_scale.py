"""Programs too large to write by hand, generated as source text: a 120-way elif chain (deeper
than Python's 100 indentation levels if emitted as nested ifs), 18 nested loops (Python allows
20), 300 straight-line statements, 60 ifs in a row, a 100-statement loop body. Each must compile
(in under 20 s; a healthy compiler needs well under one), run and agree with eager."""
import signal
from typing import Any, Callable

import pytest

from harness import Program, build, check, f32, i64, load_source

HEADER = "import numpy as np\n\n\ndef program(x, s):\n"


def elif_chain(n: int) -> str:
    """`if k == 0: ... elif k == 1: ... else: ...` over a run-time int k."""
    lines = ["    k = int(s[0])", "    if k == 0:", "        y = x * 0.0"]
    for i in range(1, n):
        lines += [f"    elif k == {i}:", f"        y = x * {i}.0"]
    lines += ["    else:", "        y = -x", "    return y"]
    return HEADER + "\n".join(lines) + "\n"


def nested_loops(depth: int) -> str:
    """`depth` nested `for` loops of one or two trips each, counting the innermost body."""
    lines = ["    count = 0"]
    for d in range(depth):
        bound = "int(s[0]) % 2 + 1" if d == depth - 1 else "1"
        lines.append("    " * (d + 1) + f"for i{d} in range({bound}):")
    lines += ["    " * (depth + 1) + "count += 1", "    return x * count, count"]
    return HEADER + "\n".join(lines) + "\n"


def straight_line(n: int) -> str:
    """`n` dependent elementwise statements."""
    lines = ["    h = x"]
    lines += [f"    h = np.tanh(h * {1 + i % 3}.0 - {i % 5}.0)" for i in range(n)]
    return HEADER + "\n".join(lines + ["    return h"]) + "\n"


def many_ifs(n: int) -> str:
    """`n` independent data-dependent ifs, each updating a Python int and a tensor."""
    lines = ["    k = 0"]
    for i in range(n):
        lines += [f"    if x[{i % 3}] > {(i % 7) - 3}.0:", "        k += 1",
                  f"        x = x * 0.99 + {i % 2}.0"]
    return HEADER + "\n".join(lines + ["    return x, k"]) + "\n"


def long_loop_body(n: int) -> str:
    """A data-dependent `while` whose body has `n` statements."""
    lines = ["    t = 0", "    while t < int(s[0]) % 4:"]
    lines += [f"        x = x + {i % 4 - 1.5} * 0.01" for i in range(n)]
    lines += ["        t += 1", "    return x, t"]
    return HEADER + "\n".join(lines) + "\n"


SOURCES = {
    "elif_chain_120": elif_chain(120),
    "nested_loops_18": nested_loops(18),
    "straight_line_300": straight_line(300),
    "many_ifs_60": many_ifs(60),
    "long_loop_body_100": long_loop_body(100),
}
INPUTS = tuple((f32([1.0, -2.0, 0.5]), i64([k])) for k in (0, 1, 7, 119, 200))
COMPILE_SECONDS = 20.0


@pytest.fixture(scope="module")
def source_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Where the generated programs are written."""
    return str(tmp_path_factory.mktemp("scale_programs"))


def call_within(seconds: float, fn: Callable[..., Any], *args: Any) -> Any:
    """`fn(*args)`, or TimeoutError once `seconds` have passed (so a compile that explodes
    fails the test instead of hanging the suite)."""
    def expire(signum: int, frame: Any) -> None:
        raise TimeoutError(f"not done after {seconds} s")
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return fn(*args)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_large_program(name, source_dir, capsys):
    """The program compiles in bounded time and agrees with eager on every input."""
    program = Program(load_source(SOURCES[name], source_dir), INPUTS)
    subject = build(program)
    call_within(COMPILE_SECONDS, subject.compiled, *INPUTS[0])
    check(program, capsys, subject)


def test_generators_write_valid_python():
    """Every generated source is plain Python that runs eagerly."""
    for source in SOURCES.values():
        compile(source, "<generated>", "exec")
