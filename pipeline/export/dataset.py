"""Export a run as a Hugging Face dataset repository: parquet configs, stats, plots, card.

The output folder can be pushed as-is (`huggingface_hub.upload_folder`) or loaded
locally with `datasets.load_dataset(<folder>, "<config>")`; the card's YAML
`configs:` block is what tells `datasets` where each config's files are.

Nested, open-ended values (tool specs, argument maps, verdict details, model
maps) are stored as JSON strings so the arrow schema never depends on the
content of a run; that schema is built once below and used even when a config
has no rows, so an empty config still carries every column.
"""

from __future__ import annotations

import io
import json
import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq
import yaml
from pydantic import BaseModel, ConfigDict

from utcgen.pipeline.files import write_atomic
from utcgen.pipeline.records import Dialogue, Message, Usage, Verdict
from utcgen.pipeline.export.slicing import SftRow, slice_dialogues, sft_prompt_version, tool_spec_json

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

CONFIGS = ("dialogues", "sft", "rejected")
SHARD = "train-00000-of-00001.parquet"

# Validator stages in cascade order; the first three are rule-based and run one
# after another, the last two are LLM judges run side by side.
RULE_STAGES = ("format", "toolcall", "toolargs")
LLM_STAGES = ("relevancy", "critique")
STAGES = RULE_STAGES + LLM_STAGES
_STAGE_ALIASES = {
    "format": "format",
    "toolcall": "toolcall",
    "toolargs": "toolargs",
    "toolarguments": "toolargs",
    "relevancy": "relevancy",
    "relevance": "relevancy",
    "critique": "critique",
    "llmcritique": "critique",
}

# Backends that write template text instead of calling a model.
_OFFLINE_MARKERS = ("offline", "deterministic", "fake", "mock", "stub", "dry")

# --------------------------------------------------------------------------- schema

_STR = pa.string()
_INT = pa.int64()
_STR_LIST = pa.list_(_STR)

TOOL_CALL_TYPE = pa.struct([("name", _STR), ("arguments", _STR)])
MESSAGE_TYPE = pa.struct(
    [
        ("role", _STR),
        ("content", _STR),
        ("thought", _STR),
        ("tool_calls", pa.list_(TOOL_CALL_TYPE)),
        ("phase", _STR),
    ]
)
VERDICT_TYPE = pa.struct([("validator", _STR), ("passed", pa.bool_()), ("reason", _STR), ("details", _STR)])
PERSONA_TYPE = pa.struct(
    [
        ("id", _STR),
        ("text", _STR),
        ("role", _STR),
        ("seniority", _STR),
        ("line_of_business", _STR),
        ("style", _STR),
        ("attributes", _STR),
    ]
)
GENERATION_TYPE = pa.struct(
    [
        ("utcgen_version", _STR),
        ("backend", _STR),
        ("models", _STR),
        ("prompt_versions", _STR),
        ("seed", _INT),
        ("attempt", _INT),
        ("calls", _INT),
        ("prompt_tokens", _INT),
        ("completion_tokens", _INT),
        ("tokens", _INT),
        ("cached_calls", _INT),
        ("cost_usd", pa.float64()),
        ("created_at", _STR),
    ]
)
DIALOGUE_SCHEMA = pa.schema(
    [
        ("id", _STR),
        ("seed_tool", _STR),
        ("seed_tool_spec", _STR),
        ("user_persona", PERSONA_TYPE),
        ("goal", _STR),
        ("gold_arguments", _STR),
        ("distractor_tools", _STR_LIST),
        ("candidate_tools", _STR_LIST),
        ("candidate_tool_specs", _STR_LIST),
        ("messages", pa.list_(MESSAGE_TYPE)),
        ("validation", pa.list_(VERDICT_TYPE)),
        ("generation", GENERATION_TYPE),
        ("num_turns", _INT),
        ("tool_selection_turns", _INT),
        ("argument_filling_turns", _INT),
    ]
)
REJECTED_SCHEMA = DIALOGUE_SCHEMA.append(pa.field("rejection_reason", _STR)).append(
    pa.field("failed_validator", _STR)
)
_CHAT_TYPE = pa.list_(pa.struct([("role", _STR), ("content", _STR)]))
SFT_SCHEMA = pa.schema(
    [
        ("dialogue_id", _STR),
        ("turn_index", _INT),
        ("phase", _STR),
        ("seed_tool", _STR),
        ("tools", _STR_LIST),
        ("prompt", _CHAT_TYPE),
        ("completion", _CHAT_TYPE),
    ]
)


