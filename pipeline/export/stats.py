"""stats.json: counts, validator pass rates per cascade stage, rejections, distributions, usage."""

from __future__ import annotations

from collections import Counter
from typing import Any

from ...validators.cascade import AFTER_RESULTS, LLM_STAGES, RULE_STAGES, STAGES, failed_stage, stage_kind
from .. import scenarios
from ..core.records import Dialogue, Usage
from ..dialogue.labels import label_turn
from ..dialogue.results import fed_by_results, results, transcript
from .flatten import num_turns
from .run_info import RunInfo

NO_REASON = "(no reason recorded)"
# The rules of what follows a tool result run after the other rules, only on a dialogue holding one;
# stats.json lists them only when some dialogue was judged by them, so a run without results reports
# exactly what it did before they existed.
AFTER_RESULT_STAGES: tuple[str, ...] = tuple(r.name for r in AFTER_RESULTS)
CASCADE_ORDER: tuple[str, ...] = (*RULE_STAGES, *AFTER_RESULT_STAGES, *LLM_STAGES)


def _counted_distribution(counts: Counter[int]) -> dict[str, Any]:
    """histogram, mean, min and max of values kept as counts: the same figures as from the values,
    in memory that grows with the distinct values, not with the dialogues."""
    n = sum(counts.values())
    return {
        "histogram": {str(k): counts[k] for k in sorted(counts)},
        "mean": round(sum(k * c for k, c in counts.items()) / n, 4) if n else None,
        "min": min(counts) if n else None,
        "max": max(counts) if n else None,
    }


def by_role(usage: dict[str, Usage], accepted: int) -> dict[str, dict[str, Any]]:
    """stats.json's `usage_by_role`: each role's calls, tokens and cost over the exported dialogues (those
    journaled before roles were counted apart have none), and the same per accepted dialogue (None
    when none was accepted)."""
    out: dict[str, dict[str, Any]] = {}
    for role in sorted(usage):
        u = usage[role]
        per = None if not accepted else {
            "calls": round(u.calls / accepted, 3), "prompt_tokens": round(u.prompt_tokens / accepted, 1),
            "completion_tokens": round(u.completion_tokens / accepted, 1),
            "cost_usd": round(u.cost_usd / accepted, 6)}
        out[role] = {**u.report(), "per_accepted_dialogue": per}
    return out


