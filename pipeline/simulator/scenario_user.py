"""The scenario types' offline user proxy. It gets the scenario's facts in its request (what a
real one gets in its prompt) and says only what it holds.

A scenario type with a specific opening (`ScenarioType.opening`: explicit, underspecified,
unavailable, infeasible) states the need with the detail that singles the seed tool out
(`_clear_detail`), then the values the type names (minus the masked one, with the wrong one); an
input fault's opening is the explicit request with its fault written in. Answers give what is
asked, in the disambiguation user's phrasing, which the decision style colours (argument-filling
answers only, so tool choice is unchanged).
"""

from __future__ import annotations

import random
from typing import Any

from .. import scenarios
from ..llm.requests import UserRequest
from . import gold_values as values
from . import phrasing, user_openings, user_words
from . import user as proxy
from .scenario_terms import PREMISE, mentions, spoken_label
from .seeding import seeded
from .user_words import work_area
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


def _scenario_rng(request: UserRequest, *parts: Any) -> random.Random:
    """The scenario policies' draw for `parts`, seeded by the request and the tool in play."""
    return seeded(request.seed, request.tool.name, *parts)


def _info(request: UserRequest) -> dict[str, Any]:
    """The scenario's facts as the user's prompt states them (a fault, an infeasible value, a style)."""
    return request.scenario.info if request.scenario else {}


def _style(request: UserRequest) -> str | None:
    return _info(request).get("decision_style")


def _phrase(request: UserRequest, pairs: list[tuple[str, Any]]) -> str:
    rng = _scenario_rng(request, "phrase", len(request.history), *(k for k, _ in pairs))
    return phrasing.sentence([(spoken_label(k, request), v) for k, v in pairs], rng)


def _values(request: UserRequest, keys: list[str], override: dict[str, Any] | None = None) -> str:
    gold = request.gold_arguments
    return _phrase(request, [(k, (override or {}).get(k, gold[k])) for k in keys])


def _request(request: UserRequest, rng: random.Random, keys: list[str], override: dict[str, Any] | None = None,
             detail: bool = True) -> str:
    """A specific opening: the area, the distinguishing detail, then the given values."""
    voice = Voice.of(request.persona)
    area = user_words.work_area(request)
    about = user_words.subject(request) or (f"my {area} duties" if area != "day-to-day" else "something I'm working on")
    parts = [finish(voice, greeting(voice, rng)) + f"I need something done about {about}."]
    if detail:
        parts.append(_clear_detail(request))
    if keys:
        parts.append(_values(request, keys, override))
    if end := closing(voice, rng, request.tool.description):
        parts.append(end)
    return " ".join(parts)


def _clear_detail(request: UserRequest) -> str:
    """The detail that singles the seed out, without the occasional vague draw of the disambiguation user."""
    # phrases of the description only: the assistant checks them against what the candidates do
    picked = user_words.separators(request, _scenario_rng(request, "detail"), params=False)[:3]
    if not picked:
        return "It's the usual one we use."
    act = user_words.action_verb(request)
    return "What matters is " + user_words.listing(picked) + "." + (f" I have to {act} it." if act else "")


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


def scenario_user_text(request: UserRequest) -> str:
    ctx = request.scenario
    if ctx is None:
        raise ValueError("the scenario user's request carries no scenario")
    kind, info = scenarios.get(ctx.name), _info(request)
    if isinstance(info.get("after"), int):  # a follow-up request, once an earlier one is done: its own turns
        return _follow_up(request.model_copy(update={"history": request.history[info["after"]:],
                                                     "scenario": ctx.model_copy(update={"info": {
                                                         k: v for k, v in info.items() if k != "after"}})}))
    gold = request.gold_arguments
    history = request.history
    rng = _scenario_rng(request, "user", len(history))
    if ctx.write == "faulted":
        return user_words.safe(request, _faulted(request, info["fault"], rng))
    if kind.plain:
        if request.phase == "argument_filling" and history:
            return _style_values(request, rng)
        return proxy.user_text(request)
    if not history and (opening := kind.opening(gold, info)) is not None:
        keys, said_instead = opening
        return user_openings.composed(request, lambda r: _request(request, r, keys, said_instead or None), len(history), "request")
    return _answer(request, rng)


# how a person goes on to the next thing once the first is done, one sentence: a lead, then the need
_NEXT = ["Thanks, and now", "Great, thank you, and next", "Perfect, so with that", "Okay, thanks, so now",
         "Nice, and now", "Thanks a lot, and next", "Got it, so next", "Great, and using that", "Thank you, so now",
         "Cool, thanks, now", "That helps, and next", "Wonderful, so now", "Good, and now"]
