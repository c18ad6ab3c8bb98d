"""Dataset export: the folder must load as a HF dataset repo and report honest stats."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import yaml

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from datasets import load_dataset  # noqa: E402

from utcgen.pipeline.export import dataset as ds_mod  # noqa: E402
from utcgen.pipeline.export.dataset import (  # noqa: E402
    DIALOGUE_SCHEMA,
    REJECTED_SCHEMA,
    SFT_SCHEMA,
    export_dataset,
    load_config,
)
from utcgen.pipeline.records import Dialogue, Message, ToolCall, Verdict  # noqa: E402
from utcgen.pipeline.export.slicing import sft_prompt_version  # noqa: E402
from tests.factories import make_dialogue, make_tool  # noqa: E402

RUN: dict[str, Any] = {
    "requested": 12,
    "seed": 7,
    "backend": "offline",
    "models": {"user": "offline/template", "assistant": "offline/template"},
    "prompt_versions": {"user": "user/1", "assistant": "assistant/1"},
    "usage": {"calls": 100, "prompt_tokens": 5000, "completion_tokens": 700, "cost_usd": 0.5},
    "wall_time_s": 12.25,
    "catalog": "catalog/tools",
    "config": {"n": 12, "k": 5},
}


def _crafted() -> list[Dialogue]:
    """3 accepted, 5 rejected by each validator stage in turn, 2 rejected before validation."""
    wide = make_tool(
        name="book_travel",
        description="Book a business trip.",
        properties={
            "origin": {"type": "string"},
            "destination": {"type": "string"},
            "depart_on": {"type": "string", "format": "date"},
            "cost_center": {"type": "string"},
            "class": {"type": "string"},
        },
        required=["origin", "destination", "depart_on", "cost_center"],
        line_of_business="travel",
    )
    accepted = [
        make_dialogue(id="a1", argument_filling_turns=1),
        make_dialogue(id="a2", argument_filling_turns=2),
        make_dialogue(
            id="a3",
            seed_tool=wide,
            gold_arguments={"origin": "MUC", "destination": "JFK", "depart_on": "2025-03-04", "cost_center": "CC-17 ü"},
            tool_selection_turns=3,
            argument_filling_turns=2,
        ),
    ]
    rejected = [make_dialogue(id=f"r-{s}", fail_at=s) for s in ("format", "toolcall", "toolargs", "relevancy", "critique")]
    rejected += [
        make_dialogue(id="w1", accepted=False, rejection_reason="wrong tool selected"),
        make_dialogue(id="w2", accepted=False, rejection_reason="wrong tool selected"),
    ]
    return accepted + rejected


def _load(out: Path, config: str, tmp_path: Path) -> Any:
    cache = tmp_path / f"hf-cache-{config}-{len(list(tmp_path.iterdir()))}"
    return load_dataset(str(out), config, cache_dir=str(cache))["train"]


@pytest.fixture()
def exported(tmp_path: Path) -> tuple[Path, list[Dialogue], Any]:
    dialogues = _crafted()
    out = tmp_path / "out"
    summary = export_dataset(dialogues, out, RUN)
    return out, dialogues, summary


def test_summary_counts_and_paths(exported: tuple[Path, list[Dialogue], Any]) -> None:
    out, dialogues, summary = exported
    assert (summary.accepted, summary.rejected, summary.requested) == (3, 7, 12)
    assert summary.sft_rows == sum(len(d.assistant_turns) for d in dialogues if d.accepted) == 3 + 4 + 5
    assert summary.sft_path == out / "data" / "sft" / "train-00000-of-00001.parquet"
    for p in [summary.dialogues_path, summary.sft_path, summary.rejected_path, summary.stats_path, summary.card_path]:
        assert p.is_file()
    assert {p.name for p in summary.plot_paths} == {
        "turns_per_dialogue.png",
        "parameters_per_seed_tool.png",
        "turns_per_phase.png",
    }
    for p in summary.plot_paths:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_sft_config_loads_and_round_trips(exported: tuple[Path, list[Dialogue], Any], tmp_path: Path) -> None:
    out, dialogues, _ = exported
    sft = _load(out, "sft", tmp_path)
    assert sft.num_rows == 12
    assert sft.column_names == SFT_SCHEMA.names
    by_id = {d.id: d for d in dialogues}
    for row in sft:
        d = by_id[row["dialogue_id"]]
        assert d.accepted
        turn = d.assistant_turns[row["turn_index"]]
        assert row["completion"] == [{"role": "assistant", "content": turn.reply_json()}]
        assert row["phase"] == turn.phase
        assert row["prompt"][0]["role"] == "system"
        assert row["seed_tool"] == d.seed_tool.name
        assert [json.loads(t) for t in row["tools"]] == [t.openai_spec() for t in d.candidate_tools]
    a3_rows = [r for r in sft if r["dialogue_id"] == "a3"]
    assert [len(r["prompt"]) for r in a3_rows] == [2, 4, 6, 8, 10]


def test_dialogues_config_round_trips(exported: tuple[Path, list[Dialogue], Any], tmp_path: Path) -> None:
    out, dialogues, _ = exported
    rows = _load(out, "dialogues", tmp_path)
    assert rows.column_names == DIALOGUE_SCHEMA.names
    assert rows["id"] == ["a1", "a2", "a3"]
    for row, d in zip(rows, [d for d in dialogues if d.accepted]):
        assert json.loads(row["gold_arguments"]) == d.gold_arguments
        assert json.loads(row["seed_tool_spec"]) == d.seed_tool.openai_spec()
        assert row["candidate_tools"] == [t.name for t in d.candidate_tools]
        assert row["distractor_tools"] == [t.name for t in d.distractor_tools]
        assert [json.loads(s) for s in row["candidate_tool_specs"]] == [t.openai_spec() for t in d.candidate_tools]
        assert row["user_persona"]["id"] == d.user_persona.id
        assert json.loads(row["user_persona"]["attributes"]) == d.user_persona.attributes
        rebuilt = [
            Message(
                role=m["role"],
                content=m["content"],
                thought=m["thought"],
                tool_calls=[ToolCall(name=c["name"], arguments=json.loads(c["arguments"])) for c in m["tool_calls"]],
                phase=m["phase"],
            )
            for m in row["messages"]
        ]
        assert rebuilt == d.messages
        assert [
            Verdict(validator=v["validator"], passed=v["passed"], reason=v["reason"], details=json.loads(v["details"]))
            for v in row["validation"]
        ] == d.validation
        g = row["generation"]
        assert json.loads(g["models"]) == d.generation.models
        assert json.loads(g["prompt_versions"]) == d.generation.prompt_versions
        assert g["tokens"] == d.generation.usage.prompt_tokens + d.generation.usage.completion_tokens
        assert g["cost_usd"] == pytest.approx(d.generation.usage.cost_usd)
        assert row["num_turns"] == len(d.assistant_turns)
        assert row["tool_selection_turns"] == d.turns_in_phase("tool_selection")
        assert row["argument_filling_turns"] == d.turns_in_phase("argument_filling")


def test_rejected_config_records_why(exported: tuple[Path, list[Dialogue], Any], tmp_path: Path) -> None:
    out, _, _ = exported
    rows = _load(out, "rejected", tmp_path)
    assert rows.column_names == REJECTED_SCHEMA.names
    assert rows.num_rows == 7
    failed = dict(zip(rows["id"], rows["failed_validator"]))
    assert failed == {
        "r-format": "format",
        "r-toolcall": "toolcall",
        "r-toolargs": "toolargs",
        "r-relevancy": "relevancy",
        "r-critique": "critique",
        "w1": None,
        "w2": None,
    }
    assert dict(zip(rows["id"], rows["rejection_reason"]))["w1"] == "wrong tool selected"


def test_no_rejected_still_loads_empty_config(tmp_path: Path) -> None:
    out = tmp_path / "out"
    summary = export_dataset([make_dialogue(id="only")], out, {"backend": "offline"})
    assert summary.rejected == 0
    assert pq.read_schema(summary.rejected_path).equals(REJECTED_SCHEMA, check_metadata=False)
    streamed = load_dataset(str(out), "rejected", split="train", streaming=True)
    assert list(streamed) == []
    assert list(streamed.features) == REJECTED_SCHEMA.names
    rejected = load_config(out, "rejected")
    assert rejected.num_rows == 0
    assert rejected.column_names == REJECTED_SCHEMA.names
    assert rejected.features == streamed.features
    assert _load(out, "dialogues", tmp_path).num_rows == 1
    assert load_config(out, "sft", cache_dir=tmp_path / "c").num_rows == 1 * 3
    assert "Empty in this release: `rejected`" in summary.card_path.read_text()


@pytest.mark.xfail(
    strict=True,
    raises=ValueError,
    reason="datasets 5.2 will not build a split with no rows ('corresponds to no data'); see load_config",
)
def test_plain_load_dataset_of_an_empty_config(tmp_path: Path) -> None:
    out = tmp_path / "out"
    export_dataset([make_dialogue(id="only")], out, {})
    assert _load(out, "rejected", tmp_path).num_rows == 0


def test_nothing_accepted_still_writes_every_config(tmp_path: Path) -> None:
    out = tmp_path / "out"
    summary = export_dataset([make_dialogue(id="x", fail_at="format")], out, {})
    assert (summary.accepted, summary.sft_rows, summary.rejected) == (0, 0, 1)
    for name, schema in (("sft", SFT_SCHEMA), ("dialogues", DIALOGUE_SCHEMA)):
        loaded = load_config(out, name)
        assert (loaded.num_rows, loaded.column_names) == (0, schema.names)
        assert pq.read_schema(out / "data" / name / "train-00000-of-00001.parquet").equals(
            schema, check_metadata=False
        )
    assert _load(out, "rejected", tmp_path).num_rows == 1
    stats = json.loads(summary.stats_path.read_text())
    assert stats["distributions"]["turns_per_dialogue"]["histogram"] == {}
    assert stats["validators"]["stages"]["toolcall"]["evaluated"] == 0


def test_stats_pass_rates_by_hand(exported: tuple[Path, list[Dialogue], Any]) -> None:
    out, _, _ = exported
    stats = json.loads((out / "stats.json").read_text())
    assert stats["counts"] == {"requested": 12, "generated": 10, "accepted": 3, "rejected": 7, "sft_rows": 12}
    stages = stats["validators"]["stages"]
    # format: all 8 validated dialogues; 1 fails. toolcall: 7 reach it; 1 fails. toolargs: 6; 1 fails.
    # relevancy and critique: the 5 that pass every rule; 1 fails each.
    expected = {
        "format": (8, 7),
        "toolcall": (7, 6),
        "toolargs": (6, 5),
        "relevancy": (5, 4),
        "critique": (5, 4),
    }
    assert {k: (v["evaluated"], v["passed"]) for k, v in stages.items()} == expected
    assert stages["toolcall"]["pass_rate"] == pytest.approx(6 / 7, abs=1e-4)
    assert stages["relevancy"]["pass_rate"] == pytest.approx(0.8)
    rej = stats["rejections"]
    assert rej["before_validation"] == 2
    assert rej["before_validation_reasons"] == {"wrong tool selected": 2}
    assert rej["reasons"]["wrong tool selected"] == 2
    assert rej["by_validator"] == {s: 1 for s in expected}
    dist = stats["distributions"]
    assert dist["turns_per_dialogue"]["histogram"] == {"3": 1, "4": 1, "5": 1}
    assert dist["parameters_per_seed_tool"]["histogram"] == {"3": 2, "5": 1}
    assert dist["required_parameters_per_seed_tool"]["histogram"] == {"3": 2, "4": 1}
    assert dist["tool_selection_turns"]["histogram"] == {"2": 2, "3": 1}
    assert dist["argument_filling_turns"]["histogram"] == {"1": 1, "2": 2}
    assert dist["lines_of_business"] == {"procurement": 2, "travel": 1}
    assert stats["usage"]["calls"] == 100 and stats["usage"]["total_tokens"] == 5700
    assert stats["usage_in_dialogues"]["calls"] == 9 * 10
    assert stats["wall_time_s"] == 12.25
    assert stats["acceptance_rate"] == pytest.approx(0.3)


def test_validator_names_are_normalised(tmp_path: Path) -> None:
    d = make_dialogue(id="n", fail_at="toolcall")
    d.validation = [
        Verdict(validator="FormatValidator", passed=True),
        Verdict(validator="tool_call_validator", passed=False, reason="no call"),
    ]
    summary = export_dataset([d], tmp_path / "out", {})
    stages = json.loads(summary.stats_path.read_text())["validators"]["stages"]
    assert (stages["format"]["evaluated"], stages["toolcall"]["evaluated"]) == (1, 1)
    assert stages["toolcall"]["passed"] == 0
    assert stages["toolargs"]["evaluated"] == 0 and stages["toolargs"]["pass_rate"] is None


def _front_matter(card: str) -> dict[str, Any]:
    assert card.startswith("---\n")
    head, _, _ = card[4:].partition("\n---\n")
    return yaml.safe_load(head)


def test_card_yaml_declares_three_configs(exported: tuple[Path, list[Dialogue], Any]) -> None:
    out, _, summary = exported
    card = summary.card_path.read_text()
    meta = _front_matter(card)
    configs = {c["config_name"]: c for c in meta["configs"]}
    assert set(configs) == {"dialogues", "sft", "rejected"}
    for name, c in configs.items():
        assert c["data_files"] == [{"split": "train", "path": f"data/{name}/*.parquet"}]
    assert meta["language"] == ["en"]
    for key in ("license", "task_categories", "tags", "pretty_name", "size_categories"):
        assert meta[key]
    for plot in summary.plot_paths:
        assert f"](plots/{plot.name})" in card
    assert "offline deterministic backend" in card
    assert "| toolcall | rule | 7 | 6 | 85.7% |" in card
    assert 'load_dataset(' in card and '"sft"' in card
    assert f"`{sft_prompt_version()}`" in card


def test_card_for_a_model_backend_has_no_dry_run_notice(tmp_path: Path) -> None:
    summary = export_dataset([make_dialogue()], tmp_path / "out", {"backend": "litellm", "models": {"user": "gpt-x"}})
    card = summary.card_path.read_text()
    assert "Dry-run data" not in card
    assert "`gpt-x`" in card


def _stray_temp_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.startswith(".utcgen-tmp-") or p.suffix == ".part"]


def test_no_temp_files_and_stale_shards_removed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    export_dataset(_crafted(), out, RUN)
    stale = out / "data" / "sft" / "train-00001-of-00002.parquet"
    stale.write_bytes((out / "data" / "sft" / "train-00000-of-00001.parquet").read_bytes())
    export_dataset([make_dialogue(id="solo")], out, RUN)
    assert not stale.exists()
    assert _stray_temp_files(out) == []
    assert _load(out, "sft", tmp_path).num_rows == 3


def test_failed_write_keeps_previous_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    first = export_dataset(_crafted(), out, RUN)
    before = first.dialogues_path.read_bytes()

    def broken_write(table: Any, where: Any, **_: Any) -> None:
        Path(where).write_bytes(b"PAR1 half a file")
        raise OSError("disk full")

    monkeypatch.setattr(ds_mod.pq, "write_table", broken_write)
    with pytest.raises(OSError, match="disk full"):
        export_dataset([make_dialogue(id="new")], out, RUN)
    assert first.dialogues_path.read_bytes() == before
    assert _stray_temp_files(out) == []
    monkeypatch.undo()
    assert _load(out, "dialogues", tmp_path).num_rows == 3


def test_export_passes_the_publisher_checks(exported: tuple[Path, list[Dialogue], Any]) -> None:
    """The folder is what `utcgen publish` uploads: its own validation must accept it as written."""
    from utcgen.pipeline.export.hub import validate_dataset_folder

    out, _, summary = exported
    plan = validate_dataset_folder(out)
    assert plan.rows == {"dialogues": summary.accepted, "sft": summary.sft_rows, "rejected": summary.rejected}
