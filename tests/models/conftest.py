"""The zoo-style models are a package beside these tests (no __init__.py in tests: importlib
import mode), imported as `amber_zoo`."""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