class DatasetSummary(BaseModel):
    """What `export_dataset` wrote: counts for logs, paths for the caller."""

    model_config = ConfigDict(extra="forbid")

    out_dir: Path
    requested: int | None
    accepted: int
    rejected: int
    sft_rows: int
    dialogues_path: Path
    sft_path: Path
    rejected_path: Path
    stats_path: Path
    card_path: Path
    plot_paths: list[Path]


# --------------------------------------------------------------------------- rows


def _json(value: Any) -> str:
    """Compact JSON; `default=str` keeps odd values (dates, paths) from aborting an export."""
    return json.dumps(value, ensure_ascii=False, default=str)


def _message_row(m: Message) -> dict[str, Any]:
    return {
        "role": m.role,
        "content": m.content,
        "thought": m.thought,
        "tool_calls": [{"name": c.name, "arguments": _json(c.arguments)} for c in m.tool_calls],
        "phase": m.phase,
    }


def _verdict_row(v: Verdict) -> dict[str, Any]:
    return {"validator": v.validator, "passed": v.passed, "reason": v.reason, "details": _json(v.details)}


def dialogue_row(d: Dialogue) -> dict[str, Any]:
    """A dialogue flattened to the `dialogues` columns."""
    p, g = d.user_persona, d.generation
    return {
        "id": d.id,
        "seed_tool": d.seed_tool.name,
        "seed_tool_spec": tool_spec_json(d.seed_tool),
        "user_persona": {
            "id": p.id,
            "text": p.text,
            "role": p.role,
            "seniority": p.seniority,
            "line_of_business": p.line_of_business,
            "style": p.style,
            "attributes": _json(p.attributes),
        },
        "goal": d.goal,
        "gold_arguments": _json(d.gold_arguments),
        "distractor_tools": [t.name for t in d.distractor_tools],
        "candidate_tools": [t.name for t in d.candidate_tools],
        "candidate_tool_specs": [tool_spec_json(t) for t in d.candidate_tools],
        "messages": [_message_row(m) for m in d.messages],
        "validation": [_verdict_row(v) for v in d.validation],
        "generation": {
            "utcgen_version": g.utcgen_version,
            "backend": g.backend,
            "models": _json(g.models),
            "prompt_versions": _json(g.prompt_versions),
            "seed": g.seed,
            "attempt": g.attempt,
            "calls": g.usage.calls,
            "prompt_tokens": g.usage.prompt_tokens,
            "completion_tokens": g.usage.completion_tokens,
            "tokens": g.usage.prompt_tokens + g.usage.completion_tokens,
            "cached_calls": g.usage.cached_calls,
            "cost_usd": g.usage.cost_usd,
            "created_at": g.created_at,
        },
        "num_turns": num_turns(d),
        "tool_selection_turns": d.turns_in_phase("tool_selection"),
        "argument_filling_turns": d.turns_in_phase("argument_filling"),
    }


def failed_validator(d: Dialogue) -> str | None:
    """The first failing verdict in recorded (cascade) order; None if rejected before validation."""
    return next((v.validator for v in d.validation if not v.passed), None)


def rejected_row(d: Dialogue) -> dict[str, Any]:
    row = dialogue_row(d)
    row["rejection_reason"] = d.rejection_reason
    row["failed_validator"] = failed_validator(d)
    return row


def num_turns(d: Dialogue) -> int:
    """Turns as in the paper's <(u1,a1),...,(uT,aT)>: one per assistant reply."""
    return len(d.assistant_turns)


# --------------------------------------------------------------------------- atomic io


def _write_parquet(path: Path, rows: list[dict[str, Any]], schema: pa.Schema) -> None:
    """Rows as one parquet shard; an empty config becomes a file with the schema and no row groups.

    `pq.write_table` would write one zero-row row group for an empty table, which
    `datasets` rejects (it sizes its read batches from the first row group).
    """
    table = pa.Table.from_pylist(rows, schema=schema)

    def write(tmp: Path) -> None:
        if table.num_rows:
            pq.write_table(table, tmp)
        else:
            pq.ParquetWriter(tmp, schema).close()

    write_atomic(path, write)


def _drop_stale_shards(folder: Path, keep: Path) -> None:
    """A config's files are globbed, so shards left by an earlier export would leak in."""
    for shard in folder.glob("*.parquet"):
        if shard != keep:
            shard.unlink()


