"""One synthesis attempt for a seed tool: metadata, the two-phase loop, then the validator cascade.

Stage transitions follow DiaFORGE Appendix A.1: in tool selection the assistant sees the
shuffled candidate pool; its first tool call must name the seed tool (else the dialogue
is rejected as a wrong selection); that committing message is dropped and argument
filling starts with the seed tool in context. The loop stops at the first tool call or
after T_max assistant turns; with `execution.results` on, the call gets its result and the
assistant answers from it (`after_call`). T_max counts the assistant turns kept in the dialogue: the
dropped committing message is not one, so it does not count (a rejected wrong selection
or an unparsable reply ends the loop anyway).

Scenario types (`pipeline/scenarios/` sets them up) change who says what, not the loop: the
opening of an input-fault dialogue is written before the loop (as meant, then with its fault),
and any scenario but the plain one also stops at the assistant's refusal (an unavailable tool
ends there; elsewhere the validators reject it). Every assistant turn is labelled
(`utcgen.pipeline.dialogue.labels`) once the loop ends.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import random
from dataclasses import dataclass, replace

from ...validators.cascade import first_failure, run_cascade
from .. import __version__
from ..core.records import (
    DEFAULT_SCENARIO,
    FIT_ATTRIBUTE,
    ROLE_FIT_ATTRIBUTE,
    ChainInfo,
    Dialogue,
    GenerationInfo,
    Message,
    Persona,
    ScenarioInfo,
    Tool,
    Usage,
    Verdict,
)
from ..dialogue.labels import action_of, label_dialogue
from ..dialogue.parameter_labels import label
from ..dialogue.planning import next_question, q_star
from ..dialogue.results import results
from ..llm.gateway import ROLE_USAGE, Gateway, LLMError, LLMFatalError
from ..llm.requests import said
from ..scenarios import get as scenario_type
from ..scenarios import plain_dialogue, prepare, step_views
from ..settings.config import RunConfig
from ..settings.templates import prompt_versions
from .after_call import MAX_CALLS, Execution, after_call
from .chain import fed_values
from .roles import ReplyError, Roles, plan_hint


@dataclass(frozen=True)
class Seed:
    """Everything an attempt is conditioned on, drawn before any LLM call."""

    job: int
    attempt: int
    tool: Tool
    persona: Persona
    distractors: list[Tool]
    candidates: list[Tool]
    seed: int
    persona_fit: float | None = None  # cosine(persona text, tool text), recorded as attributes["tool_fit"]
    role_fit: float | None = None  # share of reference roles closer to the tool (retrieval/rolefit), as "role_fit"
    scenario: str = DEFAULT_SCENARIO  # drawn per job (draw.draw_scenario); may fall back in `prepare`
    decision_style: str | None = None
    chain: ChainInfo | None = None  # multi_step: the first step (`chain.Chains.plan`), its values not yet drawn


def dialogue_id(fingerprint: str, job: int, attempt: int) -> str:
    return hashlib.sha1(f"{fingerprint}:{job}:{attempt}".encode()).hexdigest()[:16]


def shuffled_pool(tool: Tool, distractors: list[Tool], rng: random.Random) -> list[Tool]:
    """C_k = {seed} ∪ D_k, in an order that does not give the seed tool away."""
    pool = [tool, *distractors]
    rng.shuffle(pool)
    return pool


async def synthesize(seed: Seed, config: RunConfig, gateway: Gateway) -> Dialogue:
    """Runs one attempt to completion and returns the dialogue with every verdict recorded."""
    s = config.synthesis
    roles = Roles(gateway, reply_retries=s.reply_retries, attempt_tag=f"{seed.job}/{seed.attempt}")
    by_role: dict[str, Usage] = {}
    ROLE_USAGE.set(by_role)  # this attempt's calls, role by role (its judges' tasks share the mapping)
    tool, persona = seed.tool, seed.persona
    messages: list[Message] = []
    goal, gold = "", {}
    verdicts: list[Verdict] = []
    rng_seed = seed.seed * 1_000_003 + seed.job * 101 + seed.attempt
    scenario, info = seed.scenario, ScenarioInfo.model_validate({"decision_style": seed.decision_style})
    try:
        offered = scenario_type(scenario).expects_call
        if (tool.name in {c.name for c in seed.candidates}) != offered:
            raise _Reject("candidates", "the seed tool is not in the candidate pool" if offered
                          else "the unavailable seed tool is still in the candidate pool")
        gold = await roles.slots(tool, persona, rng_seed, s.slot_retries)
        chain = seed.chain and await _first_step(roles, seed.chain, persona, rng_seed, s.slot_retries)
        # a multi-step task's goal is written once the first result has given its values, without them
        goal = await roles.goal(tool, persona, rng_seed, gold) if chain is None else ""
        scenario, info = prepare(scenario, tool, gold, random.Random(f"{rng_seed}:scenario"),
                                           seed.decision_style)
        ex = Execution(gateway, config.seed, seed.job, config.execution.error_share, s.reply_retries)
        if chain is not None:
            info.chain = chain
            goal = await _chained(seed, roles, ex, gold, messages, rng_seed, scenario, info, config)
        else:
            await _converse(seed, roles, goal, gold, messages, s.max_turns, rng_seed, scenario, info, s.plan_hint)
            if config.execution.results and _called(messages):
                await after_call(ex, roles, tool, persona, goal, seed.distractors, gold, messages, rng_seed)
    except _Reject as reject:
        verdicts.append(Verdict(validator=reject.stage, passed=False, reason=reject.reason))
    except ReplyError as exc:
        verdicts.append(Verdict(validator="synthesis", passed=False, reason=f"unusable model reply: {exc}"))
    except LLMFatalError:
        raise
    except LLMError as exc:  # this attempt's call failed (a 4xx, or a sporadic fault through its retries)
        verdicts.append(Verdict(validator="synthesis", passed=False, reason=str(exc), details={"rule": "llm_error"}))

    dialogue = Dialogue(
        id=dialogue_id(config.fingerprint(), seed.job, seed.attempt),
        seed_tool=tool,
        user_persona=_with_fit(persona, seed.persona_fit, seed.role_fit),
        goal=goal,
        gold_arguments=gold,
        distractor_tools=seed.distractors,
        candidate_tools=seed.candidates,
        messages=messages,
        scenario=scenario,
        scenario_info=info,
        generation=GenerationInfo(
            utcgen_version=__version__,
            backend=config.backend(),
            models=_models(config, roles),
            prompt_versions=prompt_versions(switched_on=config.switched_on()),
            seed=config.seed,
            attempt=seed.attempt,
            usage=roles.usage,
            usage_by_role=_by_role(by_role),
            created_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        ),
    )
    dialogue.messages = label_dialogue(dialogue)
    known = scenario_type(scenario).tool_known_from_opening(info)
    dialogue.q_star = sum(q_star(view, known) for view in step_views(dialogue)) if messages else None
    if not verdicts:
        verdicts = await run_cascade(dialogue, _Metered(gateway, roles))
        dialogue.generation.usage = roles.usage
        dialogue.generation.usage_by_role = _by_role(by_role)
        dialogue.generation.models = _models(config, roles)
    dialogue.validation = verdicts
    failed = first_failure(verdicts)
    dialogue.accepted = failed is None
    dialogue.rejection_reason = None if failed is None else f"{failed.validator}: {failed.reason}"
    return dialogue


def _models(config: RunConfig, roles: Roles) -> dict[str, str]:
    """role -> model, then the request forms used, sorted: the judges run concurrently, and the
    record must not depend on which answered first (a resumed run writes the same bytes)."""
    return {**config.models.names(config.roles()), **dict(sorted(roles.formats.items()))}


def _by_role(usage: dict[str, Usage]) -> dict[str, Usage]:
    """A copy in role order (the judges run concurrently: the record must not depend on which answered first)."""
    return {role: usage[role].model_copy() for role in sorted(usage)}


def _with_fit(persona: Persona, fit: float | None, role_fit: float | None = None) -> Persona:
    """The persona as recorded: its fit to the seed tool (text, role) added after the prompts used it."""
    added = {name: f"{value:.4f}" for name, value in ((FIT_ATTRIBUTE, fit), (ROLE_FIT_ATTRIBUTE, role_fit))
             if value is not None}
    return persona.model_copy(update={"attributes": {**persona.attributes, **added}}) if added else persona


class _Metered:
    """Passes judge calls to the gateway and charges their usage to this dialogue."""

    def __init__(self, gateway: Gateway, roles: Roles) -> None:
        self.gateway, self.roles = gateway, roles

    async def chat(self, request, messages: list[dict], **kwargs):
        reply = await self.gateway.chat(request, messages, **kwargs)
        self.roles.note(request.role, reply)
        return reply


class _Reject(Exception):
    def __init__(self, stage: str, reason: str) -> None:
        super().__init__(reason)
        self.stage, self.reason = stage, reason


def _called(messages: list[Message]) -> bool:
    return bool(messages) and bool(messages[-1].tool_calls) and not messages[-1].parse_error


def _unfed(gold: dict, chain: ChainInfo | None) -> dict:
    """The seed tool's values the user holds: all but those a multi-step task's first result feeds (before
    it exists, the parameter it is planned to feed)."""
    return gold if chain is None else {k: v for k, v in gold.items() if k not in {chain.parameter, *chain.fed}}


async def _first_step(roles: Roles, chain: ChainInfo, persona: Persona, rng_seed: int, retries: int) -> ChainInfo:
    """The first step's values and goal, drawn for its tool as any seed tool's are."""
    gold = await roles.slots(chain.tool, persona, rng_seed + 1, retries)
    goal = await roles.goal(chain.tool, persona, rng_seed + 1, gold)
    return chain.model_copy(update={"gold": gold, "goal": goal})


async def _chained(seed: Seed, roles: Roles, ex: Execution, gold: dict, messages: list[Message],
                   rng_seed: int, scenario: str, info: ScenarioInfo, config: RunConfig) -> str:
    """A multi-step task: the first step's dialogue, call and answer (its result never an error, so the
    task can go on), then the user's follow-up and the second step, whose fed values come from that
    result. Returns the second step's goal ("" when the first step made no call)."""
    chain, s = info.chain, config.synthesis
    assert chain is not None
    first = replace(seed, tool=chain.tool, distractors=chain.distractors, candidates=chain.candidates)
    plain = ScenarioInfo(decision_style=info.decision_style)
    await _converse(first, roles, chain.goal, chain.gold, messages, s.max_turns, rng_seed, DEFAULT_SCENARIO, plain,
                    s.plan_hint, results=True)
    if not _called(messages):
        return ""  # no first call: the per-step validators reject it
    # the result never fails, and holds the value a reference no output schema shows
    holds = {chain.parameter: seed.tool.properties.get(chain.parameter) or {}} if chain.source_path is None else None
    await after_call(replace(ex, error_share=0.0, holds=holds), roles, chain.tool, seed.persona, chain.goal, chain.distractors,
                     chain.gold, messages, rng_seed)
    done = [r for r in results(messages) if r.error is None]
    chain.fed = fed_values(done[-1].value, seed.tool) if done else {}
    if chain.parameter not in chain.fed:
        raise _Reject("chain", f"the result of '{chain.tool.name}' holds no value for '{chain.parameter}'")
    gold.update(chain.fed)
    held = _unfed(gold, chain)
    goal = await roles.goal(seed.tool, seed.persona, rng_seed, held)
    context = {"name": scenario, "info": {"parameter_label": label(chain.parameter, seed.tool.properties.get(chain.parameter)),
                                          "after": len(said(messages, results=False)),
                                          "decision_style": info.decision_style}}
    await _converse(seed, roles, goal, held, messages, s.max_turns, rng_seed, scenario, info, s.plan_hint,
                    context=context, results=True)
    if _called(messages):
        await after_call(ex, roles, seed.tool, seed.persona, goal, seed.distractors, held, messages, rng_seed,
                         start=MAX_CALLS, context=context)
    return goal


