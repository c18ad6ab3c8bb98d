"""LoRA fine-tuning on a utcgen `sft` config, with the DiaFORGE Appendix B settings.

LoRA r=16, alpha=16, AdamW, peak learning rate 1e-4 with a cosine schedule, one epoch,
one completion per batch, loss on the completion only (TRL's default for conversational
prompt/completion data). The paper trains in 8-bit on GPUs; this script trains in the
model's own precision (fp32 on CPU).

The data is used as exported: a local output folder or a Hub repo id, loaded with
`datasets.load_dataset(data, "sft")` and passed to TRL's SFTTrainer unchanged.

    python examples/train_lora.py --data output --base-model path/to/model --output-dir lora-out
    python examples/train_lora.py --data user/utcgen-data --base-model path/to/model --max-rows 500

The `chat` format needs a chat template that renders `tools`, `tool_calls` and
`reasoning_content`. When the model's own template drops the tool call of a probe
message, `--chat-template` (default: examples/chatml_tools.jinja, ChatML with tools)
replaces it; pass `--keep-template` to train with the model's template anyway.
`--gguf-file` loads a GGUF checkpoint from the `--base-model` folder (needs `gguf`).

The output folder holds the LoRA adapter, and `merged/`: the adapter merged into the base weights,
saved as a plain checkpoint (config.json with its `model_type`, the weights, the tokenizer with the chat
template it was trained with). `utcgen eval run --model hf:OUTPUT_DIR/merged` loads it as it is, with no
base-model path to resolve (a GGUF base, for one, cannot be re-read from the adapter's record of it);
`--no-merge` skips it.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_TEMPLATE = HERE / "chatml_tools.jinja"
PROBE_TOOL = {"type": "function", "function": {"name": "probe_tool_xyz", "description": "probe",
                                                "parameters": {"type": "object", "properties": {}}}}
PROBE = [
    {"role": "user", "content": "hi"},
    {"role": "assistant", "content": "", "reasoning_content": "probe thought",
     "tool_calls": [{"type": "function", "function": {"name": "probe_tool_xyz", "arguments": {"k": 1}}}]},
]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", required=True, help="utcgen output folder or Hub dataset repo id")
    p.add_argument("--config", default="sft", help="dataset config (default: sft)")
    p.add_argument("--base-model", required=True, help="local model folder (or Hub id when online)")
    p.add_argument("--gguf-file", help="GGUF file name inside --base-model to load instead of safetensors")
    p.add_argument("--output-dir", required=True)
    p.add_argument("--max-length", type=int,
                   help="tokens per row (default: the folder's stats.json suggested_max_length, else 2048)")
    p.add_argument("--max-rows", type=int, help="train on the first N rows only (shuffled with --seed)")
    p.add_argument("--chat-template", type=Path, default=DEFAULT_TEMPLATE)
    p.add_argument("--keep-template", action="store_true", help="never replace the model's chat template")
    p.add_argument("--lora-r", type=int, default=16)
    p.add_argument("--lora-alpha", type=int, default=16)
    p.add_argument("--learning-rate", type=float, default=1e-4)
    p.add_argument("--epochs", type=float, default=1.0)
    p.add_argument("--batch-size", type=int, default=1)
    p.add_argument("--max-steps", type=int, default=-1, help="stop after N steps (default: the whole epoch)")
    p.add_argument("--logging-steps", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-merge", action="store_true", help="save the LoRA adapter only, not OUTPUT_DIR/merged")
    p.add_argument("--save-base", type=Path, metavar="DIR",
                   help="also save the base as trained on (a GGUF dequantised, the chat template set) as a plain "
                        "checkpoint in DIR, for `--model hf:DIR`: the base of a base-vs-LoRA comparison")
    p.add_argument("--base-only", action="store_true", help="with --save-base: save the base and stop (no training)")
    args = p.parse_args(argv)
    if args.base_only and not args.save_base:
        p.error("--base-only needs --save-base DIR")
    return args


def save_merged(model: Any, tokenizer: Any, out: Path) -> Path:
    """The adapter merged into its base and saved as a plain checkpoint that `hf:OUT` loads unchanged."""
    merged = model.merge_and_unload() if hasattr(model, "merge_and_unload") else model
    merged.save_pretrained(str(out))
    tokenizer.save_pretrained(str(out))
    config = json.loads((out / "config.json").read_text(encoding="utf-8"))
    if not config.get("model_type"):
        raise SystemExit(f"{out / 'config.json'}: no model_type; the merged checkpoint would not load")
    return out


def renders_tool_calls(tokenizer: Any) -> bool:
    """True when the tokenizer's chat template shows a probe tool call and its tools."""
    if not tokenizer.chat_template:
        return False
    try:
        text = tokenizer.apply_chat_template(PROBE, tools=[PROBE_TOOL], tokenize=False)
    except Exception:  # templates may raise on shapes they do not support
        return False
    return text.count("probe_tool_xyz") >= 2


