"""Answers validator: what the assistant says after a tool result is grounded in it.

It judges the assistant turns that follow a `tool` turn; a dialogue without one passes (and the
cascade does not run it there, `cascade.AFTER_RESULTS`). Four rules, all reported:

1. invented_value: an answer states a value (`dialogue.stated`: a number, a code or id, a quoted
   string, a name, a date or time) found in no earlier result, user turn or call argument
   (`dialogue.results.Known`; counting words, list markers and positions within a result's list
   are not facts);
2. contradicted_value / wrong_count: an answer says a result field has a value it does not hold
   ("the status is closed" where every `status` of the results is "open"; only fields whose
   values are short codes or numbers are read), or gives "N <things>" where the results hold a
   list of those things and N is neither its length, a count of its items sharing a value, nor a
   count or total field;
3. success_after_error / unacknowledged_error / unanswered_error: after an error result, no
   assistant turn claims success until a call made after it succeeds; the first assistant turn
   after it calls again, asks for a corrected value, or says what went wrong; a dialogue that
   ends on it fails;
4. repeated_call: a call repeated with the same arguments after its result came back successful.

The assistant is told these rules in its own words by prompts/rules_answer.txt (`instructions`).

Rule codes: invented_value, contradicted_value, wrong_count, success_after_error, unacknowledged_error, unanswered_error, repeated_call.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from ..pipeline.core.records import Dialogue, Message, Tool, Verdict
from ..pipeline.core.text import STOP, sentences, split_words, spoken, stem
from ..pipeline.dialogue.arguments import equal, same_arguments
from ..pipeline.dialogue.results import Result, calls, group_counts, has_results, known_before, leaves, lists, results
from ..pipeline.dialogue.stated import Stated, stated
from ..pipeline.settings.templates import load_prompt
from .common import Problem, verdict

NAME = "answers"

_DONE = (r"created|updated|deleted|removed|added|saved|sent|booked|scheduled|submitted|completed|posted|renamed|"
         r"moved|archived|cancell?ed|closed|merged|refunded|approved|published|uploaded|invited|assigned")
_CLAIM = re.compile(
    rf"\b(done|successfully|succeeded|all set|went through|{_DONE}|"
    r"here (?:is|are) (?:the|your|all)|here's (?:the|your))\b")
_CANCEL = re.compile(
    r"\b(not|no|nothing|never|unable|failed|fail|error|wrong|denied|invalid|unfortunately|sorry|once|if|when|until|"
    r"try|retry|again|would|will|could|should|can|cannot|problem)\b|n't\b")
_EXPLAINS = re.compile(
    r"\b(error|errors|failed|fails|fail|unable|not found|doesn't exist|does not exist|don't have|do not have|"
    r"permission|access|denied|invalid|not valid|rate limit\w*|too many|try again|went wrong|problem|"
    r"unfortunately|rejected|refused|no (?:such|match)\w*)\b|(?:couldn't|could not|wasn't able|was not able)\b")
_CORRECTION = {"correct", "right", "another", "different", "spell", "spelling", "exact", "check", "confirm",
               "instead", "other", "valid"}
_FILLER = r"(?:(?:now|still|currently|set to|marked as|listed as|shown as|at)\s+)*"
_NOT_A_VALUE = {"not", "no", "the", "a", "an", "also", "unknown", "empty", "missing", "none", "null", "being",
                "either", "still", "one", "both", "all", "different", "same"}
_CONTAINERS = {"items", "results", "data", "entries", "records", "values", "list", "objects", "hits", "rows", "nodes"}
_COUNT_KEYS = {"count", "total", "size", "length", "num", "number"}


def _said(value: Any) -> str:
    return " ".join(spoken(str(value)).split()) if isinstance(value, str) else str(value)


def _forms(value: Any) -> tuple[str, ...]:
    """How a field's value may be written in an answer: as the result writes it ('McQuin opportunity',
    'in_progress' as 'in progress'), or said aloud ('mc quin')."""
    return (_said(value).casefold(), " ".join(re.findall(r"[a-z0-9']+", str(value).casefold())))


def _fields(found: Sequence[Result]) -> dict[str, list[Any]]:
    """The values of each result field whose every value is a number or a short code ("open",
    "in_progress"), keyed by the field said aloud: the fields an answer can be held to."""
    values: dict[str, list[Any]] = {}
    for r in found:
        for key, leaf in leaves(r.value):
            if key and leaf is not None:
                values.setdefault(spoken(key), []).append(leaf)
    def short(v: Any) -> bool:
        number = isinstance(v, int | float) and not isinstance(v, bool)
        return number or (isinstance(v, str) and 0 < len(v) <= 30 and len(_said(v).split()) <= 3)
    # a key said as function words alone ("from", "to", "as of") is read in too many other sentences
    return {k: vs for k, vs in values.items() if set(k.split()) - STOP and all(short(v) for v in vs)}


def _contradictions(text: str, fields: dict[str, list[Any]]) -> list[str]:
    """'<field> is <value>' statements whose value the field never holds: the field and the value said."""
    low = text.casefold()
    out: list[str] = []
    for key, values in fields.items():
        # a colon says a value only before a space: 'spotify:track:...' is one code, not 'spotify' said to be 'track'
        pattern = rf"\b{re.escape(key)}\b(?:\s+of\s+[\w#/.-]+)?\s*(?:\bis\b|\bwas\b|\bare\b|\bwere\b|=|:(?=\s))\s*{_FILLER}(.*)"
        longer = [k for k in fields if k != key and k.endswith(f" {key}")]  # 'media type' holds 'type'
        for m in re.finditer(pattern, low):
            if any(low[:m.start() + len(key)].endswith(k) for k in longer):
                continue  # the longer field was said, and is judged under its own name
            after = m.group(1)
            numbers = [v for v in values if not isinstance(v, str)]
            said = re.match(r"-?\d[\d,]*(?:\.(\d+))?", after)
            if numbers and said:
                stated_number = float(said.group(0).replace(",", ""))
                tolerance = 0.5 * 10 ** -len(said.group(1) or "")  # written rounded: 4.6 for 4.57
                if not any(abs(float(n) - stated_number) <= tolerance * (1 + 1e-9) for n in numbers):
                    out.append(f"{key} is {said.group(0)}")
                continue
            words = re.findall(r"[a-z0-9']+", after)
            if numbers or not words or words[0] in _NOT_A_VALUE:
                continue
            spelled = " ".join(words)
            if not any(spelled.startswith(form) for v in values for form in _forms(v)):
                out.append(f"{key} is {words[0]}")
    return out


def _count_allowed(found: Sequence[Result], noun: str) -> set[float] | None:
    """The counts an answer may give of `noun` (a word of the text): None when no result holds a list of
    them (a list keyed by the noun, or whose items' `type` is the noun)."""
    target = stem(noun)

    def holds(r: Result, key: str, items: list[Any]) -> bool:
        said = split_words(key)
        if said and stem(said[-1]) == target:
            return True
        if any(isinstance(i, dict) and stem(str(i.get("type", ""))) == target for i in items):
            return True
        # a list under a container key ("items", "results", ...) holds what the call's tool is named for, the
        # last word of its name (`list_repository_issues`: issues)
        named = split_words(r.call.name)[-1:] if r.call is not None else []
        return (not said or key in _CONTAINERS) and bool(named) and stem(named[0]) == target

    matched = [items for r in found for key, items in lists(r.value) if holds(r, key, items)]
    if not matched:
        return None
    allowed = {float(len(items)) for items in matched} | {float(n) for items in matched for n in group_counts(items)}
    for r in found:
        for key, leaf in leaves(r.value):
            words = set(split_words(key))
            if isinstance(leaf, int | float) and not isinstance(leaf, bool) and (words & _COUNT_KEYS or target in {stem(w) for w in words}):
                allowed.add(float(leaf))
    return allowed


def _wrong_counts(text: str, numbers: Iterable[Stated], found: Sequence[Result]) -> list[str]:
    """'N <things>' where the results hold a list of those things and N counts none of it."""
    out = []
    for s in numbers:
        if s.kind != "number" or s.position or s.approximate or s.percent:
            continue
        following = re.match(r"(?:[ \t]+[a-z][a-z-]*){1,3}", text[s.start + len(s.text):].casefold())
        for word in following.group(0).split() if following else []:  # the words right after it, same clause
            if word in STOP:
                break
            allowed = _count_allowed(found, word)
            if allowed is not None:
                if float(s.value) not in allowed:
                    out.append(f"{s.text} {word}")
                break
    return out


def _answers(d: Dialogue, tools: dict[str, Tool], first_result: int) -> list[Problem]:
    """Rules 1 and 2 on every assistant turn after the first result."""
    problems: list[Problem] = []
    turn = 0
    for i, m in enumerate(d.messages):
        if m.role != "assistant":
            continue
        turn += 1
        if i < first_result or not m.content.strip():
            continue
        known = known_before(d.messages, i, list(tools.values()))
        found = results(d.messages[:i])
        values = stated(m.content)
        problems += [Problem("invented_value", f"assistant turn {turn} states {s.text!r}, found in no tool result, "
                                               "user turn or earlier call") for s in values if not known.grounds(s)]
        problems += [Problem("contradicted_value", f"assistant turn {turn} says '{c}', which no result holds")
                     for c in _contradictions(m.content, _fields(found))]
        problems += [Problem("wrong_count", f"assistant turn {turn} says '{c}', which counts no list of the results")
                     for c in _wrong_counts(m.content, values, found)]
    return problems


def _claims_success(text: str) -> str | None:
    """The first sentence of `text` that claims success with no word of failure, doubt or condition."""
    return next((s for s in sentences(text) if _CLAIM.search(s.casefold()) and not _CANCEL.search(s.casefold())), None)


def _acknowledges(m: Message, failed: Result) -> bool:
    """Whether an assistant turn answers an error: it calls again, says what went wrong, or asks for a
    corrected value (a question naming the call's arguments, its tool or a correction)."""
    if m.tool_calls or _EXPLAINS.search(m.content.casefold()):
        return True
    call = failed.call
    topic = set(_CORRECTION)
    if call is not None:
        topic |= set(split_words(call.name))
        for key, value in leaves(call.arguments):
            topic |= set(split_words(key)) | set(split_words(str(value)))
    topic -= STOP
    return any("?" in s and set(split_words(s)) & topic for s in sentences(m.content))


def _errors(d: Dialogue, turns: dict[int, int]) -> list[Problem]:
    """Rule 3 on every error result."""
    problems: list[Problem] = []
    made = calls(d.messages)
    found = results(d.messages)
    for r in found:
        if r.error is None:
            continue
        kind = str(r.error.get("type", "error"))
        # recovered: a successful result of a call made after the error (not one made beside the failed call)
        recovered = min((x.at for x in found if x.at > r.at and x.error is None and x.call_id in made
                         and made[x.call_id][0] > r.at), default=len(d.messages))
        after = [i for i in range(r.at + 1, recovered) if d.messages[i].role == "assistant"]
        if not after:
            problems.append(Problem("unanswered_error", f"the error result of {r.call_id} ({kind}) is answered by no "
                                                        "assistant turn"))
            continue
        if not _acknowledges(d.messages[after[0]], r):
            problems.append(Problem("unacknowledged_error", f"assistant turn {turns[after[0]]} neither calls again, "
                                                            "asks for a corrected value nor says what went wrong after "
                                                            f"the error result of {r.call_id} ({kind})"))
        problems += [Problem("success_after_error", f"assistant turn {turns[i]} claims success ('{claim}') after the "
                                                    f"error result of {r.call_id} ({kind}) and no successful result since")
                     for i in after if (claim := _claims_success(d.messages[i].content))]
    return problems


def _repeats(d: Dialogue, tools: dict[str, Tool], turns: dict[int, int]) -> list[Problem]:
    """Rule 4: a call repeated with the same arguments once its result came back successful."""
    problems: list[Problem] = []
    answered = {r.call_id: r.at for r in results(d.messages) if r.call is not None and r.error is None}
    made = calls(d.messages)
    for at, call in made.values():
        for other_id, (other_at, other) in made.items():
            if other_at >= at or answered.get(other_id, at) >= at or other.name != call.name:
                continue
            tool = tools.get(call.name)
            same = same_arguments(call.arguments, other.arguments, tool) if tool else equal(call.arguments, other.arguments)
            if same:
                problems.append(Problem("repeated_call", f"assistant turn {turns[at]} repeats {call.name} with the "
                                                         f"arguments of {other_id}, whose result it already had"))
                break
    return problems


def check_answers(d: Dialogue) -> Verdict:
    """The assistant's turns after tool results state only what the results, the user or the calls gave,
    contradict no result, own up to an error and repeat no answered call."""
    if not has_results(d.messages):
        return verdict(NAME, [], "no tool result to answer from")
    tools = {t.name: t for t in [*d.candidate_tools, *d.distractor_tools, d.seed_tool]}
    turns = {i: n for n, i in enumerate((i for i, m in enumerate(d.messages) if m.role == "assistant"), start=1)}
    first = next(i for i, m in enumerate(d.messages) if m.role == "tool")
    problems = _answers(d, tools, first) + _errors(d, turns) + _repeats(d, tools, turns)
    return verdict(NAME, problems, "every answer after a result is grounded in it",
                   results=sum(m.role == "tool" for m in d.messages))


def instructions() -> str:
    """What the assistant is told of these rules (prompts/rules_answer.txt), for its prompt when results are on."""
    return load_prompt("rules_answer").render()[0]["content"].strip()
