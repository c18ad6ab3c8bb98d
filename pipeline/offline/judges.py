"""Offline judges: deterministic stand-ins for the relevancy and critique LLMs.

They read the dialogue from the structured state (state["dialogue"], a dumped
`Dialogue`) rather than the rendered prompt, apply documented heuristics, and answer
with exactly the JSON a real judge must produce, so the validators parse both alike.

Relevancy. Topic words of a tool are the content words of its name and description
minus its parameter names: what it does, not what it takes. The "need" is what the USER
said before argument filling started, minus the seed's parameter names. Left out on
purpose: argument talk ("the plant code is DE01") names inputs, not the need, and would
make any dialogue that collected the right values look on-topic; the assistant's
clarifying questions enumerate candidate tools (distractors included) by design, so
they would credit every listed tool alike. Words are lower-cased, split on _ and
camelCase, stop words dropped, and cut to 5 characters (a crude stemmer: create,
created, creation). topic(t) = share of t's topic words present in the need.
Relevant iff the final call is to the seed tool, topic(seed) >= MIN_TOPIC with at least
MIN_SHARED shared words, and no distractor is clearly more on-topic
(topic(seed) >= DISTRACTOR_RATIO * best distractor topic). The whole conversation's
overlap with the seed's name, description and parameter words is reported in the reason
but does not decide. Calibrated on offline dialogues over the bundled catalog: 99% of
on-topic dialogues pass; when the tool-selection part is swapped for another tool's,
under 1% pass (another line of business) and about 3% (the same one).

Critique. Structural checks: at least one tool-selection turn, every tool-selection
turn before any argument-filling turn, no call while selecting, the last turn an
argument-filling call; user messages hold no JSON and no internal tool name the
assistant has not said publicly first; the opening does not name the seed tool (as an
identifier or in words); every non-final assistant turn asks something (a '?' or a
request such as "please provide"); no final-call value absent from what the user said.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pipeline.schema import Dialogue, Message, Tool

MIN_TOPIC = 0.25
MIN_SHARED = 2
DISTRACTOR_RATIO = 0.8

STOP = set(
    "a an the of for to and or in on by with is are be was were it its this that these those from as at "
    "i my me we our you your can could would should will shall may might must please need want help hi "
    "hello some one all any use used using when which what who how do does did so about into given "
    "specific only just also not no yes there their them they he she his her have has had get gets "
    "other than then more most each per via e.g eg etc new existing".split()
)
_REQUEST = re.compile(
    r"\b(please (provide|share|give|send|confirm|tell|let)|could you|can you|would you|let me know|"
    r"i need|i'll need|i will need|what is|what's|which)\b"
)


def words(text: str) -> set[str]:
    """Stemmed content words of `text` (identifiers split on _ and camelCase)."""
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text).replace("_", " ").lower()
    return {w[:5] for w in re.findall(r"[a-z][a-z0-9]+", spaced) if w not in STOP and len(w) >= 3}


def topic_words(tool: Tool) -> set[str]:
    """What the tool does: name and description words, minus its parameter names (its inputs)."""
    return (words(tool.name) | words(tool.description)) - parameter_words(tool)


def parameter_words(tool: Tool) -> set[str]:
    return set().union(*(words(p) for p in tool.properties)) if tool.properties else set()


def _need_text(d: Dialogue) -> str:
    """What the user said before the first argument-filling assistant turn."""
    out: list[str] = []
    for m in d.messages:
        if m.role == "assistant" and m.phase == "argument_filling":
            break
        if m.role == "user":
            out.append(m.content)
    return "\n".join(out)


def _share(part: set[str], whole: set[str]) -> float:
    return len(part & whole) / len(whole) if whole else 0.0


def _final_call_name(d: Dialogue) -> str | None:
    last = d.messages[-1] if d.messages else None
    if last is None or last.role != "assistant" or not last.tool_calls:
        return None
    return last.tool_calls[-1].name


def _dialogue(state: dict[str, Any] | None) -> Dialogue | None:
    raw = (state or {}).get("dialogue")
    return Dialogue.model_validate(raw) if isinstance(raw, dict) else None


def relevancy(state: dict[str, Any], messages: list[dict]) -> str:
    """{"relevant": bool, "reason": str} from topic-word overlap (see the module docstring)."""
    d = _dialogue(state)
    if d is None:
        return json.dumps({"relevant": False, "reason": "no dialogue in the judge's state"})
    need = words(_need_text(d)) - parameter_words(d.seed_tool)
    seed_words = topic_words(d.seed_tool)
    seed_score = _share(need, seed_words)
    shared = sorted(need & seed_words)
    rivals = {t.name: _share(need, topic_words(t)) for t in d.distractor_tools if t.name != d.seed_tool.name}
    best_name, best = max(rivals.items(), key=lambda kv: kv[1], default=(None, 0.0))
    everything = words("\n".join(m.content for m in d.messages))
    whole_score = _share(everything, words(d.seed_tool.name) | words(d.seed_tool.description))
    param_score = _share(everything, parameter_words(d.seed_tool))
    called = _final_call_name(d)
    scores = (
        f"need overlap {seed_score:.2f} ({len(shared)} words), best distractor {best:.2f}; "
        f"whole conversation: topic {whole_score:.2f}, parameters {param_score:.2f}"
    )

    if called != d.seed_tool.name:
        relevant, why = False, f"the conversation does not end by calling {d.seed_tool.name}"
    elif seed_score < MIN_TOPIC or len(shared) < MIN_SHARED:
        relevant, why = False, f"the user's need barely touches what {d.seed_tool.name} does"
    elif best_name is not None and seed_score < DISTRACTOR_RATIO * best:
        relevant, why = False, f"the conversation is more about {best_name} than {d.seed_tool.name}"
    else:
        relevant, why = True, f"the user's need matches what {d.seed_tool.name} does"
    return json.dumps({"relevant": relevant, "reason": f"{why} ({scores})"})


def _asks(m: Message) -> bool:
    return "?" in m.content or bool(_REQUEST.search(m.content.lower()))


def _has_json(text: str) -> bool:
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            obj, _ = decoder.raw_decode(text, start)
            if isinstance(obj, dict | list):
                return True
        except json.JSONDecodeError:
            pass
        start = text.find("{", start + 1)
    return bool(re.search(r"\{\s*\"|\"(tool_calls|arguments|thought)\"\s*:", text))


def _identifier_like(name: str) -> bool:
    return "_" in name or bool(re.search(r"[a-z][A-Z]|\d", name))


def _names_in(text: str, names: list[str]) -> list[str]:
    return [n for n in names if re.search(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])", text, re.IGNORECASE)]


def _structure_issues(d: Dialogue) -> list[str]:
    issues: list[str] = []
    turns = [(i, m) for i, m in enumerate(d.messages, start=1) if m.role == "assistant"]
    phases = [m.phase for _, m in turns]
    if "tool_selection" not in phases:
        issues.append("no clarification (tool-selection) turn before arguments were collected")
    seen_filling = False
    for i, m in turns:
        if m.phase == "argument_filling":
            seen_filling = True
        elif m.phase == "tool_selection" and seen_filling:
            issues.append(f"message {i}: tool selection resumed after argument filling began")
        if m.phase == "tool_selection" and m.tool_calls:
            issues.append(f"message {i}: the assistant called a tool while still selecting it")
    if not turns or not turns[-1][1].tool_calls:
        issues.append("the conversation does not end with a tool call")
    elif turns[-1][1].phase != "argument_filling":
        issues.append("the final tool call is not made in the argument-filling phase")
    for i, m in turns[:-1]:
        if not m.tool_calls and not _asks(m):
            issues.append(f"message {i}: the assistant neither asks a question nor requests information")
    return issues


def _user_issues(d: Dialogue) -> list[str]:
    issues: list[str] = []
    names = sorted({t.name for t in [d.seed_tool, *d.candidate_tools, *d.distractor_tools] if _identifier_like(t.name)})
    said_by_assistant = ""
    first = True
    for i, m in enumerate(d.messages, start=1):
        if m.role == "assistant":
            said_by_assistant += "\n" + m.content  # thoughts are private: they do not count
            continue
        if m.role != "user":
            continue
        if _has_json(m.content):
            issues.append(f"message {i}: the user writes JSON")
        for name in _names_in(m.content, names):
            if not _names_in(said_by_assistant, [name]):
                issues.append(f"message {i}: the user names internal tool '{name}' before the assistant did")
        if first:
            spoken = " ".join(re.sub(r"(?<=[a-z])(?=[A-Z])", " ", d.seed_tool.name).replace("_", " ").lower().split())
            if len(spoken.split()) >= 2 and spoken in " ".join(re.sub(r"[^a-z0-9]+", " ", m.content.lower()).split()):
                issues.append(f"message {i}: the opening request names the tool ('{spoken}') instead of staying vague")
            first = False
    return issues


def _grounding_issues(d: Dialogue) -> list[str]:
    from validators.values import mentioned  # shared with the toolargs validator: one notion of "said"

    last = d.messages[-1] if d.messages else None
    if last is None or last.role != "assistant" or not last.tool_calls:
        return []
    call = last.tool_calls[-1]
    if not isinstance(call.arguments, dict):
        return []
    tool = next((t for t in [d.seed_tool, *d.candidate_tools] if t.name == call.name), d.seed_tool)
    said = "\n".join(m.content for m in d.messages if m.role == "user")
    return [
        f"the assistant used a value for '{k}' that the user never gave"
        for k, v in call.arguments.items()
        if mentioned(v, tool.properties.get(k) or {}, said) == "absent"
    ]


def critic(state: dict[str, Any], messages: list[dict]) -> str:
    """{"passed": bool, "issues": [...], "reason": str} from structural checks (see the module docstring)."""
    d = _dialogue(state)
    if d is None:
        return json.dumps({"passed": False, "issues": ["no dialogue in the critic's state"], "reason": "nothing to review"})
    issues = _structure_issues(d) + _user_issues(d) + _grounding_issues(d)
    reason = issues[0] if issues else "two-phase structure and roles respected"
    return json.dumps({"passed": not issues, "issues": issues, "reason": reason})
