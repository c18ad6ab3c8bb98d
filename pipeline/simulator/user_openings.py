"""The offline user's composed turns: the vague opening that fits several candidates, the
detail that singles the seed out, and `composed`, which redraws a turn until it gives nothing away.
Each turn is built from parts (greeting, who is asking, the request, why, a closing) chosen by the
persona's voice (`voice`).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

from ..dialogue import shortcuts
from ..dialogue.parameter_labels import is_plural
from ..llm.requests import UserRequest
from . import phrasing
from .nounphrases import UNCOUNTABLE
from .seeding import seeded
from .user_words import act_separates, action_verb, listing, safe, said_banned, separators, topic_phrase, work_area
from .voice import Voice, closing, finish, greeting

_WHY = ["It's for a review later this week.", "A colleague asked me to handle it.", "It's holding up the rest of the team.",
        "We need it sorted before month-end.", "It landed on my desk this morning.", "My manager is waiting on it.",
        "It's been on my list since Monday.", "A customer is waiting on this.", "I promised an answer by tonight.",
        "The deadline is tomorrow morning.", "It came up in this morning's stand-up.", "I keep putting it off.",
        "Someone flagged it in yesterday's meeting.", "It's blocking the next thing on my plate.",
        "I'd rather get it right the first time.", "I'm covering for a colleague this week.",
        "It has to be done before the weekend.", "We're short-handed today, so it's on me."]


_CHAT = ["It's been a busy week over here.", "Sorry, I'm juggling a few things at once.",
         "I tried to figure it out myself first, no luck.", "Long story, but it ended up with me."]


def _role_in_sentence(role: str) -> str:
    """A role as said inside a sentence: a description ('Music app developer') in lower case, a
    job title in title case ('HR Coordinator') and abbreviations ('DJ and music collector') kept."""
    words = role.split()
    if len(words) > 1 and any(w[:1].islower() for w in words[1:]) and not words[0].isupper():
        return words[0].lower() + role[len(words[0]):]
    return role


def _joined(lead: str, rest: str, role: str | None = None) -> str:
    """`lead` then `rest`, whose first letter follows the lead's punctuation ('Hey, could you...')."""
    if lead.endswith(", ") and not re.match(r"I\b|I'|[A-Z]{2}", rest) and not (role and rest.startswith(role)):
        rest = rest[:1].lower() + rest[1:]
    return lead + rest


def opening(request: UserRequest, rng: random.Random, voice: Voice) -> str:
    """A request in the persona's words, vague enough to fit the seed tool and its distractors."""
    persona = request.persona
    topic = topic_phrase(request)
    area = work_area(request)
    role = persona.role
    if role and any(shortcuts.stem(w) in said_banned(request) for w in shortcuts.split_words(role)):
        role = None
    company = persona.attributes.get("company")
    countable = topic is not None and not topic.lower().endswith(UNCOUNTABLE)
    about = (f"{rng.choice(['the', 'our', 'some'] if is_plural(topic) or not countable else ['the', 'our', 'a'])} {topic}"
             if topic else rng.choice([f"a {area} matter", f"our {area} work", f"something on the {area} side"]))
    if about.startswith("a "):
        about = f"{phrasing.article(about[2:])} {about[2:]}"
    if voice.terse:
        frame = rng.choice([f"Need help with {about}.", f"Question about {about}.", f"Quick one: {about}.",
                            f"{about[:1].upper() + about[1:]}. Can you help?", f"Help with {about}, please."])
        return (finish(voice, _joined(greeting(voice, rng), frame)) + " " + closing(voice, rng, request.tool.description)).strip()
    who = ""
    if role and rng.random() < 0.7:
        at = f" at {company}" if company and rng.random() < 0.6 else ""
        city = str(persona.attributes.get("city") or "")
        said = _role_in_sentence(role)
        forms = [f"I'm {phrasing.article(said)} {said}{at}. ", f"{role[:1].upper() + role[1:]} here{at}. ",
                 f"I work as {phrasing.article(said)} {said}{at}. "]
        who = rng.choice(forms + ([f"I'm {phrasing.article(said)} {said} based in {city}. "] if city else []))
    elif rng.random() < 0.5 and area != "day-to-day":
        who = rng.choice([f"I look after {area} work here. ", f"I'm on the {area} side. "])
    if voice.formal:
        frames = [f"I would like to ask for your assistance with {about}.", f"May I ask for help regarding {about}?",
                  f"I am writing about {about}, on which I require some help.", f"I would appreciate your support with {about}.",
                  f"Could you kindly assist me with {about}?", f"I should be grateful for guidance on {about}."]
    elif voice.anxious:
        frames = [f"I'm not completely sure how to go about {about}.", f"Could you help me with {about}? I don't want to get it wrong.",
                  f"I have to deal with {about} and I'm a bit nervous about it.", f"Sorry to bother you, it's about {about}.",
                  f"I think I need help with {about}, but I'm not sure what to ask.", f"I've never handled {about} before."]
    else:
        frames = [f"Could you help me with something about {about}?", f"I need a hand with {about}.",
                  f"I've got a question about {about}.", f"There's something I need to sort out with {about}.",
                  f"Can you take care of a thing involving {about}?", f"I'm trying to get {about} sorted.",
                  f"Something came up with {about} and I need your help.", f"I have to deal with {about} today.",
                  f"I was hoping you could look into {about} for me.", f"Got a minute? It's about {about}.",
                  f"I'm stuck on {about}.", f"Could we go over {about} together?", f"Wondering if you can help with {about}.",
                  f"I'd like some help with {about}, if you have a moment.", f"I'm looking into {about} and could use a hand.",
                  f"Mind helping me out with {about}?", f"Can I get your help on {about}?",
                  f"{about[:1].upper() + about[1:]} needs some attention and I'm not sure where to start."]
    parts = [_joined(greeting(voice, rng), who + rng.choice(frames), role)]
    if rng.random() < (0.8 if voice.chatty else 0.35):
        parts.append(rng.choice(_WHY))
    if voice.chatty and rng.random() < 0.6:
        parts.append(rng.choice(_CHAT))
    said = finish(voice, " ".join(parts))
    end = closing(voice, rng, request.tool.description)
    return f"{said} {end}".strip()


