"""The README's facts about the shipped catalog and the cascade are the code's, so they cannot go stale."""

from __future__ import annotations

import re

from tests.support.paths import REPO
from utcgen.pipeline.core.resources import shipped
from utcgen.pipeline.ingest.reader import load_catalog
from utcgen.validators import cascade

README = (REPO / "README.md").read_text(encoding="utf-8")
NUMBERS = {"two": 2, "three": 3, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14}


def test_readme_counts_the_shipped_tools_lines_of_business_and_personas() -> None:
    tools = list(load_catalog(str(shipped("catalog", "tools"))))
    personas = [line for line in shipped("catalog", "personas.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    found = re.search(r"`catalog/tools/`, (\d+)\s+tools over (\d+) lines of business", README)
    assert found, "the README no longer states the shipped catalog's size"
    assert (int(found[1]), int(found[2])) == (len(tools), len({t.line_of_business for t in tools}))
    assert f"{len(personas)} personas" in README


def test_readme_names_every_cascade_stage_and_counts_them() -> None:
    found = re.search(r"\*\*Validator cascade\.\*\* (\w+) rules in order", README)
    assert found and NUMBERS.get(found[1].lower()) == len(cascade.RULES)
    judges = re.search(rf"then ({'|'.join(NUMBERS)}) LLM judges", README)
    assert judges and NUMBERS[judges[1]] == len(cascade.JUDGES)
    section = README[found.start():README.index("5. **Dataset.**")]
    for name in cascade.STAGES:
        assert re.search(rf"\b{name}\b", section), f"stage {name} missing from the README"


def test_readme_evaluation_commands_write_only_under_eval_out() -> None:
    """The evaluation commands as the README gives them never write into the repository's bench/ or an
    untracked runs/: every folder they write is under eval-out/ (git-ignored, removed by `make clean`)."""
    commands = [line for line in README.splitlines() if "utcgen eval " in line]
    assert len(commands) >= 5
    for line in commands:
        for flag in ("--out", "--benchmark"):
            for path in re.findall(rf"{flag} (\S+)", line):
                assert path.startswith("eval-out/"), line
        if " compare " in line:
            assert all(p.startswith("eval-out/") for p in line.split(" compare ", 1)[1].split()), line
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    gitignore = (REPO / ".gitignore").read_text(encoding="utf-8")
    assert "eval-out/" in gitignore.splitlines() and re.search(r"^clean:\n\trm -rf [^\n]*\beval-out\b", makefile, re.M)
