"""The Python API as a user calls it: `from utcgen import generate, evaluate, audit, reward_function`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import write_store_personas
from tests.support.paths import REPO


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """`generate` on a small catalog, with its own caches (the embedding cache included)."""
    from utcgen import generate

    root = tmp_path_factory.mktemp("api")
    personas = write_store_personas(root / "personas.jsonl", 10)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("UTCGEN_CACHE_DIR", str(root / "cache"))
        mp.delenv("UTCGEN_MODEL", raising=False)
        mp.delenv("UTCGEN_API_BASE", raising=False)
        ds = generate(num_dialogues=3, out=root / "out", seed=5,
                      catalog=str(REPO / "tests/fixtures/catalogs/store_openapi.yaml"), personas=str(personas),
                      scenarios={"disambiguation": 1.0, "explicit": 1.0}, cache_dir=root / "hf")
    return {"root": root, "out": root / "out", "ds": ds}


def test_generate_returns_every_config_of_the_folder(made: dict[str, Any]) -> None:
    ds, out = made["ds"], made["out"]
    assert sorted(ds) == ["dialogues", "preference", "rejected", "sft"]
    stats = json.loads((out / "stats.json").read_text())
    assert ds["dialogues"].num_rows == stats["counts"]["accepted"] == 3
    assert ds["sft"].num_rows == stats["counts"]["sft_rows"]
    assert ds["preference"].num_rows == stats["counts"]["preference_rows"] > 0
    row = ds["sft"][0]
    assert row["completion"][0]["role"] == "assistant" and isinstance(row["tools"][0], dict)
    assert (out / "README.md").is_file()


def test_generate_again_resumes_even_inside_a_running_event_loop(made: dict[str, Any],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A second call on the same folder resumes (nothing new is made), also from a notebook's running loop."""
    from utcgen import generate

    monkeypatch.setenv("UTCGEN_CACHE_DIR", str(made["root"] / "cache"))
    monkeypatch.delenv("UTCGEN_MODEL", raising=False)

    async def notebook_cell():
        return generate(num_dialogues=3, out=made["out"], seed=5,
                        catalog=str(REPO / "tests/fixtures/catalogs/store_openapi.yaml"),
                        personas=str(made["root"] / "personas.jsonl"),
                        scenarios={"disambiguation": 1.0, "explicit": 1.0}, cache_dir=made["root"] / "hf2")

    again = asyncio.run(notebook_cell())
    assert again["dialogues"]["id"] == made["ds"]["dialogues"]["id"]
    assert again["preference"].to_list() == made["ds"]["preference"].to_list()


def test_generate_names_a_bad_setting(tmp_path: Path) -> None:
    from utcgen import generate
    from utcgen.pipeline.core.errors import InputError

    with pytest.raises(InputError, match="num_dialogues"):
        generate(num_dialogues=0, out=tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_run_config_object_takes_overrides_and_a_model() -> None:
    from utcgen.pipeline.api import build_config
    from utcgen.pipeline.settings.config import load_config

    base = load_config(None)
    config = build_config(base, model="openai/some-model", num_dialogues=4, seed=None)
    assert config.num_dialogues == 4 and config.seed == base.seed
    assert set(config.models.model_dump().values()) == {"openai/some-model"}
    assert base == load_config(None)  # the object given is left alone


def test_audit_returns_what_the_command_prints(made: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    from utcgen import audit
    from utcgen.pipeline.cli import main

    figures = audit(made["out"], fluency_turns=0)  # fluency has tests of its own; no model load here
    assert figures["dialogues"] >= 3
    assert figures["accepted"] == 3 and set(figures["validators"]) >= {"format", "toolargs"}
    assert main(["audit", str(made["out"]), "--json", "--no-fluency"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(figures))


def test_evaluate_returns_the_metrics_the_command_writes(scenario_run: dict[str, Any], embedder: Any,
                                                         tmp_path: Path) -> None:
    from utcgen import evaluate
    from utcgen.pipeline.cli import main
    from utcgen.pipeline.evaluation.benchmark import build_benchmark

    build_benchmark(scenario_run["out"], tmp_path / "bench", holdout=0.6, seed=1, catalog=scenario_run["catalog"],
                    embedder=embedder)
    report = evaluate(benchmark=tmp_path / "bench", model="reference/oracle", mode="static", out=tmp_path / "run",
                      rubric_model=None)
    assert report.metrics["acc"].value == 1.0 and report.counts["scored"] > 0
    assert main(["eval", "run", "--benchmark", str(tmp_path / "bench"), "--model", "reference/oracle", "--mode",
                 "static", "--out", str(tmp_path / "cli"), "--no-conv-rel", "--no-progress"]) == 0
    written = json.loads((tmp_path / "cli" / "metrics.json").read_text())["metrics"]
    assert {k: m.value for k, m in report.metrics.items()} == {k: m["value"] for k, m in written.items()}


def test_evaluate_names_a_bad_setting(tmp_path: Path) -> None:
    from utcgen import evaluate
    from utcgen.pipeline.core.errors import InputError

    with pytest.raises(InputError, match="max_turns"):
        evaluate(benchmark=tmp_path, model="reference/oracle", mode="dynamic", max_turns=0)


def test_the_package_lists_its_api() -> None:
    import utcgen

    assert set(utcgen.__all__) == {"generate", "evaluate", "audit", "reward_function"}
    assert all(callable(getattr(utcgen, name)) for name in utcgen.__all__)
    with pytest.raises(AttributeError):
        _ = utcgen.nothing_here
