"""Offline policies for the scenario types: the user proxy and the assistant of each scenario.

The same protocol as a real model's: the user proxy gets the scenario's facts in its request
(what a real one gets in its prompt) and says only what it holds; the assistant gets only what
a real one gets (the candidates, the dialogue, the prompts that allow refusing) and reads the
situation from the user's words, answering in the same JSON reply format.

User: a scenario type with a specific opening (`ScenarioType.opening`: explicit, underspecified,
unavailable, infeasible) states the need with the detail that singles the seed tool out
(`_clear_detail`), then the values the type names (minus the masked one, with the wrong one);
an input fault's opening is the explicit request with its
fault written in. Answers give what is asked, in the disambiguation user's phrasing, which
the decision style colours (argument-filling answers only, so tool choice is unchanged).
"""

from __future__ import annotations

import random
import re
from typing import Any

from .. import scenarios
from ..dialogue import domains, shortcuts
from . import gold_values as values
from . import phrasing, selection
from . import policies as base
from . import user as proxy
from .voice import Voice, closing, finish, greeting

STYLE_LEADS = {
    "rational": ["I checked my notes: ", "To be precise: ", "According to my records, ", "I looked it up: "],
    "intuitive": ["Off the top of my head: ", "Roughly speaking, ", "If I remember right, ", "I'd say "],
    "dependent": ["I'd trust your judgement here, but ", "If that helps you decide: ", "My manager said ",
                  "I was told "],
    "avoidant": ["Fine, if I have to: ", "I'd rather not deal with this now, but ", "If you must know, ",
                 "Okay, okay: "],
    "spontaneous": ["Oh, right away: ", "Quick, here: ", "Easy: ", "Here, "],
}
PREMISE = "Could you just do it the same way as last time? You should still have the details from my earlier request."


def _rng(state: dict, *parts: Any) -> random.Random:
    return random.Random(":".join(str(p) for p in (state.get("seed", 0), state["tool"]["name"], *parts)))


def _info(state: dict) -> dict:
    return (state.get("scenario") or {}).get("info") or {}


def _plain(state: dict) -> bool:
    """Whether the user plays the plain protocol (its scenario type says so); an assistant's state has no scenario."""
    name = (state.get("scenario") or {}).get("name")
    return name is not None and scenarios.get(name).plain


def _style(state: dict) -> str | None:
    return _info(state).get("decision_style")


def _names_of(state: dict) -> dict:
    """What `proxy._banned` reads: the tool and every other candidate, from a user's or an assistant's state."""
    others = (state.get("distractors") or [c for c in state.get("candidates") or [] if c["name"] != state["tool"]["name"]]
              or [{"name": name} for name in state.get("considered") or []])
    return {"tool": state["tool"], "distractors": others}


def label(key: str, state: dict) -> str:
    """`_label`, told apart by an ordinal when two of the tool's parameters would be called alike."""
    name = _label(key, state)
    if _plain(state):
        return name
    props = list(state["tool"]["parameters"].get("properties") or {})
    same = [k for k in props if _label(k, state) == name]
    if len(same) > 1 and key in same:
        return f"{('first', 'second', 'third', 'fourth', 'fifth')[min(same.index(key), 4)]} {name}"
    return name


def _label(key: str, state: dict) -> str:
    """How a parameter is called in these scenarios: the disambiguation user's words for it without any
    word of a candidate's name (a specific opening states values while the tool is being chosen, so a
    label such as 'reversal date' would give 'reverse_journal_entry' away)."""
    spoken = values.label(key, (state["tool"]["parameters"].get("properties") or {}).get(key) or {})
    if _plain(state):
        return spoken  # its assistant reads values under these names (`assistant.extract`)
    banned = proxy._banned(_names_of(state))
    kept = [w for w in spoken.split() if shortcuts.stem(w.lower()) not in banned]
    while kept and kept[-1].lower() in ("for", "the", "it", "of", "to"):
        kept.pop()
    if kept and kept[0].lower() in ("it", "for", "of", "to"):  # 'cost center it comes from' without its noun
        kept.insert(0, "one")
    return " ".join(kept) if kept else "detail you need"


def _phrase(state: dict, pairs: list[tuple[str, Any]]) -> str:
    rng = _rng(state, "phrase", len(state.get("history") or []), *(k for k, _ in pairs))
    return phrasing.sentence([(label(k, state), v) for k, v in pairs], rng)