_NEXT_NEED = ["I need some help with {a}", "I need one more thing done with {a}", "there's something else about {a}",
              "I'd like to sort out {a}", "I have a follow-up about {a}", "I need to do something with {a}",
              "can you help me with {a}", "I want to take care of {a}", "I'd like your help with {a}"]


def _follow_up(request: UserRequest) -> str:
    """The user's turn in a request that follows one already done: its first a short, vague request
    about what the candidates share, joined to thanks for the earlier answer (no greeting, no
    introduction: the conversation is under way); the later ones as in any request."""
    if request.history:
        return scenario_user_text(request)
    rng = _scenario_rng(request, "next")
    area = work_area(request)
    about = user_words.subject(request) or (f"our {area} work" if area != "day-to-day" else "something else")
    need = rng.choice(_NEXT_NEED).format(a=about)
    text = f"{rng.choice(_NEXT)} {need}{'?' if need.startswith('can ') else '.'}"
    return user_words.safe(request, text)


def _faulted(request: UserRequest, fault: dict[str, Any], rng: random.Random) -> str:
    """The opening as said, its input fault written in (the opening as meant is the explicit request)."""
    gold = request.gold_arguments
    kind = fault["kind"]
    if kind == "intention":
        return _request(request, rng, sorted(gold), detail=False)
    if kind == "premise":
        return _request(request, rng, []) + " " + PREMISE
    if kind == "parameter":
        arg, decoy = fault["arg"], fault["decoy"]
        text = _request(request, rng, [k for k in sorted(gold) if k != arg])
        name = spoken_label(arg, request)
        return (f"{text} The {name} {phrasing.verb(name)} either {values.say_value(gold[arg])} or {values.say_value(decoy)}, "
                "I can't remember which.")
    # the request is garbled, the values are not: they stay as said (the fault is in how it is put)
    garbled = _garble(_request(request, _scenario_rng(request, "opening"), []), rng)
    return f"{garbled} {_values(request, sorted(gold))}".strip()


def _answer(request: UserRequest, rng: random.Random) -> str:
    """A reply to the assistant's last turn: the detail when asked which, else the values asked for."""
    history, info = request.history, _info(request)
    asked = user_words.last_assistant_turn(history).lower()
    if request.phase == "tool_selection":
        if info.get("fault", {}) and info["fault"]["kind"] in ("intention", "expression"):
            return user_words.safe(request, _clear_detail(request))
        if request.scenario and not scenarios.get(request.scenario.name).expects_call:
            return "I see. Thanks for telling me."
        return user_words.safe(request, _clear_detail(request))
    bad = info.get("infeasible")
    if bad and mentions(asked, bad["arg"], request):
        return _styled(request, "Sorry, my mistake. " + _values(request, [bad["arg"]]), rng)
    fault = info.get("fault") or {}
    if fault.get("kind") == "parameter" and mentions(asked, fault["arg"], request):
        name, value = spoken_label(fault["arg"], request), request.gold_arguments[fault["arg"]]
        said = phrasing.state(name, value, rng, form="is")
        return _styled(request, f"It's the first one. {said[:1].upper() + said[1:]}.", rng)
    return _style_values(request, rng)


def _style_values(request: UserRequest, rng: random.Random) -> str:
    """The values asked for, as the decision style gives them: an avoidant user one at a time, a
    spontaneous one everything still unsaid, a dependent one asking for reassurance."""
    gold, history = request.gold_arguments, request.history
    asked = user_words.last_assistant_turn(history).lower()
    said = "\n".join(m.content for m in history if m.role == "user")
    tool = request.tool
    known = phrasing.read_values(said, tool, names={k: [spoken_label(k, request)] for k in gold}, keys=list(gold))
    remaining = [k for k in gold if k not in known]
    wanted = [k for k in remaining if mentions(asked, k, request) or k.lower() in asked]
    if not remaining:
        return "That's everything I have. Please go ahead."
    style = _style(request)
    if style == "spontaneous":
        chosen = remaining
    elif style == "avoidant":
        chosen = (wanted or remaining)[:1]
    else:
        chosen = wanted or remaining[:1]
    text = _values(request, chosen)
    if style == "dependent":
        text += " Does that work for you?"
    return _styled(request, text, rng)


def _styled(request: UserRequest, text: str, rng: random.Random) -> str:
    """`text` led in by the user's decision style, on argument-filling answers only."""
    style = _style(request)
    if not style or request.phase != "argument_filling" or not text:
        return text
    lowered = text[:1].lower() + text[1:] if text[1:2].islower() else text
    return rng.choice(STYLE_LEADS[style]) + lowered