def _context(scenario: str, info: ScenarioInfo) -> dict | None:
    """What the roles are told of the scenario; None for today's dialogues (unchanged prompts and state)."""
    if plain_dialogue(scenario, info):
        return None
    return {"name": scenario, "info": info.model_dump(mode="json")}


async def _converse(seed: Seed, roles: Roles, goal: str, gold: dict, messages: list[Message],
                    max_turns: int, rng_seed: int, scenario: str = DEFAULT_SCENARIO,
                    info: ScenarioInfo | None = None, hints: bool = False, context: dict | None = None,
                    results: bool = False) -> None:
    """The two-phase loop up to the first call (or a refusal, or T_max); `context` (what the roles are told
    of the scenario) defaults to the scenario's own, `results`: the assistant's prompt says calls get results."""
    tool, phase = seed.tool, "tool_selection"
    distractors = seed.distractors
    info = info or ScenarioInfo()
    context = context or _context(scenario, info)
    need_user, turns = True, 0
    if info.fault is not None and context is not None:
        original, faulted = await roles.fault_opening(tool, seed.persona, goal, distractors, gold, rng_seed, context)
        info.fault.original, info.fault.faulted = original, faulted
        context = {**context, "info": info.model_dump(mode="json"), "original": original, "faulted": faulted}
        messages.append(Message(role="user", content=faulted))
        need_user = False
    while turns < max_turns:
        if need_user:
            text = await roles.user(phase, tool, seed.persona, goal, distractors, gold, messages, rng_seed, context)
            messages.append(Message(role="user", content=text))
        known = scenario_type(scenario).tool_known_from_opening(info)
        hint = plan_hint(next_question(tool, seed.candidates, gold, messages, known, info, phase),
                         phase, tool, gold, messages) if hints else None
        reply = await roles.assistant(phase, seed.candidates, tool if phase == "argument_filling" else None,
                                      messages, rng_seed, context, hint, results=results)
        if reply.parse_error:
            messages.append(reply)
            return
        if phase == "tool_selection" and reply.tool_calls:
            chosen = reply.tool_calls[0].name
            if chosen != tool.name:
                messages.append(reply)
                what = ("wrong tool selected" if scenario_type(scenario).expects_call
                        else "look-alike called although the needed tool is unavailable")
                raise _Reject("selection", f"{what}: '{chosen}' instead of '{tool.name}'")
            # The committing message is dropped, and so it does not count toward T_max;
            # argument filling answers the same user turn.
            phase, need_user = "argument_filling", False
            continue
        turns += 1
        messages.append(reply)
        if reply.tool_calls:
            return  # a call ends the dialogue; toolcall/toolargs judge whether it was the right one
        if context is not None and not scenario_type(scenario).plain and action_of(reply) == "refuse":
            return  # a refusal ends it: right for an unavailable tool, rejected by the validators elsewhere
        need_user = True
