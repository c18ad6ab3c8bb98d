"""Which tools a benchmark holds out, and the cases it makes of the accepted dialogues that use them.

A benchmark must test tools the model never trained on, and (the point of DiaFORGE) tools whose
near-duplicates it never trained on either. So the split is by group, never by dialogue:
- `family` (default): near-duplicate families (utcgen.pipeline.evaluation.families) over every tool
  of the catalog the run used. Holding out a family holds out every near-duplicate of its tools.
- `line_of_business`: whole lines of business (by the seed tool's catalog entry); the held-out
  tools are those lines' tools plus every tool of their near-duplicate families, so a near-duplicate
  in another line never reaches training data either.
Groups that have accepted dialogues are shuffled with `seed`, and each is held out when that brings
the number of covered dialogues closer to `holdout` × accepted (at least one group is held out, and at
least one is kept). Every accepted dialogue whose seed tool is held out becomes a `Case`.
"""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from pathlib import Path

from ...validators.cascade import up_to_results
from ..core.errors import InputError
from ..core.records import Dialogue, Message, Tool
from ..core.resources import resolve, shipped
from ..dialogue.results import results
from ..export.reading import load_dialogues
from ..retrieval.similarity import NEAR_DUPLICATE_THRESHOLD
from ..scenarios import get as scenario_type
from .cases import Case, Group
from .families import Similarity

UNSET_LOB = "(unset)"  # the group of a tool without a line of business


# ---------------------------------------------------------------------------------------- the source


def accepted_dialogues(source: Path) -> list[Dialogue]:
    """The accepted dialogues of a `utcgen generate` output folder; InputError if it is not one or has none."""
    if not source.is_dir():
        raise InputError(f"{source}: no such folder (expected a `utcgen generate` output folder)")
    exported = any((source / "data" / "dialogues").glob("*.parquet"))
    if not exported and not any((source / "journal").glob("job-*.json")):
        raise InputError(f"{source}: not a `utcgen generate` output folder (no data/dialogues/*.parquet and no "
                         "journal/job-*.json)")
    dialogues, _where = load_dialogues(source)
    accepted = [d for d in dialogues if d.accepted]
    if not accepted:
        raise InputError(f"{source}: no accepted dialogues to build a benchmark from")
    return accepted


def _recorded_catalog(source: Path) -> str | None:
    """The catalog path the run recorded in stats.json (run.catalog, else its config's catalog)."""
    stats = source / "stats.json"
    if not stats.is_file():
        return None
    try:
        run = json.loads(stats.read_text(encoding="utf-8")).get("run") or {}
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"{stats}: unreadable run statistics: {exc}") from None
    return run.get("catalog") or (run.get("config") or {}).get("catalog")


def resolve_catalog(source: Path, catalog: Path | None) -> Path:
    """The source's recorded catalog if it exists, else `catalog`, else the shipped catalog/tools."""
    recorded = _recorded_catalog(source)
    if recorded and Path(resolve(recorded)).exists():  # a relative `catalog/tools` names the shipped one
        return Path(resolve(recorded))
    if catalog is not None:
        if not Path(catalog).exists():
            raise InputError(f"--catalog {catalog}: no such file or folder")
        return Path(catalog)
    if recorded:
        raise InputError(f"{source / 'stats.json'}: the run's catalog {recorded} does not exist here; "
                         "pass --catalog with the catalog the run used")
    return shipped("catalog", "tools")


# ---------------------------------------------------------------------------------------- the split


def _choose_groups(sizes: dict[str, int], target: float, seed: int,
                   kinds: dict[str, set[str]] | None = None) -> list[str]:
    """Groups in a seeded order, each taken when it brings the covered count closer to `target`.
    With `kinds` (group -> the scenario types of its dialogues), the order first offers, for each
    type from the rarest, one group holding it, so the held-out cases cover every type they can."""
    order = sorted(sizes)
    random.Random(f"{seed}:holdout").shuffle(order)
    if kinds:
        spread = Counter(k for g in order for k in kinds.get(g, ()))
        first: list[str] = []
        for kind in sorted(spread, key=lambda k: (spread[k], k)):
            if not any(kind in kinds.get(g, ()) for g in first):
                first += [next(g for g in order if kind in kinds.get(g, ()))]
        order = first + [g for g in order if g not in first]
    chosen: list[str] = []
    covered = 0
    for group in order:
        if len(chosen) == len(order) - 1:
            break  # keep at least one group for training
        if not chosen or abs(covered + sizes[group] - target) < abs(covered - target):
            chosen.append(group)
            covered += sizes[group]
    return sorted(chosen)


