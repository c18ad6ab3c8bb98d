"""Offline judges: deterministic stand-ins for the relevancy and critique LLMs.

They read the dialogue from the judge's typed request (its `dialogue`, as the judge's prompt
shows it) rather than the rendered prompt, apply documented heuristics, and answer
with exactly the JSON a real judge must produce, so the validators parse both alike.

Relevancy. Topic words of a tool are the content words of its name and description;
its function words are the topic words that are not parameter names (what it does,
not what it takes). The "need" is what the USER said before argument filling started:
the assistant's clarifying questions enumerate candidate tools (distractors included)
by design, so counting them would credit every listed tool alike. Words come from the
shared text normaliser (`text.stems`): lower-cased, split on _ and camelCase, the shared
stop words and JUDGE_STOP dropped, words under 3 letters dropped, stemmed and cut to 5
letters (create, created, creation; list, lists). Relevant iff
* the final call is to the seed tool;
* the need covers at least MIN_TOPIC of the seed's description words that are not name
  words (users describe the need; naming the tool is a shortcut), or of all its description
  words when fewer than MIN_BEYOND_NAME are not name words (a description that only restates
  the name leaves the user no other words), description words being those of its sentences
  on what it does, not of its notes on the API (`nounphrases.about`), and at least
  MIN_FUNCTION_WORDS of them (or all the seed has, when it has fewer) are function words
  (argument talk such as "the plant code
  is DE01" names inputs, not the need: it must not make any dialogue that collected
  the right values look on-topic);
* no distractor fits better: for each distractor, the need's words among the seed's
  topic words that the distractor lacks are counted against the distractor's topic
  words that the seed lacks (each side without its own parameter names); the
  distractor wins if it has more. Comparing distinctive words rather than coverage
  keeps a verbose seed description from losing to a terse near-duplicate.
The whole conversation's overlap with the seed's topic and parameter words is
reported in the reason but does not decide. On offline dialogues over the bundled
catalog, 99% of on-topic dialogues pass, and about 1% of those whose tool-selection
part was swapped for another tool's.

Critique. Structural checks: at least one tool-selection turn, every tool-selection
turn before any argument-filling turn, no call while selecting, the last turn an
argument-filling call; user messages hold no JSON and no internal tool name the
assistant has not said publicly first; the opening does not name the seed tool (as an
identifier or in words); every non-final assistant turn asks something (a '?' or a
request such as "please provide"); no final-call value absent from what the user said;
none of the shortcuts the rule validators catch (`utcgen.pipeline.dialogue.shortcuts`): the seed's
name or distinctive name words from the user while selecting, a recited description, a
parameter key read aloud, a question repeated word for word, an implausible gold value.
Name leaks are found by the name_leak validator's own detector (`shortcuts.user_name_leaks`).
As the critique prompt asks (rules 7 and 8): the final call is grounded (`pipeline.grounding`,
the grounding validator's rule) and no clarifying question recites a candidate's description.
"""

from __future__ import annotations

import json
import re

from .. import scenarios
from ..core import text
from ..core.records import Dialogue, Message, Tool
from ..dialogue import grounding, shortcuts
from ..dialogue.mentions import mentioned
from ..dialogue.said import user_said
from ..dialogue.values import implausible
from ..llm.requests import CriticRequest, RelevancyRequest
from .dispatch import policy
from .nounphrases import about

MIN_TOPIC = 0.15
MIN_FUNCTION_WORDS = 2
MIN_BEYOND_NAME = 2  # a description with fewer words its name lacks is measured on all its words

# the judge's own vocabulary on top of the shared stop words: words every tool description uses
JUDGE_STOP = text.STOP | set("shall help used using given specific get gets eg etc existing".split())
_REQUEST = re.compile(
    r"\b(please (provide|share|give|send|confirm|tell|let)|could you|can you|would you|let me know|"
    r"i need|i'll need|i will need|what is|what's|which)\b"
)


def judge_stems(said: str) -> set[str]:
    """Stemmed content words of `said` (`text.stems`: identifiers split, stems cut to 5 letters)."""
    return set(text.stems(said, JUDGE_STOP, min_len=3, width=5))


def topic_words(tool: Tool) -> set[str]:
    return judge_stems(tool.name) | judge_stems(tool.description)


def parameter_words(tool: Tool) -> set[str]:
    return set().union(*(judge_stems(p) for p in tool.properties)) if tool.properties else set()


def _share(part: set[str], whole: set[str]) -> float:
    return len(part & whole) / len(whole) if whole else 0.0


