"""stats.json: counts, validator pass rates per cascade stage, rejections, distributions, usage."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from ...validators.cascade import LLM_STAGES, RULE_STAGES, STAGES, failed_stage, kind_of
from ..records import Dialogue, Usage
from .flatten import num_turns
from .run_info import RunInfo

NO_REASON = "(no reason recorded)"


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


def _rate(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


def stage_counts(dialogues: Iterable[Dialogue]) -> dict[str, dict[str, Any]]:
    """Per cascade stage: dialogues holding its verdict (`evaluated`), and how many of them passed it.

    Verdicts of steps outside the cascade (a wrong tool selected, an unusable reply) are
    not a stage: such a dialogue was rejected before validation and counts for no stage.
    """
    stages = {s: {"kind": kind_of(s), "evaluated": 0, "passed": 0} for s in STAGES}
    for d in dialogues:
        for stage in STAGES:
            verdicts = [v for v in d.validation if v.validator == stage]
            if verdicts:
                stages[stage]["evaluated"] += 1
                stages[stage]["passed"] += all(v.passed for v in verdicts)
    for entry in stages.values():
        entry["failed"] = entry["evaluated"] - entry["passed"]
        entry["pass_rate"] = _rate(entry["passed"], entry["evaluated"])
    return stages


def scenario_stats(accepted: list[Dialogue], rejected: list[Dialogue]) -> dict[str, Any]:
    """Per scenario type: dialogues generated and accepted, acceptance, each stage's pass rate, turns and
    the labels of accepted assistant turns; decision styles and fault kinds over every dialogue."""
    from .. import scenarios
    from ..labels import label_turn

    every = accepted + rejected
    out: dict[str, Any] = {}
    for name in scenarios.names():
        mine = [d for d in every if d.scenario == name]
        if not mine:
            continue
        kept = [d for d in mine if d.accepted]
        turns = [m if m.action else label_turn(m, []) for d in kept for m in d.assistant_turns]
        out[name] = {
            "generated": len(mine),
            "accepted": len(kept),
            "acceptance_rate": _rate(len(kept), len(mine)),
            "stages": {stage: {"evaluated": c["evaluated"], "passed": c["passed"], "pass_rate": c["pass_rate"]}
                       for stage, c in stage_counts(mine).items() if c["evaluated"]},
            "turns_per_dialogue": _numeric_distribution([num_turns(d) for d in kept]),
            "q_star": _numeric_distribution([d.q_star for d in kept if d.q_star is not None]),
            "questions": _numeric_distribution([sum(m.action == "ask" for m in
                                                    (t if t.action else label_turn(t, []) for t in d.assistant_turns))
                                                for d in kept]),
            "actions": dict(Counter(m.action for m in turns).most_common()),
            "acts": dict(Counter(m.act or "(none)" for m in turns).most_common()),
        }
    styles = Counter(d.scenario_info.decision_style or "(none)" for d in every)
    return {
        "by_scenario": out,
        "decision_styles": {
            style: {"generated": n, "accepted": sum(d.accepted for d in every
                                                     if (d.scenario_info.decision_style or "(none)") == style)}
            for style, n in sorted(styles.items())
        },
        "fault_kinds": dict(Counter(d.scenario_info.fault.kind for d in accepted
                                    if d.scenario_info.fault is not None).most_common()),
        "replaceable": dict(Counter(str(d.scenario_info.replaceable).lower() for d in accepted
                                    if not scenarios.get(d.scenario).expects_call).most_common()),
    }


def compute_stats(accepted: list[Dialogue], rejected: list[Dialogue], sft_rows: int, run: RunInfo,
                  preference: dict[str, int] | None = None) -> dict[str, Any]:
    """Everything stats.json reports; `preference` is the `preference` config's rows per pattern.

    Stage pass rates are passed/evaluated where `evaluated` counts dialogues
    holding a verdict from that stage: the rule cascade stops at its first
    failure, so later stages see fewer dialogues, and dialogues rejected before
    validation (e.g. the wrong tool was selected) are evaluated by none.
    """
    every = accepted + rejected
    stopped_at = {d.id: failed_stage(d.validation) for d in rejected}
    by_stage = Counter(stage for stage in stopped_at.values() if stage is not None)
    before = [d for d in rejected if stopped_at[d.id] is None]
    in_dialogues = Usage.total(d.generation.usage for d in every)
    requested = run.requested
    return {
        "counts": {
            "requested": requested,
            "generated": len(every),
            "accepted": len(accepted),
            "rejected": len(rejected),
            "sft_rows": sft_rows,
            "preference_rows": sum((preference or {}).values()),
        },
        "preference": {"patterns": dict(preference or {})},
        "acceptance_rate": _rate(len(accepted), len(every)),
        "yield_vs_requested": _rate(len(accepted), requested) if requested else None,
        "validators": {
            "order": list(STAGES),
            "note": (
                f"pass_rate = passed / evaluated. Rule validators ({' -> '.join(RULE_STAGES)}) stop at "
                f"the first failure and the LLM validators ({', '.join(LLM_STAGES)}) run only after all rules "
                "pass, so later stages are evaluated on fewer dialogues."
            ),
            "stages": stage_counts(every),
        },
        "rejections": {
            "total": len(rejected),
            "by_validator": {stage: by_stage[stage] for stage in STAGES if by_stage[stage]},
            "before_validation": len(before),
            "before_validation_reasons": dict(Counter(d.rejection_reason or NO_REASON for d in before).most_common()),
            "reasons": dict(Counter(d.rejection_reason or NO_REASON for d in rejected).most_common()),
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
        "scenarios": scenario_stats(accepted, rejected),
        "usage": (run.usage or in_dialogues).report(),
        "usage_in_dialogues": in_dialogues.report(),
        "wall_time_s": run.wall_time_s,
        "llm": run.llm,
        "run": {
            "backend": run.backend,
            "models": run.models,
            "prompt_versions": run.prompt_versions,
            "seed": run.seed,
            "catalog": run.catalog,
            "distractor_counts": sorted({len(d.distractor_tools) for d in every}),
            "utcgen_version": run.utcgen_version,
            "config": run.config,
        },
    }
