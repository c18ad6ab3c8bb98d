"""Size limits of issue 35: no module over 400 lines and no function over 80, so each reads in one sitting."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.paths import REPO as ROOT

FOLDERS = ("pipeline", "validators", "flows")
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 80


def _sources() -> list[Path]:
    return sorted(p for folder in FOLDERS for p in (ROOT / folder).rglob("*.py"))


def _too_long(path: Path) -> tuple[list[str], list[str]]:
    """The module itself when over its limit, and each function (method, nested function) over its own."""
    text = path.read_text(encoding="utf-8")
    name = path.relative_to(ROOT).as_posix()
    lines = len(text.splitlines())
    modules = [f"{name}: {lines} lines"] if lines > MAX_MODULE_LINES else []
    functions = [
        f"{name}:{node.lineno} {node.name}: {node.end_lineno - node.lineno + 1} lines"
        for node in ast.walk(ast.parse(text, filename=name))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    return modules, functions


def test_the_scan_finds_the_package() -> None:
    assert len(_sources()) > 50, f"found only {len(_sources())} modules under {ROOT}"


def test_no_module_over_400_lines() -> None:
    long = [m for path in _sources() for m in _too_long(path)[0]]
    assert not long, "modules over 400 lines:\n" + "\n".join(long)


def test_no_function_over_80_lines() -> None:
    long = [f for path in _sources() for f in _too_long(path)[1]]
    assert not long, "functions over 80 lines:\n" + "\n".join(long)