def _final_call_name(d: Dialogue) -> str | None:
    last = d.messages[-1] if d.messages else None
    if last is None or last.role != "assistant" or not last.tool_calls:
        return None
    return last.tool_calls[-1].name


def described(tool: Tool) -> set[str]:
    """The description's words the need is measured on: those its name lacks, or, when the description
    says no more than the name ('Delete a pending pull request review.'), all of them, since the user
    can then state the need in no other words."""
    words = judge_stems(about(tool.description))  # what it does: not its notes on the API ('works only for Premium')
    beyond = words - judge_stems(tool.name)
    return beyond if len(beyond) >= MIN_BEYOND_NAME else words


def _function_words(tool: Tool) -> set[str]:
    """Topic words that are not parameter names: what the tool does, not what it takes."""
    return topic_words(tool) - parameter_words(tool)


@policy("relevancy")
def relevancy(request: RelevancyRequest, messages: list[dict]) -> str:
    """{"relevant": bool, "reason": str} from topic-word overlap (see the module docstring)."""
    d = request.dialogue
    seed = d.seed_tool
    need = judge_stems(user_said(d.messages, until="argument_filling"))
    # coverage of what the tool does in the user's words: its description's words, not its name's
    # (a user who names the tool is a shortcut the name_leak rule rejects, so the need cannot rely on it)
    seed_score = _share(need, described(seed))
    functional = need & _function_words(seed)
    # Against each distractor, count the need's words that only one of the two tools has.
    rivals: dict[str, tuple[int, int]] = {}
    for t in d.distractor_tools:
        if t.name != seed.name:
            mine = topic_words(seed) - topic_words(t) - parameter_words(seed)
            theirs = topic_words(t) - topic_words(seed) - parameter_words(t)
            rivals[t.name] = (len(need & mine), len(need & theirs))
    beaten = sorted((n for n, (ours, theirs) in rivals.items() if theirs > ours), key=lambda n: -rivals[n][1])
    everything = judge_stems("\n".join(m.content for m in d.messages))
    scores = (
        f"need overlap {seed_score:.2f}, {len(functional)} function words; "
        + (f"{beaten[0]} distinctive words {rivals[beaten[0]][1]} vs {rivals[beaten[0]][0]}; " if beaten else "")
        + f"whole conversation: topic {_share(everything, topic_words(seed)):.2f}, "
        f"parameters {_share(everything, parameter_words(seed)):.2f}"
    )
    if _final_call_name(d) != seed.name and scenarios.get(d.scenario).expects_call:  # else it ends without a call
        relevant, why = False, f"the conversation does not end by calling {seed.name}"
    elif seed_score < MIN_TOPIC or len(functional) < min(MIN_FUNCTION_WORDS, len(_function_words(seed))):
        relevant, why = False, f"the user's need barely touches what {seed.name} does"
    elif beaten:
        relevant, why = False, f"the conversation is more about {beaten[0]} than {seed.name}"
    else:
        relevant, why = True, f"the user's need matches what {seed.name} does"
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


def _structure_issues(d: Dialogue) -> list[str]:
    issues: list[str] = []
    turns = [(i, m) for i, m in enumerate(d.messages, start=1) if m.role == "assistant"]
    phases = [m.phase for _, m in turns]
    if "tool_selection" not in phases and scenarios.get(d.scenario).plain:
        # other scenarios may commit at once (the committing turn is dropped) or never leave selection
        issues.append("no clarification (tool-selection) turn before arguments were collected")
    seen_filling = False
    for i, m in turns:
        if m.phase == "argument_filling":
            seen_filling = True
        elif m.phase == "tool_selection" and seen_filling:
            issues.append(f"message {i}: tool selection resumed after argument filling began")
        if m.phase == "tool_selection" and m.tool_calls:
            issues.append(f"message {i}: the assistant called a tool while still selecting it")
    if not scenarios.get(d.scenario).expects_call:
        pass  # it must end without a call: the scenario rules below say so
    elif not turns or not turns[-1][1].tool_calls:
        issues.append("the conversation does not end with a tool call")
    elif turns[-1][1].phase != "argument_filling":
        issues.append("the final tool call is not made in the argument-filling phase")
    for i, m in turns[:-1]:
        if not m.tool_calls and not _asks(m):
            issues.append(f"message {i}: the assistant neither asks a question nor requests information")
    return issues


