"""The offline user proxy: a vague opening that fits several candidates, a distinguishing
detail when asked, then the gold values a few at a time, in the persona's words.

It never says a word of any candidate's name nor a run of a description (the validators
reject both): details are drawn from words of the seed's description its distractors lack.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

from ... import shortcuts
from ...said import user_said
from . import gold_values as values
from .policies import STOP, VALUE_SEP, _rng

VAGUE_FIRST_ANSWER = 0.35  # share of users whose first answer does not single out a tool
VAGUE_DETAIL = 0.1        # share of distinguishing answers that use words the distractors share

def _last_assistant(history: list[dict]) -> str:
    for m in reversed(history):
        if m["role"] == "assistant":
            return m.get("content", "")
    return ""


def _revealed(history: list[dict], gold: dict) -> set[str]:
    said = user_said(history, sep=" ").lower()
    return {k for k in gold if f"the {values.label(k).lower()} is" in said}


def _phrase(pairs: list[tuple[str, Any]]) -> str:
    parts = [f"the {values.label(k)} is {values.say(v)}" for k, v in pairs]
    text = VALUE_SEP.join(parts)
    return text[:1].upper() + text[1:] + "."


def user(state: dict, messages: list[dict]) -> str:
    """The user proxy's reply: `{"message": ...}`, as the user prompts ask."""
    if state.get("scenario"):
        from . import scenario_policies

        return json.dumps({"message": scenario_policies.user_text(state)}, ensure_ascii=False)
    return json.dumps({"message": user_text(state)}, ensure_ascii=False)


def user_text(state: dict) -> str:
    history, tool = state["history"], state["tool"]
    persona, gold = state["persona"], state.get("gold_arguments") or {}
    style = (persona.get("style") or "").lower()
    terse = any(w in style for w in ("terse", "short", "impatient", "brief", "blunt"))
    rng = _rng(state, tool["name"], "user", len(history))
    if not history:
        return _safe(state, _opening(state, rng, terse))
    if state["phase"] == "tool_selection":
        answers = sum(m["role"] == "user" for m in history) - 1
        if answers == 0 and rng.random() < VAGUE_FIRST_ANSWER:
            # a real user often answers the first question without the detail that decides it
            area = (tool.get("line_of_business") or "day-to-day").replace("_", " ")
            if any(shortcuts.stem(w) in _banned(state) for w in shortcuts.split_words(area)):
                area = "day-to-day"
            return _safe(state, rng.choice(["Hard to say, it's a routine thing for us.",
                               "Not sure what it's called. It's part of my usual work.",
                               "Whatever fits best, honestly. It's the usual process."]))
        text = _detail(state, rng, terse)
        if gold and rng.random() < 0.3:  # sometimes a value comes early, as real users do
            key = rng.choice(sorted(gold))
            text += " " + _phrase([(key, gold[key])])
        return _safe(state, text)
    remaining = [k for k in gold if k not in _revealed(history, gold)]
    if not remaining:
        return "That's everything I have. Please go ahead." if not terse else "That's all. Go ahead."
    asked = _last_assistant(history).lower()
    wanted = [k for k in remaining if values.label(k).lower() in asked or k.lower() in asked]
    chosen = wanted[:3] if wanted else remaining[: rng.choice([1, 2])]
    text = _phrase([(k, gold[k]) for k in chosen])
    return text if terse else rng.choice(["", "Sure. ", "Of course. ", "Here you go: "]) + text


# words that carry no meaning a user would lead with
FILLER = set("another using user users optionally against ones single given current specific specifically whether "
             "within return returns returned calling caller callers also based including without between across either "
             "both such like only them their optional way ways etc able kind sort given whose which that exact every "
             "still already yet".split())


def _ok(word: str) -> bool:
    return len(word) > 3 and word not in STOP and word not in shortcuts.GENERIC \
        and word not in FILLER


def _safe(state: dict, text: str) -> str:
    """`text`, unless it would give the seed tool away by a word of its name: then a plainer line."""
    others = [d["name"] for d in state.get("distractors") or []]
    if shortcuts.name_hits(text, state["tool"]["name"], others):
        return "Honestly, I'm not sure how to describe it. Could you walk me through the choices?"
    return text


def _content_words(text: str) -> list[str]:
    """Words of a description worth saying: no stop words, no very short words, in order, once."""
    out = []
    for w in re.findall(r"[a-z][a-z'-]+", text.lower()):
        w = w.strip("'-")
        if _ok(w) and w not in out:
            out.append(w)
    return out


