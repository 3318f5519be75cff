"""Programs several transform tests differentiate (importable as a top-level module, like
`numeric.py`)."""
from amber import ops


def looping(x, y):
    """A `while` whose trip count and `if` arm depend on the data."""
    s = x * y
    i = 0
    while s.sum() < 6.0 and i < 12:
        if s.mean() > 1.0:
            s = s * 1.5 + ops.sin(x)
        else:
            s = s + 0.7 * y
        i += 1
    return s * y
