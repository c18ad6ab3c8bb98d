"""Offline policies for the generation roles. Each takes the structured state the engine
passes with the prompt and returns reply text in exactly the format the prompt asks for.

The user proxy follows the paper's two phases: a vague opening that fits several
candidates, a distinguishing detail when asked, then the gold values a few at a time.
The offline assistant does not know the seed tool in phase 1: it ranks candidates by
weighted word overlap with what the user said, so it can (and sometimes does) pick a
wrong near-duplicate, which the engine then rejects, as with a real model.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

from utcgen.pipeline.llm.offline import gold_values as values

STOP = {"a", "an", "the", "of", "for", "to", "and", "or", "in", "on", "by", "with", "is", "are", "be",
        "it", "its", "this", "that", "from", "as", "at", "i", "my", "me", "we", "our", "you", "your",
        "can", "could", "please", "need", "want", "help", "hi", "hello", "some", "one", "all", "any",
        "use", "used", "when", "which", "what", "do", "does", "so", "about", "into", "given", "specific"}
VALUE_SEP = "; "
VAGUE_FIRST_ANSWER = 0.35  # share of users whose first answer does not single out a tool
COMMIT_MARGIN = 0.5        # weighted-overlap lead the assistant needs before it commits


def _rng(state: dict, *parts: Any) -> random.Random:
    return random.Random(":".join(str(p) for p in (state.get("seed", 0), *parts)))


def tokens(text: str) -> list[str]:
    out = []
    for w in re.findall(r"[a-z0-9]+", re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text).replace("_", " ").lower()):
        if w in STOP or len(w) < 2:
            continue
        out.append(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w)
    return out


def tool_words(tool: dict) -> set[str]:
    return set(tokens(tool["name"])) | set(tokens(tool.get("description", "")))


ACTION_WORDS = {"list", "get", "create", "update", "delete", "search", "find", "view", "show", "check",
                "submit", "add", "remove", "set", "fetch", "lookup", "retrieve", "my", "by", "new", "request",
                "approve", "reject", "cancel", "open", "record", "register", "log", "raise", "run", "detail",
                "status", "summary", "caller", "calling"}


def first_sentence(text: str) -> str:
    sentence = re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0].rstrip(".!? ")
    return sentence[:1].lower() + sentence[1:]


def imperative(sentence: str) -> str:
    """'Lists open tickets' -> 'list open tickets': tool descriptions speak in the third person."""
    head, _, rest = sentence.partition(" ")
    low = head.lower()
    if low.endswith("ies") and len(low) > 4:
        head = low[:-3] + "y"
    elif low.endswith(("ches", "shes", "sses", "xes", "zes")):
        head = low[:-2]
    elif low.endswith("s") and not low.endswith(("ss", "us", "is")) and len(low) > 3:
        head = low[:-1]
    else:
        head = low
    return f"{head} {rest}".strip()


def wish(description: str) -> str:
    return imperative(first_sentence(description))


def _reply(thought: str, content: str, calls: list[dict] | None = None) -> str:
    return json.dumps({"thought": thought, "content": content, "tool_calls": calls or []}, ensure_ascii=False)


# ---- goal and slot values -------------------------------------------------------------------------

def goal(state: dict, messages: list[dict]) -> str:
    tool, persona = state["tool"], state["persona"]
    who = persona.get("role") or "an employee"
    attrs = persona.get("attributes") or {}
    where = f" at {attrs['company']}" if attrs.get("company") else ""
    rng = _rng(state, tool["name"], "goal")
    why = rng.choice(["before the end of the week", "for an open request from a colleague",
                      "as part of today's queue", "ahead of a review meeting", "to unblock the team"])
    return json.dumps({"goal": f"As {who}{where}, I need to {wish(tool['description'])} {why}."})


def slots(state: dict, messages: list[dict]) -> str:
    tool, persona = state["tool"], state["persona"]
    props = tool["parameters"].get("properties") or {}
    rng = _rng(state, tool["name"], "slots", state.get("attempt", 0))
    args = {k: values.generate(k, props.get(k, {"type": "string"}), persona, rng) for k in state["required"]}
    return json.dumps({"arguments": args}, ensure_ascii=False)


# ---- user proxy -----------------------------------------------------------------------------------

def _last_assistant(history: list[dict]) -> str:
    for m in reversed(history):
        if m["role"] == "assistant":
            return m.get("content", "")
    return ""


def _revealed(history: list[dict], gold: dict) -> set[str]:
    said = " ".join(m["content"] for m in history if m["role"] == "user").lower()
    return {k for k in gold if f"the {values.words(k)} is" in said}


def _phrase(pairs: list[tuple[str, Any]]) -> str:
    parts = [f"the {values.words(k)} is {values.say(v)}" for k, v in pairs]
    text = VALUE_SEP.join(parts)
    return text[:1].upper() + text[1:] + "."


def user(state: dict, messages: list[dict]) -> str:
    """The user proxy's reply: `{"message": ...}`, as the user prompts ask."""
    return json.dumps({"message": user_text(state)}, ensure_ascii=False)