def _chunks(text: str, banned: set[str]) -> list[list[str]]:
    """Runs of consecutive content words of a description, cut at stop words, punctuation and
    banned words, at most 3 words each: short phrases such as 'phone' or 'due times'."""
    out: list[list[str]] = []
    for piece in re.split(r"[,.;:()/]", text.lower()):
        run: list[str] = []
        for w in re.findall(r"[a-z][a-z'-]*", piece):
            w = w.strip("'-")
            if _ok(w) and shortcuts.stem(w) not in banned and not w.endswith("'s"):
                run.append(w)
                continue
            if run:
                out.append(run[:3])
            run = []
        if run:
            out.append(run[:3])
    return out


def _banned(state: dict) -> set[str]:
    """Stems the user must not say: every word of every candidate's name."""
    tool, distractors = state["tool"], state.get("distractors") or []
    return set().union(*(shortcuts.name_tokens(t["name"]) | {shortcuts.stem(w) for w in shortcuts.split_words(t["name"])}
                         for t in [tool, *distractors]))


def _stems_of(tool: dict) -> set[str]:
    return {shortcuts.stem(w) for w in _content_words(tool.get("description", ""))}


def _topic(state: dict) -> list[str]:
    """Short phrases of the seed's description made only of words its distractors' descriptions
    share: what the request is about, not which tool. Most widely shared first."""
    tool, distractors = state["tool"], state.get("distractors") or []
    others = [_stems_of(d) for d in distractors]
    scored = []
    for run in _chunks(tool.get("description", ""), _banned(state)):
        shared = [w for w in run if any(shortcuts.stem(w) in o for o in others)]
        if shared:
            scored.append((-min(sum(shortcuts.stem(w) in o for o in others) for w in shared), " ".join(shared)))
    return [phrase for _, phrase in sorted(scored, key=lambda x: x[0])][:2] if scored else []


def _opening(state: dict, rng: random.Random, terse: bool) -> str:
    """A request in the persona's words, vague enough to fit the seed tool and its distractors.

    It never uses a word of any candidate's name (the name would do the choosing) nor
    the description's wording; it names the area (words the seed's description shares
    with the distractors') and who is asking."""
    persona = state["persona"]
    topic = _topic(state)
    area = (state["tool"].get("line_of_business") or persona.get("line_of_business") or "work").replace("_", " ")
    banned = _banned(state)
    if any(shortcuts.stem(w) in banned for w in shortcuts.split_words(area)):
        area = "day-to-day"
    about = " and ".join(topic) if topic else f"my {area} duties"
    role = persona.get("role")
    if role and any(shortcuts.stem(w) in banned for w in shortcuts.split_words(role)):
        role = None
    if terse:
        return f"Quick one about {about}."
    greet = rng.choice(["Hi there. ", "Hello! ", "Morning. ", "Hey, ", ""])
    who = f"I work as {_article(role)} {role}, and " if role else ""
    ask = rng.choice([
        f"{who}I have something to sort out to do with {about}. Can you help?",
        f"{who}I need a hand with something involving {about}.",
        f"{who}there is a task around {about} I need to get done today.",
        f"{who}I'm stuck on a {area} task that involves {about}.",
    ])
    return greet + (ask if greet.endswith(", ") else ask[:1].upper() + ask[1:])


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def _detail(state: dict, rng: random.Random, terse: bool) -> str:
    """What singles the need out, in words that set the seed's description apart from the
    distractors' (never a word of any tool name, never a run of the description)."""
    tool, distractors = state["tool"], state.get("distractors") or []
    banned = _banned(state)
    others = set().union(*(_stems_of(d) for d in distractors)) if distractors else set()
    runs = _chunks(tool.get("description", ""), banned)
    distinct = sorted(runs, key=lambda r: -sum(shortcuts.stem(w) not in others for w in r))
    if rng.random() < VAGUE_DETAIL:
        # now and then the detail is one the distractors share: the assistant may ask again or guess wrong
        distinct = [r for r in runs if all(shortcuts.stem(w) in others for w in r)] or distinct[::-1]
    picked = [" ".join(r) for r in distinct[:2]]
    if not picked:
        return "It's the usual one we use, I'm afraid I can't describe it better."
    listed = picked[0] if len(picked) == 1 else " and the ".join(picked)
    listed = "the " + listed
    if terse:
        return f"The one about {listed}."
    lead = rng.choice(["Good question. ", "Sure. ", "Right, so ", "Let me be clearer: "])
    tail = rng.choice([f"what matters here is {listed}.", f"it's about {listed}, specifically.",
                       f"the key part for me is {listed}."])
    return lead + (tail[:1].upper() + tail[1:] if lead.endswith(". ") or lead.endswith(": ") else tail)
