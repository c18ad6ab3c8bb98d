"""Prompt files: versions gathered once, over every file."""

from __future__ import annotations

from pathlib import Path

from utcgen.pipeline.prompts import load_prompt, prompt_versions
from utcgen.pipeline.resources import shipped


def test_prompt_versions_cover_every_shipped_prompt_file() -> None:
    files = sorted(p.stem for p in shipped("prompts").glob("*.txt"))
    versions = prompt_versions()
    assert sorted(versions) == files
    assert {"goal", "slots", "user_tool_selection", "assistant_argument_filling", "relevancy", "critique",
            "sft_system"} <= set(versions)
    for name in files:
        first = (shipped("prompts") / f"{name}.txt").read_text(encoding="utf-8").splitlines()[0]
        assert versions[name] == first.removeprefix("version:").strip() == load_prompt(name).version


def test_prompt_versions_of_another_directory(tmp_path: Path) -> None:
    (tmp_path / "only.txt").write_text("version: only/3\n=== user\nhello {{name}}\n", encoding="utf-8")
    assert prompt_versions(tmp_path) == {"only": "only/3"}


def test_prompt_versions_is_a_fresh_dict() -> None:
    prompt_versions()["goal"] = "tampered"
    assert prompt_versions()["goal"] == "goal/1"
