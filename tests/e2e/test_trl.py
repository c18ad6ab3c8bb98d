"""The `sft` config trains with TRL's SFTTrainer unchanged (no mapping, loss on the completion only), the
`preference` config with DPOTrainer unchanged, and `utcgen.reward_function` drives GRPOTrainer on `sft` rows.

A small folder is generated with the offline backend, loaded with `datasets.load_dataset`,
and trained for 2 steps on a tiny randomly initialised Llama with a tokenizer built here
(a byte-level BPE trained on the folder's own text) whose chat template renders tools,
tool calls and reasoning. Nothing is downloaded.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import UTCGEN, write_store_personas
from tests.support.paths import REPO
from tests.support.tiny_model import build_model, build_tokenizer

pytestmark = pytest.mark.slow

def _texts(rows: Any, completion: tuple[str, ...] = ("completion",)) -> list[str]:
    out = []
    for row in rows:
        out += [json.dumps(t) for t in row["tools"]]
        for m in row["prompt"] + [m for column in completion for m in row[column]]:
            out.append(json.dumps(m, ensure_ascii=False))
    return out


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("trl")
    out = tmp / "out"
    env = dict(os.environ, UTCGEN_CACHE_DIR=str(tmp / "cache"), HF_HUB_OFFLINE="1", LITELLM_LOCAL_MODEL_COST_MAP="True")
    env.pop("UTCGEN_MODEL", None)
    # A small catalog and persona file keep the embedding work (fresh cache) to seconds.
    personas = write_store_personas(tmp / "personas.jsonl")
    cmd = [UTCGEN, "generate", "--catalog", "tests/fixtures/catalogs/store_openapi.yaml", "--personas",
           str(personas), "--num-dialogues", "3", "--out", str(out), "--no-progress"]
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def test_sft_trains_with_trl_unchanged(folder: Path, tmp_path: Path) -> None:
    from datasets import Json, List, load_dataset
    from trl import SFTConfig, SFTTrainer

    ds = load_dataset(str(folder), "sft", cache_dir=str(tmp_path / "hf"))
    train = ds["train"]
    assert train.num_rows >= 3
    # Json features: messages and tools come back as objects, not text.
    for column in ("prompt", "completion", "tools"):
        assert train.features[column] == List(Json()), train.features[column]
    row = train[0]
    assert isinstance(row["tools"][0], dict) and row["tools"][0]["type"] == "function"
    calls = [r for r in train if r["completion"][0].get("tool_calls")]
    assert calls, "no row ends in a tool call"
    call = calls[0]["completion"][0]["tool_calls"][0]
    assert call["type"] == "function" and isinstance(call["function"]["arguments"], dict)
    assert all(r["completion"][0]["reasoning_content"] for r in train)

    tok = build_tokenizer(_texts(train))
    model = build_model(tok)
    args = SFTConfig(output_dir=str(tmp_path / "run"), max_steps=2, per_device_train_batch_size=1,
                     learning_rate=1e-3, logging_steps=1, save_strategy="no", report_to="none", use_cpu=True,
                     max_length=None, dataloader_num_workers=0, seed=0)
    trainer = SFTTrainer(model=model, args=args, train_dataset=train, processing_class=tok)
    result = trainer.train()
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    print("losses per step:", losses, "train_loss:", result.training_loss)
    assert len(losses) == 2 and all(loss == loss and loss > 0 for loss in losses)

    # Masking: every prompt token has label -100, every completion token is learned.
    processed = trainer.train_dataset
    index = next(i for i, r in enumerate(train) if r["completion"][0].get("tool_calls"))
    example = processed[index]
    source = train[index]
    prompt_ids = tok.apply_chat_template(source["prompt"], tools=source["tools"], add_generation_prompt=True,
                                         tokenize=True, return_dict=True)["input_ids"]
    n_prompt = len(prompt_ids)
    assert example["input_ids"][:n_prompt] == list(prompt_ids)
    labels = example["labels"]
    assert labels == [-100] * n_prompt + example["input_ids"][n_prompt:]
    batch = trainer.data_collator([example])
    assert batch["labels"][0].tolist() == labels
    masked = sum(label == -100 for label in labels)
    print(f"row {index}: {len(labels)} tokens, {n_prompt} prompt tokens masked (-100), {len(labels) - masked} learned")

    # The learned part is the rendered assistant turn: thought, reply and the native tool call.
    learned = tok.decode(example["input_ids"][n_prompt:])
    print("completion as trained:", learned)
    fn = source["completion"][0]["tool_calls"][0]["function"]
    assert "<think>" in learned and "<tool_call>" in learned and learned.rstrip().endswith("<|im_end|>")
    assert f'"name": "{fn["name"]}"' in learned
    assert json.dumps(fn["arguments"]) in learned
    # The tools reached the prompt through the template, not through the system text.
    rendered_prompt = tok.decode(prompt_ids)
    assert "<tools>" in rendered_prompt and source["tools"][0]["function"]["name"] in rendered_prompt


@pytest.fixture(scope="module")
def results_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small run with tool results on, half the calls failing: results, answers and a recovery (seed 2 holds
    an error result, the user's correction and a second call among its accepted dialogues)."""
    tmp = tmp_path_factory.mktemp("trl-results")
    out = tmp / "out"
    config = tmp / "results.yaml"
    config.write_text("execution:\n  results: true\n  error_share: 0.5\n")
    env = dict(os.environ, UTCGEN_CACHE_DIR=str(tmp / "cache"), HF_HUB_OFFLINE="1", LITELLM_LOCAL_MODEL_COST_MAP="True")
    env.pop("UTCGEN_MODEL", None)
    personas = write_store_personas(tmp / "personas.jsonl")
    cmd = [UTCGEN, "generate", "--config", str(config), "--catalog", "tests/fixtures/catalogs/store_openapi.yaml",
           "--personas", str(personas), "--num-dialogues", "4", "--seed", "2", "--out", str(out), "--no-progress"]
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def test_sft_trains_on_rows_whose_prompt_holds_tool_results(results_folder: Path, tmp_path: Path) -> None:
    """The answer after a result is a row like any other: its prompt ends in the result as a `tool` message
    answering the call's id, TRL trains on it unchanged, the result is masked and the answer learned."""
    from datasets import load_dataset
    from trl import SFTConfig, SFTTrainer

    train = load_dataset(str(results_folder), "sft", split="train", cache_dir=str(tmp_path / "hf"))
    with_results = train.filter(lambda r: any(m["role"] == "tool" for m in r["prompt"]))
    assert with_results.num_rows >= 2, "no row's prompt holds a tool result"
    for row in with_results:
        ids = {c["id"]: c for m in row["prompt"] for c in m.get("tool_calls") or []}
        for result in (m for m in row["prompt"] if m["role"] == "tool"):
            assert set(result) == {"role", "tool_call_id", "content"}, result
            assert ids[result["tool_call_id"]]["type"] == "function"  # the call it answers, by id
            assert isinstance(json.loads(result["content"]), dict)
    errors = [m for r in with_results for m in r["prompt"] if m["role"] == "tool" and "error" in json.loads(m["content"])]
    print(f"{with_results.num_rows} of {train.num_rows} rows hold a result; {len(errors)} error results seen")
    assert errors, "no accepted dialogue of this run holds an error result: the run's seed no longer gives one"
    # after an error: the call again, with its own id, and its result
    retried = next(r for r in with_results if sum(m["role"] == "tool" for m in r["prompt"]) == 2)
    assert len({m["tool_call_id"] for m in retried["prompt"] if m["role"] == "tool"}) == 2

    tok = build_tokenizer(_texts(train))
    model = build_model(tok)
    args = SFTConfig(output_dir=str(tmp_path / "run"), max_steps=2, per_device_train_batch_size=1,
                     learning_rate=1e-3, logging_steps=1, save_strategy="no", report_to="none", use_cpu=True,
                     max_length=None, dataloader_num_workers=0, seed=0)
    trainer = SFTTrainer(model=model, args=args, train_dataset=with_results, processing_class=tok)
    trainer.train()
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    print("losses per step:", losses)
    assert len(losses) == 2 and all(loss == loss and loss > 0 for loss in losses)

    # The answer right after a result: every prompt token (the result among them) masked, the answer learned.
    index = next(i for i, r in enumerate(with_results) if r["prompt"][-1]["role"] == "tool")
    source, example = with_results[index], trainer.train_dataset[index]
    prompt_ids = tok.apply_chat_template(source["prompt"], tools=source["tools"], add_generation_prompt=True,
                                         tokenize=True, return_dict=True)["input_ids"]
    n_prompt = len(prompt_ids)
    assert example["input_ids"][:n_prompt] == list(prompt_ids)
    assert example["labels"] == [-100] * n_prompt + example["input_ids"][n_prompt:]
    rendered = tok.decode(prompt_ids)
    assert f"<tool_response>\n{source['prompt'][-1]['content']}\n</tool_response>" in rendered
    learned = tok.decode(example["input_ids"][n_prompt:])
    assert source["completion"][0]["content"] in learned and "<tool_response>" not in learned

    # A real model family's template (TRL's Qwen3) renders the same rows: results as tool responses.
    qwen = (Path(importlib.import_module("trl").__file__).parent / "chat_templates" / "qwen3.jinja").read_text()
    text = tok.apply_chat_template(source["prompt"] + source["completion"], tools=source["tools"], tokenize=False,
                                   chat_template=qwen)
    assert f"<tool_response>\n{source['prompt'][-1]['content']}\n</tool_response>" in text