# --------------------------------------------------------------------------- stats


def _int_histogram(values: Iterable[int]) -> dict[str, int]:
    counts = Counter(values)
    return {str(k): counts[k] for k in sorted(counts)}


def _numeric_distribution(values: list[int]) -> dict[str, Any]:
    return {
        "histogram": _int_histogram(values),
        "mean": round(sum(values) / len(values), 4) if values else None,
        "min": min(values) if values else None,
        "max": max(values) if values else None,
    }


def _stage_name(validator: str) -> str:
    """Map the validator's recorded name onto a cascade stage ('FormatValidator' -> 'format')."""
    key = "".join(ch for ch in validator.lower() if ch.isalnum())
    key = key.removesuffix("validator") or key
    return _STAGE_ALIASES.get(key, validator)


def _rate(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


def _usage_dict(usage: Usage) -> dict[str, Any]:
    return {
        "calls": usage.calls,
        "cached_calls": usage.cached_calls,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.prompt_tokens + usage.completion_tokens,
        "cost_usd": round(usage.cost_usd, 6),
    }


def _as_usage(value: Any) -> Usage | None:
    if value is None:
        return None
    if isinstance(value, Usage):
        return value
    if isinstance(value, Mapping):
        known = {k: value[k] for k in Usage.model_fields if k in value}
        return Usage(**known)
    raise TypeError(f"run['usage'] must be a Usage or a mapping, not {type(value).__name__}")


def compute_stats(
    accepted: list[Dialogue], rejected: list[Dialogue], sft_rows: int, run: Mapping[str, Any]
) -> dict[str, Any]:
    """Everything stats.json reports.

    Stage pass rates are passed/evaluated where `evaluated` counts dialogues
    holding a verdict from that stage: the rule cascade stops at its first
    failure, so later stages see fewer dialogues, and dialogues rejected before
    validation (e.g. the wrong tool was selected) are evaluated by none.
    """
    every = accepted + rejected
    stages: dict[str, dict[str, Any]] = {
        s: {"kind": "rule" if s in RULE_STAGES else "llm", "evaluated": 0, "passed": 0} for s in STAGES
    }
    for d in every:
        seen: dict[str, bool] = {}
        for v in d.validation:
            stage = _stage_name(v.validator)
            seen[stage] = seen.get(stage, True) and v.passed
        for stage, passed in seen.items():
            entry = stages.setdefault(stage, {"kind": "other", "evaluated": 0, "passed": 0})
            entry["evaluated"] += 1
            entry["passed"] += int(passed)
    for entry in stages.values():
        entry["failed"] = entry["evaluated"] - entry["passed"]
        entry["pass_rate"] = _rate(entry["passed"], entry["evaluated"])

    by_validator = Counter(_stage_name(f) for d in rejected if (f := failed_validator(d)) is not None)
    before = [d for d in rejected if failed_validator(d) is None]
    reasons = Counter(d.rejection_reason or "(no reason recorded)" for d in rejected)
    before_reasons = Counter(d.rejection_reason or "(no reason recorded)" for d in before)

    from_dialogues = Usage()
    for d in every:
        from_dialogues.add(d.generation.usage)
    run_usage = _as_usage(run.get("usage"))

    requested = run.get("requested")
    return {
        "counts": {
            "requested": requested,
            "generated": len(every),
            "accepted": len(accepted),
            "rejected": len(rejected),
            "sft_rows": sft_rows,
        },
        "acceptance_rate": _rate(len(accepted), len(every)),
        "yield_vs_requested": _rate(len(accepted), int(requested)) if requested else None,
        "validators": {
            "order": list(STAGES),
            "note": (
                "pass_rate = passed / evaluated. Rule validators (format -> toolcall -> toolargs) stop at "
                "the first failure and the LLM validators (relevancy, critique) run only after all rules "
                "pass, so later stages are evaluated on fewer dialogues."
            ),
            "stages": stages,
        },
        "rejections": {
            "total": len(rejected),
            "by_validator": dict(by_validator.most_common()),
            "before_validation": len(before),
            "before_validation_reasons": dict(before_reasons.most_common()),
            "reasons": dict(reasons.most_common()),
        },
        "distributions": {
            "note": "Over accepted dialogues; a turn is one assistant reply (with the user message before it).",
            "turns_per_dialogue": _numeric_distribution([num_turns(d) for d in accepted]),
            "parameters_per_seed_tool": _numeric_distribution([len(d.seed_tool.properties) for d in accepted]),
            "required_parameters_per_seed_tool": _numeric_distribution(
                [len(d.seed_tool.required) for d in accepted]
            ),
            "tool_selection_turns": _numeric_distribution([d.turns_in_phase("tool_selection") for d in accepted]),
            "argument_filling_turns": _numeric_distribution(
                [d.turns_in_phase("argument_filling") for d in accepted]
            ),
            "lines_of_business": dict(
                Counter(d.seed_tool.line_of_business or "(unset)" for d in accepted).most_common()
            ),
            "persona_lines_of_business": dict(
                Counter(d.user_persona.line_of_business or "(unset)" for d in accepted).most_common()
            ),
        },
        "usage": _usage_dict(run_usage if run_usage is not None else from_dialogues),
        "usage_in_dialogues": _usage_dict(from_dialogues),
        "wall_time_s": run.get("wall_time_s", run.get("wall_time")),
    }


# --------------------------------------------------------------------------- plots


def _bar(ax: "Axes", histogram: Mapping[str, int], xlabel: str, ylabel: str, title: str) -> None:
    from matplotlib.ticker import MaxNLocator

    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if not histogram:
        ax.text(0.5, 0.5, "no accepted dialogues", ha="center", va="center", transform=ax.transAxes)
        ax.set_xticks([])
        ax.set_yticks([])
        return
    xs = [int(k) for k in histogram]
    ys = list(histogram.values())
    bars = ax.bar(xs, ys, width=0.7, color="#4C72B0", edgecolor="black", linewidth=0.6)
    ax.bar_label(bars, fontsize=8)
    ax.set_xticks(range(min(xs), max(xs) + 1))
    ax.set_xlim(min(xs) - 1, max(xs) + 1)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylim(0, max(ys) * 1.15)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)


