"""A user's own templates (`prompts_dir`): file-by-file override, checks naming the file, the fingerprint."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

import pytest

from utcgen.pipeline.core.errors import InputError
from utcgen.pipeline.core.resources import shipped
from utcgen.pipeline.settings.config import RunConfig
from utcgen.pipeline.settings.fingerprint import TEMPLATES, changed_settings
from utcgen.pipeline.settings.templates import export_prompts, load_prompt, prompt_versions, prompts_from, shipped_names

LINE = "You keep a pet axolotl named Quillon and mention it once."


def _edited(folder: Path) -> Path:
    """`folder` holding the shipped templates, with one line added to user.txt's system section."""
    export_prompts(folder)
    path = folder / "user.txt"
    text = path.read_text(encoding="utf-8")
    assert "=== system\n" in text
    path.write_text(text.replace("=== system\n", f"=== system\n{LINE}\n", 1), encoding="utf-8")
    return folder


def test_export_writes_every_shipped_template_and_refuses_to_overwrite(tmp_path: Path) -> None:
    written = export_prompts(tmp_path / "mine")
    assert sorted(p.stem for p in written) == sorted(shipped_names())
    for path in written:
        assert path.read_text(encoding="utf-8") == (shipped("prompts") / path.name).read_text(encoding="utf-8")
    (tmp_path / "mine" / "goal.txt").write_text("edited", encoding="utf-8")
    with pytest.raises(InputError, match="--force"):
        export_prompts(tmp_path / "mine")
    assert (tmp_path / "mine" / "goal.txt").read_text(encoding="utf-8") == "edited"
    export_prompts(tmp_path / "mine", force=True)
    assert (tmp_path / "mine" / "goal.txt").read_text(encoding="utf-8") == (shipped("prompts") / "goal.txt").read_text(
        encoding="utf-8")


def test_a_file_in_the_folder_replaces_its_template_and_the_others_stay_shipped(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    user = (shipped("prompts") / "user.txt").read_text(encoding="utf-8")
    (folder / "user.txt").write_text(user.replace("=== system\n", f"=== system\n{LINE}\n", 1), encoding="utf-8")
    with prompts_from(folder):
        assert LINE in load_prompt("user").sections[0][1]
        assert load_prompt("critique") is load_prompt("critique", None)  # not in the folder: the shipped one
        assert load_prompt("critique").source == ""
    assert LINE not in load_prompt("user").sections[0][1]  # left the block: shipped again


def test_the_folder_holds_for_its_own_task_only(tmp_path: Path) -> None:
    """Two runs' attempts on one event loop (a Dask worker with two configurations) each see their own."""
    folder = _edited(tmp_path / "mine")

    async def attempt(own: Path | None) -> bool:
        with prompts_from(own):
            await asyncio.sleep(0.01)  # the other task runs meanwhile
            return LINE in load_prompt("user").sections[0][1]

    async def both() -> list[bool]:
        return list(await asyncio.gather(attempt(folder), attempt(None), attempt(folder)))

    assert asyncio.run(both()) == [True, False, True]


def test_a_malformed_template_is_refused_naming_its_file(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    path = folder / "critique.txt"
    path.write_text("version: critique/9\n=== system\n{% if scenario %}\nunclosed\n=== user\n{{transcript}}\n",
                    encoding="utf-8")
    with pytest.raises(InputError, match=rf"{path}: section '=== system', line 2: Unexpected end of template"):
        prompts_from(folder).__enter__()
    path.write_text("version: critique/9\n=== system\n{{#if scenario}}\nold\n{{/if}}\n=== user\n{{transcript}}\n",
                    encoding="utf-8")
    with pytest.raises(InputError, match=rf"{path}: section '=== system' uses '{{{{#if scenario}}}}', the block syntax "
                                         r"before Jinja; write \{% if name %\}"):
        prompts_from(folder).__enter__()
    path.write_text("version: critique/9\n=== system\nJudge {{colour}}.\n=== user\n{{transcript}}\n", encoding="utf-8")
    with pytest.raises(InputError, match=rf"{path}: unknown name\(s\) colour; this template is given "):
        RunConfig(prompts_dir=str(folder)).fingerprint()
    path.write_text("=== system\nno version line\n", encoding="utf-8")
    with pytest.raises(InputError, match=rf"{path}: first line must be 'version"):
        RunConfig(prompts_dir=str(folder)).fingerprint()
    path.unlink()
    (folder / "usr.txt").write_text("version: usr/1\n=== user\nhi\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"usr\.txt: no shipped template is named 'usr\.txt'"):
        RunConfig(prompts_dir=str(folder)).fingerprint()
    with pytest.raises(InputError, match="no such folder"):
        RunConfig(prompts_dir=str(tmp_path / "missing")).fingerprint()


def test_the_fingerprint_hashes_the_texts_of_edited_templates_only(tmp_path: Path) -> None:
    shipped_run = RunConfig()
    copies = tmp_path / "copies"
    export_prompts(copies)
    # copies left as shipped, or no folder at all: the fingerprint runs made before the setting had
    assert RunConfig(prompts_dir=str(copies)).fingerprint() == shipped_run.fingerprint()
    assert TEMPLATES not in RunConfig(prompts_dir=str(copies)).fingerprint_settings()
    edited = _edited(tmp_path / "edited")
    mine = RunConfig(prompts_dir=str(edited))
    # only the text changed, not the version line: the versions are the same, the fingerprint is not
    with prompts_from(edited):
        inside = prompt_versions()
    assert inside == prompt_versions()
    fp = mine.fingerprint()
    assert fp != shipped_run.fingerprint()
    text = (edited / "user.txt").read_bytes()
    assert mine.fingerprint_settings()[TEMPLATES] == {"user.txt": hashlib.sha256(text).hexdigest()}
    # a resume refused for it names the templates, and which one changed
    assert changed_settings("generate", shipped_run.fingerprint_settings(), mine.fingerprint_settings()) == [TEMPLATES]
    before = mine.fingerprint_settings()
    (edited / "user.txt").write_bytes(text + b"One more line.\n")
    assert changed_settings("generate", before, mine.fingerprint_settings()) == [f"{TEMPLATES}.user.txt"]
    assert mine.fingerprint() != fp
    (edited / "user.txt").write_bytes(text)
    # the folder may move: only the texts count
    edited.rename(tmp_path / "moved")
    assert RunConfig(prompts_dir=str(tmp_path / "moved")).fingerprint() == fp
