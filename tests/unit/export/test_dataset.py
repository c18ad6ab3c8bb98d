"""Dataset export: the folder must load as a HF dataset repo and report honest stats."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import yaml

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


from tests.support.factories import make_dialogue, make_tool, wrong_selection
from tests.support.tool_results import with_results
from utcgen.pipeline.core.records import Dialogue, Message, ToolCall, Usage, Verdict
from utcgen.pipeline.dialogue.labels import label_turn
from utcgen.pipeline.export import dataset as ds_mod
from utcgen.pipeline.export.card import split_bytes
from utcgen.pipeline.export.dataset import export_dataset, load_split
from utcgen.pipeline.export.folder import DatasetFolder
from utcgen.pipeline.export.reading import load_dialogues
from utcgen.pipeline.export.rows import schema
from utcgen.pipeline.export.run_info import RunInfo
from utcgen.pipeline.settings.templates import prompt_versions

DIALOGUE_SCHEMA, SFT_SCHEMA, REJECTED_SCHEMA = schema("dialogues"), schema("sft"), schema("rejected")
MODELS = {"user": "offline/template", "assistant": "offline/template"}
RUN = RunInfo(
    requested=12,
    seed=7,
    backend="offline",
    models=MODELS,
    prompt_versions={"user": "user/1", "assistant": "assistant/1"},
    usage=Usage(calls=100, prompt_tokens=5000, completion_tokens=700, cost_usd=0.5),
    wall_time_s=12.25,
    catalog="catalog/tools",
    config={"n": 12, "k": 5},
)


def _run(**overrides: Any) -> RunInfo:
    """Run facts with only what RunInfo requires, plus `overrides`."""
    return RunInfo(**{"backend": "offline", "models": MODELS, "seed": 7, **overrides})


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
    from datasets import load_dataset

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
        # The chat format, decoded by `datasets` from the Json feature: objects, not text.
        (completion,) = row["completion"]
        assert completion["role"] == "assistant" and completion["content"] == turn.content
        assert completion["reasoning_content"] == (turn.thought or "")
        assert completion.get("tool_calls", []) == [
            {"type": "function", "function": {"name": c.name, "arguments": c.arguments}} for c in turn.tool_calls
        ]
        assert row["phase"] == turn.phase
        assert row["prompt"][0]["role"] == "system"
        assert row["seed_tool"] == d.seed_tool.name
        assert row["tools"] == [t.openai_spec() for t in d.candidate_tools]
    a3_rows = [r for r in sft if r["dialogue_id"] == "a3"]
    assert [len(r["prompt"]) for r in a3_rows] == [2, 4, 6, 8, 10]
    from datasets import Json, List

    assert all(sft.features[c] == List(Json()) for c in ("tools", "prompt", "completion"))


def test_sft_json_format_keeps_the_reply_string(tmp_path: Path) -> None:
    d = make_dialogue(id="j")
    out = tmp_path / "out"
    export_dataset([d], out, _run(), sft_format="json")
    sft = _load(out, "sft", tmp_path)
    assert [r["completion"] for r in sft] == [
        [{"role": "assistant", "content": t.reply_json()}] for t in d.assistant_turns
    ]
    assert sft[0]["tools"] == [t.openai_spec() for t in d.candidate_tools]
    stats = json.loads((out / "stats.json").read_text())
    assert stats["sft_format"] == "json"
    assert "**json** format" in (out / "README.md").read_text()


def test_length_stats_in_stats_and_card(exported: tuple[Path, list[Dialogue], Any]) -> None:
    out, _, _ = exported
    lengths = json.loads((out / "stats.json").read_text())["lengths"]
    assert lengths["method"] == "estimate" and lengths["tokenizer"] is None
    for part in ("prompt", "completion", "total"):
        q = lengths["sft"][part]
        assert 0 < q["min"] <= q["median"] <= q["p95"] <= q["p99"] <= q["max"]
    assert lengths["suggested_max_length"] >= lengths["sft"]["total"]["p99"]
    assert lengths["suggested_max_length"] % 64 == 0
    card = (out / "README.md").read_text()
    assert "## Token lengths" in card and f"max_length={lengths['suggested_max_length']}" in card


def test_stock_lines_and_fluency_in_stats_and_card(exported: tuple[Path, list[Dialogue], Any]) -> None:
    from utcgen.pipeline.export.quality import stock_lines
    out, dialogues, _ = exported
    quality = json.loads((out / "stats.json").read_text())["quality"]
    share, count, top = stock_lines([d for d in dialogues if d.accepted])
    assert quality["stock_lines"]["value"] == share and quality["stock_lines"]["stock_lines"] == count > 0
    assert [t["text"] for t in quality["stock_lines"]["top"]] == [text for text, _ in top]
    assert quality["fluency_user"]["value"] is None and "not measured" in quality["fluency_user"]["reason"]
    card = (out / "README.md").read_text()
    assert "## Wording" in card and f'"{top[0][0]}" ({top[0][1]:.1%})' in card
    assert "`export.fluency_turns`" in card  # the run did not ask for fluency: the card says how to


def test_card_declares_json_features_per_config(exported: tuple[Path, list[Dialogue], Any]) -> None:
    from datasets import Features

    out, _, _ = exported
    meta = yaml.safe_load((out / "README.md").read_text().split("---")[1])
    info = {entry["config_name"]: entry["features"] for entry in meta["dataset_info"]}
    assert set(info) == {"dialogues", "sft", "preference", "rejected"}
    for name, features in info.items():
        assert Features._from_yaml_list(features) == Features.from_arrow_schema(schema(name))
    assert {"name": "prompt", "list": "json"} in info["sft"]


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
    summary = export_dataset([make_dialogue(id="only")], out, _run())
    assert summary.rejected == 0
    assert pq.read_schema(summary.rejected_path).equals(REJECTED_SCHEMA, check_metadata=False)
    from datasets import load_dataset

    streamed = load_dataset(str(out), "rejected", split="train", streaming=True)
    assert list(streamed) == []
    assert list(streamed.features) == REJECTED_SCHEMA.names
    rejected = load_split(out, "rejected")
    assert rejected.num_rows == 0
    assert rejected.column_names == REJECTED_SCHEMA.names
    assert rejected.features == streamed.features
    assert _load(out, "dialogues", tmp_path).num_rows == 1
    assert load_split(out, "sft", cache_dir=tmp_path / "c").num_rows == 1 * 3
    card = summary.card_path.read_text()
    assert "Empty in this release: `rejected`." in card
    assert "`utcgen.pipeline.export.dataset.load_split(folder, name)`" in card


def test_nothing_accepted_still_writes_every_config(tmp_path: Path) -> None:
    out = tmp_path / "out"
    summary = export_dataset([make_dialogue(id="x", fail_at="format")], out, _run())
    assert (summary.accepted, summary.sft_rows, summary.rejected) == (0, 0, 1)
    for name, expected in (("sft", SFT_SCHEMA), ("dialogues", DIALOGUE_SCHEMA)):
        loaded = load_split(out, name)
        assert (loaded.num_rows, loaded.column_names) == (0, expected.names)
        assert pq.read_schema(out / "data" / name / "train-00000-of-00001.parquet").equals(
            expected, check_metadata=False
        )
    assert _load(out, "rejected", tmp_path).num_rows == 1
    stats = json.loads(summary.stats_path.read_text())
    assert stats["distributions"]["turns_per_dialogue"]["histogram"] == {}
    assert stats["validators"]["stages"]["toolcall"]["evaluated"] == 0


def test_stats_pass_rates_by_hand(exported: tuple[Path, list[Dialogue], Any]) -> None:
    out, _, _ = exported
    stats = json.loads((out / "stats.json").read_text())
    assert stats["counts"] == {"requested": 12, "generated": 10, "accepted": 3, "rejected": 7, "sft_rows": 12,
                               "preference_rows": sum(stats["preference"]["patterns"].values())}
    stages = stats["validators"]["stages"]
    # format: all 8 validated dialogues; 1 fails. toolcall: 7 reach it; 1 fails. grounding: 6, all
    # pass. toolargs: 6; 1 fails.
    # relevancy and critique: the 5 that pass every rule; 1 fails each.
    expected = {
        "format": (8, 7),
        "toolcall": (7, 6),
        "grounding": (6, 6),
        "toolargs": (6, 5),
        "relevancy": (5, 4),
        "critique": (5, 4),
    }
    from utcgen.validators.cascade import RULE_STAGES

    shortcut_rules = {s: (5, 5) for s in RULE_STAGES[4:]}  # name_leak ... persona_fit: reached by the 5, all pass
    assert {k: (v["evaluated"], v["passed"]) for k, v in stages.items()} == {**expected, **shortcut_rules}
    assert stages["toolcall"]["pass_rate"] == pytest.approx(6 / 7, abs=1e-4)
    assert stages["relevancy"]["pass_rate"] == pytest.approx(0.8)
    rej = stats["rejections"]
    assert rej["before_validation"] == 2
    assert rej["before_validation_reasons"] == {"wrong tool selected": 2}
    assert rej["reasons"]["wrong tool selected"] == 2
    assert rej["by_validator"] == {s: 1 for s, (evaluated, passed) in expected.items() if passed < evaluated}
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


def test_a_rejection_before_validation_is_no_stage(tmp_path: Path) -> None:
    """The synthesis step records a wrong selection as a `selection` verdict: not a cascade stage."""
    d = wrong_selection("sel")
    summary = export_dataset([d, make_dialogue(id="ok")], tmp_path / "out", _run())
    stats = json.loads(summary.stats_path.read_text())
    from utcgen.validators.cascade import STAGES  # the cascade's stage list, shortcut rules included

    assert list(stats["validators"]["stages"]) == list(STAGES)
    assert stats["validators"]["stages"]["format"]["evaluated"] == 1
    assert stats["rejections"]["by_validator"] == {}
    assert stats["rejections"]["before_validation"] == 1
    assert stats["rejections"]["before_validation_reasons"] == {"selection: wrong tool selected": 1}
    rejected = pq.read_table(summary.rejected_path).to_pylist()
    assert [r["failed_validator"] for r in rejected] == [None]
    assert [v["validator"] for v in rejected[0]["validation"]] == ["selection"]
    assert "| selection |" not in summary.card_path.read_text()


def _front_matter(card: str) -> dict[str, Any]:
    assert card.startswith("---\n")
    head, _, _ = card[4:].partition("\n---\n")
    return yaml.safe_load(head)


def test_card_yaml_declares_four_configs(exported: tuple[Path, list[Dialogue], Any]) -> None:
    _, _, summary = exported
    card = summary.card_path.read_text()
    meta = _front_matter(card)
    configs = {c["config_name"]: c for c in meta["configs"]}
    assert set(configs) == {"dialogues", "sft", "preference", "rejected"}
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
    assert "| user | `user/1` |" in card  # the run's prompt versions, not the shipped ones
    assert "| Wall time (every session of the run, resumes added) | 12.2 s |" in card
    assert "| Tokens | 5000 prompt + 700 completion |" in card


def test_card_defaults_to_the_shipped_prompt_versions(tmp_path: Path) -> None:
    summary = export_dataset([make_dialogue()], tmp_path / "out", _run())
    card = summary.card_path.read_text()
    versions = prompt_versions()
    assert len(versions) >= 9 and versions["sft_system"] == "sft_system/1"
    for name, version in versions.items():
        assert f"| {name} | `{version}` |" in card
    assert json.loads(summary.stats_path.read_text())["run"]["prompt_versions"] == versions


def test_card_for_a_model_backend_has_no_dry_run_notice(tmp_path: Path) -> None:
    summary = export_dataset([make_dialogue()], tmp_path / "out", _run(backend="litellm", models={"user": "gpt-x"}))
    card = summary.card_path.read_text()
    assert "Dry-run data" not in card
    assert "`gpt-x`" in card


def _stray_temp_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.startswith(".utcgen-tmp-") or p.suffix == ".part"]


def test_no_temp_files_and_stale_shards_removed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    export_dataset(_crafted(), out, RUN)
    stale = out / "data" / "sft" / "train-00001-of-00002.parquet"
    DatasetFolder(out).claim(stale)  # a shard an earlier write of utcgen made (listed in the folder's manifest)
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

    def broken_row_group(writer: Any, table: Any, *args: Any, **kwargs: Any) -> None:
        real_row_group(writer, table.slice(0, 1))  # part of the rows reached the staged shard
        raise OSError("disk full")

    real_row_group = ds_mod.pq.ParquetWriter.write_table
    monkeypatch.setattr(ds_mod.pq, "write_table", broken_write)
    monkeypatch.setattr(ds_mod.pq.ParquetWriter, "write_table", broken_row_group)  # the export streams row groups
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
    assert plan.rows == {"dialogues": summary.accepted, "sft": summary.sft_rows, "preference": summary.preference_rows,
                         "rejected": summary.rejected}


def test_parquet_schemas_are_the_published_ones() -> None:
    """The schemas derived from the row models, spelled out: a change here changes every consumer's data."""
    import pyarrow as pa

    s, i = pa.string(), pa.int64()
    js = pa.list_(pa.json_())
    assert SFT_SCHEMA.equals(
        pa.schema(
            [("dialogue_id", s), ("turn_index", i), ("phase", s), ("seed_tool", s), ("tools", js),
             ("prompt", js), ("completion", js), ("scenario", s), ("action", s), ("act", s),
             ("gold_call", pa.json_())]
        )
    )
    assert schema("preference").equals(
        pa.schema(
            [("dialogue_id", s), ("turn_index", i), ("scenario", s), ("pattern", s), ("action", s), ("tools", js),
             ("prompt", js), ("chosen", js), ("rejected", js)]
        )
    )
    persona = pa.struct(
        [("id", s), ("text", s), ("role", s), ("seniority", s), ("line_of_business", s), ("style", s),
         ("attributes", s)]
    )
    message = pa.struct(
        [("role", s), ("content", s), ("thought", s),
         ("tool_calls", pa.list_(pa.struct([("name", s), ("arguments", s)]))), ("phase", s), ("action", s),
         ("act", s), ("act_candidates", pa.list_(s)), ("tool_call_id", s)]
    )
    verdict = pa.struct([("validator", s), ("passed", pa.bool_()), ("reason", s), ("details", s)])
    generation = pa.struct(
        [("utcgen_version", s), ("backend", s), ("models", s), ("prompt_versions", s), ("seed", i), ("attempt", i),
         ("calls", i), ("prompt_tokens", i), ("completion_tokens", i), ("tokens", i), ("cached_calls", i),
         ("cost_usd", pa.float64()), ("created_at", s)]
    )
    dialogue = pa.schema(
        [("id", s), ("seed_tool", s), ("seed_tool_spec", s), ("user_persona", persona), ("goal", s),
         ("gold_arguments", s), ("distractor_tools", pa.list_(s)), ("candidate_tools", pa.list_(s)),
         ("candidate_tool_specs", pa.list_(s)), ("messages", pa.list_(message)), ("validation", pa.list_(verdict)),
         ("generation", generation), ("scenario", s), ("scenario_info", s), ("q_star", i), ("num_turns", i), ("tool_selection_turns", i), ("argument_filling_turns", i)]
    )
    assert DIALOGUE_SCHEMA.equals(dialogue)
    assert REJECTED_SCHEMA.equals(dialogue.append(pa.field("rejection_reason", s)).append(pa.field("failed_validator", s)))