def _mentions(text: str, key: str, state: dict) -> bool:
    low = text.lower()
    return label(key, state).lower() in low or values.label(key).lower() in low


def extract(state: dict, history: list[dict]) -> dict[str, Any]:
    """The required values the user stated, under either name of each parameter (the last statement wins)."""
    tool = state["tool"]
    said = "\n".join(m["content"] for m in history if m["role"] == "user")
    keys = tool["parameters"].get("required") or []
    return phrasing.read_values(said, tool, names={k: [label(k, state)] for k in keys})


def _values(state: dict, keys: list[str], override: dict[str, Any] | None = None) -> str:
    gold = state.get("gold_arguments") or {}
    return _phrase(state, [(k, (override or {}).get(k, gold[k])) for k in keys])


def _request(state: dict, rng: random.Random, keys: list[str], override: dict[str, Any] | None = None,
             detail: bool = True) -> str:
    """A specific opening: the area, the distinguishing detail, then the given values."""
    voice = Voice.of(state["persona"])
    topic = proxy._topic(state)
    about = f"the {topic}" if topic else f"my {proxy._area(state)} duties"  # the area's name never gives the tool away
    parts = [finish(voice, greeting(voice, rng)) + f"I need something done about {about}."]
    if detail:
        parts.append(_clear_detail(state))
    if keys:
        parts.append(_values(state, keys, override))
    if end := closing(voice, rng, state["tool"].get("description", "")):
        parts.append(end)
    return " ".join(parts)


def _clear_detail(state: dict) -> str:
    """The detail that singles the seed out, without the occasional vague draw of the disambiguation user."""
    # phrases of the description only: the assistant checks them against what the candidates do
    picked = proxy.separators(state, _rng(state, "detail"), params=False)[:3]
    if not picked:
        return "It's the usual one we use."
    act = proxy._action(state)
    return "What matters is " + proxy._listing(picked) + "." + (f" I have to {act} it." if act else "")


def _garble(text: str, rng: random.Random) -> str:
    """Expression fault: letters of the longer words swapped and the phrasing clipped; values are kept."""
    out = []
    for word in text.split(" "):
        core = word.strip(".,;:!?")
        if len(core) > 5 and core.isalpha() and rng.random() < 0.7:
            i = rng.randint(1, len(core) - 3)
            core2 = core[:i] + core[i + 1] + core[i] + core[i + 2:]
            word = word.replace(core, core2)
        out.append(word)
    return " ".join(out).replace("I need something done about", "need smth re").replace("What matters is", "mainly")


# ---- user -----------------------------------------------------------------------------------------

def user_text(state: dict) -> str:
    ctx = state["scenario"]
    kind, info = scenarios.get(ctx["name"]), _info(state)
    gold = state.get("gold_arguments") or {}
    history = state["history"]
    rng = _rng(state, "user", len(history))
    if ctx.get("write") == "faulted":
        return proxy._safe(state, _faulted(state, ctx["original"], info["fault"], rng))
    if kind.plain:
        if state["phase"] == "argument_filling" and history:
            return _style_values(state, rng)
        return proxy.user_text(state)
    if not history and (opening := kind.opening(gold, info)) is not None:
        keys, said_instead = opening
        return proxy.composed(state, lambda r: _request(state, r, keys, said_instead or None), len(history), "request")
    return _answer(state, rng)


def _faulted(state: dict, original: str, fault: dict, rng: random.Random) -> str:
    gold = state.get("gold_arguments") or {}
    kind = fault["kind"]
    if kind == "intention":
        return _request(state, rng, sorted(gold), detail=False)
    if kind == "premise":
        return _request(state, rng, []) + " " + PREMISE
    if kind == "parameter":
        arg, decoy = fault["arg"], fault["decoy"]
        text = _request(state, rng, [k for k in sorted(gold) if k != arg])
        name = label(arg, state)
        return (f"{text} The {name} {phrasing.verb(name)} either {values.say(gold[arg])} or {values.say(decoy)}, "
                "I can't remember which.")
    # the request is garbled, the values are not: they stay as said (the fault is in how it is put)
    request = _garble(_request(state, _rng(state, "opening"), []), rng)
    return f"{request} {_values(state, sorted(gold))}".strip()


