"""Bad inputs, part 1: every statement and expression outside the compiled subset (
yield, nested class, import, match, walrus in a while-else condition, set comprehensions,
reserved names) must raise a CompileError at the line marked `# ERR` (see `harness.check_rejected`), never an
internal error or a silent result."""

from harness import check_rejected, f32, runs

POS = f32([1.0, 2.0, 3.0])


def _helper_with_yield(v):
    yield v


@runs(POS)
def helper_with_yield(x):
    g = _helper_with_yield(x)  # ERR
    return list(g)


@runs(POS)
def yield_in_body(x):
    yield x * 2.0  # ERR


@runs(POS)
def class_in_body(x):
    class Box:  # ERR
        pass
    return x


@runs(POS)
def import_in_body(x):
    import math  # ERR
    return x * math.pi


@runs(POS)
def match_statement(x):
    match x.shape[0]:  # ERR
        case 3:
            return x
    return -x


@runs(POS)
def walrus_in_a_while_condition_with_else(x):
    while (s := x.sum()) > 10:  # ERR
        x = x * 0.5
    else:
        s = -s
    return s


@runs(POS)
def set_comprehension(x):
    return len({k for k in range(3)}), x  # ERR


@runs(POS)
def reserved_name(x):
    __amber_tmp = x * 2.0  # ERR
    return __amber_tmp


def test_rejected(program, capsys):
    """A CompileError at the marked line (or eager's exception with a note there)."""
    check_rejected(program, capsys)