def _section(card: str, heading: str) -> list[str]:
    """The lines under a markdown heading, up to the next heading of any level."""
    lines = card.splitlines()
    start = lines.index(heading) + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("#")), len(lines))
    return lines[start:end]


def _tables(lines: list[str]) -> list[list[list[str]]]:
    """Every markdown table in `lines`, as rows of cells, header and rule lines dropped."""
    tables: list[list[list[str]]] = []
    current: list[str] = []
    for line in [*lines, ""]:
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append([[c.strip() for c in row.strip("|").split(" | ")] for row in current[2:]])
            current = []
    return tables


def test_card_documents_every_column_from_the_row_models(exported: tuple[Path, list[Dialogue], Any]) -> None:
    from utcgen.pipeline.export.column_types import columns
    from utcgen.pipeline.export.rows import CONFIG_ROWS, DialogueRow

    _, _, summary = exported
    card = summary.card_path.read_text()
    for name, model in CONFIG_ROWS.items():
        heading = f"### `{name}` (default)" if name == "sft" else f"### `{name}`"
        [documented] = _tables(_section(card, heading))
        expected = columns(model)
        if name == "rejected":
            assert "Same fields as `dialogues`, plus:" in _section(card, heading)
            expected = [c for c in expected if c.name not in {c.name for c in columns(DialogueRow)}]
        assert documented == [[f"`{c.name}`", c.type, c.description] for c in expected]
        assert all(c.description for c in expected), [c.name for c in expected if not c.description]
    # Top-level columns are the parquet columns, nested ones their struct fields.
    assert [c.name for c in columns(DialogueRow) if "." not in c.name] == DIALOGUE_SCHEMA.names
    rows = {c.name: c for c in columns(DialogueRow)}
    assert rows["messages[].tool_calls[].arguments"].type == "JSON string"
    assert rows["candidate_tool_specs"].type == "list of JSON string"
    assert rows["generation"].type == "struct" and rows["generation.cost_usd"].type == "float"


