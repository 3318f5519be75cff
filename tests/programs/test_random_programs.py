"""Random programs: hypothesis builds function bodies of nested if / while / for / break /
continue / return over two float32 tensors, two Python ints and a compile-time int argument
(every loop bounded), writes each to a real .py file (the compiler reads source with `inspect`),
imports it, and compares compiled with eager through the corpus harness.

The `aliasing` flavor also makes copies by identity ops (`b * 1.0`, a helper that may pass its
argument on then multiplies by 1.0, an unrolled loop multiplying by 1) before in-place writes
to their source: a simplification that drops such a copy must know nobody writes either array.

The later flavors add the Python semantics other compilers' suites exercise: 0-d arrays and
their aliases updated in place (`z += v`, `out=`, `z[...] =`) next to NumPy scalars that rebind,
dicts (nested, gaining keys), lists updated by subscript and resized, tuples grown, a variable
that is a 1-d array on one path and 0-d on another, an int accumulator that becomes a float,
None next to arrays in conditions, and (as a Cell) 0-d Parameters updated in place, through
helper methods and by assignment; lists grown at run time and what is asked of them (`sum`,
`max`, `len`, negative indices, `np.stack`), lists of dicts and dicts filled in loops, augmented
assignment before early returns, and variables bound only in a loop body or a branch (read where
they may be unbound). Programs of those flavors may be refused with a CompileError
(a loop whose iterations change a value's kind has no static form), never with an internal
error, and never compiled to a different answer.

The `caller` flavor appends to, pops from and reads back a module-level list and updates a
module-level dict (what the call leaves in them is returned too) in branches, loops and
before early exits.

The `exceptions` flavor adds try/except/finally around any of these, with exceptions raised on
run-time conditions and by indexing past the end, early returns, breaks and continues inside.
The `generators` flavor adds for loops over a generator helper (with a try/finally that prints,
an early return, run-time trip counts), sums of it and of generator expressions, with breaks,
continues, returns and try statements in the consumer.

CI explores about 480 examples, split evenly over the flavors (a third as many for `exceptions`,
`generators` and `caller`), the same each run, failures reported unshrunk.
A deep, randomized and shrinking search of 10,000+ examples:
    AMBER_HYPOTHESIS_EXAMPLES=10000 python -m pytest tests/programs/test_random_programs.py
Each shrunk failure goes into `test_found_by_hypothesis.py` as a regular corpus program.
"""
import os
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, Phase, given, note, settings, strategies as st

from amber import CompileError
from harness import Mismatch, Program, check, f32, load_source

FLAVORS: dict[str, tuple[str, ...]] = {
    "branches": ("assign", "assign", "if"),
    "while": ("assign", "if", "while", "while", "jump"),
    "for": ("assign", "if", "for", "for", "jump"),
    "jumps": ("assign", "if", "while", "for", "jump", "jump", "return"),
    "returns": ("assign", "if", "for", "return", "return"),
    "mixed": ("assign", "assign", "if", "while", "for", "jump", "return", "print"),
    "aliasing": ("assign", "alias", "inplace", "inplace", "copy", "if", "for", "while"),
    "data": ("assign", "append", "helper", "if", "for", "while", "jump", "return"),
    "zero_d": ("assign", "zero_d", "zero_d", "if", "for", "while", "jump", "return"),
    "containers": ("assign", "container", "container", "if", "for", "while", "jump", "return"),
    "ranks": ("assign", "rank", "rank", "if", "for", "while", "return"),
    "promotion": ("assign", "widen", "none", "if", "for", "while", "jump", "return"),
    "parameters": ("assign", "parameter", "parameter", "zero_d", "if", "for", "while", "return"),
    "lists": ("assign", "runlist", "runlist", "if", "for", "while", "jump", "return"),
    "nesting": ("assign", "nest", "nest", "late", "if", "for", "while", "jump", "return"),
    "augmented": ("assign", "augment", "augment", "late", "if", "for", "while", "jump",
                  "return"),
    "exceptions": ("assign", "if", "for", "while", "jump", "return", "try", "try", "print"),
    "generators": ("assign", "if", "gen", "gen", "for", "jump", "return", "try", "print"),
    "caller": ("assign", "caller", "caller", "if", "for", "while", "jump", "return"),
}
MAY_REFUSE = frozenset(("zero_d", "containers", "ranks", "promotion", "parameters", "lists",
                        "nesting", "augmented", "caller"))