def test_train_lora_saves_a_merged_checkpoint_that_hf_loads(folder: Path, tmp_path: Path) -> None:
    """examples/train_lora.py: one step on a tiny model, then OUTPUT/merged is a plain checkpoint (config.json
    with model_type, no adapter) that `--model hf:OUTPUT/merged` loads as it is."""
    import importlib.util

    from datasets import load_dataset

    from utcgen.pipeline.evaluation.models import HFModel

    train = load_dataset(str(folder), "sft", cache_dir=str(tmp_path / "hf"))["train"]
    tok = build_tokenizer(_texts(train))
    base = tmp_path / "base"
    build_model(tok).save_pretrained(str(base))
    tok.save_pretrained(str(base))
    spec = importlib.util.spec_from_file_location("train_lora", REPO / "examples" / "train_lora.py")
    assert spec and spec.loader
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    report = script.main(["--data", str(folder), "--base-model", str(base), "--output-dir", str(tmp_path / "lora"),
                          "--max-steps", "1", "--max-length", "16000", "--keep-template",
                          "--save-base", str(tmp_path / "plain-base")])
    merged = tmp_path / "lora" / "merged"
    # the base as trained on, for the other side of a base-vs-LoRA comparison
    assert type(HFModel(tmp_path / "plain-base", max_new_tokens=4)._model).__name__ == "LlamaForCausalLM"
    assert report["merged"] == str(merged) and (tmp_path / "lora" / "adapter_config.json").is_file()
    assert json.loads((merged / "config.json").read_text())["model_type"] == "llama"
    assert not (merged / "adapter_config.json").exists()
    model = HFModel(merged, max_new_tokens=4)
    assert model._tokenizer.chat_template and type(model._model).__name__ == "LlamaForCausalLM"


