"""`utcgen audit`: every rule's pass rate on a folder of dialogues in our record shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.factories import make_dialogue
from tests.support.tool_results import with_results
from utcgen.pipeline.cli import main
from utcgen.pipeline.export.audit import audit_dialogues as audit
from utcgen.pipeline.export.dataset import export_dataset
from utcgen.pipeline.export.reading import dialogue_from_row, load_dialogues
from utcgen.pipeline.export.run_info import RunInfo
from utcgen.validators.cascade import RULE_STAGES, RULES, up_to_results


def _bad():
    d = make_dialogue(id="bad")
    msgs = [m.model_copy() for m in d.messages]
    msgs[0] = msgs[0].model_copy(update={"content": f"Please run {d.seed_tool.name} for me."})
    return d.model_copy(update={"messages": msgs, "accepted": False})


def test_audit_runs_every_rule_on_every_dialogue(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good, bad = make_dialogue(id="good", accepted=True), _bad()
    (tmp_path / "records.jsonl").write_text(good.model_dump_json() + "\n" + bad.model_dump_json() + "\n")
    dialogues, source = load_dialogues(tmp_path)
    assert [d.id for d in dialogues] == ["good", "bad"] and "JSON Lines" in source
    report = audit(dialogues)
    assert list(report["validators"]) == list(RULE_STAGES)
    assert report["validators"]["name_leak"]["passed"] == 1 and report["validators"]["name_leak"]["failures"] == {"name_token": 1}
    assert report["validators"]["format"]["pass_rate"] == 1.0
    assert main(["audit", str(tmp_path), "--no-fluency"]) == 0
    out = capsys.readouterr().out
    assert "name_leak" in out and "50.0%" in out
    assert main(["audit", str(tmp_path), "--json", "--no-fluency"]) == 0
    assert json.loads(capsys.readouterr().out)["dialogues"] == 2


def test_audit_reads_parquet_rows_back_as_dialogues(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from utcgen.pipeline.export.flatten import dialogue_row

    good = make_dialogue(id="good", accepted=True)
    folder = tmp_path / "data" / "dialogues"
    folder.mkdir(parents=True)
    row = dialogue_row(good).model_dump(mode="json")
    pq.write_table(pa.Table.from_pylist([row]), folder / "train-00000-of-00001.parquet")
    dialogues, source = load_dialogues(tmp_path)
    assert "parquet" in source and len(dialogues) == 1
    back = dialogues[0]
    assert back.seed_tool.name == good.seed_tool.name and back.gold_arguments == good.gold_arguments
    assert [m.content for m in back.messages] == [m.content for m in good.messages]
    assert dialogue_from_row(row, True).accepted


def test_audit_on_a_missing_folder_is_an_input_error(tmp_path: Path) -> None:
    assert main(["audit", str(tmp_path / "nope")]) != 0


def test_audit_reports_the_quality_figures_with_targets(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good, bad = make_dialogue(id="good", accepted=True), _bad()
    (tmp_path / "records.jsonl").write_text(good.model_dump_json() + "\n" + bad.model_dump_json() + "\n")
    assert main(["audit", str(tmp_path), "--json", "--no-fluency"]) == 0
    figures = json.loads(capsys.readouterr().out)["quality"]
    assert set(figures) == {"seed_closest", "role_mismatch", "description_echo", "repeated_runs", "shared_values", "non_whole",
                            "opening_trigrams", "stock_lines", "fluency_user", "fluency_assistant", "acceptance"}
    assert figures["acceptance"]["value"] == 0.5 and figures["acceptance"]["met"] is True
    assert figures["role_mismatch"]["dialogues"] == 1 and figures["role_mismatch"]["target"] == "<= 5%"
    assert figures["fluency_user"]["value"] is None and "not measured" in figures["fluency_user"]["reason"]
    assert main(["audit", str(tmp_path), "--no-fluency"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("acceptance "))
    assert "Quality" in out and row.split()[:5] == ["acceptance", "50.0%", ">=", "30%", "pass"]
    fluency = next(line for line in out.splitlines() if line.startswith("fluency_user "))
    assert fluency.split()[:5] == ["fluency_user", "-", "<=", "1.5", "-"] and "not measured" in fluency


def test_audit_reads_a_dialogue_with_results_as_the_cascade_does(tmp_path: Path) -> None:
    """Every rule reads a dialogue up to its first tool result, as the cascade does, so turns after the call
    fail none of them; the answers rule is listed, over the dialogues holding a result, only when one does."""

    plain = make_dialogue(id="plain")
    results = [with_results(make_dialogue(id="r1")), with_results(make_dialogue(id="r2"), error_first=True)]
    assert "answers" not in audit([plain])["validators"]
    report = audit([plain, *results])
    assert list(report["validators"]) == [*RULE_STAGES, "answers"]
    assert all(s["pass_rate"] == 1.0 and s["checked"] == 3 for name, s in report["validators"].items()
               if name != "answers")
    assert report["validators"]["answers"]["checked"] == 2
    # the whole dialogues fail rules that read a disambiguation ending at its call: the audit does not judge those
    toolcall = next(r for r in RULES if r.name == "toolcall")
    assert not toolcall.run(results[0]).passed and toolcall.run(up_to_results(results[0])).passed
    assert report["scenarios"][plain.scenario]["pass_rates"]["answers"] == 1.0
    # read back from the exported folder, the same figures
    out = tmp_path / "out"
    export_dataset([plain, *results], out, RunInfo(backend="offline", models={}, seed=1))
    dialogues, _ = load_dialogues(out)
    assert audit(dialogues)["validators"] == report["validators"]
