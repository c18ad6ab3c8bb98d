"""The import rules of pyproject's [tool.importlinter] hold: one test per contract, named by its id."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib

import pytest

from tests.support.paths import REPO

CONTRACTS = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]


@pytest.fixture(scope="module")
def lint_output() -> str:
    """`lint-imports` over the checkout (graph built afresh: no cache), its whole report."""
    result = subprocess.run(
        [sys.executable, "-c", "from importlinter.cli import lint_imports_command; lint_imports_command()",
         "--no-cache", "--no-logo"],
        cwd=REPO, capture_output=True, text=True, timeout=120)
    output = result.stdout + result.stderr
    assert re.search(r"Contracts: \d+ kept, \d+ broken", output), output  # it ran and checked
    return output


def test_every_contract_has_an_id() -> None:
    ids = [c.get("id") for c in CONTRACTS]
    assert len(CONTRACTS) >= 4 and all(ids) and len(set(ids)) == len(ids), ids


@pytest.mark.parametrize("contract", CONTRACTS, ids=[c.get("id", "?") for c in CONTRACTS])
def test_contract_is_kept(lint_output: str, contract: dict) -> None:
    line = re.search(rf"^{re.escape(contract['name'])}\s*(KEPT|BROKEN)\b", lint_output, re.M)
    assert line, f"contract {contract['id']!r} was not checked:\n{lint_output}"
    assert line.group(1) == "KEPT", (
        f"import rule {contract['id']!r} broken: {contract['name']}\n{_details(lint_output, contract['name'])}")


def _details(output: str, name: str) -> str:
    """This contract's part of the report's 'Broken contracts' section: each offending import chain."""
    broken = output[output.find("Broken contracts"):]
    header = re.search(rf"^{re.escape(name)}\n-+\n", broken, re.M)
    if not header:
        return output
    rest = broken[header.end():]
    following = [m.start() for c in CONTRACTS if c["name"] != name
                 for m in re.finditer(rf"^{re.escape(c['name'])}\n-+\n", rest, re.M)]
    return rest[:min(following, default=len(rest))].strip()