def user_text(state: dict) -> str:
    history, tool = state["history"], state["tool"]
    persona, gold = state["persona"], state.get("gold_arguments") or {}
    style = (persona.get("style") or "").lower()
    terse = any(w in style for w in ("terse", "short", "impatient", "brief", "blunt"))
    rng = _rng(state, tool["name"], "user", len(history))
    if not history:
        return _opening(state, rng, terse)
    if state["phase"] == "tool_selection":
        answers = sum(m["role"] == "user" for m in history) - 1
        if answers == 0 and rng.random() < VAGUE_FIRST_ANSWER:
            # a real user often answers the first question without the detail that decides it
            area = (tool.get("line_of_business") or "day-to-day").replace("_", " ")
            return rng.choice([f"Hard to say, it's a routine {area} thing for my team.",
                               f"Not sure what it's called. It's part of my usual {area} work.",
                               "Whatever fits best, honestly. It's the usual process."])
        detail = wish(tool["description"])
        lead = "" if terse else rng.choice(["Good question. ", "Sure. ", "Right, so ", "Let me be clearer: "])
        text = f"{lead}I want to {detail}."
        if gold and rng.random() < 0.3:  # sometimes a value comes early, as real users do
            key = rng.choice(sorted(gold))
            text += " " + _phrase([(key, gold[key])])
        return text
    remaining = [k for k in gold if k not in _revealed(history, gold)]
    if not remaining:
        return "That's everything I have. Please go ahead." if not terse else "That's all. Go ahead."
    asked = _last_assistant(history).lower()
    wanted = [k for k in remaining if values.words(k) in asked or k.lower() in asked]
    chosen = wanted[:3] if wanted else remaining[: rng.choice([1, 2])]
    text = _phrase([(k, gold[k]) for k in chosen])
    return text if terse else rng.choice(["", "Sure. ", "Of course. ", "Here you go: "]) + text


def _opening(state: dict, rng: random.Random, terse: bool) -> str:
    """A request vague enough to fit the seed tool and its distractors."""
    tool, distractors = state["tool"], state.get("distractors") or []
    name_words = tokens(tool["name"])
    own = [w for w in name_words if w not in ACTION_WORDS] or name_words[-1:]
    shared = [w for w in own if any(w in tool_words(d) for d in distractors)] or own[-1:]
    # two words of the name in a row would all but name the tool: keep one unless the name is long
    topic = " ".join(dict.fromkeys(shared[-2:])) if len(own) > 3 else shared[-1]
    if terse:
        return f"Need help with {topic}."
    greet = rng.choice(["Hi there. ", "Hello! ", "Morning. ", "Hey, ", ""])
    ask = rng.choice([
        f"I have something to sort out around {topic}. Can you help?",
        f"I need a hand with a {topic} matter.",
        f"Could you help me with {topic}? I'm not sure which option is right.",
        f"There's a {topic} thing I need to take care of.",
    ])
    return greet + ask