def test_preference_trains_with_dpo_unchanged(folder: Path, tmp_path: Path) -> None:
    from datasets import Json, List, load_dataset
    from trl import DPOConfig, DPOTrainer

    train = load_dataset(str(folder), "preference", split="train", cache_dir=str(tmp_path / "hf"))
    assert train.num_rows >= 3
    for column in ("prompt", "chosen", "rejected", "tools"):
        assert train.features[column] == List(Json()), train.features[column]
    print("preference rows per pattern:", dict(Counter(train["pattern"])))
    tok = build_tokenizer(_texts(train, ("chosen", "rejected")))
    model, reference = build_model(tok), build_model(tok)  # the same seed: the reference is the start point
    args = DPOConfig(output_dir=str(tmp_path / "run"), max_steps=2, per_device_train_batch_size=2,
                     learning_rate=1e-3, logging_steps=1, save_strategy="no", report_to="none", use_cpu=True,
                     max_length=None, dataloader_num_workers=0, seed=0)
    trainer = DPOTrainer(model=model, ref_model=reference, args=args, train_dataset=train, processing_class=tok)
    trainer.train()
    logs = [h for h in trainer.state.log_history if "loss" in h]
    print("dpo losses per step:", [h["loss"] for h in logs])
    assert len(logs) == 2 and all(h["loss"] == h["loss"] and h["loss"] > 0 for h in logs)

    # The chosen and rejected sequences share the prompt and differ after it.
    example = trainer.train_dataset[0]
    n = len(example["prompt_ids"])
    assert n > 0 and example["chosen_ids"] != example["rejected_ids"]
    chosen_text, rejected_text = tok.decode(example["chosen_ids"]), tok.decode(example["rejected_ids"])
    assert chosen_text != rejected_text