"""Flavors whose programs may be refused with a (non-internal) CompileError."""
EXAMPLES = -(-int(os.environ.get("AMBER_HYPOTHESIS_EXAMPLES", "480")) // len(FLAVORS))
DEEP = EXAMPLES > 50
# NOTE: CI runs a fixed set (derandomized) and reports a failure unshrunk, to stay inside the
# time budget; the deep search shrinks (minutes per failure) for the corpus regression file.
PHASES = tuple(Phase) if DEEP else (Phase.explicit, Phase.reuse, Phase.generate)
MAX_DEPTH = 3
SLOW_FLAVORS = {"exceptions": 3, "generators": 3, "caller": 3}
"""Flavors whose programs take longer to check (more statements per block): CI runs this many
times fewer of them; a deep search runs them all."""


def _examples(flavor: str) -> int:
    return EXAMPLES if DEEP else max(1, EXAMPLES // SLOW_FLAVORS.get(flavor, 1))

TENSORS = ("a", "b")
TENSOR_EXPRS = ("np.tanh({t} + {u})", "{t} * 0.5 + {u}", "{t} - {c}", "np.maximum({t}, {u})",
                "{t}[::-1] * 1.0", "np.where({t} > 0, {t}, {u} * 0.5)", "{t} * k * 0.1",
                "np.abs({t}) - {u}", "{t} + {t}.sum() * 0.1", "{u} * 1.0",
                "np.zeros(3, np.float32)")
INT_STATEMENTS = ("k = k + 1", "k = (k * 3 + {c}) % 7", "k = k + int({t}.sum() > 0)",
                  "k = k - {c}", "k = m + k", "m = (m + k) % 5", "m = m + len({t})")
CONDITIONS = ("{t}.sum() > {c}", "{t}[{i}] < {u}[{j}]", "np.any({t} > {c})", "k > {c}",
              "k % 2 == 0", "n > {c}", "m < k", "{t}.max() > 0 and k < {c}",
              "not ({t}.min() > 0)", "{t}[{i}] > 0 or m == {c}")
RANGES = ("{c}", "n", "k % 3", "int(np.abs({t}).sum()) % 3", "1, {c} + 1", "{c}, 0, -1")
RETURNS = ("a, b, k", "a", "(a, k), m", "k", "[a, b]", "a + b, k * m", "b, len(acc)")
INPLACE = ("{t} += {u}", "{t} *= 0.5", "{t}[{i}] = {u}[{j}] + {c}", "{t} -= k",
           "{t}[{i}:] = {t}[{i}:] * 0.5")
RISKY = ("if {t}.sum() > {c}:\n    raise ValueError('too big')", "k = k + int({t}[k % 5] > 0)",
         "if k > {c}:\n    raise IndexError('k too big')", "m = m + int({t}[{c} + 1] > 0)")
"""Statements of a try block that may raise (a and b have 3 elements)."""
HANDLED = "a = np.zeros(3, np.float32) + {c}\nb = np.ones(3, np.float32)\nk = -1\nm = {c}"
"""The start of an except block: every variable a try block changes, bound again."""
HELPER = """

def helper(v, k):
    if k > 1:
        return v * 0.5
    for j in range(k % 3):
        v = v + j
    return v


def gen_items(v, k):
    try:
        for j in range(k % 4):
            if v[j % 3] > 2.5:
                return
            yield v * (j + 1) * 0.5
    finally:
        print("gen done", k)


def copy_of(v, k):
    if k % 2 == 0 and (v > -0.25).any():
        pass
    else:
        v -= v.min()
    return v * 1.0
"""
# The kinds added for the semantics other compilers' suites exercise: each kind has the names
# it binds before the body (PREAMBLE), its statements (a template's lines after the first are
# indented relative to it), extra conditions and extra return values.
PREAMBLE = {
    "zero_d": ("z = np.array(a[0])", "y = z"),
    "container": ('d = {"x": a, "n": {"v": b}}', "lst = [a * 1.0, b * 1.0]", "tup = ()"),
    "rank": ("r = a",),
    "widen": ("q = 0",),
    "none": ("o = None",),
    "parameter": ("pp = self.p",),
    "runlist": ("outs = []", "vals = []"),
    "caller": ("while len(LOG) > 0:  # emptied by a run-time loop: LOG is read when it runs",
               "    LOG.pop()", "STATS['n'] = 0"),
    "nest": ('ld = [{"v": a * 1.0}, {"v": b * 1.0}]', "e = {}", 'dd = {"in": {"s": k}}'),
    "late": ("if n > 9:  # never: `late` is a local variable, unbound until bound below",
             "    late = a"),
}
STATEMENTS = {
    "caller": ("LOG.append({t}.sum())", "LOG.append({t}[{i}])", "STATS['n'] = STATS['n'] + 1",
               "STATS['n'] += k", "if len(LOG) > {c}:\n    LOG.pop()", "k = k + len(LOG)",
               "if len(LOG) > 0:\n    {t} = {t} + LOG[-1]"),
    "zero_d": ("z = np.array({t}[{i}])", "z += {t}[{i}]", "y = z", "y -= {c}", "z = z * 0.5",
               "z = np.asarray(z)", "y = np.array(z)", "{t} = {t} + z",
               "k = k + int(z > {c})", "y = np.asarray(y)\nnp.add(y, {t}[{i}], out=y)",
               "z = np.asarray(z)\nz[...] = {t}.max()", "z = {t}.sum()"),
    "container": ("d['x'] = {t} * 0.5 + {u}", "d['y'] = {t} - {c}", "{t} = d['x'] + {u}",
                  "d['n']['v'] = d['n']['v'] * 0.5 + {t}", "d['n']['w'] = {t} * 2.0",
                  "if 'y' in d:\n    {t} = {t} + d['y']", "lst[{i2}] = {t} + {c}",
                  "lst[{i2}] += {t}", "{t} = lst[{i2}] * 0.5", "lst.append({t} * 1.0)",
                  "lst = lst + [{t}]", "if len(lst) > 2:\n    lst.pop()",
                  "tup = tup + ({t}.sum(),)", "k = k + len(tup)"),
    "rank": ("r = {t}", "r = {t}.sum()", "r = {t}[{i}]", "{t} = {t} + r", "r = r * 0.5",
             "k = k + int(np.all(r > {c}))"),
    "widen": ("q = q + {t}.sum()", "q = q + k", "q = q * 2", "q = q + 0.5", "q = int(q) % 5",
              "k = k + int(isinstance(q, float))",
              "m = m + int((np.arange(3) + q).dtype == np.float64)"),
    "none": ("o = {t} * 1.0", "o = None", "if o is not None:\n    {t} = {t} + o"),
    "runlist": ("outs.append({t} * 0.5)", "outs.append({t} + k)", "vals.append({t}.sum())",
                "{t} = sum(outs, {t} * 0.5)", "{t} = {t} + sum(outs)", "k = k + len(outs)",
                "if len(outs) > 0:\n    {t} = outs[-1] * 0.5 + {u}", "m = m + len(vals) % 3",
                "if len(vals) > 0:\n    k = k + int(max(vals) > min(vals))",
                "if len(outs) > 1:\n    {t} = {t} + np.stack(outs)[-2]",
                "if len(outs) > 0:\n    outs[-1] = outs[-1] + {t}",
                "if len(outs) > 0:\n    {t} = {t} + np.concatenate(outs)[:3]"),
    "nest": ("ld[{i2}]['v'] = ld[{i2}]['v'] * 0.5 + {t}", "ld[{i2}]['w'] = {t} - {c}",
             "{t} = ld[{i2}]['v'] + {u}", "e['s'] = {t} * 1.0", "e[{c}] = k",
             "if 's' in e:\n    {t} = {t} + e['s']", "dd['in']['s'] = dd['in']['s'] + k",
             "dd['in']['t'] = {t}.sum()", "ld[{i2}]['v'] += {t}", "k = k + len(e)"),
    # NOTE: copies by an identity op (eager makes a new array) before an in-place write to
    # their source: through a helper whose If may pass its argument on, and an unrolled loop
    "copy": ("{t} = {u} * 1.0", "{t} = {u} / 1", "{t} = {u} - 0", "{t} = copy_of({u}, k)",
             "for s in (1, 2.5, 3):\n    {t} = {t} * s"),
    "augment": ("{t} += {u}", "{t} *= 0.5", "{t}[{i}] += {c}", "k += {c}", "m -= k",
                "{t} -= {t}.sum() * 0.1"),
    # NOTE: `late` is never the first name a statement loads: CPython 3.11 fuses a store and
    # the next line's first load, and an UnboundLocalError there names the earlier line
    "late": ("late = {t} * 0.5", "late = {t} + late", "{t} = {t} + late"),
    "parameter": ("self.p += {t}[{i}]", "self.bump({t}.sum())", "self.w += {t}",
                  "pp = self.p", "pp -= {c}", "self.p = self.p * 0.5", "self.p = {c}",
                  "{t} = {t} * self.p + self.w", "k = k + int(self.p > {c})"),
}
EXTRA_CONDITIONS = {
    "zero_d": ("z > {c}", "y < z"),
    "container": ("d['x'].sum() > {c}", "len(lst) > {c}", "'w' in d['n']"),
    "rank": ("np.all(r > {c})", "r.ndim == 0"),
    "widen": ("q > {c}",),
    "none": ("o is not None and o.sum() > {c}", "o is None or o[{i}] > 0"),
    "parameter": ("self.p > {c}", "self.w.sum() < pp"),
    "runlist": ("len(outs) > {c}", "len(vals) > {c} and max(vals) > 0"),
    "nest": ("'w' in ld[{i2}]", "ld[{i2}]['v'].sum() > {c}", "'t' in dd['in']"),
    "augment": (),
    "late": ("{c} < late.sum()",),
}
EXTRA_RETURNS = {
    "zero_d": ("z, y, k", "a, z"),
    "container": ("d['x'], d['n']['v'], lst[0]", "len(d['n']), lst[1], len(lst), tup"),
    "rank": ("r", "a, r, k"),
    "widen": ("q", "a, q, k"),
    "none": ("a if o is None else o",),
    "parameter": ("a, self.p * 1.0, self.w * 1.0", "pp, k"),
    "runlist": ("sum(outs, a), len(outs)", "sum(vals, 0.0), k", "outs, vals"),
    "nest": ("ld[0]['v'], ld[1], e", "dd, len(e)"),
    "late": ("a, late",),
}
CELL = """

class Program(nn.Cell):
    def __init__(self):
        super().__init__()
        self.p = Parameter(np.array(0.5, np.float32))
        self.w = Parameter(np.zeros(3, np.float32))

    def bump(self, v):
        if v > 0:
            self.p += v
        else:
            self.w -= v

    def construct(self, a, b, n):
"""

INPUTS = ((f32([1.0, 2.0, 3.0]), f32([-1.0, -2.0, 0.5])),
          (f32([-1.5, 0.5, -0.25]), f32([2.0, -3.0, 0.25])),
          (f32([0.0, 0.0, 0.0]), f32([0.5, 0.5, 0.5])))


class ProgramWriter:
    """Draws one random function, statement by statement."""

    def __init__(self, draw: Callable[[Any], Any], kinds: tuple[str, ...]) -> None:
        self.draw, self.kinds = draw, kinds
        self.lines: list[str] = []
        self.loops = 0
        self.conditions = CONDITIONS + sum((EXTRA_CONDITIONS.get(k, ()) for k in kinds), ())
        self.ret = draw(st.sampled_from(RETURNS + sum((EXTRA_RETURNS.get(k, ()) for k in kinds),
                                                      ())))
        self.is_cell = "parameter" in kinds
        if "caller" in kinds:  # NOTE: what the call left in the module's list and dict too
            self.ret = f"({self.ret}), LOG[:], STATS['n']"

    def fill(self, template: str) -> str:
        pick = self.draw
        t, u = pick(st.sampled_from(TENSORS)), pick(st.sampled_from(TENSORS))
        return template.format(t=t, u=u, c=pick(st.integers(0, 3)), i=pick(st.integers(0, 2)),
                               j=pick(st.integers(0, 2)), i2=pick(st.integers(0, 1)))

    def condition(self) -> str:
        return self.fill(self.draw(st.sampled_from(self.conditions)))

    def emit(self, depth: int, text: str) -> None:
        indent = "    " * (depth + 1 + self.is_cell)
        self.lines.extend(indent + line for line in text.split("\n"))

    def block(self, depth: int, loop_vars: tuple[str, ...], most: int = 3) -> None:
        """One to `most` statements at this depth (a block is never empty)."""
        for _ in range(self.draw(st.integers(1, most))):
            self.statement(depth, loop_vars)

    def statement(self, depth: int, loop_vars: tuple[str, ...]) -> None:
        kinds = [k for k in self.kinds
                 if (k not in ("if", "while", "for", "try") or depth < MAX_DEPTH)
                 and (k != "jump" or loop_vars)]
        kind = self.draw(st.sampled_from(kinds))
        getattr(self, f"write_{kind}")(depth, loop_vars)

    def write_assign(self, depth: int, loop_vars: tuple[str, ...]) -> None:
        if self.draw(st.booleans()):
            t = self.draw(st.sampled_from(TENSORS))
            self.emit(depth, f"{t} = " + self.fill(self.draw(st.sampled_from(TENSOR_EXPRS))))
        elif loop_vars and self.draw(st.booleans()):
            self.emit(depth, f"k = k + {self.draw(st.sampled_from(loop_vars))}")
        else:
            self.emit(depth, self.fill(self.draw(st.sampled_from(INT_STATEMENTS))))

    def write_if(self, depth: int, loop_vars: tuple[str, ...]) -> None:
        self.emit(depth, f"if {self.condition()}:")
        self.block(depth + 1, loop_vars)
        if self.draw(st.booleans()):
            self.emit(depth, "else:")
            self.block(depth + 1, loop_vars)

    def write_while(self, depth: int, loop_vars: tuple[str, ...]) -> None:
        w = f"w{self.loops}"
        self.loops += 1
        self.emit(depth, f"{w} = 0")
        cond = self.condition()
        self.emit(depth, f"while {w} < {self.draw(st.integers(0, 3))} and ({cond}):")
        self.emit(depth + 1, f"{w} += 1")
        self.block(depth + 1, loop_vars + (w,))

    def write_for(self, depth: int, loop_vars: tuple[str, ...]) -> None:
        v = f"i{self.loops}"
        self.loops += 1
        source = self.draw(st.sampled_from(("range", "range", "tensor", "tuple")))
        if source == "range":
            self.emit(depth, f"for {v} in range({self.fill(self.draw(st.sampled_from(RANGES)))}):")
            self.block(depth + 1, loop_vars + (v,))
            return
        if source == "tensor":
            self.emit(depth, f"for {v} in {self.draw(st.sampled_from(TENSORS))}:")
            self.emit(depth + 1, f"{self.draw(st.sampled_from(TENSORS))} = a + {v}")
        else:
            self.emit(depth, f"for {v} in (1, 2):")
            self.emit(depth + 1, f"k = k + {v}")
        self.block(depth + 1, loop_vars)

    def write_jump(self, depth: int, loop_vars: tuple[str, ...]) -> None:
        jump = self.draw(st.sampled_from(("break", "continue")))
        if self.draw(st.booleans()):
            self.emit(depth, f"if {self.condition()}:")
            depth += 1
        self.emit(depth, jump)

    def write_return(self, depth: int, loop_vars: tuple[str, ...]) -> None:
        self.emit(depth, f"if {self.condition()}:")
        self.emit(depth + 1, f"return {self.ret}")

    def write_try(self, depth: int, loop_vars: tuple[str, ...]) -> None:
        """A try statement whose try block may raise (a `raise` on a run-time condition, an
        index past the end); its except block binds every variable the try block may have
        changed, and its finally block reads nothing the try block changes."""
        self.emit(depth, "try:")
        risky = self.draw(st.sampled_from(RISKY))
        first = self.draw(st.booleans())
        if first:
            self.emit(depth + 1, self.fill(risky))
        self.block(depth + 1, loop_vars, most=2)
        if not first:
            self.emit(depth + 1, self.fill(risky))
        if self.draw(st.integers(0, 3)):
            self.emit(depth, self.draw(st.sampled_from(("except (ValueError, IndexError):",
                                                        "except IndexError:",
                                                        "except Exception:"))))
            self.emit(depth + 1, self.fill(HANDLED))
            if self.draw(st.booleans()):
                self.block(depth + 1, loop_vars, most=1)
            if self.draw(st.booleans()):
                return
        self.emit(depth, "finally:")
        self.emit(depth + 1, self.fill('print("finally", n, {c})'))

    def write_gen(self, depth: int, loop_vars: tuple[str, ...]) -> None:
        """A for loop over a generator (its finally block prints: a break must run it at the
        break), or a sum of one or of a generator expression."""
        form = self.draw(st.sampled_from(("for", "for", "sum", "genexp")))
        count = self.fill(self.draw(st.sampled_from(RANGES[:4])))
        if form == "sum":
            self.emit(depth, self.fill(f"{{t}} = {{t}} + sum(gen_items({{u}}, {count}))"))
            return
        if form == "genexp":
            self.emit(depth, self.fill(f"{{t}} = {{t}} + sum({{u}} * j for j in range({count}))"))
            return
        if depth >= MAX_DEPTH:
            return self.write_assign(depth, loop_vars)
        v = f"g{self.loops}"
        self.loops += 1
        self.emit(depth, self.fill(f"for {v} in gen_items({{u}}, {count}):"))
        self.emit(depth + 1, self.fill(f"{{t}} = {{t}} + {v} * 0.1"))
        self.block(depth + 1, loop_vars + ("k",))

    def write_alias(self, depth: int, loop_vars: tuple[str, ...]) -> None:
        self.emit(depth, self.fill("{t} = {u}"))

    def write_inplace(self, depth: int, loop_vars: tuple[str, ...]) -> None:
        self.emit(depth, self.fill(self.draw(st.sampled_from(INPLACE))))

    def write_append(self, depth: int, loop_vars: tuple[str, ...]) -> None:
        self.emit(depth, self.fill("acc.append({t}.sum() > {c})"))

    def write_helper(self, depth: int, loop_vars: tuple[str, ...]) -> None:
        self.emit(depth, self.fill("{t} = helper({u}, k)"))

    def write_print(self, depth: int, loop_vars: tuple[str, ...]) -> None:
        self.emit(depth, self.fill('print("at", k, m, {t}.sum() > 0)'))

    def write_kind(self, kind: str) -> Callable[[int, tuple[str, ...]], None]:
        def write(depth: int, loop_vars: tuple[str, ...]) -> None:
            self.emit(depth, self.fill(self.draw(st.sampled_from(STATEMENTS[kind]))))
        return write

    def __getattr__(self, name: str) -> Any:
        if name.startswith("write_") and name[6:] in STATEMENTS:
            return self.write_kind(name[6:])
        raise AttributeError(name)

    def source(self) -> str:
        body = "\n".join(self.lines)
        pad = "    " * self.is_cell
        start = ["k = 0", "m = n", "acc = []"] + [line for kind in sorted(set(self.kinds))
                                                  for line in PREAMBLE.get(kind, ())]
        start_text = "".join(f"{pad}    {line}\n" for line in start)
        state = "LOG = []\nSTATS = {'n': 0}\n" if "caller" in self.kinds else ""
        head = (f"import numpy as np\nfrom amber import Parameter, nn\n{HELPER}\n{state}"
                + (CELL if self.is_cell else "\ndef program(a, b, n):\n"))
        return f"{head}{start_text}{body}\n{pad}    return {self.ret}\n"


@st.composite
def programs(draw: Callable[[Any], Any], flavor: str) -> str:
    """The source of one random module defining `program(a, b, n)`."""
    writer = ProgramWriter(draw, FLAVORS[flavor])
    writer.block(0, (), most=6)
    return writer.source()


@pytest.fixture(scope="module")
def program_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Where generated programs are written."""
    return str(tmp_path_factory.mktemp("random_programs"))


@pytest.mark.parametrize("flavor", sorted(FLAVORS))
def test_random_program(flavor, program_dir, capsys):
    """A random program of this flavor agrees compiled and eager on three inputs."""

    @settings(max_examples=_examples(flavor), deadline=None, derandomize=not DEEP, phases=PHASES,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(source=programs(flavor), n=st.integers(0, 3))
    def run(source: str, n: int) -> None:
        note(source)
        is_cell = "class Program" in source
        target = load_source(source, program_dir, "Program" if is_cell else "program")
        try:
            check(Program(target, tuple((a, b, n) for a, b in INPUTS)), capsys)
        except Mismatch as err:
            refusal = err.__cause__ if isinstance(err.__cause__, CompileError) else None
            if (flavor not in MAY_REFUSE or refusal is None
                    or "internal error" in str(refusal)):
                raise
            note(f"refused: {refusal}")

    run()


def test_generator_covers_every_construct():
    """The flavors together can produce every statement kind the generator knows."""
    kinds = {k for ks in FLAVORS.values() for k in ks}
    assert kinds == {"assign", "if", "while", "for", "jump", "return", "print", "alias",
                     "inplace", "append", "helper", "try", "gen"} | set(STATEMENTS)
    assert all(hasattr(ProgramWriter, f"write_{k}") or k in STATEMENTS for k in kinds)