def _png(fig: "Figure") -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120, bbox_inches="tight")
    return buf.getvalue()


def render_plots(stats: Mapping[str, Any]) -> dict[str, bytes]:
    """The paper's Appendix A.3 figures (5, 6, 7) as PNG bytes keyed by file name.

    Built on `Figure` directly (no pyplot): no global backend state, Agg rendering,
    and matplotlib is imported only when plots are drawn.
    """
    from matplotlib.figure import Figure

    dist = stats["distributions"]
    n = stats["counts"]["accepted"]
    out: dict[str, bytes] = {}

    single = [  # (distribution, x label, title): the paper's Figures 5 and 6
        ("turns_per_dialogue", "Assistant turns per dialogue", "Conversation length"),
        ("parameters_per_seed_tool", "Parameters of the seed tool", "Parameters per seed tool"),
    ]
    for key, xlabel, title in single:
        fig = Figure(figsize=(6, 4))
        _bar(fig.subplots(), dist[key]["histogram"], xlabel, "Dialogues", f"{title} (n={n})")
        out[f"{key}.png"] = _png(fig)

    fig = Figure(figsize=(11, 4))
    left, right = fig.subplots(1, 2)
    _bar(left, dist["tool_selection_turns"]["histogram"], "Tool-selection turns", "Dialogues", "Tool disambiguation")
    _bar(
        right,
        dist["argument_filling_turns"]["histogram"],
        "Argument-filling turns",
        "Dialogues",
        "Parameter specification",
    )
    fig.suptitle(f"Turns per phase (n={n})")
    out["turns_per_phase.png"] = _png(fig)
    return out


# --------------------------------------------------------------------------- card


def _size_category(n: int) -> str:
    for bound, label in (
        (1_000, "n<1K"),
        (10_000, "1K<n<10K"),
        (100_000, "10K<n<100K"),
        (1_000_000, "100K<n<1M"),
        (10_000_000, "1M<n<10M"),
    ):
        if n < bound:
            return label
    return "10M<n<100M"


def _is_offline(backend: str, run: Mapping[str, Any]) -> bool:
    if run.get("offline") is not None:
        return bool(run["offline"])
    return any(marker in backend.lower() for marker in _OFFLINE_MARKERS)


def _fmt_rate(rate: float | None) -> str:
    return "n/a" if rate is None else f"{rate:.1%}"