def test_card_stats_and_parquet_tell_one_story(tmp_path: Path) -> None:
    """Counts and per-stage pass rates read from README.md, stats.json and the parquet files agree."""
    selection = wrong_selection("sel")
    dialogues = [*_crafted(), selection, make_dialogue(id="r-toolargs-2", fail_at="toolargs")]
    out = tmp_path / "out"
    summary = export_dataset(dialogues, out, RUN)
    card = summary.card_path.read_text()
    stats = json.loads(summary.stats_path.read_text())
    parquet = {name: pq.read_table(out / "data" / name / ds_mod.SHARD).to_pylist() for name in ds_mod.CONFIGS}

    # Counts.
    from_parquet = {
        "generated": len(parquet["dialogues"]) + len(parquet["rejected"]),
        "accepted": len(parquet["dialogues"]),
        "rejected": len(parquet["rejected"]),
        "sft_rows": len(parquet["sft"]),
        "preference_rows": len(parquet["preference"]),
    }
    labels = {
        "Dialogues generated": "generated",
        "Accepted (`dialogues`)": "accepted",
        "Rejected (`rejected`)": "rejected",
        "SFT rows (`sft`)": "sft_rows",
        "Preference pairs (`preference`)": "preference_rows",
    }
    [counts] = _tables(_section(card, "## Counts"))
    from_card = {labels[label]: int(value) for label, value in counts if label in labels}
    from_stats = {key: stats["counts"][key] for key in labels.values()}
    assert from_card == from_stats == from_parquet
    assert {k: from_card[k] for k in ("generated", "accepted", "rejected", "sft_rows")} == \
        {"generated": 12, "accepted": 3, "rejected": 9, "sft_rows": 12}
    assert from_card["preference_rows"] > 0
    assert dict(counts)["Acceptance rate"] == f"{3 / 12:.1%}"

    # Per-stage pass rates, recomputed from the verdicts stored in the parquet files.
    evaluated: dict[str, list[bool]] = {}
    for row in parquet["dialogues"] + parquet["rejected"]:
        for v in row["validation"]:
            if v["validator"] in stats["validators"]["order"]:
                evaluated.setdefault(v["validator"], []).append(v["passed"])
    from_parquet_stages = {
        stage: (len(results), sum(results), f"{sum(results) / len(results):.1%}") for stage, results in evaluated.items()
    }
    pass_rates, stopped_at, _reasons = _tables(_section(card, "### Validator pass rates"))
    from_card_stages = {stage: (int(n), int(ok), rate) for stage, _kind, n, ok, rate in pass_rates}
    from_stats_stages = {
        stage: (s["evaluated"], s["passed"], f"{s['pass_rate']:.1%}") for stage, s in stats["validators"]["stages"].items()
    }
    assert from_card_stages == from_stats_stages == from_parquet_stages
    from utcgen.validators.cascade import RULE_STAGES

    assert {stage: counts[:2] for stage, counts in from_stats_stages.items()} == {
        "format": (9, 8),
        "toolcall": (8, 7),
        "grounding": (7, 7),
        "toolargs": (7, 5),
        **{s: (5, 5) for s in RULE_STAGES[4:]},  # the shortcut rules: reached by the 5, all pass
        "relevancy": (5, 4),
        "critique": (5, 4),
    }

    # Where the rejected dialogues stopped.
    from collections import Counter

    by_failed = Counter(r["failed_validator"] or "before validation" for r in parquet["rejected"])
    from_stats_stops = {**stats["rejections"]["by_validator"], "before validation": stats["rejections"]["before_validation"]}
    assert {stage: int(k) for stage, k in stopped_at} == from_stats_stops == dict(by_failed)
    assert by_failed == {"format": 1, "toolcall": 1, "toolargs": 2, "relevancy": 1, "critique": 1, "before validation": 3}


