"""Random shape programs over a symbolic batch: hypothesis writes straight-line and branching
code over two `[N, 4]` float32 arguments whose batch axis is declared symbolic
(`jit(dynamic={"a": 0, "b": 0})`): elementwise ops with broadcasting (now and then of sizes
that clash), concatenation, slices by constants and by `x.shape[0]`, reshapes with -1,
matmuls, creation from sizes, conditions and loop counts on sizes, `x.shape == y.shape`, values
growing in loops, in-place updates, row loops and prints of shapes. One compile then
runs every batch size (including 1, where broadcasting and empty slices differ), and each call
must do what eager Python does: the same result, output and error type. A declared symbolic
size never falls back to a compile per shape, so a program the symbols cannot compile fails.
The same programs, summed into a loss, differentiate once for every batch size to what the
gradient compiled per batch size gives.

The generator tracks each value's row count at every input size, so the ops it writes fit
(eager raises only where NumPy does for a size, e.g. an ambiguous `reshape(0, -1)`).
CI runs 60 examples; a deep search:
    AMBER_HYPOTHESIS_EXAMPLES=5000 python -m pytest tests/programs/test_random_symbolic.py
"""
import os
from typing import Any, Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, note, settings, strategies as st

import amber
from harness import assert_same_outcome, call, load_source, randn

BATCHES = (3, 1, 5, 2, 8)
"""The batch sizes every program runs at, in order (compiled once, at the first)."""
EXAMPLES = int(os.environ.get("AMBER_HYPOTHESIS_EXAMPLES", "60"))
DEEP = EXAMPLES > 60
PHASES = tuple(Phase) if DEEP else (Phase.explicit, Phase.reuse, Phase.generate)

Rows = tuple[int, ...]
"""A value's row count at each of BATCHES."""

ARGUMENT: Rows = BATCHES
ONE: Rows = (1,) * len(BATCHES)


def _rows(f: Callable[[int], int], rows: Rows) -> Rows:
    return tuple(f(r) for r in rows)


