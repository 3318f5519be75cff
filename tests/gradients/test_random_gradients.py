"""Random differentiable programs: hypothesis builds function bodies of nested if / while / for
(constant, compile-time and run-time bounds) / break / continue / early return / helper calls /
list accumulation (read back by a loop, `sum` or negative indices) / in-place updates over two
float64 vectors, writes each to a real .py file, and checks
`amber.value_and_grad(program, (0, 1))` against the eager value and float64 central finite
differences of the eager program, compiled and op by op (`jit_enabled=False`).

CI explores a fixed set of examples per flavor; a deep randomized search:
    AMBER_HYPOTHESIS_EXAMPLES=2000 python -m pytest tests/gradients/test_random_gradients.py
"""
from __future__ import annotations

import importlib.util
import os
import sys
from typing import Any, Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, assume, given, note, settings, strategies as st

import amber
import numeric

FLAVORS: dict[str, tuple[str, ...]] = {
    "branches": ("assign", "assign", "if", "helper"),
    "while": ("assign", "if", "while", "while", "jump"),
    "for": ("assign", "if", "for", "for", "jump"),
    "returns": ("assign", "if", "for", "while", "return", "return"),
    "mixed": ("assign", "if", "while", "for", "jump", "return", "append", "inplace", "helper"),
}
EXAMPLES = -(-int(os.environ.get("AMBER_HYPOTHESIS_EXAMPLES", "100")) // len(FLAVORS))
DEEP = EXAMPLES > 20
PHASES = tuple(Phase) if DEEP else (Phase.explicit, Phase.reuse, Phase.generate)
MAX_DEPTH = 3

TENSORS = ("a", "b")
EXPRS = ("np.tanh({t} + {u})", "{t} * 0.5 + {u}", "{t} * {u}", "np.sin({t}) * {u}",
         "{t} / (1.0 + {u} * {u})", "np.exp(-{t} * {t}) + {u}", "{t}[::-1] * 1.5",
         "np.where({t} > 0, {t}, {u} * 0.5)", "{t} + {t}.sum() * 0.1", "np.maximum({t}, {u})",
         "{t} * (k * 0.1 + 1.0)", "{t} * {t}.max()", "np.sqrt({t} * {t} + 1.0) - {u}",
         "{t} - {u}.mean()", "helper({t}, k)")
INT_STATEMENTS = ("k = k + 1", "k = (k * 3 + {c}) % 5", "k = k + int({t}.sum() > 0)")
CONDITIONS = ("{t}.sum() > {c} - 1.5", "{t}[{i}] < {u}[{j}]", "k > {c}", "k % 2 == 0",
              "n > {c}", "{t}.max() > 0.5 and k < {c}", "not ({t}.min() > 0)")
RANGES = ("{c}", "n", "k % 3", "int(np.abs({t}).sum()) % 3", "1, {c} + 1", "{c}, 0, -1")
INPLACE = ("{t} += {u}", "{t} *= 0.5", "{t}[{i}] = {u}[{j}] * 2.0", "{t} -= {u} * 0.25")
RETURN = "(a * b).sum() + (a * a).sum() * 0.25 + b.sum() * 0.5"
HELPER = """

def helper(v, k):
    if k > 1:
        return v * 0.5
    for j in range(k % 3):
        v = np.tanh(v) + j * 0.1
    return v * 1.0  # NOTE: never its argument itself (an in-place update through an alias
                    # is refused by the gradient, tested in test_refusals.py)
"""


class GradientProgramWriter:
    """Draws one random differentiable function, statement by statement."""

    def __init__(self, draw: Callable[[Any], Any], kinds: tuple[str, ...]) -> None:
        self.draw, self.kinds = draw, kinds
        self.lines: list[str] = []
        self.loops = 0

    def fill(self, template: str) -> str:
        pick = self.draw
        return template.format(t=pick(st.sampled_from(TENSORS)), u=pick(st.sampled_from(TENSORS)),
                               c=pick(st.integers(0, 3)), i=pick(st.integers(0, 2)),
                               j=pick(st.integers(0, 2)))

    def emit(self, depth: int, text: str) -> None:
        self.lines.append("    " * (depth + 1) + text)

    def block(self, depth: int, loop_vars: tuple[str, ...], most: int = 3) -> None:
        for _ in range(self.draw(st.integers(1, most))):
            self.statement(depth, loop_vars)

    def statement(self, depth: int, loop_vars: tuple[str, ...]) -> None:
        kinds = [k for k in self.kinds
                 if (k not in ("if", "while", "for") or depth < MAX_DEPTH)
                 and (k != "jump" or loop_vars)]
        getattr(self, f"write_{self.draw(st.sampled_from(kinds))}")(depth, loop_vars)

    def write_assign(self, depth: int, loop_vars: tuple[str, ...]) -> None:
        if self.draw(st.integers(0, 3)):
            t = self.draw(st.sampled_from(TENSORS))
            self.emit(depth, f"{t} = " + self.fill(self.draw(st.sampled_from(EXPRS))))
        elif loop_vars and self.draw(st.booleans()):
            self.emit(depth, f"k = k + {self.draw(st.sampled_from(loop_vars))}")
        else:
            self.emit(depth, self.fill(self.draw(st.sampled_from(INT_STATEMENTS))))

    def write_helper(self, depth: int, loop_vars: tuple[str, ...]) -> None:
        self.emit(depth, self.fill("{t} = helper({u}, k)"))

    def write_if(self, depth: int, loop_vars: tuple[str, ...]) -> None:
        self.emit(depth, f"if {self.fill(self.draw(st.sampled_from(CONDITIONS)))}:")
        self.block(depth + 1, loop_vars)
        if self.draw(st.booleans()):
            self.emit(depth, "else:")
            self.block(depth + 1, loop_vars)

    def write_while(self, depth: int, loop_vars: tuple[str, ...]) -> None:
        w = f"w{self.loops}"
        self.loops += 1
        self.emit(depth, f"{w} = 0")
        cond = self.fill(self.draw(st.sampled_from(CONDITIONS)))
        self.emit(depth, f"while {w} < {self.draw(st.integers(0, 4))} and ({cond}):")
        self.emit(depth + 1, f"{w} += 1")
        self.block(depth + 1, loop_vars + (w,))

    def write_for(self, depth: int, loop_vars: tuple[str, ...]) -> None:
        v = f"i{self.loops}"
        self.loops += 1
        source = self.draw(st.sampled_from(("range", "range", "tuple")))
        if source == "range":
            self.emit(depth, f"for {v} in range({self.fill(self.draw(st.sampled_from(RANGES)))}):")
            self.block(depth + 1, loop_vars + (v,))
            return
        self.emit(depth, f"for {v} in (0.5, 2.0):")  # NOTE: unrolled over a tuple
        self.emit(depth + 1, f"{self.draw(st.sampled_from(TENSORS))} = a * {v} + b")
        self.block(depth + 1, loop_vars)

    def write_jump(self, depth: int, loop_vars: tuple[str, ...]) -> None:
        jump = self.draw(st.sampled_from(("break", "continue")))
        if self.draw(st.booleans()):
            self.emit(depth, f"if {self.fill(self.draw(st.sampled_from(CONDITIONS)))}:")
            depth += 1
        self.emit(depth, jump)

    def write_return(self, depth: int, loop_vars: tuple[str, ...]) -> None:
        self.emit(depth, f"if {self.fill(self.draw(st.sampled_from(CONDITIONS)))}:")
        self.emit(depth + 1, f"return {RETURN} + {self.fill('{t}[{i}]')}")

    def write_append(self, depth: int, loop_vars: tuple[str, ...]) -> None:
        self.emit(depth, self.fill("acc.append({t} * 0.5)"))

    def write_inplace(self, depth: int, loop_vars: tuple[str, ...]) -> None:
        self.emit(depth, self.fill(self.draw(st.sampled_from(INPLACE))))

    def source(self) -> str:
        body = "\n".join(self.lines)
        tail = self.draw(st.sampled_from(LIST_TAILS)) if "append" in self.kinds else ""
        return (f"import numpy as np\n{HELPER}\n\ndef program(a, b, n):\n    k = 0\n"
                f"    acc = []\n{body}\n{tail}    return {RETURN}\n")


LIST_TAILS = ("    for item in acc:\n        a = a + item\n", "    a = sum(acc, a)\n",
              "    b = b + sum(acc)\n    if len(acc) > 1:\n        a = a + acc[-2] * acc[-1]\n")
"""How a program reads the list its loops appended to: item by item, through `sum` (the
int 0 when empty), by negative indices."""


@st.composite
def programs(draw: Callable[[Any], Any], flavor: str) -> str:
    writer = GradientProgramWriter(draw, FLAVORS[flavor])
    writer.block(0, (), most=5)
    return writer.source()


def load(source: str, directory: str) -> Callable[..., Any]:
    """Write `source` to a new module file and import it (the compiler reads real files)."""
    name = f"gradprog_{abs(hash(source)):x}"
    path = os.path.join(directory, f"{name}.py")
    with open(path, "w") as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module.program


@pytest.fixture(scope="module")
def program_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("gradient_programs"))