def _rate(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


class _Stages:
    """Per cascade stage: dialogues holding its verdict (`evaluated`), and how many of them passed it.

    Verdicts of steps outside the cascade (a wrong tool selected, an unusable reply) are
    not a stage: such a dialogue was rejected before validation and counts for no stage.
    """

    def __init__(self) -> None:
        self.evaluated: Counter[str] = Counter()
        self.passed: Counter[str] = Counter()

    def add(self, d: Dialogue) -> None:
        for stage in CASCADE_ORDER:
            verdicts = [v for v in d.validation if v.validator == stage]
            if verdicts:
                self.evaluated[stage] += 1
                self.passed[stage] += all(v.passed for v in verdicts)

    def order(self) -> list[str]:
        """The stages to report, in cascade order: every stage of `STAGES`, and each other one that judged a dialogue."""
        return [s for s in CASCADE_ORDER if s in STAGES or self.evaluated[s]]

    def result(self) -> dict[str, dict[str, Any]]:
        out = {}
        for s in self.order():
            evaluated, passed = self.evaluated[s], self.passed[s]
            out[s] = {"kind": stage_kind(s), "evaluated": evaluated, "passed": passed, "failed": evaluated - passed,
                      "pass_rate": _rate(passed, evaluated)}
        return out



class _Scenario:
    """One scenario type's figures, dialogue by dialogue."""

    def __init__(self) -> None:
        self.generated = self.accepted = 0
        self.stages = _Stages()
        self.turns: Counter[int] = Counter()
        self.q_star: Counter[int] = Counter()
        self.questions: Counter[int] = Counter()
        self.actions: Counter[str | None] = Counter()
        self.acts: Counter[str] = Counter()

    def add(self, d: Dialogue) -> None:
        self.generated += 1
        self.stages.add(d)
        if not d.accepted:
            return
        self.accepted += 1
        turns = [m if m.action else label_turn(m, []) for m in d.assistant_turns]
        self.turns[num_turns(d)] += 1
        if d.q_star is not None:
            self.q_star[d.q_star] += 1
        self.questions[sum(m.action == "ask" for m in turns)] += 1
        self.actions.update(m.action for m in turns)
        self.acts.update(m.act or "(none)" for m in turns)

    def result(self) -> dict[str, Any]:
        return {
            "generated": self.generated,
            "accepted": self.accepted,
            "acceptance_rate": _rate(self.accepted, self.generated),
            "stages": {stage: {"evaluated": c["evaluated"], "passed": c["passed"], "pass_rate": c["pass_rate"]}
                       for stage, c in self.stages.result().items() if c["evaluated"]},
            "turns_per_dialogue": _counted_distribution(self.turns),
            "q_star": _counted_distribution(self.q_star),
            "questions": _counted_distribution(self.questions),
            "actions": dict(self.actions.most_common()),
            "acts": dict(self.acts.most_common()),
        }


class _Results:
    """Tool results of the accepted dialogues (runs with `execution.results` on); reported only when there are some."""

    def __init__(self) -> None:
        self.dialogues = self.results = 0
        self.errors: Counter[str] = Counter()
        self.calls: Counter[int] = Counter()
        self.after: Counter[int] = Counter()
        self.chained = 0
        self.sample: tuple[bool, list[dict[str, str]]] | None = None

    def add(self, d: Dialogue) -> None:
        found = results(d.messages)
        if not found:
            return
        self.dialogues += 1
        chained = fed_by_results(d.messages)
        self.chained += chained
        if self.sample is None or (chained and not self.sample[0]):  # the first chained dialogue, else the first
            self.sample = (chained, transcript(d.messages))
        self.results += len(found)
        self.errors.update(str(r.error.get("type")) for r in found if r.error is not None)
        self.calls[sum(len(m.tool_calls) for m in d.assistant_turns)] += 1
        self.after[sum(m.role == "assistant" for m in d.messages[found[0].at:])] += 1

    def result(self) -> dict[str, Any]:
        return {
            "note": "Over accepted dialogues holding a tool result. `turns_per_dialogue` counts every assistant "
                    "turn, those after a result included; `turns_after_first_result` counts those; "
                    "`chained_dialogues` those whose later call uses a value an earlier result returned and no "
                    "user turn said; `sample` is the first of those, else the first dialogue with a result.",
            "dialogues": self.dialogues,
            "results": self.results,
            "error_results": dict(self.errors.most_common()),
            "calls_per_dialogue": _counted_distribution(self.calls),
            "turns_after_first_result": _counted_distribution(self.after),
            "chained_dialogues": self.chained,
            "sample": self.sample[1] if self.sample else [],
        }


class StatsBuilder:
    """stats.json built one dialogue at a time, so an export streams its dialogues: what it keeps grows
    with the distinct values seen (reasons, lines of business, turn counts), not with the dialogues.

    Stage pass rates are passed/evaluated where `evaluated` counts dialogues
    holding a verdict from that stage: the rule cascade stops at its first
    failure, so later stages see fewer dialogues, and dialogues rejected before
    validation (e.g. the wrong tool was selected) are evaluated by none.
    """

    def __init__(self) -> None:
        self.accepted = self.rejected = self.before = 0
        self.stages = _Stages()
        self.by_stage: Counter[str] = Counter()
        self.before_reasons: Counter[str] = Counter()
        self.reasons: Counter[str] = Counter()
        self.dist: dict[str, Counter[int]] = {k: Counter() for k in (
            "turns_per_dialogue", "parameters_per_seed_tool", "required_parameters_per_seed_tool",
            "tool_selection_turns", "argument_filling_turns")}
        self.lines: Counter[str] = Counter()
        self.persona_lines: Counter[str] = Counter()
        self.scenarios: dict[str, _Scenario] = {}
        self.styles: Counter[str] = Counter()
        self.styles_accepted: Counter[str] = Counter()
        self.fault_kinds: Counter[str] = Counter()
        self.replaceable: Counter[str] = Counter()
        self.usage = Usage()
        self.usage_by_role: dict[str, Usage] = {}
        self.distractor_counts: set[int] = set()
        self.results = _Results()

    def add(self, d: Dialogue) -> None:
        self.stages.add(d)
        self.usage.add(d.generation.usage)
        for role, usage in d.generation.usage_by_role.items():
            self.usage_by_role.setdefault(role, Usage()).add(usage)
        self.distractor_counts.add(len(d.distractor_tools))
        self.scenarios.setdefault(d.scenario, _Scenario()).add(d)
        style = d.scenario_info.decision_style or "(none)"
        self.styles[style] += 1
        self.styles_accepted[style] += d.accepted
        if not d.accepted:
            self.rejected += 1
            reason = d.rejection_reason or NO_REASON
            self.reasons[reason] += 1
            stage = failed_stage(d.validation)
            if stage is None:
                self.before += 1
                self.before_reasons[reason] += 1
            else:
                self.by_stage[stage] += 1
            return
        self.accepted += 1
        for key, value in (("turns_per_dialogue", num_turns(d)), ("parameters_per_seed_tool", len(d.seed_tool.properties)),
                           ("required_parameters_per_seed_tool", len(d.seed_tool.required)),
                           ("tool_selection_turns", d.turns_in_phase("tool_selection")),
                           ("argument_filling_turns", d.turns_in_phase("argument_filling"))):
            self.dist[key][value] += 1
        self.results.add(d)
        self.lines[d.seed_tool.line_of_business or "(unset)"] += 1
        self.persona_lines[d.user_persona.line_of_business or "(unset)"] += 1
        if d.scenario_info.fault is not None:
            self.fault_kinds[d.scenario_info.fault.kind] += 1
        if not scenarios.get(d.scenario).expects_call:
            self.replaceable[str(d.scenario_info.replaceable).lower()] += 1

    def scenario_result(self) -> dict[str, Any]:
        return {
            "by_scenario": {name: self.scenarios[name].result() for name in scenarios.names() if name in self.scenarios},
            "decision_styles": {style: {"generated": n, "accepted": self.styles_accepted[style]}
                                for style, n in sorted(self.styles.items())},
            "fault_kinds": dict(self.fault_kinds.most_common()),
            "replaceable": dict(self.replaceable.most_common()),
        }

    def result(self, sft_rows: int, run: RunInfo, preference: dict[str, int] | None = None) -> dict[str, Any]:
        """Everything stats.json reports; `preference` is the `preference` config's rows per pattern."""
        requested = run.requested
        generated = self.accepted + self.rejected
        order = self.stages.order()
        after = [s for s in order if s in AFTER_RESULT_STAGES]
        return {
            "counts": {
                "requested": requested,
                "generated": generated,
                "accepted": self.accepted,
                "rejected": self.rejected,
                "sft_rows": sft_rows,
                "preference_rows": sum((preference or {}).values()),
            },
            "preference": {"patterns": dict(preference or {})},
            "acceptance_rate": _rate(self.accepted, generated),
            "yield_vs_requested": _rate(self.accepted, requested) if requested else None,
            "validators": {
                "order": order,
                "note": (
                    f"pass_rate = passed / evaluated. Rule validators ({' -> '.join(RULE_STAGES)}) stop at "
                    f"the first failure and the LLM validators ({', '.join(LLM_STAGES)}) run only after all rules "
                    "pass, so later stages are evaluated on fewer dialogues." + (
                        f" The rules of what follows a tool result ({', '.join(after)}) run after the other rules, "
                        "only on dialogues holding one, and read them whole; every other stage reads a dialogue "
                        "up to its first result." if after else "")
                ),
                "stages": self.stages.result(),
            },
            "rejections": {
                "total": self.rejected,
                "by_validator": {stage: self.by_stage[stage] for stage in order if self.by_stage[stage]},
                "before_validation": self.before,
                "before_validation_reasons": dict(self.before_reasons.most_common()),
                "reasons": dict(self.reasons.most_common()),
            },
            "distributions": {
                "note": "Over accepted dialogues; a turn is one assistant reply (with the user message before it).",
                **{key: _counted_distribution(counts) for key, counts in self.dist.items()},
                "lines_of_business": dict(self.lines.most_common()),
                "persona_lines_of_business": dict(self.persona_lines.most_common()),
            },
            **({"results": self.results.result()} if self.results.dialogues else {}),
            "scenarios": self.scenario_result(),
            "usage": (run.usage or self.usage).report(),
            "usage_in_dialogues": self.usage.report(),
            "usage_by_role": by_role(self.usage_by_role, self.accepted),
            "wall_time_s": run.wall_time_s,
            "llm": run.llm,
            "run": {
                "backend": run.backend,
                "models": run.models,
                "prompt_versions": run.prompt_versions,
                "seed": run.seed,
                "catalog": run.catalog,
                "distractor_counts": sorted(self.distractor_counts),
                "utcgen_version": run.utcgen_version,
                "config": run.config,
            },
        }