def default_max_length(data: str) -> int:
    stats = Path(data) / "stats.json"
    if stats.is_file():
        suggested = (json.loads(stats.read_text()).get("lengths") or {}).get("suggested_max_length")
        if suggested:
            return int(suggested)
    return 2048


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    from datasets import load_dataset
    from peft import LoraConfig
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    train = load_dataset(args.data, args.config, split="train")
    if args.max_rows:
        train = train.shuffle(seed=args.seed).select(range(min(args.max_rows, train.num_rows)))

    load_kw = {"gguf_file": args.gguf_file} if args.gguf_file else {}
    tokenizer = AutoTokenizer.from_pretrained(args.base_model, **load_kw)
    model = AutoModelForCausalLM.from_pretrained(args.base_model, **load_kw)
    if args.gguf_file:
        # transformers dequantizes GGUF weights on load but marks the model quantized, which Trainer
        # refuses to train: copy the weights into a plain model of the same architecture.
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        plain = AutoModelForCausalLM.from_config(model.config)
        plain.load_state_dict(model.state_dict())
        model = plain
    if not args.keep_template and not renders_tool_calls(tokenizer):
        print(f"the model's chat template does not render tool calls; using {args.chat_template}")
        tokenizer.chat_template = args.chat_template.read_text(encoding="utf-8")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    if args.save_base:
        save_merged(model, tokenizer, args.save_base)
        print(f"base saved to {args.save_base} (evaluate it with --model hf:{args.save_base})")
        if args.base_only:
            return {"base": str(args.save_base)}

    max_length = args.max_length or default_max_length(args.data)
    import torch

    gpu = torch.cuda.is_available()
    config = SFTConfig(
        output_dir=args.output_dir,
        num_train_epochs=args.epochs,
        max_steps=args.max_steps,
        per_device_train_batch_size=args.batch_size,
        learning_rate=args.learning_rate,
        lr_scheduler_type="cosine",
        optim="adamw_torch",
        max_length=max_length,
        completion_only_loss=True,
        logging_steps=args.logging_steps,
        save_strategy="no",
        report_to="none",
        seed=args.seed,
        gradient_checkpointing=False,
        use_cpu=not gpu,
        bf16=gpu and torch.cuda.is_bf16_supported(),
    )
    peft_config = LoraConfig(r=args.lora_r, lora_alpha=args.lora_alpha, lora_dropout=0.0, task_type="CAUSAL_LM",
                             target_modules="all-linear")
    trainer = SFTTrainer(model=model, args=config, train_dataset=train, processing_class=tokenizer,
                         peft_config=peft_config)
    lengths = [len(ids) for ids in trainer.train_dataset["input_ids"]]
    truncated = sum(n >= max_length for n in lengths)
    print(f"{train.num_rows} rows, max_length {max_length}: {truncated} truncated; "
          f"tokens per row median {sorted(lengths)[len(lengths) // 2]}, max {max(lengths)}")

    start = time.monotonic()
    result = trainer.train()
    wall = time.monotonic() - start
    trainer.save_model(args.output_dir)
    merged = None if args.no_merge else save_merged(trainer.model, tokenizer, Path(args.output_dir) / "merged")
    losses = [(h["step"], h["loss"]) for h in trainer.state.log_history if "loss" in h]
    report = {"rows": train.num_rows, "steps": trainer.state.global_step, "max_length": max_length,
              "truncated_rows": truncated, "train_loss": result.training_loss, "wall_time_s": round(wall, 1),
              "merged": str(merged) if merged else None, "losses": losses}
    Path(args.output_dir, "train_report.json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps({k: v for k, v in report.items() if k != "losses"}))
    for step, loss in losses:
        print(f"step {step:4d}  loss {loss:.4f}" + ("" if math.isfinite(loss) else "  (not finite)"))
    return report


if __name__ == "__main__":
    main()
