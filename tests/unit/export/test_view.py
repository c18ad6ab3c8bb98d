"""`utcgen view DIR`: one self-contained HTML page of a folder's dialogues, every text escaped."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.factories import make_dialogue
from tests.support.tool_results import with_results
from utcgen.pipeline.cli import main


def _folder(tmp_path: Path) -> Path:
    good = make_dialogue(id="good-1", accepted=True)
    msgs = [m.model_copy() for m in good.messages]
    msgs[0] = msgs[0].model_copy(update={"content": "<script>alert('x')</script> & please help"})
    good = good.model_copy(update={"messages": msgs})
    bad = make_dialogue(id="bad-1", accepted=False).model_copy(update={"rejection_reason": "toolargs: wrong value"})
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "records.jsonl").write_text(good.model_dump_json() + "\n" + bad.model_dump_json() + "\n")
    return folder


def test_view_writes_one_escaped_page_beside_the_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _folder(tmp_path)
    assert main(["view", str(folder)]) == 0
    page = tmp_path / "run.html"
    assert capsys.readouterr().out.strip() == str(page)
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and "http" not in html.split("<body>")[0]  # nothing fetched
    assert "<script>alert" not in html and "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; please help" in html
    assert html.index('href="#good-1"') < html.index('href="#bad-1"')  # accepted first
    assert "toolargs: wrong value" in html and "2 dialogues (1 accepted)" in html
    assert not (folder / "run.html").exists()


def test_view_takes_an_out_file_and_refuses_a_missing_folder(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    assert main(["view", str(folder), "--out", str(tmp_path / "page.html")]) == 0
    assert (tmp_path / "page.html").is_file()
    assert main(["view", str(tmp_path / "nope")]) == 2


def test_view_shows_a_tool_turn_with_the_call_it_answers(tmp_path: Path) -> None:
    d = with_results(make_dialogue(id="res-1"), error_first=True)
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "records.jsonl").write_text(d.model_dump_json() + "\n")
    assert main(["view", str(folder)]) == 0
    html = (tmp_path / "run.html").read_text()
    ids = [m.tool_call_id for m in d.messages if m.role == "tool"]
    assert len(ids) == 2 and '<div class="msg tool">' in html and all(f"result of {i}" in html for i in ids)
    assert "&#34;invalid_value&#34;" in html or "&quot;invalid_value&quot;" in html  # the result, escaped
