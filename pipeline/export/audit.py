"""The audit of a dataset folder: every rule validator's pass rate, each run on every dialogue, and the
data-quality figures.

Unlike the cascade, which stops at the first failure, the audit runs every rule on every dialogue,
so each rate is over all of them. It reads what the cascade reads: a dialogue with tool results up
to its first result, and, whole, for the rules of what follows a result (the answers rule, over the
dialogues holding one). It also reports how often the opening user turn holds a word
found only in the seed tool's name versus only in a distractor's name (equal rates: names tell
nothing), the acceptance rate and turns per dialogue, and the data-quality figures of the set
(`export.quality`), each beside its target. `utcgen audit` and `utcgen.audit` print or return it.
"""

from __future__ import annotations

from collections import Counter
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...validators.cascade import AFTER_RESULTS, RULES, judged
from ..core.errors import InputError
from ..core.records import Dialogue, Verdict
from ..dialogue import shortcuts
from ..dialogue.results import has_results
from .quality import Embed, quality

if TYPE_CHECKING:
    from .perplexity import Scorer
from .reading import load_dialogues


def _opening_balance(dialogues: list[Dialogue]) -> tuple[float, float, int]:
    seed_hits = distractor_hits = n = 0
    for d in dialogues:
        first = next((m.content for m in d.messages if m.role == "user"), None)
        if first is None:
            continue
        n += 1
        names = [t.name for t in d.distractor_tools if t.name != d.seed_tool.name]
        said = {shortcuts.stem(w) for w in shortcuts.split_words(first)}
        seed_only = shortcuts.distinctive_name_tokens(d.seed_tool.name, names)
        others_only = set().union(*(shortcuts.name_tokens(x) for x in names)) - shortcuts.name_tokens(d.seed_tool.name) if names else set()
        seed_hits += bool(said & seed_only)
        distractor_hits += bool(said & others_only)
    return (seed_hits / n if n else 0.0), (distractor_hits / n if n else 0.0), n


def _verdict(name: str, rule: Any, d: Dialogue) -> Verdict:
    try:
        return rule(d)
    except Exception as exc:  # a malformed record fails the rule, it does not stop the audit
        return Verdict(validator=name, passed=False, reason=str(exc), details={"rule": "error"})


def _checks(dialogues: list[Dialogue]) -> list[tuple[str, Any, list[Dialogue]]]:
    """(rule, its check, the dialogues it reads), in cascade order, as the cascade runs them (`judged`: every
    rule reads a dialogue up to its first tool result, a multi-step task step by step), and the rules of what
    follows a result (`AFTER_RESULTS`) the dialogues holding one; those only when some dialogue holds one."""
    after = [d for d in dialogues if has_results(d.messages)]
    return [(r.name, partial(judged, r), dialogues) for r in RULES] + \
        ([(r.name, partial(judged, r), after) for r in AFTER_RESULTS] if after else [])


def by_scenario(dialogues: list[Dialogue]) -> dict[str, Any]:
    """Per scenario type: dialogues, accepted, acceptance rate and every rule's pass rate over them (an
    `AFTER_RESULTS` rule's over those of them holding a result, none when no dialogue of the type does)."""
    out: dict[str, Any] = {}
    for scenario in sorted({d.scenario for d in dialogues}):
        mine = [d for d in dialogues if d.scenario == scenario]
        accepted = sum(d.accepted for d in mine)
        out[scenario] = {"dialogues": len(mine), "accepted": accepted, "acceptance_rate": accepted / len(mine),
                         "pass_rates": {name: sum(_verdict(name, rule, d).passed for d in read) / len(read)
                                        for name, rule, read in _checks(mine) if read}}
    return out


def _stage(name: str, rule: Any, dialogues: list[Dialogue]) -> dict[str, Any]:
    """One rule run on every dialogue: checked, passed, pass rate, failure codes (and those it could not check)."""
    passed, codes, unchecked = 0, Counter(), 0
    for d in dialogues:
        v = _verdict(name, rule, d)
        passed += v.passed
        unchecked += v.details.get("checked") is False
        if not v.passed:
            codes[str(v.details.get("rule", "failed"))] += 1
    return {"checked": len(dialogues), "passed": passed, "pass_rate": passed / len(dialogues) if dialogues else None,
            "failures": dict(codes.most_common()), **({"unchecked": unchecked} if unchecked else {})}


def audit_dialogues(dialogues: list[Dialogue], embed: Embed | None = None, fluency_turns: int = 0,
                    scorer: Scorer | None = None) -> dict[str, Any]:
    """Per rule: dialogues checked, passed, pass rate and the commonest failure codes; the same per scenario;
    the data-quality figures (`embed` encodes texts for `seed_closest`; default: the project's embedder;
    fluency over at most `fluency_turns` turns per role, 0: not measured; `scorer`: default loaded if needed)."""
    stages = {name: _stage(name, rule, read) for name, rule, read in _checks(dialogues)}
    seed_share, distractor_share, openings = _opening_balance(dialogues)
    turns = [len(d.assistant_turns) for d in dialogues if d.accepted]
    selection = Counter(d.turns_in_phase("tool_selection") for d in dialogues if d.accepted)
    return {
        "dialogues": len(dialogues),
        "accepted": sum(d.accepted for d in dialogues),
        "acceptance_rate": sum(d.accepted for d in dialogues) / len(dialogues) if dialogues else None,
        "mean_turns_accepted": sum(turns) / len(turns) if turns else None,
        "selection_turns_accepted": dict(sorted(selection.items())),
        "wrong_selection": sum(any(v.validator == "selection" and not v.passed for v in d.validation) for d in dialogues),
        "openings": openings,
        "openings_with_seed_only_name_token": seed_share,
        "openings_with_distractor_only_name_token": distractor_share,
        "validators": stages,
        "scenarios": by_scenario(dialogues),
        "quality": quality(dialogues, embed, fluency_turns, scorer),
    }


def audit_folder(folder: str | Path, embed: Embed | None = None, fluency_turns: int = 0,
                 scorer: Scorer | None = None) -> tuple[dict[str, Any], str]:
    """(the audit of the dialogues a folder holds, where they were read from): `export.reading.load_dialogues`
    finds them in the parquet splits, the run journal or JSON Lines files. Fluency as in `audit_dialogues`."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"{folder}: {'not a folder' if folder.exists() else 'no such folder'}")
    dialogues, source = load_dialogues(folder)
    return audit_dialogues(dialogues, embed, fluency_turns, scorer), source