def hold_out(source: Path, accepted: list[Dialogue], tools: list[Tool], family: dict[str, str], *, by: Group,
             holdout: float, seed: int) -> tuple[list[str], set[str]]:
    """(held-out group names, held-out tool names) for the accepted dialogues of `source` over `tools`
    (the catalog plus any tool a dialogue names that it lacks), grouped `by` (see the module docstring)."""
    by_name = {t.name: t for t in tools}
    members: dict[str, list[str]] = defaultdict(list)
    for name, fam in family.items():
        members[fam].append(name)

    def group_of(tool_name: str) -> str:
        if by == "family":
            return family[tool_name]
        return by_name[tool_name].line_of_business or UNSET_LOB

    sizes = Counter(group_of(d.seed_tool.name) for d in accepted)
    if len(sizes) < 2:
        raise InputError(f"{source}: the accepted dialogues cover a single {by.replace('_', ' ')} "
                         f"({next(iter(sizes))}); a held-out split needs at least two")
    kinds: dict[str, set[str]] = defaultdict(set)
    for d in accepted:
        kinds[group_of(d.seed_tool.name)].add(d.scenario)
    groups = _choose_groups(dict(sizes), holdout * len(accepted), seed, kinds)
    held_groups = set(groups)
    held: set[str] = set()
    for t in tools:
        if group_of(t.name) in held_groups:
            held.update(members[family[t.name]])  # by line of business: the whole family goes too
    return groups, held


# ---------------------------------------------------------------------------------------- the cases


def _catalog_tool(by_name: dict[str, Tool], tool: Tool) -> Tool:
    """The catalog's entry for a tool named in a dialogue (it carries the line of business)."""
    return by_name.get(tool.name, tool)


def build_case(d: Dialogue, by_name: dict[str, Tool], family: dict[str, str], similarity: Similarity) -> tuple[Case, float]:
    """The case an accepted dialogue makes, and the mean A.4 score of its gold tool against its distractors."""
    gold = _catalog_tool(by_name, d.seed_tool)
    candidates = [_catalog_tool(by_name, t) for t in (d.candidate_tools or [d.seed_tool, *d.distractor_tools])]
    scores = [similarity.score(gold, t) for t in candidates if t.name != gold.name]
    # the disambiguation up to its first call: what follows a tool result is no turn of the benchmark
    reference = [Message(role=m.role, content=m.content, thought=m.thought, tool_calls=m.tool_calls, phase=m.phase)
                 for m in up_to_results(d).messages if m.role in ("user", "assistant")]
    if d.scenario_info.chain is not None:
        reference = _chained_reference(d)
    case = Case(
        id=d.id, gold_tool=gold, gold_arguments=dict(d.gold_arguments), candidates=candidates,
        persona=d.user_persona, goal=d.goal, reference=reference, line_of_business=gold.line_of_business,
        family=family[gold.name], near_duplicate=bool(scores) and max(scores) >= NEAR_DUPLICATE_THRESHOLD,
        max_similarity=round(max(scores), 6) if scores else 0.0,
        scenario=d.scenario, scenario_info=d.scenario_info, q_star=d.q_star,
    )
    if not scenario_type(d.scenario).expects_call and any(t.name == gold.name for t in candidates):
        raise InputError(f"dialogue {d.id}: an unavailable_tool dialogue lists its seed tool {gold.name} among the "
                         "candidates; the record is inconsistent")
    return case, (sum(scores) / len(scores) if scores else 0.0)


def _chained_reference(d: Dialogue) -> list[Message]:
    """A multi-step dialogue's turns up to its second step's result: both steps, with the first step's
    successful result (a `tool` turn), which a static run gives the model under test for its first call."""
    chain = d.scenario_info.chain
    assert chain is not None
    found = [r for r in results(d.messages) if r.call is not None]
    first = next((r.at for r in found if r.call and r.call.name == chain.tool.name and r.error is None), None)
    if first is None:
        raise InputError(f"dialogue {d.id}: a multi-step dialogue without a result of its first step "
                         f"({chain.tool.name}); the record is inconsistent")
    end = next((r.at for r in found if r.at > first and r.call and r.call.name == d.seed_tool.name), len(d.messages))
    return [Message(role=m.role, content=m.content, thought=m.thought, tool_calls=m.tool_calls, phase=m.phase,
                    tool_call_id=m.tool_call_id) for m in d.messages[:end] if m.role in ("user", "assistant", "tool")]
