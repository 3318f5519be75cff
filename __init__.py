"""amber: compile MindSpore-style Python models into static graphs and readable NumPy code."""
from . import ops

__version__ = "0.1.0"