# ---- assistant ------------------------------------------------------------------------------------

def _scores(candidates: list[dict], user_text: str) -> list[tuple[float, dict]]:
    said = set(tokens(user_text))
    bags = [tool_words(c) for c in candidates]
    weight = {w: 1.0 - sum(w in b for b in bags) / len(bags) for w in set().union(*bags)} if bags else {}
    ranked = [(sum(weight[w] for w in bag & said), c) for bag, c in zip(bags, candidates)]
    return sorted(ranked, key=lambda sc: -sc[0])


def extract(tool: dict, history: list[dict]) -> dict[str, Any]:
    """The required values the user has stated, in the phrasing the offline user uses."""
    props = tool["parameters"].get("properties") or {}
    said = "\n".join(m["content"] for m in history if m["role"] == "user")
    found: dict[str, Any] = {}
    for key in tool["parameters"].get("required") or []:
        pattern = rf"the {re.escape(values.words(key))} is (.+?)(?=;\s|\.\s|\.$|\n|$)"
        matches = re.findall(pattern, said, flags=re.IGNORECASE)
        if matches:
            found[key] = values.read(matches[-1], props.get(key, {}))
    return found


def assistant(state: dict, messages: list[dict]) -> str:
    history = state["history"]
    if state["phase"] == "tool_selection":
        return _select(state["candidates"], history, state)
    return _fill(state["tool"], history)


def _select(candidates: list[dict], history: list[dict], state: dict) -> str:
    user_turns = [m for m in history if m["role"] == "user"]
    ranked = _scores(candidates, " ".join(m["content"] for m in user_turns))
    best, runner_up = ranked[0], ranked[1] if len(ranked) > 1 else (float("-inf"), None)
    # commit on a clear lead; after three user turns, commit to the best guess (it may be wrong)
    decided = len(user_turns) >= 2 and (best[0] >= runner_up[0] + COMMIT_MARGIN or len(user_turns) >= 3)
    if decided:
        tool = best[1]
        thought = (f"The user's details point to {tool['name']} (overlap {best[0]:.2f} vs "
                   f"{runner_up[0]:.2f} for the next candidate). I will use it.")
        return _reply(thought, "", [{"name": tool["name"], "arguments": extract(tool, history)}])
    options = [c for _, c in ranked[:3]]
    names = ", ".join(c["name"] for c in options)
    listed = "; ".join(wish(c["description"]) for c in options)
    thought = (f"The request fits several tools ({names}). They differ in scope, so I must ask which "
               "one the user means before doing anything.")
    rng = _rng(state, "ask", len(history))
    lead = rng.choice(["I can help with that. ", "Happy to help. ", "Sure. ", ""])
    return _reply(thought, f"{lead}To pick the right action, which of these do you need: {listed}?")


def _fill(tool: dict, history: list[dict]) -> str:
    required = tool["parameters"].get("required") or []
    known = extract(tool, history)
    missing = [k for k in required if k not in known]
    if not missing:
        thought = (f"I have every required argument for {tool['name']}: {', '.join(required) or 'none needed'}. "
                   "Calling it now.")
        return _reply(thought, "", [{"name": tool["name"], "arguments": known}])
    ask = missing[:3]
    spoken = [values.words(k) for k in ask]
    listed = spoken[0] if len(spoken) == 1 else ", ".join(spoken[:-1]) + " and " + spoken[-1]
    have = f" I already have the {', '.join(values.words(k) for k in known)}." if known else ""
    thought = f"{tool['name']} needs {', '.join(required)}. Still missing: {', '.join(missing)}."
    return _reply(thought, f"Could you give me the {listed}?{have}".strip())