def _inputs(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal(3) * 0.8 + 0.1, rng.standard_normal(3) * 0.8 - 0.1


def _differences(program, a: np.ndarray, b: np.ndarray, n: int) -> tuple:
    """The gradients of `program` by positions 0 and 1 by finite differences; the example is
    discarded (hypothesis `assume`) where they disagree with themselves at a tenth of the
    step: a branch decided within the step of an input, or values so large (1e9 and up) that
    float64 differences lose the digits."""
    want = tuple(numeric.gradient(program, (a, b, n), k) for k in (0, 1))
    finer = tuple(numeric.gradient(program, (a, b, n), k, eps=numeric.EPS / 10) for k in (0, 1))
    assume(all(np.allclose(w, f, rtol=1e-4, atol=1e-4) for w, f in zip(want, finer)))
    return want


@pytest.mark.parametrize("flavor", sorted(FLAVORS))
def test_random_program_gradient(flavor, program_dir):
    """value_and_grad of a random program equals the eager value and finite differences."""

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=not DEEP, phases=PHASES,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                     HealthCheck.filter_too_much])
    @given(source=programs(flavor), n=st.integers(0, 3), seed=st.integers(0, 10_000))
    def run(source: str, n: int, seed: int) -> None:
        note(source)
        program = load(source, program_dir)
        a, b = _inputs(seed)
        value = program(a.copy(), b.copy(), n)
        want = _differences(program, a, b, n)
        for compiled in (True, False):
            amber.set_context(jit_enabled=compiled)
            got_value, got = amber.value_and_grad(program, (0, 1))(a.copy(), b.copy(), n)
            numeric.close(got_value, value, rtol=1e-12, atol=1e-12)
            numeric.close(got, want, rtol=1e-5, atol=1e-6)
        amber.set_context(jit_enabled=True)

    run()