def _md_cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _run_info(dialogues: list[Dialogue], run: Mapping[str, Any]) -> dict[str, Any]:
    """Run-level facts, falling back to what the dialogues themselves record."""
    first = dialogues[0].generation if dialogues else None
    prompt_versions = dict(run.get("prompt_versions") or (first.prompt_versions if first else {}))
    prompt_versions.setdefault("sft_system", sft_prompt_version())
    return {
        "backend": str(run.get("backend") or (first.backend if first else "unknown")),
        "models": dict(run.get("models") or (first.models if first else {})),
        "prompt_versions": prompt_versions,
        "seed": run.get("seed", first.seed if first else None),
        "catalog": run.get("catalog", run.get("catalog_path")),
        "distractor_counts": sorted({len(d.distractor_tools) for d in dialogues}),
        "utcgen_version": run.get("utcgen_version") or (first.utcgen_version if first else None),
    }


def render_card(stats: Mapping[str, Any], info: Mapping[str, Any], run: Mapping[str, Any], plots: list[str]) -> str:
    """README.md: YAML front matter for the Hub plus a human description of the data."""
    counts = stats["counts"]
    front = {
        "pretty_name": run.get("pretty_name", "utcgen synthetic disambiguation tool-calling dialogues"),
        "license": run.get("license", "apache-2.0"),
        "language": ["en"],
        "task_categories": ["text-generation"],
        "tags": ["tool-calling", "function-calling", "synthetic", "multi-turn", "disambiguation", "sft", "diaforge"],
        "size_categories": [_size_category(max(counts["accepted"], counts["sft_rows"], counts["rejected"]))],
        "configs": [
            {
                "config_name": name,
                "data_files": [{"split": "train", "path": f"data/{name}/*.parquet"}],
                **({"default": True} if name == "sft" else {}),
            }
            for name in CONFIGS
        ],
    }
    repo = run.get("repo_id") or "path/to/this/folder"
    backend = info["backend"]
    offline = _is_offline(backend, run)
    lines: list[str] = ["---", yaml.safe_dump(front, sort_keys=False, allow_unicode=True).rstrip(), "---", ""]
    w = lines.append

    w(f"# {front['pretty_name']}")
    w("")
    if offline:
        w(
            f"> **Dry-run data.** Generated with the offline deterministic backend (`{backend}`): no language "
            "model was called. The dialogues have the full UTC-Gen structure (personas, near-duplicate "
            "distractors, two phases, validator verdicts, gold calls) but their wording comes from templates. "
            "Use it to test pipelines and training code, not to train a model you care about."
        )
        w("")
    w(
        "Synthetic multi-turn dialogues between an enterprise user and a tool-calling assistant, built to "
        "teach **disambiguation**: the assistant sees the correct tool among near-duplicate distractors and "
        "must ask clarifying questions until it knows which tool the user needs, then collect every required "
        "argument before it makes a call. The data reproduces the UTC-Gen engine of DiaFORGE "
        "(Hathidara et al., 2025) with the `utcgen` generator."
    )
    w("")
    w("## How it was made")
    w("")
    w(
        "1. **Metadata.** For each seed tool from the catalog a user persona is sampled, a concrete goal is "
        "written for that persona, and persona-consistent values are drawn for the tool's required "
        "arguments (the gold argument map)."
    )
    ks = info["distractor_counts"]
    k_text = f"k={ks[0]}" if len(ks) == 1 else ("k=" + "/".join(map(str, ks)) if ks else "k (5 in the paper)")
    w(
        f"2. **Distractors.** The {k_text} nearest tools to the seed tool, by sentence-embedding similarity "
        "over name, description and parameters, join it as candidates. The assistant sees all candidates "
        "and is never told which one is the seed tool."
    )
    w(
        "3. **Synthesis in two phases.** A user-proxy model plays the persona. In the *tool-selection* phase "
        "it starts vague and reveals context only when asked, while the assistant model, which sees all "
        "candidates but not which one is right, asks questions that rule distractors out; a dialogue whose "
        "assistant picks the wrong tool is rejected. In the *argument-filling* phase the user-proxy supplies "
        "the gold values the assistant asks for, and the dialogue ends with the assistant's call. Every "
        "assistant turn has a private thought and a public reply."
    )
    w(
        "4. **Validator cascade.** Rule validators run in order and stop at the first failure: *format* "
        "(alternating turns, thought and reply present), *toolcall* (the dialogue ends by calling the seed "
        "tool), *toolargs* (the call carries exactly the gold arguments). Dialogues passing all three go to "
        "two LLM judges, *relevancy* (the talk is about the seed tool's task) and *critique* (two-phase flow, "
        "both agents keep their roles). Any failure rejects the dialogue."
    )
    w("")
    w("### Run")
    w("")
    w("| | |")
    w("|---|---|")
    w(f"| Backend | `{_md_cell(backend)}`{' (offline, deterministic)' if offline else ''} |")
    w(f"| utcgen version | {_md_cell(info['utcgen_version'])} |")
    w(f"| Seed | {_md_cell(info['seed'])} |")
    if info["catalog"] is not None:
        w(f"| Catalog | `{_md_cell(info['catalog'])}` |")
    if stats.get("wall_time_s") is not None:
        w(f"| Wall time | {float(stats['wall_time_s']):.1f} s |")
    usage = stats["usage"]
    w(f"| Model calls | {usage['calls']} ({usage['cached_calls']} cached) |")
    w(f"| Tokens | {usage['prompt_tokens']} prompt + {usage['completion_tokens']} completion |")
    w(f"| Cost | ${usage['cost_usd']:.4f} |")
    w("")
    w("**Models per role**")
    w("")
    w("| Role | Model |")
    w("|---|---|")
    for role, model in sorted(info["models"].items()):
        w(f"| {_md_cell(role)} | `{_md_cell(model)}` |")
    w("")
    w("**Prompt versions**")
    w("")
    w("| Prompt | Version |")
    w("|---|---|")
    for name, version in sorted(info["prompt_versions"].items()):
        w(f"| {_md_cell(name)} | `{_md_cell(version)}` |")
    w("")
    w("## Counts")
    w("")
    w("| | |")
    w("|---|---|")
    w(f"| Dialogues requested | {counts['requested'] if counts['requested'] is not None else 'n/a'} |")
    w(f"| Dialogues generated | {counts['generated']} |")
    w(f"| Accepted (`dialogues`) | {counts['accepted']} |")
    w(f"| Rejected (`rejected`) | {counts['rejected']} |")
    w(f"| SFT rows (`sft`) | {counts['sft_rows']} |")
    w(f"| Acceptance rate | {_fmt_rate(stats['acceptance_rate'])} |")
    w("")
    w("### Validator pass rates")
    w("")
    w(
        "Pass rate is passed / evaluated. The cascade stops at the first failing rule validator and dialogues "
        "rejected before validation (e.g. wrong tool selected) are evaluated by no stage, so later stages "
        "see fewer dialogues."
    )
    w("")
    w("| Stage | Kind | Evaluated | Passed | Pass rate |")
    w("|---|---|---:|---:|---:|")
    for name, s in stats["validators"]["stages"].items():
        w(f"| {_md_cell(name)} | {s['kind']} | {s['evaluated']} | {s['passed']} | {_fmt_rate(s['pass_rate'])} |")
    rej = stats["rejections"]
    if rej["total"]:
        w("")
        w("Rejection reasons:")
        w("")
        w("| Reason | Dialogues |")
        w("|---|---:|")
        for reason, k in list(rej["reasons"].items())[:20]:
            w(f"| {_md_cell(reason)} | {k} |")
    w("")
    w("## Distributions")
    w("")
    w("Over accepted dialogues. A turn is one assistant reply together with the user message before it.")
    w("")
    titles = {
        "turns_per_dialogue.png": "Turns per dialogue",
        "parameters_per_seed_tool.png": "Parameters per seed tool",
        "turns_per_phase.png": "Tool-selection and argument-filling turns",
    }
    for name in plots:
        w(f"![{titles.get(name, name)}](plots/{name})")
        w("")
    w("## Configs and fields")
    w("")
    w(
        "Values whose shape varies from tool to tool (tool specs, argument maps, verdict details, model "
        "maps) are stored as **JSON strings** so every config has one fixed arrow schema; decode them with "
        "`json.loads`."
    )
    w("")
    w("### `sft` (default): one row per assistant turn of each accepted dialogue")
    w("")
    w("| Field | Type | Meaning |")
    w("|---|---|---|")
    w("| `prompt` | list of {role, content} | System prompt listing the candidate tools, then the dialogue up to and including the user message this turn answers. Earlier assistant turns appear in the reply format below. |")
    w("| `completion` | list of one {role, content} | The assistant turn to learn: a JSON string `{\"thought\", \"content\", \"tool_calls\": [{\"name\", \"arguments\"}]}`. |")
    w("| `dialogue_id` | string | Id of the source dialogue (join key to `dialogues.id`). |")
    w("| `turn_index` | int | 0-based index of this assistant turn within its dialogue. |")
    w("| `phase` | string | `tool_selection` or `argument_filling`. |")
    w("| `seed_tool` | string | Name of the gold tool. |")
    w("| `tools` | list of string | Candidate tools in prompt order, each an OpenAI function spec as a JSON string. |")
    w("")
    w("### `dialogues`: accepted dialogues, one per row")
    w("")
    w("| Field | Type | Meaning |")
    w("|---|---|---|")
    w("| `id` | string | Dialogue id. |")
    w("| `seed_tool` / `seed_tool_spec` | string / JSON string | Gold tool name and its OpenAI function spec. |")
    w("| `user_persona` | struct | `id`, `text`, `role`, `seniority`, `line_of_business`, `style`, `attributes` (JSON object of persona facts). |")
    w("| `goal` | string | The user-proxy's goal. |")
    w("| `gold_arguments` | JSON string | The argument map the final call must carry. |")
    w("| `distractor_tools` | list of string | Names of the near-duplicate distractors. |")
    w("| `candidate_tools` / `candidate_tool_specs` | list of string | Candidates (seed + distractors) in the order the assistant saw them; specs as JSON strings. |")
    w("| `messages` | list of struct | `role`, `content`, `thought` (assistant's private reasoning), `tool_calls` (list of `name`, `arguments` as JSON string), `phase`. |")
    w("| `validation` | list of struct | Verdicts in cascade order: `validator`, `passed`, `reason`, `details` (JSON string). |")
    w("| `generation` | struct | `utcgen_version`, `backend`, `models` and `prompt_versions` (JSON strings), `seed`, `attempt`, `calls`, `prompt_tokens`, `completion_tokens`, `tokens`, `cached_calls`, `cost_usd`, `created_at`. |")
    w("| `num_turns` | int | Assistant turns in the dialogue. |")
    w("| `tool_selection_turns` / `argument_filling_turns` | int | Assistant turns in each phase. |")
    w("")
    w("### `rejected`: dialogues that did not make it")
    w("")
    w(
        "Same fields as `dialogues`, plus `rejection_reason` (string) and `failed_validator` (first failing "
        "validator, null when the dialogue was rejected before validation). Useful for auditing the engine; "
        "do not train on it."
    )
    w("")
    w("## Usage")
    w("")
    w("```python")
    w("import json")
    w("from datasets import load_dataset")
    w("")
    w(f'sft = load_dataset("{repo}", "sft", split="train")')
    w(f'dialogues = load_dataset("{repo}", "dialogues", split="train")')
    w('gold = json.loads(dialogues[0]["gold_arguments"])')
    w("```")
    w("")
    w(
        "Training with TRL: the `sft` config is in TRL's conversational prompt/completion format, so "
        "`SFTTrainer` computes the loss on the completion only (the paper's loss masking), with no "
        "collator needed."
    )
    w("")
    w("```python")
    w("from trl import SFTConfig, SFTTrainer")
    w("")
    w('train = sft.select_columns(["prompt", "completion"])')
    w("trainer = SFTTrainer(")
    w('    model="<base model>",')
    w("    train_dataset=train,")
    w('    args=SFTConfig(output_dir="out", completion_only_loss=True, num_train_epochs=1),')
    w(")")
    w("trainer.train()")
    w("```")
    w("")
    rows_per_config = {"dialogues": counts["accepted"], "sft": counts["sft_rows"], "rejected": counts["rejected"]}
    empty = [f"`{name}`" for name in CONFIGS if rows_per_config[name] == 0]
    if empty:
        w(
            f"Empty in this release: {', '.join(empty)}. An empty config is a parquet file with the full "
            "schema and no row groups; `datasets` 5.2 refuses to build a split with no rows, so load it with "
            "`streaming=True`, read the parquet file directly, or use utcgen's "
            "`utcgen.pipeline.export.dataset.load_config(folder, name)`."
        )
        w("")
    w(
        "The system prompt already lists the tools as text. To use a chat template's native tool support "
        "instead, decode `tools` with `json.loads` and pass the list as `tools=`."
    )
    w("")
    w("## Limitations")
    w("")
    w(
        "- Synthetic: users, goals and argument values are written by models (or by templates on the "
        "offline backend) and reflect their biases; no real enterprise traffic is included."
    )
    w("- English only.")
    w(
        "- Quality control is automatic. LLM validators can be wrong in both directions and no human "
        "reviewed this release."
    )
    w(
        "- Distractors come from one catalog's embedding neighbours; ambiguity in other catalogs may look "
        "different."
    )
    w(
        "- Dialogues end at the tool call: tool results, errors and follow-up turns are not modelled."
    )
    w("")
    return "\n".join(lines)