def _answer(state: dict, rng: random.Random) -> str:
    """A reply to the assistant's last turn: the detail when asked which, else the values asked for."""
    history, info = state["history"], _info(state)
    asked = proxy._last_assistant(history).lower()
    if state["phase"] == "tool_selection":
        if info.get("fault", {}) and info["fault"]["kind"] in ("intention", "expression"):
            return proxy._safe(state, _clear_detail(state))
        if not scenarios.get(state["scenario"]["name"]).expects_call:
            return "I see. Thanks for telling me."
        return proxy._safe(state, _clear_detail(state))
    bad = info.get("infeasible")
    if bad and _mentions(asked, bad["arg"], state):
        return _styled(state, "Sorry, my mistake. " + _values(state, [bad["arg"]]), rng)
    fault = info.get("fault") or {}
    if fault.get("kind") == "parameter" and _mentions(asked, fault["arg"], state):
        name, value = label(fault["arg"], state), (state.get("gold_arguments") or {})[fault["arg"]]
        said = phrasing.state(name, value, rng, form="is")
        return _styled(state, f"It's the first one. {said[:1].upper() + said[1:]}.", rng)
    return _style_values(state, rng)


def _style_values(state: dict, rng: random.Random) -> str:
    """The values asked for, as the decision style gives them: an avoidant user one at a time, a
    spontaneous one everything still unsaid, a dependent one asking for reassurance."""
    gold, history = state.get("gold_arguments") or {}, state["history"]
    asked = proxy._last_assistant(history).lower()
    said = "\n".join(m["content"] for m in history if m["role"] == "user")
    tool = state["tool"]
    known = phrasing.read_values(said, tool, names={k: [label(k, state)] for k in gold}, keys=list(gold))
    remaining = [k for k in gold if k not in known]
    wanted = [k for k in remaining if _mentions(asked, k, state) or k.lower() in asked]
    if not remaining:
        return "That's everything I have. Please go ahead."
    style = _style(state)
    if style == "spontaneous":
        chosen = remaining
    elif style == "avoidant":
        chosen = (wanted or remaining)[:1]
    else:
        chosen = wanted or remaining[:1]
    text = _values(state, chosen)
    if style == "dependent":
        text += " Does that work for you?"
    return _styled(state, text, rng)


def _styled(state: dict, text: str, rng: random.Random) -> str:
    """`text` led in by the user's decision style, on argument-filling answers only."""
    style = _style(state)
    if not style or state["phase"] != "argument_filling" or not text:
        return text
    lowered = text[:1].lower() + text[1:] if text[1:2].islower() else text
    return rng.choice(STYLE_LEADS[style]) + lowered


# ---- assistant ------------------------------------------------------------------------------------
# The assistant gets what a real one gets (`requests.AssistantRequest`): the candidates, the tool it
# settled on and the dialogue, under the prompts that also cover refusing and invalid values. It
# never learns the scenario: it reads the situation from the user's words, as a model must.

DETAIL = re.compile(r"What matters is the (.+?)\.", re.IGNORECASE)
PLAIN_OPENING = "i need something done about"


def _opening(history: list[dict]) -> str:
    return next((m["content"] for m in history if m["role"] == "user"), "")


def _unclear(opening: str) -> str | None:
    """Why an opening cannot be acted on: it says what it is about but not what to do ("intention"),
    or it is garbled ("expression"); None when it singles a need out."""
    if DETAIL.search(opening) or "it's the usual one we use" in opening.lower():
        return None
    return "intention" if PLAIN_OPENING in opening.lower() else "expression"


def _missing_tool(candidates: list[dict], opening: str) -> bool:
    """The need the user singled out uses words no candidate has: the tool for it is not offered."""
    found = DETAIL.search(opening)
    if not found:
        return False
    known = set().union(*(base.tool_words(c) for c in candidates)) if candidates else set()
    return bool(set(base.tokens(found.group(1))) - known)


def assistant(state: dict) -> str:
    history = state["history"]
    if state["phase"] == "tool_selection":
        return _select(state, history)
    return _fill(state, history)


