"""What the wheel ships and needs: every directory of the package holding Python files is listed
in pyproject.toml's packages (a missing one installs fine and fails at import, as amber.samples
did for the tests), and the declared runtime dependencies are the ones amber imports."""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOT_SHIPPED = {"tests", "benchmarks", "docs", "build"}
"""Top-level directories that are not part of the installed package."""


def _pyproject() -> str:
    return (ROOT / "pyproject.toml").read_text()


def _listed_packages() -> set[str]:
    match = re.search(r"^packages\s*=\s*\[(.*?)\]", _pyproject(), re.S | re.M)
    assert match, "pyproject.toml: no [tool.setuptools] packages list"
    return set(re.findall(r'"([\w.]+)"', match[1]))


def _source_directories() -> set[str]:
    found = set()
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT).parts[:-1]
        if parts and (parts[0] in NOT_SHIPPED or any(p.startswith((".", "_")) or
                                                     p.endswith(".egg-info") for p in parts)):
            continue
        found.add(".".join(("amber", *parts)))
    return found


def test_every_source_directory_is_a_listed_package() -> None:
    missing = _source_directories() - _listed_packages()
    assert not missing, f"pyproject.toml's packages lack {sorted(missing)}: the wheel omits them"


def test_listed_packages_exist() -> None:
    absent = {p for p in _listed_packages()
              if not (ROOT.joinpath(*p.split(".")[1:])).is_dir()}
    assert not absent, f"pyproject.toml lists packages that do not exist: {sorted(absent)}"


def _imported_top_levels() -> set[str]:
    """Top-level modules the shipped package imports (at module level or inside functions)."""
    names = set()
    for module in _source_directories():
        folder = ROOT.joinpath(*module.split(".")[1:])
        # NOTE: samples are scripts run from their folder (train_lenet imports `lenet`)
        siblings = {p.stem for p in folder.glob("*.py")} if module == "amber.samples" else set()
        if module == "amber.samples":  # NOTE: ms_*.py are MindSpore scripts run through the
            siblings.add("mindspore")  # alias (python -m amber.compat): their mindspore is amber
        for path in folder.glob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Import):
                    names.update(a.name.split(".")[0] for a in node.names)
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names.add(node.module.split(".")[0])
        names -= siblings
    return names


def test_dependencies_are_what_amber_imports() -> None:
    match = re.search(r"^dependencies\s*=\s*\[(.*?)\]", _pyproject(), re.S | re.M)
    declared = {re.split(r"[<>=!~ \[]", d)[0] for d in re.findall(r'"([^"]+)"', match[1])}
    imported = {n for n in _imported_top_levels()
                if n not in sys.stdlib_module_names and n != "amber"}
    assert declared <= imported, f"declared but never imported: {sorted(declared - imported)}"
    # NOTE: anything else is optional, imported only where it is used (the samples need
    # scikit-learn and tqdm): each must be in an extra
    extras = _pyproject().split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    for name in imported - declared:
        spelled = {"sklearn": "scikit-learn", "google": "protobuf"}.get(name, name)
        assert f'"{spelled}' in extras, f"amber imports {name}, which no dependency or extra has"