# --------------------------------------------------------------------------- export


def export_dataset(dialogues: list[Dialogue], out_dir: Path, run: dict[str, Any]) -> DatasetSummary:
    """Write the dataset repository for one run into `out_dir` and say what was written.

    `run` carries run-level facts; every key is optional: `config` (dict),
    `catalog` (path), `requested` (int), `seed`, `models` (role -> model),
    `backend`, `offline` (bool; else guessed from the backend name),
    `prompt_versions` (name -> version), `usage` (Usage or mapping of its fields),
    `wall_time_s` (seconds), `utcgen_version`, and for the card `pretty_name`, `license`,
    `repo_id`. Missing run facts fall back to the dialogues' own records.
    Each file is replaced atomically, so an interrupted export never leaves a
    half-written file; files may then come from two runs, which stats.json
    counts (written after the parquet) let `utcgen publish` detect.
    """
    out_dir = Path(out_dir)
    accepted = [d for d in dialogues if d.accepted]
    rejected = [d for d in dialogues if not d.accepted]
    sft: list[SftRow] = slice_dialogues(accepted)

    paths = {name: out_dir / "data" / name / SHARD for name in CONFIGS}
    _write_parquet(paths["dialogues"], [dialogue_row(d) for d in accepted], DIALOGUE_SCHEMA)
    _write_parquet(paths["sft"], [dict(r) for r in sft], SFT_SCHEMA)
    _write_parquet(paths["rejected"], [rejected_row(d) for d in rejected], REJECTED_SCHEMA)
    for name, path in paths.items():
        _drop_stale_shards(path.parent, keep=path)

    stats = compute_stats(accepted, rejected, len(sft), run)
    info = _run_info(dialogues, run)
    stats["run"] = {**info, "config": run.get("config")}
    stats_path = out_dir / "stats.json"
    write_atomic(stats_path, json.dumps(_finite(stats), indent=2, ensure_ascii=False, default=str) + "\n")

    plot_paths: list[Path] = []
    for name, png in render_plots(stats).items():
        path = out_dir / "plots" / name
        write_atomic(path, png)
        plot_paths.append(path)

    card_path = out_dir / "README.md"
    write_atomic(card_path, render_card(stats, info, run, [p.name for p in plot_paths]))

    return DatasetSummary(
        out_dir=out_dir,
        requested=stats["counts"]["requested"],
        accepted=len(accepted),
        rejected=len(rejected),
        sft_rows=len(sft),
        dialogues_path=paths["dialogues"],
        sft_path=paths["sft"],
        rejected_path=paths["rejected"],
        stats_path=stats_path,
        card_path=card_path,
        plot_paths=plot_paths,
    )


def load_config(out_dir: Path, name: str, cache_dir: Path | None = None) -> Any:
    """One config of an exported folder as a `datasets.Dataset`, empty configs included.

    `datasets` 5.2 refuses to build a split with no rows ("Instruction 'train'
    corresponds to no data"), so a config whose shards hold no rows is built
    from the parquet schema instead: same columns and features, zero rows.
    """
    from datasets import Dataset, Features, load_dataset

    if name not in CONFIGS:
        raise ValueError(f"unknown config {name!r}; expected one of {', '.join(CONFIGS)}")
    shards = sorted((Path(out_dir) / "data" / name).glob("*.parquet"))
    if not shards:
        raise FileNotFoundError(f"{out_dir}: no parquet files for config {name!r}")
    if sum(pq.ParquetFile(s).metadata.num_rows for s in shards) == 0:
        schema = pq.read_schema(shards[0])
        return Dataset.from_dict({n: [] for n in schema.names}, features=Features.from_arrow_schema(schema))
    return load_dataset(
        str(out_dir), name, split="train", cache_dir=str(cache_dir) if cache_dir is not None else None
    )


def _finite(value: Any) -> Any:
    """NaN/inf are not JSON; a stray one in run facts becomes null instead of invalid output."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value