def _select(state: dict, history: list[dict]) -> str:
    """Refuse when no candidate does what the user singled out; act once the user's words set the
    best candidate apart from every other (the grounding rule); else ask a contrasting question,
    saying first what was unclear in the opening."""
    user_turns = [m for m in history if m["role"] == "user"]
    opening = _opening(history)
    if _missing_tool(state["candidates"], opening):
        return _refuse(state)
    unclear = _unclear(opening) if len(user_turns) == 1 else None
    # the scenarios' openings state the whole need: checking nearness there would over-clarify
    decision = selection.decide(state["candidates"], history, state.get("seed", 0), near=False)
    if decision.tool is not None and not unclear:
        tool = decision.tool
        return base._reply(decision.thought, "", [{"name": tool["name"],
                                                   "arguments": extract({**state, "tool": tool}, history)}])
    if decision.tool is not None:  # grounded by chance on a garbled or aimless opening: ask all the same
        decision = selection.decide(state["candidates"], history, state.get("seed", 0), ask_first=True, near=False)
    if unclear:
        why = ("the request names the subject but not what should be done" if unclear == "intention"
               else "the request is garbled")
        lead = ("I didn't quite follow your message. " if unclear == "expression"
                else "I see what it's about, but not what you want done. ")
        return base._reply(f"I can't act yet: {why}. {decision.thought}", lead + _unled(decision.question))
    return base._reply(decision.thought, decision.question)


def _unled(question: str) -> str:
    """A question without its courtesy lead ("Happy to help. "), when another lead replaces it."""
    for lead in (*selection.LEADS_FIRST, *selection.LEADS_AGAIN, *selection.LEADS_UNSURE):
        if question.startswith(lead):
            return question[len(lead):]
    return question


def _refuse(state: dict) -> str:
    candidates = state["candidates"]
    near = selection.ranked(candidates, state["history"])[:2]
    offer = " or ".join(_phrase_of(c, [o for o in near if o is not c]) for c in near)
    thought = (f"None of the candidates ({', '.join(c['name'] for c in candidates)}) does what the user asks; "
               f"the closest, {', '.join(c['name'] for c in near)}, do something else, so calling one would be wrong.")
    return base._reply(thought, f"I'm sorry, none of the tools I can use does that. What I can do instead is "
                                f"help with {offer}.")


def _phrase_of(tool: dict, others: list[dict]) -> str:
    """A tool's subject in a few words of its own (never a run of its description)."""
    words = selection.contrast_phrases(tool, others, frozenset(), random.Random(tool["name"]))
    return " and ".join(words) if words else "something close to it"


def _fill(state: dict, history: list[dict]) -> str:
    tool = state["tool"]
    props = tool["parameters"].get("properties") or {}
    required = tool["parameters"].get("required") or []
    known = extract(state, history)
    assistant_turns = sum(m["role"] == "assistant" for m in history)
    said = "\n".join(m["content"] for m in history if m["role"] == "user").lower()
    for key in required:  # two values given for one detail: which is right?
        name = label(key, state)
        said_as = f"the {name.lower()} {phrasing.verb(name)} "
        if said_as + "either" in said and said.count(said_as) < 2:
            thought = f"The user gave two values for {key}; I must know which before calling."
            return base._reply(thought, f"You mentioned two values for the {name}. Which one is right?")
    for key in required:
        if key in known and (why := domains.problem(key, known[key], props.get(key) or {}, known)):
            name = label(key, state)
            thought = f"The value given for {key} ({known[key]!r}) cannot be used: {why}. I must not call with it."
            return base._reply(thought, f"The {name} you gave, {values.say(known[key])}, can't be used: {why}. "
                                        f"Could you give me a valid {name}?")
    missing = [k for k in required if k not in known]
    if not missing:
        thought = f"Every required argument of {tool['name']} is known and valid. Calling it now."
        return base._reply(thought, "", [{"name": tool["name"], "arguments": known}])
    spoken = [label(k, state) for k in missing[:3]]
    listed = spoken[0] if len(spoken) == 1 else ", ".join(spoken[:-1]) + " and " + spoken[-1]
    lead = ""
    if PREMISE.lower() in _opening(history).lower() and assistant_turns == 0:
        lead = "I don't have access to earlier requests, so I need the details again. "
    thought = f"{tool['name']} needs {', '.join(required)}. Still missing: {', '.join(missing)}."
    return base._reply(thought, f"{lead}Could you give me the {listed}?")
