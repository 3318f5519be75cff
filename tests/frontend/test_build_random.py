"""Random control-flow programs (if/while/for, break/continue/return, nested) compiled by the
frontend agree with eager Python on random inputs."""
import importlib.util
import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from amber.frontend.reference import agree

VARS = ("a", "b", "x", "y")


class ProgramWriter:
    """Writes one function `f(a, b, n)` over float64 arrays of shape (3,) and an int n."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.lines: list[str] = []

    def expr(self, depth: int = 0) -> str:
        r = self.rng.random()
        if depth > 1 or r < 0.3:
            return self.rng.choice(["a", "b", "x", "y"])
        if r < 0.55:
            op = self.rng.choice(["+", "-", "*"])
            return f"({self.expr(depth + 1)} {op} {self.expr(depth + 1)})"
        if r < 0.7:
            return f"np.tanh({self.expr(depth + 1)})"
        if r < 0.85:
            return f"({self.expr(depth + 1)} * {self.rng.choice(['0.5', '2', 'n', '-1.5'])})"
        return f"({self.expr(depth + 1)} + {self.rng.choice(['a', 'b'])}.sum())"

    def cond(self) -> str:
        kind = self.rng.random()
        if kind < 0.2:
            return f"n > {self.rng.randint(0, 4)}"  # decided while compiling
        left = f"{self.rng.choice(VARS)}.{self.rng.choice(['sum', 'max', 'min'])}()"
        test = f"{left} {self.rng.choice(['>', '<'])} {self.rng.uniform(-2, 2):.2f}"
        if kind > 0.85:
            test += f" and {self.rng.choice(VARS)}[{self.rng.randint(0, 2)}] > 0"
        return test

    def block(self, indent: int, depth: int, loop: bool) -> None:
        for _ in range(self.rng.randint(1, 3)):
            self.stmt(indent, depth, loop)

    def stmt(self, indent: int, depth: int, loop: bool) -> None:
        pad = "    " * indent
        r = self.rng.random()
        if depth >= 3 or r < 0.45:
            self.lines.append(f"{pad}{self.rng.choice(['x', 'y'])} = {self.expr()}")
        elif r < 0.6:
            self.lines.append(f"{pad}if {self.cond()}:")
            self.block(indent + 1, depth + 1, loop)
            if self.rng.random() < 0.5:
                self.lines.append(f"{pad}else:")
                self.block(indent + 1, depth + 1, loop)
        elif r < 0.72:
            var = f"i{depth}"
            bound = self.rng.choice(["n", "3", "len(a)"])
            self.lines.append(f"{pad}for {var} in range({bound}):")
            self.lines.append(f"{pad}    x = x + a[{var} % 3] * 0.5")
            self.block(indent + 1, depth + 1, True)
        elif r < 0.82:
            var = f"k{depth}"
            self.lines.append(f"{pad}{var} = 0")
            self.lines.append(f"{pad}while {var} < {self.rng.randint(1, 4)} and {self.cond()}:")
            self.lines.append(f"{pad}    {var} += 1")
            self.block(indent + 1, depth + 1, True)
        elif r < 0.76:
            iterable = self.rng.choice(["a", "(a, b)", "zip(a, b)"])
            self.lines.append(f"{pad}for e{depth} in {iterable}:")
            self.lines.append(f"{pad}    y = y + np.tanh(x) * 0.5")
            self.block(indent + 1, depth + 1, True)
        elif r < 0.8:
            self.lines.append(f"{pad}x, y = y, helper(x, n)")
        elif r < 0.84:
            self.lines.append(f"{pad}parts = [x]")
            self.lines.append(f"{pad}for j{depth} in range({self.rng.choice(['n', '2'])}):")
            self.lines.append(f"{pad}    parts.append({self.expr()})")
            self.lines.append(f"{pad}x = np.stack(parts).sum(axis=0)")
        elif r < 0.9 and loop:
            self.lines.append(f"{pad}if {self.cond()}:")
            self.lines.append(f"{pad}    {self.rng.choice(['break', 'continue'])}")
        else:
            self.lines.append(f"{pad}if {self.cond()}:")
            self.lines.append(f"{pad}    return {self.expr()}")

    def program(self) -> str:
        self.lines = ["import numpy as np", "", "", "def helper(v, n):", "    for i in range(n):",
                      "        if v.sum() > i:", "            return v * 0.5", "        v = v + 1",
                      "    return v", "", "", "def f(a, b, n):", "    x = a * 1", "    y = b + 0"]
        self.block(1, 0, False)
        self.lines.append("    return x + y")
        return "\n".join(self.lines) + "\n"


def load(source: str, path) -> object:
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"random_program_{abs(hash(source))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 4))
def test_random_programs_agree_with_eager(tmp_path_factory, seed, n):
    source = ProgramWriter(seed).program()
    f = load(source, tmp_path_factory.mktemp("prog") / "program.py")
    data = np.random.default_rng(seed)
    a, b = data.standard_normal(3), data.standard_normal(3)
    agree(f, a, b, n, rtol=1e-9)


def test_the_writer_makes_nested_control_flow():
    text = "".join(ProgramWriter(seed).program() for seed in range(30))
    for word in ("if ", "else:", "for ", "while ", "break", "continue", "return"):
        assert word in text