class ShapeProgram:
    """Draws one program: 2-d values `[rows, 4]` with known rows per batch, 1-d `[4]` sums and
    an int `k`, all returned."""

    def __init__(self, draw: Callable[[Any], Any]) -> None:
        self.draw = draw
        self.values: dict[str, Rows] = {"a": ARGUMENT, "b": ARGUMENT}
        self.lines: list[str] = []
        self.made: list[str] = []

    def pick(self, rows: Rows | None = None) -> str:
        names = [n for n, r in self.values.items() if rows is None or r == rows]
        return self.draw(st.sampled_from(sorted(names)))

    def partner(self, rows: Rows) -> str:
        """A value that broadcasts against one of `rows` rows: the same rows, one row, or
        the 1-d sum `s`."""
        names = [n for n, r in self.values.items() if r == rows or r == ONE] + ["s"]
        if self.draw(st.integers(0, 9)) == 0:  # NOTE: any value: sizes that clash must raise
            names = sorted(self.values)
        return self.draw(st.sampled_from(sorted(names)))

    def new(self, rows: Rows, text: str, depth: int = 0) -> str:
        name = f"v{len(self.made)}"
        self.made.append(name)
        self.emit(depth, f"{name} = {text}")
        self.values[name] = rows
        return name

    def emit(self, depth: int, text: str) -> None:
        self.lines.append("    " * (depth + 1) + text)

    def statement(self) -> None:
        kind = self.draw(st.sampled_from(
            ("elementwise", "elementwise", "concat", "slice", "slice", "reshape", "matmul",
             "create", "size", "size", "branch", "loop", "grow", "inplace", "rows", "print")))
        getattr(self, f"write_{kind}")()

    def write_elementwise(self) -> None:
        p = self.pick()
        rows = self.values[p]
        q = self.partner(rows)
        form = self.draw(st.sampled_from(
            ("np.tanh({p}) * {q}", "{p} + {q} * 0.5", "np.maximum({p}, {q})",
             "np.where({p} > 0, {p}, {q})", "{p} - {p}.sum(axis=0) / ({p}.shape[0] + 1)",
             "{p} * {p}.shape[0] - {q}")))
        self.new(rows, form.format(p=p, q=q))

    def write_concat(self) -> None:
        p, q = self.pick(), self.pick()
        rp, rq = self.values[p], self.values[q]
        if self.draw(st.booleans()):
            self.new(tuple(x + y for x, y in zip(rp, rq)),
                     f"np.concatenate([{p}, {q}], axis=0)")
        else:
            self.new(_rows(lambda r: 2 * r, rp), f"np.repeat({p}, 2, axis=0)")

    def write_slice(self) -> None:
        p = self.pick()
        rows, c = self.values[p], self.draw(st.integers(0, 3))
        form, f = self.draw(st.sampled_from((
            ("{p}[{c}:]", lambda r: max(r - c, 0)),
            ("{p}[:{c}]", lambda r: min(r, c)),
            ("{p}[::2]", lambda r: (r + 1) // 2),
            ("{p}[::-1]", lambda r: r),
            ("{p}[:{p}.shape[0] // 2]", lambda r: r // 2),
            ("{p}[{p}.shape[0] - 1:]", lambda r: min(r, 1)),
            ("{p}[-{c}:]" if c else "{p}[-1:]", lambda r: min(r, c or 1)),
            ("{p}[1:{p}.shape[0] - 1]", lambda r: max(r - 2, 0)),
        )))
        self.new(_rows(f, rows), form.format(p=p, c=c))

    def write_reshape(self) -> None:
        p = self.pick()
        rows = self.values[p]
        form = self.draw(st.sampled_from((
            "{p}.reshape(-1, 2).reshape({p}.shape[0], 4)",
            "{p}.reshape(-1).reshape(-1, 4)",
            "{p}.T.reshape(4, -1).T",
            "{p}.reshape({p}.shape[0], 2, 2).sum(axis=2).repeat(2, axis=1)",
        )))
        self.new(rows, form.format(p=p))

    def write_matmul(self) -> None:
        p = self.pick()
        rows = self.values[p]
        q = self.pick(rows)
        if self.draw(st.booleans()):
            self.new(rows, f"{p} @ {p}.T @ {q} * 0.1")
        else:
            self.new((4,) * len(BATCHES), f"{p}.T @ {q}")

    def write_create(self) -> None:
        p = self.pick()
        rows = self.values[p]
        form = self.draw(st.sampled_from((
            "np.zeros(({p}.shape[0], 4), np.float32) + k",
            "np.ones_like({p}) * len({p})",
            "np.full({p}.shape, 0.5, np.float32) * {p}.size",
        )))
        self.new(rows, form.format(p=p))

    def write_size(self) -> None:
        p = self.pick()
        c = self.draw(st.integers(0, 3))
        self.emit(0, self.draw(st.sampled_from((
            "k = k + {p}.shape[0]", "k = len({p}) * 2 - k", "k = k + int({p}.shape[0] > {c})",
            "k = (k + {p}.size) % 7", "k = k + ({p}.shape[0] == {c})",
            "k = k + {p}.shape[0] // 2 - {c}"))).format(p=p, c=c))

    def write_branch(self) -> None:
        p = self.pick()
        rows, c = self.values[p], self.draw(st.integers(0, 4))
        name = f"v{len(self.made)}"
        choice = self.draw(st.integers(0, 2))
        if choice == 0:
            self.emit(0, f"if {p}.shape[0] > {c}:")
            self.emit(1, f"{name} = {p}[:{c}] * 2")
            after = _rows(lambda r: min(r, c), rows)
        elif choice == 1:
            self.emit(0, f"if {p}.shape[0] % 2 == 0:")
            self.emit(1, f"{name} = {p}[::2]")
            after = _rows(lambda r: r // 2 if r % 2 == 0 else r, rows)
        else:
            q = self.pick()
            self.emit(0, f"if {p}.shape == {q}.shape:")
            self.emit(1, f"{name} = {p} + {q}")
            after = rows
        self.emit(0, "else:")
        self.emit(1, f"{name} = {p} + k")
        self.made.append(name)
        self.values[name] = after

    def write_loop(self) -> None:
        p = self.pick()
        name = self.new(self.values[p], f"{p} * 1.0")
        self.emit(0, f"for i in range({p}.shape[0] % 3 + {self.draw(st.integers(0, 1))}):")
        self.emit(1, f"{name} = {name} * 0.5 + i")
        self.emit(1, "k = k + i")

    def write_grow(self) -> None:
        """A value whose rows change every iteration of a loop counted by a size."""
        p, q = self.pick(), self.pick()
        rp, rq, c = self.values[p], self.values[q], self.draw(st.integers(0, 2))
        name = self.new(rp, f"{p} * 1.0")
        self.emit(0, f"for i in range({q}.shape[0] % 3 + {c}):")
        self.emit(1, f"{name} = np.concatenate([{name}, {q}[:1] + i], axis=0)")
        self.values[name] = tuple(a + min(b, 1) * (b % 3 + c) for a, b in zip(rp, rq))

    def write_inplace(self) -> None:
        p = self.pick()
        rows = self.values[p]
        name = self.new(rows, f"{p} * 1.0")
        self.emit(0, self.draw(st.sampled_from((
            "{v} += {q}", "{v} *= {v}.shape[0]", "{v}[:, 0] = k", "{v}[{v}.shape[0] // 2:] = 0.5",
            "{v}[::2] -= 1.0"))).format(v=name, q=self.partner(rows)))

    def write_rows(self) -> None:
        p = self.pick()
        self.emit(0, f"for row in {p}:")
        self.emit(1, "s = s + row * 0.5")

    def write_print(self) -> None:
        p = self.pick()
        self.emit(0, f'print("shape", {p}.shape, {p}.shape[0] * 2, len({p}))')

    def source(self) -> str:
        # NOTE: every value is returned: DCE drops an unused computation, and with it an error
        # it would raise (graph/passes/dce.py), so an unused clash is not compared
        made = self.made or ["a"]
        outputs = ", ".join([*made, f"{made[-1]}.shape", "s", "k"])
        body = "\n".join(self.lines)
        return ("import numpy as np\n\n\ndef program(a, b):\n    k = 0\n"
                f"    s = np.zeros(4, np.float32)\n{body}\n    return {outputs}\n")


@st.composite
def shape_programs(draw: Callable[[Any], Any]) -> str:
    writer = ShapeProgram(draw)
    for _ in range(draw(st.integers(1, 7))):
        writer.statement()
    return writer.source()


@pytest.fixture(scope="module")
def program_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("random_symbolic"))


def test_random_shape_program_compiles_once_for_every_batch(program_dir, capsys):
    @settings(max_examples=EXAMPLES, deadline=None, derandomize=not DEEP, phases=PHASES,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(source=shape_programs())
    def run(source: str) -> None:
        note(source)
        fn = load_source(source, program_dir)
        fast = amber.jit(fn, dynamic={"a": 0, "b": 0})
        for i, n in enumerate(BATCHES):
            args = (randn(n, 4, seed=i), randn(n, 4, seed=i + 10))
            assert_same_outcome(call(fast, args, None, capsys), call(fn, args, None, capsys))
        assert fast.stats.compiles + fast.stats.disk_hits <= 1, "compiled more than once"
        if fast.code is not None:
            assert "(f32[N,4], f32[N,4])" in fast.code

    run()


def _loss_source(source: str, made: list[str]) -> str:
    """The program turned into a scalar loss of every value it made, with its gradient with
    respect to both arguments computed inside compiled code (`grad_both`)."""
    total = " + ".join(f"({m} * {m}).sum()" for m in made or ["a"]) + " + s.sum()"
    body = source[:source.rindex("    return ")].replace("print(", "(")
    return (body.replace("import numpy as np\n", "import numpy as np\n\nimport amber\n", 1)
            + f"    return {total}\n\n\ndef grad_both(a, b):\n"
            "    return amber.grad(program, grad_position=(0, 1))(a, b)\n")


@st.composite
def loss_programs(draw: Callable[[Any], Any]) -> str:
    writer = ShapeProgram(draw)
    for _ in range(draw(st.integers(1, 6))):
        writer.statement()
    return _loss_source(writer.source(), writer.made)


def test_random_shape_program_gradient_equals_the_static_one(program_dir):
    """The gradient compiled once for a symbolic batch (slices, concatenation, repeats,
    reshapes, broadcasting against sizes that may be 1 at run time) equals the gradient
    compiled for each batch size, whose rules tests/graph checks against finite
    differences."""
    @settings(max_examples=max(EXAMPLES // 2, 1), deadline=None, derandomize=not DEEP,
              phases=PHASES, suppress_health_check=[HealthCheck.too_slow])
    @given(source=loss_programs())
    def run(source: str) -> None:
        note(source)
        fn = load_source(source, program_dir, "grad_both")
        symbolic = amber.jit(fn, dynamic={"a": 0, "b": 0})
        for i, n in enumerate(BATCHES):
            args = (randn(n, 4, seed=i), randn(n, 4, seed=i + 10))
            try:
                want = amber.jit(fn, dynamic=False)(*args)
            except Exception as exc:  # noqa: BLE001 (the program fails at this size)
                # NOTE: a shape clash static code finds while compiling, symbolic code meets
                # when it runs: a ValueError both ways
                kind = next(k for k in (ValueError, TypeError, IndexError, Exception)
                            if isinstance(exc, k))
                with pytest.raises(kind):
                    symbolic(*args)
                continue
            for got, w in zip(symbolic(*args), want):
                np.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-5)
        assert symbolic.stats.compiles + symbolic.stats.disk_hits <= 1

    run()


def test_rows_bookkeeping_matches_numpy():
    """The generator's row counts are what NumPy gives (else its programs would be wrong)."""
    x = np.zeros((5, 4))
    assert x[1:x.shape[0] - 1].shape[0] == max(5 - 2, 0)
    assert x[-3:].shape[0] == min(5, 3) and x[::2].shape[0] == 3