TRANSFORM_EXAMPLES = -(-int(os.environ.get("AMBER_HYPOTHESIS_TRANSFORM_EXAMPLES", "5"))
                       // len(FLAVORS))


@pytest.mark.parametrize("flavor", sorted(FLAVORS))
def test_random_program_jvp_and_vjp(flavor, program_dir):
    """ops.jvp along a random tangent and ops.vjp's vjp_fn (called twice) of a random program
    against finite differences. More examples: AMBER_HYPOTHESIS_TRANSFORM_EXAMPLES=500."""

    @settings(max_examples=TRANSFORM_EXAMPLES, deadline=None, derandomize=not DEEP,
              phases=PHASES, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                    HealthCheck.too_slow,
                                                    HealthCheck.filter_too_much])
    @given(source=programs(flavor), n=st.integers(0, 3), seed=st.integers(0, 10_000))
    def run(source: str, n: int, seed: int) -> None:
        note(source)
        program = load(source, program_dir)
        a, b = _inputs(seed)
        want = _differences(program, a, b, n)
        rng = np.random.default_rng(seed + 1)
        ta, tb = rng.standard_normal(3), rng.standard_normal(3)
        value, tangent = amber.ops.jvp(program, (a.copy(), b.copy(), n), (ta, tb, 0))
        numeric.close(value, program(a.copy(), b.copy(), n), rtol=1e-12, atol=1e-12)
        numeric.close(tangent, want[0] @ ta + want[1] @ tb, rtol=1e-5, atol=1e-6)
        _, vjp_fn = amber.ops.vjp(program, a.copy(), b.copy(), n)
        for v in (1.0, -2.5):
            got = vjp_fn(np.float64(v))
            numeric.close(got[:2], (v * want[0], v * want[1]), rtol=1e-5, atol=1e-6)

    run()