def test_usage_in_stats_is_the_run_usage_report(exported: tuple[Path, list[Dialogue], Any]) -> None:
    out, dialogues, _ = exported
    stats = json.loads((out / "stats.json").read_text())
    assert RUN.usage is not None
    assert stats["usage"] == RUN.usage.report()
    assert stats["usage_in_dialogues"] == Usage.total(d.generation.usage for d in dialogues).report()
    assert stats["usage_in_dialogues"]["total_tokens"] == 10 * (4200 + 610)


def test_without_run_usage_stats_sum_the_dialogues(tmp_path: Path) -> None:
    dialogues = _crafted()
    stats = json.loads(export_dataset(dialogues, tmp_path / "out", _run()).stats_path.read_text())
    assert stats["usage"] == stats["usage_in_dialogues"]
    assert stats["usage"]["calls"] == 9 * len(dialogues)
    assert stats["usage"]["cost_usd"] == round(0.0123 * len(dialogues), 6)


def test_reexported_folder_loads_its_new_rows_through_the_same_cache(tmp_path: Path) -> None:
    """A resumed run rewrites its folder; `datasets` must not serve the rows of the first load."""
    out, cache = tmp_path / "out", tmp_path / "hf-cache"
    export_dataset([make_dialogue(id="a1")], out, _run())
    first = load_split(out, "sft", cache_dir=cache)
    export_dataset([make_dialogue(id="a1"), make_dialogue(id="a2")], out, _run())
    again = load_split(out, "sft", cache_dir=cache)
    assert (first.num_rows, again.num_rows) == (3, 6)
    assert sorted(set(again["dialogue_id"])) == ["a1", "a2"]
    info = {i["config_name"]: i for i in _front_matter((out / "README.md").read_text())["dataset_info"]}
    sft_file = out / "data" / "sft" / "train-00000-of-00001.parquet"
    assert info["sft"]["splits"] == [{"name": "train", "num_bytes": split_bytes(sft_file), "num_examples": 6}]
    assert info["sft"]["download_size"] == (out / "data" / "sft" / "train-00000-of-00001.parquet").stat().st_size


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[tuple[str, int, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append((record.name, record.levelno, record.getMessage()))


def test_every_config_loads_without_a_card_warning(exported: tuple[Path, list[Dialogue], Any], tmp_path: Path,
                                                   capfd: pytest.CaptureFixture[str]) -> None:
    """`datasets` reads the card's dataset_info: nothing in it may be malformed (no warning on load), and
    each split's declared size is the one `datasets` records."""
    from datasets import load_dataset

    out, _, summary = exported
    records = _Records()
    loggers = [logging.getLogger(name) for name in ("datasets", "huggingface_hub")]
    for logger in loggers:
        logger.addHandler(records)
    try:
        loaded = {config: load_dataset(str(out), config, cache_dir=str(tmp_path / "fresh-cache"))["train"]
                  for config in ("dialogues", "sft", "preference", "rejected")}
    finally:
        for logger in loggers:
            logger.removeHandler(records)
    warnings = [m for m in records.messages if m[1] >= logging.WARNING]
    assert warnings == []
    assert not [m for m in records.messages if "dataset_info" in m[2] or "malformed" in m[2]]
    printed = capfd.readouterr()
    assert "malformed" not in printed.err + printed.out and "Ignoring" not in printed.err + printed.out
    info = {i["config_name"]: i for i in _front_matter((out / "README.md").read_text())["dataset_info"]}
    assert {c: len(d) for c, d in loaded.items()} == {"dialogues": summary.accepted, "sft": summary.sft_rows,
                                                        "preference": summary.preference_rows,
                                                        "rejected": summary.rejected}
    for config, data in loaded.items():
        [split] = info[config]["splits"]
        assert (split["num_examples"], split["num_bytes"]) == (len(data), data.info.splits["train"].num_bytes)
        assert info[config]["dataset_size"] == split["num_bytes"]


def _labelled(d: Dialogue) -> Dialogue:
    """`d` with every assistant turn labelled, as a run records it (an export labels unlabelled turns)."""
    return d.model_copy(update={"messages": [label_turn(m, []) if m.role == "assistant" and m.action is None else m
                                             for m in d.messages]})


def test_tool_turns_round_trip_through_the_dialogues_config(tmp_path: Path) -> None:
    """A result and the answer after it, an error result and the second call: written, then read back, the
    same messages; `tool_call_id` is null on every other turn and on every turn of a dialogue without results."""
    results = [_labelled(with_results(make_dialogue(id="r1"))),
               _labelled(with_results(make_dialogue(id="r2", argument_filling_turns=2), error_first=True))]
    rejected = _labelled(with_results(make_dialogue(id="r3"))).model_copy(
        update={"accepted": False, "rejection_reason": "answers: invented value"})
    out = tmp_path / "out"
    export_dataset([*results, make_dialogue(id="plain"), rejected], out, _run())
    back = {d.id: d for d in load_dialogues(out)[0]}
    for d in [*results, rejected]:
        assert back[d.id].messages == d.messages, d.id
    calls = [i for i, m in enumerate(back["r2"].messages) if m.tool_calls]
    assert [m.tool_call_id for m in back["r2"].messages if m.role == "tool"] == [f"call_{i}_0" for i in calls]
    rows = {r["id"]: r for r in _load(out, "dialogues", tmp_path)}
    assert all(m["tool_call_id"] is None for m in rows["plain"]["messages"])
    tool_rows = [m for m in rows["r1"]["messages"] if m["role"] == "tool"]
    assert len(tool_rows) == 1 and json.loads(tool_rows[0]["content"])["status"] == "ok"
    assert tool_rows[0]["thought"] is None and tool_rows[0]["phase"] is None and tool_rows[0]["action"] is None
    assert rows["r1"]["num_turns"] == len(results[0].assistant_turns)


def test_stats_count_the_answers_stage_only_when_it_judged(exported: tuple[Path, list[Dialogue], Any],
                                                            tmp_path: Path) -> None:
    """A run without results reports the stages it always did; with results the answers rule is a stage
    between the rules and the judges, and a rejection by it is counted under it."""
    out, _, _ = exported
    plain = json.loads((out / "stats.json").read_text())["validators"]
    assert "answers" not in plain["order"] and "answers" not in plain["stages"]
    failed = with_results(make_dialogue(id="bad"))
    rules = [v for v in failed.validation if v.validator not in ("answers", "relevancy", "critique")]
    failed = failed.model_copy(update={"validation": [*rules, Verdict(validator="answers", passed=False,
                                                                      reason="invented 12")],
                                       "accepted": False, "rejection_reason": "answers: invented 12"})
    out2 = tmp_path / "out2"
    export_dataset([with_results(make_dialogue(id="good")), failed], out2, _run())
    stats = json.loads((out2 / "stats.json").read_text())
    order = stats["validators"]["order"]
    assert order.index("planning") < order.index("answers") < order.index("relevancy")
    assert stats["validators"]["stages"]["answers"] == {"kind": "rule", "evaluated": 2, "passed": 1, "failed": 1,
                                                        "pass_rate": 0.5}
    assert stats["rejections"]["by_validator"] == {"answers": 1}
    assert "answers" in stats["validators"]["note"]


def test_the_card_says_what_follows_the_call_only_when_results_were_on(exported: tuple[Path, list[Dialogue], Any],
                                                                       tmp_path: Path) -> None:
    out, _, _ = exported
    assert "After the call" not in (out / "README.md").read_text()
    on = tmp_path / "on"
    export_dataset([with_results(make_dialogue(id="r"))], on,
                   _run(config={"execution": {"results": True, "error_share": 0.2}}))
    card = (on / "README.md").read_text()
    assert "**After the call** (`execution.results` on)" in card and "`messages[].tool_call_id`" in card


def test_stats_count_tool_results_only_when_there_are_some(exported: tuple[Path, list[Dialogue], Any],
                                                           tmp_path: Path) -> None:
    out, _, _ = exported
    assert "results" not in json.loads((out / "stats.json").read_text())
    on = tmp_path / "on"
    dialogues = [with_results(make_dialogue(id="r1")), with_results(make_dialogue(id="r2"), error_first=True),
                 make_dialogue(id="plain")]
    export_dataset(dialogues, on, _run())
    stats = json.loads((on / "stats.json").read_text())
    found = stats["results"]
    # r1: one result, one call, the answer after it; r2: an error, the question, the second call, its result, the answer
    assert (found["dialogues"], found["results"], found["error_results"]) == (2, 3, {"invalid_value": 1})
    assert found["calls_per_dialogue"]["histogram"] == {"1": 1, "2": 1}
    assert found["turns_after_first_result"]["histogram"] == {"1": 1, "3": 1}
    assert stats["counts"]["sft_rows"] == sum(len(d.assistant_turns) for d in dialogues)