def detail(request: UserRequest, rng: random.Random, voice: Voice, vague: bool = False, params: bool = True,
           most: int = 3) -> str:
    """What singles the need out, in its own words, never a tool name's word nor a run of a description
    (`params`: its parameters' labels may serve too; `most`: phrases said at most)."""
    picked = separators(request, rng, vague, params, most)
    if not picked:
        return finish(voice, "It's the usual one we use, I'm afraid I can't put it any better.")
    listed = listing(picked)
    act = action_verb(request)
    if voice.terse:
        if act and (rng.random() < 0.5 or act_separates(request, act)):
            return rng.choice([f"Need to {act} {listed}.", f"To {act} {listed}.", f"I want to {act} {listed}."])
        return rng.choice([f"The one about {listed}.", f"Mainly {listed}.", f"It's {listed} that matter."
                           if len(picked) > 1 else f"It's {listed} that matters."])
    lead = rng.choice(["", "Good question. ", "Sure. ", "Right, so ", "Let me be clearer: ", "Ah, sorry. "]
                      if not voice.formal else ["Certainly. ", "To be precise, ", "Of course. "])
    bodies = [f"it's specifically about {listed}.", f"what I need has to do with {listed}.",
              f"the part that matters is {listed}.", f"I'm after {listed}, that's the key thing.",
              f"it concerns {listed}.", f"I care about {listed} here.", f"it's mostly {listed} I'm dealing with."]
    act = action_verb(request)
    if act and (rng.random() < 0.6 or act_separates(request, act)):  # what it does, then what it is about
        bodies = [f"I have to {act} {listed}.", f"I need to {act} {listed}, basically.",
                  f"the job is to {act} {listed}.", f"I'm trying to {act} {listed}."]
    body = rng.choice(bodies)
    if not lead or lead.endswith(". "):
        body = body[:1].upper() + body[1:]
    said = finish(voice, lead) + body
    if voice.anxious and rng.random() < 0.5:
        said += " Does that help narrow it down?"
    end = closing(voice, rng, request.tool.description) if rng.random() < 0.3 else ""
    return f"{said} {end}".strip()


def composed(request: UserRequest, make: Callable[[random.Random], str], *parts: Any) -> str:
    """The first of a few draws of `make` that gives nothing away (a greeting's 'good' may be a
    tool name's word); the plain fallback line when none does."""
    said = ""
    for attempt in range(6):
        said = make(seeded(request.seed, request.tool.name, "user", *parts, attempt) if attempt else
                    seeded(request.seed, request.tool.name, "user", *parts))
        if safe(request, said) == said:
            return said
    return safe(request, said)