def test_reward_function_drives_grpo(folder: Path, tmp_path: Path) -> None:
    from datasets import load_dataset
    from trl import GRPOConfig, GRPOTrainer

    from utcgen import reward_function

    train = load_dataset(str(folder), "sft", split="train", cache_dir=str(tmp_path / "hf"))
    seen: list[list[float]] = []

    def reward(prompts, completions, **columns):
        scores = reward_function(prompts, completions, **columns)
        seen.append(scores)
        return scores

    tok = build_tokenizer(_texts(train))
    model = build_model(tok)
    args = GRPOConfig(output_dir=str(tmp_path / "run"), max_steps=2, per_device_train_batch_size=2,
                      num_generations=2, max_completion_length=12, learning_rate=1e-3, logging_steps=1,
                      save_strategy="no", report_to="none", use_cpu=True, dataloader_num_workers=0, seed=0)
    trainer = GRPOTrainer(model=model, reward_funcs=reward, args=args, train_dataset=train, processing_class=tok)
    trainer.train()
    logs = [h for h in trainer.state.log_history if "reward" in h]
    print("grpo rewards per step:", [h["reward"] for h in logs], "scores seen:", seen)
    assert len(logs) == 2 and seen and all(isinstance(x, float) for batch in seen for x in batch)


def test_sft_trains_on_multi_step_rows(tmp_path_factory: pytest.TempPathFactory, embedder: Any, tmp_path: Path) -> None:
    """A multi-step task's rows train as any: the row that makes the second call holds the first call, its
    result and the answer in its prompt, offers both steps' tools, and TRL trains on it unchanged."""
    from datasets import load_dataset
    from trl import SFTConfig, SFTTrainer

    from tests.support.runs import scenario_lines_run

    run = scenario_lines_run(tmp_path_factory.mktemp("trl-multi-step"), embedder, {
        "num_dialogues": 2, "seed": 5, "scenarios": {"multi_step": 1.0},
        "execution": {"results": True, "error_share": 0.2}})
    chained = {d.id: d for d in run["accepted"] if d.scenario == "multi_step"}
    assert chained, "no accepted multi-step dialogue"
    train = load_dataset(str(run["out"]), "sft", split="train", cache_dir=str(tmp_path / "hf"))
    second = train.filter(lambda r: r["dialogue_id"] in chained and bool(r["gold_call"])
                          and r["gold_call"]["name"] == chained[r["dialogue_id"]].seed_tool.name)
    assert second.num_rows >= 1
    row = second[0]
    d = chained[row["dialogue_id"]]
    assert [m["role"] for m in row["prompt"]].count("tool") == 1  # the first step's result, before the second call
    assert {t["function"]["name"] for t in row["tools"]} >= {d.seed_tool.name, d.scenario_info.chain.tool.name}

    tok = build_tokenizer(_texts(train))
    args = SFTConfig(output_dir=str(tmp_path / "run"), max_steps=2, per_device_train_batch_size=1,
                     learning_rate=1e-3, logging_steps=1, save_strategy="no", report_to="none", use_cpu=True,
                     max_length=None, dataloader_num_workers=0, seed=0)
    trainer = SFTTrainer(model=build_model(tok), args=args, train_dataset=train.filter(
        lambda r: r["dialogue_id"] in chained), processing_class=tok)
    trainer.train()
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    assert len(losses) == 2 and all(loss == loss and loss > 0 for loss in losses)
