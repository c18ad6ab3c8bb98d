"""`utcgen audit DIR`: the report of `export.audit` as text or JSON (the command's help: parsers.AUDIT_HELP)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..core.records import DEFAULT_SCENARIO
from ..export.audit import audit_folder
from ..export.quality import RATIOS


def _figure(name: str, value: Any) -> str:
    if value is None:
        return "-"
    if name in RATIOS:
        return f"{value:.2f}"
    return f"{value:.1%}" if isinstance(value, float) else str(value)


def _fluency(f: dict[str, Any]) -> str:
    if f["value"] is None:
        return f.get("reason") or f"no turn of {f['of']} scored"
    sampled = f"a seeded sample of {f['turns']} of {f['of']} turns" if f["turns"] < f["of"] else f"all {f['of']} turns"
    return f"median perplexity {f['perplexity']:.1f} (real users' requests: {f['reference']:g}); {sampled}"


def _stock(f: dict[str, Any]) -> str:
    top = "; ".join(f"{t['text'][:50]!r} {t['share']:.1%}" for t in f["top"])
    return f"{f['stock_lines']} stock lines in {f['dialogues']} dialogues" + (f": {top}" if top else "")


def quality_lines(figures: dict[str, Any]) -> list[str]:
    """The "Quality" section of the text report: each figure, its target and a pass/fail mark."""
    notes = {
        "seed_closest": lambda f: f"of {f['dialogues']} dialogues with a call",
        "role_mismatch": lambda f: f"of {f['dialogues']} dialogues with a role" + (f", {f['no_role']} without" if f["no_role"] else "") + (f"; e.g. {', '.join(f['examples'][:3])}" if f["examples"] else ""),
        "description_echo": lambda f: f"of {f['assistant_turns']} assistant turns",
        "repeated_runs": lambda f: f"dialogues; {f['pairs']} pairs of turns",
        "shared_values": lambda f: f"of {f['string_values']} string values" + (f"; e.g. {', '.join(map(repr, f['examples'][:3]))}" if f["examples"] else ""),
        "non_whole": lambda f: "values" + (f"; e.g. {', '.join(f['examples'][:3])}" if f["examples"] else ""),
        "opening_trigrams": lambda f: f"distinct of {f['trigrams']} trigrams",
        "stock_lines": _stock,
        "fluency_user": _fluency,
        "fluency_assistant": _fluency,
        "acceptance": lambda f: f"{f['accepted']} of {f['attempts']} attempts",
    }
    lines = ["Quality (accepted dialogues; acceptance over all attempts)",
             f"{'figure':<17} {'value':>7} {'target':>8}  mark  detail"]
    for name, f in figures.items():
        mark = {True: "pass", False: "FAIL", None: "-"}[f["met"]]
        lines.append(f"{name:<17} {_figure(name, f['value']):>7} {f['target']:>8}  {mark:<4}  {notes[name](f)}")
    return lines


def to_text(report: dict[str, Any], source: str) -> str:
    lines = [f"source: {source}",
             f"dialogues {report['dialogues']}, accepted {report['accepted']} "
             f"({(report['acceptance_rate'] or 0):.1%}), wrong tool selected {report['wrong_selection']}",
             f"accepted dialogues: mean assistant turns {report['mean_turns_accepted'] or 0:.2f}, "
             f"tool-selection turns {report['selection_turns_accepted']}",
             f"openings naming a seed-only name token {report['openings_with_seed_only_name_token']:.1%}, "
             f"a distractor-only name token {report['openings_with_distractor_only_name_token']:.1%} "
             f"(of {report['openings']})",
             "",
             f"{'validator':<14} {'passed':>8} {'checked':>8} {'rate':>7}  failures"]
    for name, s in report["validators"].items():
        fails = ", ".join(f"{k} {v}" for k, v in s["failures"].items())
        fails += f" (not checked: {s['unchecked']}, no score recorded)" if s.get("unchecked") else ""
        rate = "-" if s["pass_rate"] is None else f"{s['pass_rate']:.1%}"
        lines.append(f"{name:<14} {s['passed']:>8} {s['checked']:>8} {rate:>7}  {fails}")
    lines.append("every rule runs on every dialogue (no early stop), so rates are over all dialogues read")
    scenarios = report.get("scenarios") or {}
    if set(scenarios) - {DEFAULT_SCENARIO}:
        lines += ["", "per scenario (rules below 100% listed):"]
        for name, s in scenarios.items():
            low = ", ".join(f"{k} {v:.1%}" for k, v in s["pass_rates"].items() if v < 1)
            lines.append(f"{name:<21} {s['dialogues']:>5} dialogues, {s['accepted']:>4} accepted "
                         f"({s['acceptance_rate']:.1%})" + (f"; {low}" if low else ""))
    if report.get("quality"):
        lines += ["", *quality_lines(report["quality"])]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    report, source = audit_folder(args.dir, fluency_turns=args.fluency_turns)
    print(json.dumps(report, indent=2) if args.json else to_text(report, source))
    return 0