def _user_issues(d: Dialogue) -> list[str]:
    issues: list[str] = []
    names = sorted({t.name for t in [d.seed_tool, *d.candidate_tools, *d.distractor_tools] if shortcuts.identifier_like(t.name)})
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
        for name in shortcuts.names_written(m.content, names):
            if not shortcuts.names_written(said_by_assistant, [name]):
                issues.append(f"message {i}: the user names internal tool '{name}' before the assistant did")
        if first:
            spoken = text.spoken(d.seed_tool.name)
            if len(spoken.split()) >= 2 and spoken in text.spoken(m.content):
                issues.append(f"message {i}: the opening request names the tool ('{spoken}') instead of staying vague")
            first = False
    return issues


def _shortcut_issues(d: Dialogue) -> list[str]:
    """What the shortcut rules catch (one definition, in `utcgen.pipeline.dialogue.shortcuts`): a critic
    that reads the dialogue must not pass a user who names or recites the tool, anyone who
    reads parameter keys aloud, a repeated question or an implausible gold value."""
    issues: list[str] = []
    seed = d.seed_tool
    others = [t.name for t in d.distractor_tools if t.name != seed.name]
    keys = sorted({k for t in [seed, *d.candidate_tools] for k in t.properties})
    leaks = shortcuts.user_name_leaks(d.messages, seed.name, others, seed.description)  # the name_leak validator's detector
    asked = set()
    for i, m in enumerate(d.messages, start=1):
        if m.role == "user":
            if i - 1 in leaks:
                issues.append(f"message {i}: the user gives the tool away by its name ('{leaks[i - 1]}')")
            for t in [seed, *d.candidate_tools]:
                if run := shortcuts.recited(m.content, t.description):
                    issues.append(f"message {i}: the user recites the description of {t.name} ('{run}')")
                    break
        reads_schema = m.role == "user" or (m.role == "assistant" and m.phase == "argument_filling")
        if reads_schema and m.content and (found := shortcuts.key_hits(m.content, keys)):
            issues.append(f"message {i}: parameter key '{found[0]}' is read aloud")
        if m.role == "assistant" and not m.tool_calls and m.content:
            norm = shortcuts.normal_question(m.content)
            if norm in asked:
                issues.append(f"message {i}: the assistant repeats an earlier question word for word")
            asked.add(norm)
    for k, v in d.gold_arguments.items():
        if why := implausible(k, v, seed.properties.get(k) or {}):
            issues.append(f"the value for '{k}' is implausible: {why}")
    return issues


def _grounding_issues(d: Dialogue) -> list[str]:
    last = d.messages[-1] if d.messages else None
    if last is None or last.role != "assistant" or not last.tool_calls:
        return []
    call = last.tool_calls[-1]
    if not isinstance(call.arguments, dict):
        return []
    tool = next((t for t in [d.seed_tool, *d.candidate_tools] if t.name == call.name), d.seed_tool)
    said = user_said(d.messages)
    return [
        f"the assistant used a value for '{k}' that the user never gave"
        for k, v in call.arguments.items()
        if mentioned(v, tool.properties.get(k) or {}, said) == "absent"
    ]


def _selection_issues(d: Dialogue) -> list[str]:
    """The critique prompt's rules 7 and 8, by the shared definitions: the call the dialogue ends on
    is one the user's words set apart (`pipeline.grounding`, the grounding validator's rule), and no
    clarifying question reads out a candidate's description (`shortcuts.recited`)."""
    issues: list[str] = []
    tools = {t.name: t for t in [*d.candidate_tools, *d.distractor_tools, d.seed_tool]}
    last = d.messages[-1] if d.messages else None
    if last is not None and last.role == "assistant" and last.tool_calls and last.tool_calls[-1].name in tools:
        chosen = tools[last.tool_calls[-1].name]
        missing = grounding.unseparated(grounding.said_stems(d.messages), chosen, list(tools.values()))
        if missing:
            issues.append(f"the call to {chosen.name} is a guess: the user never said what sets it apart from "
                          f"{', '.join(missing)}")
    for i, m in enumerate(d.messages, start=1):
        if m.role == "assistant" and m.phase == "tool_selection" and m.content:
            for t in tools.values():
                if run := shortcuts.recited(m.content, t.description):
                    issues.append(f"message {i}: the assistant reads out the description of {t.name} ('{run}')")
                    break
    return issues


@policy("critic")
def critic(request: CriticRequest, messages: list[dict]) -> str:
    """{"passed": bool, "issues": [...], "reason": str} from structural checks (see the module docstring)."""
    d = request.dialogue
    issues = _structure_issues(d) + _user_issues(d) + _shortcut_issues(d) + _grounding_issues(d)
    issues += _selection_issues(d)
    issues += [message for _, message in scenarios.problems(d)]
    reason = issues[0] if issues else "two-phase structure and roles respected"
    return json.dumps({"passed": not issues, "issues": issues, "reason": reason})
