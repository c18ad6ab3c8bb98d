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

from ..core.text import is_name
from ..dialogue import shortcuts
from ..dialogue.parameter_labels import is_plural, label
from ..dialogue.person_names import PERSON_WORDS
from ..llm.requests import UserRequest
from . import phrasing
from .goal_text import employed
from .nounphrases import UNCOUNTABLE, bland, determined, linked, noun_phrases, owned, place, the, usage_only
from .seeding import seeded
from .user_words import (
    act_separates,
    action_verb,
    listing,
    neutral,
    safe,
    said_banned,
    separators,
    spoken_phrase,
    topic_phrase,
    user_said,
    work_area,
)
from .voice import Voice, closing, finish, greeting

# why it matters, said after the request in the same sentence ("..., because my manager is waiting on it"):
# by anyone, or by someone with a job (`goal_text.employed`)
_WHY = ["because it's been on my list since Monday", "since the deadline is tomorrow morning", "since I've been putting it off",
        "because I'd rather get it right the first time", "because it has to be done before the weekend",
        "since I'm new to this", "because I'd like to finish it before lunch", "because I'm off tomorrow",
        "since I only have a few minutes", "because I keep getting stuck on it", "because a friend asked me about it",
        "since I've been meaning to sort it out for a while", "because I want it done before I forget",
        "since I'm trying to get organised this week", "because it's been bugging me", "since I have a bit of time now",
        "because I promised I'd look into it", "since I'd like to get it off my plate", "because I'm planning ahead",
        "since I'm not sure where to start", "because I ran into it last night", "since it's the last thing on my list"]
_WHY_AT_WORK = ["because it's for a review later this week", "because a colleague asked me to handle it",
                "because it's holding up the rest of the team", "since we need it sorted before month-end",
                "because it landed on my desk this morning", "because my manager is waiting on it",
                "because a customer is waiting on it", "because it came up in this morning's meeting",
                "because someone flagged it yesterday", "since it's blocking the next thing on my list",
                "since I'm covering for a colleague this week", "since we're short-handed today"]
# the request, as a statement (S) or a question (Q), by voice; {a}: what it is about
_ASKS = {"plain": {"S": ["I need a hand with {a}", "I've got a question about {a}", "I need some help with {a}",
                         "I'm trying to sort out {a}", "I have to deal with {a} today", "I'd like some help with {a}",
                         "I'm looking into {a} and could use some help", "I'm a bit stuck on {a}",
                         "I need to get {a} sorted", "something came up with {a} and I need your help",
                         "I could use a hand with {a}", "I'm hoping you can help me with {a}",
                         "I've been trying to figure out {a}", "I'm working on {a} and could use some help"],
                   "Q": ["could you help me with {a}", "can you help me with {a}", "could you take a look at {a} for me",
                         "can I get your help with {a}", "would you be able to help me with {a}",
                         "do you have a minute to help me with {a}"]},
         "formal": {"S": ["I would like to ask for your assistance with {a}", "I would appreciate your help with {a}",
                          "I am writing about {a}, on which I require some help", "I need some guidance on {a}"],
                    "Q": ["could you kindly assist me with {a}", "may I ask for your help with {a}",
                          "would you be so kind as to help me with {a}"]},
         "anxious": {"S": ["I'm not completely sure how to go about {a}", "I have to deal with {a} and I'm a bit nervous",
                           "I've never handled {a} before", "I think I need help with {a}, but I'm not sure what to ask"],
                     "Q": ["could you help me with {a}, because I don't want to get it wrong",
                           "sorry to bother you, but could you help me with {a}"]}}
_TERSE = ["need help with {a}", "quick question about {a}", "help with {a}, please", "can you help with {a}?"]
# the request of someone with no work to name and no subject the candidates share: about 'something'
_LOOSE = {"S": ["I have a quick question", "I need a hand with something", "I could use some help with something",
                "there's something I'd like to get done today", "I've been meaning to ask you about something",
                "I'm stuck on something and could use some help", "I need help with something small",
                "I'm trying to sort something out", "there's something I can't figure out on my own",
                "I ran into something and I'm not sure what to do", "I wonder if you can help me out",
                "there's a thing I keep putting off", "I'm not sure who else to ask about this"],
          "Q": ["could you help me with something", "could you give me a hand with something",
                "would you be able to help me with something", "can I ask you about something",
                "do you have a moment", "could you point me in the right direction", "mind helping me out",
                "can you help me figure something out", "are you free to look at something"]}
_TERSE_LOOSE = ["quick question", "need help with something", "can you help with something?", "got a minute?"]


def _role_in_sentence(role: str, job: bool = True) -> str:
    """A role as said inside a sentence: a description ('Music app developer', 'Concert-goer' of someone
    without a job) in lower case, a job title in title case ('HR Coordinator') and abbreviations ('DJ and
    music collector') kept."""
    words = role.split()
    if ((len(words) > 1 and any(w[:1].islower() for w in words[1:])) or not job) and not words[0].isupper():
        return words[0].lower() + role[len(words[0]):]
    return role


def _gave_reason(request: UserRequest) -> bool:
    earlier = user_said(request.history)
    return any(r.strip(", ") in earlier for r in (*_FOR, *_FOR_AT_WORK, *_WHY, *_WHY_AT_WORK))


def reasons(request: UserRequest, anyone: list[str], at_work: list[str]) -> list[str]:
    """The reasons the persona could give (`at_work` too when it has a job), none said earlier in the
    dialogue and none holding a tool's word (`neutral`)."""
    pool = anyone + at_work if employed(request.persona) else anyone
    earlier = user_said(request.history)
    return neutral(request, [r for r in pool if r.strip(", ") not in earlier] or pool)


def _joined(lead: str, rest: str, role: str | None = None) -> str:
    """`lead` then `rest`, whose first letter follows the lead's punctuation ('Hey, could you...')."""
    if re.search(r"(?:,|\bso|\band|\bbut) $", lead) and not re.match(r"I\b|I'|[A-Z]{2}", rest) \
            and not (role and rest.startswith(role)):  # 'Hey, could you...', 'Right, so it has to do with...'
        rest = rest[:1].lower() + rest[1:]
    return lead + rest


def _about(topic: str | None, area: str, rng: random.Random, job: bool = True, description: str = "") -> str | None:
    """What the opening is about: the topic the candidates share, with the article a person would use
    ('our' of a worker, 'my' of someone without a job when the `description` says whose it is: 'my
    playlist', never 'my suit' of a deck of cards); None when there is nothing to name."""
    if topic is None:
        if area == "day-to-day" and not job:  # no subject the candidates share, and no work to speak of
            return None
        if area == "day-to-day":  # no subject the candidates share, no line of business: what any worker says
            return rng.choice(["a day-to-day matter", "a routine task", "a work task", "an everyday task",
                               "a routine chore", "a small job for this week"])
        return rng.choice([f"{phrasing.article(area)} {area} matter", f"our {area} work", f"something on the {area} side"])
    topic = spoken_phrase(topic)
    if " " not in topic and is_name(topic):  # a product's name: 'Spotify', 'GitHub'
        return rng.choice([f"something in {topic}", f"{phrasing.article(topic)} {topic} question", f"something on {topic}",
                           f"my {topic} account" if not job else f"our {topic} account", f"{phrasing.article(topic)} {topic} thing"])
    if " " not in topic and topic[:1].isupper():
        topic = topic.lower()  # an API's heading ('Image'), not a name: never 'something in Image'
    countable = not topic.lower().endswith(UNCOUNTABLE)
    mine = "our" if job else "my" if owned(description, topic) else "the"
    det = rng.choice(["the", mine, "some"] if is_plural(topic) or not countable else ["the", mine, "a"])
    return f"{phrasing.article(topic)} {topic}" if det == "a" else f"{det} {topic}"


def _who(request: UserRequest, rng: random.Random, area: str) -> str:
    """Who is asking, as a clause ('I'm a payroll specialist at Acme'), or ''."""
    persona = request.persona
    role = persona.role
    if role and any(shortcuts.stem(w) in said_banned(request) for w in shortcuts.split_words(role)):
        role = None
    if role and rng.random() < (0.7 if employed(persona) else 0.4):  # a listener seldom introduces themself
        company = persona.attributes.get("company")
        at = f" at {company}" if company and rng.random() < 0.6 else ""
        city = str(persona.attributes.get("city") or "")
        said = _role_in_sentence(role, employed(persona))
        forms = [f"I'm {phrasing.article(said)} {said}{at}"]
        forms += [f"I work as {phrasing.article(said)} {said}{at}"] if employed(persona) else []
        where = [f"I'm {phrasing.article(said)} {said} based in {city}", f"I'm {phrasing.article(said)} {said} in {city}"]
        return rng.choice(forms + (where if city else []))
    if rng.random() < 0.5 and area != "day-to-day":
        return rng.choice([f"I look after {area} work here", f"I'm on the {area} side"])
    return ""


def opening(request: UserRequest, rng: random.Random, voice: Voice) -> str:
    """A request in the persona's words, vague enough to fit the seed tool and its distractors: one
    sentence (greeting, who is asking, what it is about, sometimes why), in the persona's voice."""
    area = work_area(request)
    about = _about(topic_phrase(request), area, rng, employed(request.persona), request.tool.description)
    end = closing(voice, rng, request.tool.description)
    if voice.terse:
        terse = [f for f in _TERSE if "question" not in f] if about and "question" in about else _TERSE
        frame = rng.choice(terse).format(a=about) if about else rng.choice(_TERSE_LOOSE)
        said = _joined(greeting(voice, rng), frame[:1].upper() + frame[1:])
        return (finish(voice, said if said.endswith("?") else said + ".") + " " + end).strip()
    who = _who(request, rng, "day-to-day" if about and area in about else area)  # the area said once, not twice
    asks = _ASKS["formal" if voice.formal else "anxious" if voice.anxious else "plain"]
    kind = "S" if voice.upbeat else rng.choice("SQ" if not who else "SSQ")  # an upbeat person exclaims, not asks
    frames = [f for f in asks[kind] if "question" not in f] if about and "question" in about else asks[kind]
    frame = rng.choice(frames).format(a=about) if about else rng.choice(_LOOSE[kind])  # never 'a question about a question'
    if who:
        frame = f"{who}, {'so' if kind == 'Q' else 'and'} {frame}"
    # a reason follows a request, never a state ('I've never handled a finance matter before, because ...')
    why = rng.random() < (0.9 if voice.chatty else 0.6) and kind == "S" and "never" not in frame
    body = frame + (f", {rng.choice(reasons(request, _WHY, _WHY_AT_WORK))}" if why else "") + ("?" if kind == "Q" else ".")
    said = _joined(greeting(voice, rng), body[:1].upper() + body[1:], request.persona.role)
    return f"{finish(voice, said)} {end}".strip()


# the need said as an act on its object, or as the thing wanted; {v}: verb, {a}: the first phrase
_DO = ["I need to {v} {a}", "I want to {v} {a}", "I'm trying to {v} {a}", "I'd like to {v} {a}",
       "I need you to {v} {a}", "I'd like you to {v} {a}", "I'd like to be able to {v} {a}"]
_WANT = ["I'm looking for {a}", "I'm looking into {a}", "it has to do with {a}", "I'm interested in {a}",
         "I need to see {a}", "I'd like to see {a}", "I'm trying to find {a}", "I'm trying to get {a}",
         "I'd like some help with {a}"]
# what the answer is for, in the same sentence: a reason a person gives when asked to say more (by anyone,
# or by someone with a job)
_FOR = [" before the end of the day", ", since I want to get it right the first time",
        ", because it has been on my list since Monday", " before the weekend", ", because a friend asked me about it",
        ", since I've been meaning to sort it out", ", since I'd like to get it done today", " while I have a few minutes",
        ", because I'm trying to get organised", ", since it's been bugging me for a while", " before I head out",
        ", because I promised I'd sort it out"]
_FOR_AT_WORK = [", so I can report back to my team", ", since that's what my manager asked me to do this morning",
                " for a customer who called this morning", ", because I need it for a meeting later today",
                ", since it's part of a request I got this week", ", so we can move on with the rest of the work",
                " for a report I'm putting together", " for a client I'm working with this week",
                ", because I'm covering for a colleague who is away", " as part of a request from my manager",
                " for the review we have on Friday"]
# the parameters the user can give, said after the need ("..., and I can give you the country")
_HELD = [", and I can give you {r}", ", and I can tell you {r}", ", and I can give you {r} as well"]
_DETAIL_LEADS = {"plain": ["", "", "Sure, ", "Right, so ", "Okay, so ", "To clarify, ", "Sorry, I should have said, ",
                           "Sorry, I should have been clearer, ", "Sorry, I wasn't clear, ", "Sorry, I meant to say, "],
                 "formal": ["To be precise, ", "Of course, ", "", "To clarify, ", "Apologies, I should have been clearer, "]}


def detail(request: UserRequest, rng: random.Random, voice: Voice, vague: bool = False, params: bool = True,
           most: int = 2) -> str:
    """What singles the need out, in its own words, never a tool name's word nor a run of a description
    (`params`: its parameters' labels may serve too; `most`: phrases said at most): one sentence, a
    verb and its object or the thing wanted, with any further detail after it."""
    found = separators(request, rng, vague, params, most)
    if not found:
        return finish(voice, "It's the usual one we use, I'm afraid I can't put it any better.")
    taken = {label(k, s or {}) for k, s in request.tool.properties.items()}
    # a parameter's label or an option is no thing the user is after: they say they have it, or narrow by it
    subjects = [spoken_phrase(p) for p in found if p not in taken and not p.endswith(" ones")] or \
        _described(request, taken) or [spoken_phrase(p) for p in found if not p.endswith(" ones")] or \
        [spoken_phrase(found[0])]
    held = [p for p in found if p in taken and spoken_phrase(p) not in subjects]
    only = [p for p in found if p.endswith(" ones")]
    # a second thing is said as the description ties it to the first ('the winner of the game'); untied, it
    # is one more thing of interest ('the comments and the discussion'), never a second object of the act
    # ('delete the file and the GitHub repository' would ask for another act)
    described = request.tool.description
    subjects = sorted(subjects, key=lambda p: usage_only(described, p))  # what it acts on before when it is used
    pair = linked(described, subjects[0], subjects[1]) if subjects[1:] else None
    if pair and shortcuts.recited(f"{the(pair[0])} {pair[1]} {pair[2]}", described):
        pair = None  # "the latest changes from the base branch" recites: said untied, or the first alone
    if not pair and subjects[1:] and (subjects[1].split()[-1].lower() in PERSON_WORDS or
                                      not determined(described, subjects[1]) or usage_only(described, subjects[1])):
        # 'the budget position and the manager': a person is not one more thing wanted, nor is a word the
        # description never names as a thing ('the suit and the probability' of 'a certain card or suit'), nor
        # the situation a usage note names ('the whole queue and the decision' of 'Use only when ... the whole queue')
        subjects = subjects[:1]
    head, thing = (pair[0], f"{the(pair[0])} {pair[1]} {pair[2]}") if pair else (subjects[0], the(subjects[0]))
    act = action_verb(request)
    where = place(request.tool.description, act, head) if act else None
    untied = bool(subjects[1:]) and not pair
    if act and where is not None and (rng.random() < (0.3 if untied else 0.6) or act_separates(request, act)):
        core = rng.choice(_DO).format(v=act, a=f"something {where} {thing}" if where else thing)  # what it does, to what
    else:
        # two untied things in the description's order: what it is about, then a detail of it ('the internal
        # policy and the short note', not 'the short note and the internal policy')
        both = sorted(subjects[:2], key=lambda p: (described.lower().find(p.lower()) % (len(described) + 1)))
        core = rng.choice(_WANT).format(a=listing(both) if untied else thing)
    if only:
        core += f", only the {only[0]}"
    if held:
        core += rng.choice(_HELD).format(r=listing(held[:2]))
    elif rng.random() < (0.25 if _gave_reason(request) else 0.8):  # one reason is enough, said again it nags
        core += rng.choice(reasons(request, _FOR, _FOR_AT_WORK))
    stop = "?" if core.startswith("can you") else "."
    if voice.terse:
        return core[:1].upper() + core[1:] + stop
    before = [m.content.lower() for m in request.history if m.role == "user"]  # 'To clarify, ... To clarify, ...'
    lead = rng.choice([x for x in _DETAIL_LEADS["formal" if voice.formal else "plain"]
                       if not x or not any(b.startswith(x.lower()) for b in before)])
    said = _joined(lead, core[:1].upper() + core[1:]) if lead else core[:1].upper() + core[1:]
    said += ", if that helps." if voice.anxious and stop == "." and rng.random() < 0.5 else stop
    end = closing(voice, rng, request.tool.description) if rng.random() < 0.3 else ""
    return f"{finish(voice, said)} {end}".strip()


def _described(request: UserRequest, taken: set[str]) -> list[str]:
    """The description's first phrase that is no parameter's label, as the thing wanted when only labels set
    the tool apart: 'the discussion, and I can give you the discussion number', never 'I'm interested in
    the discussion number'."""
    banned = said_banned(request, answering=bool(request.history))
    return [spoken_phrase(p) for p in noun_phrases(request.tool.description, banned)
            if p not in taken and not bland(p)][:1]


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
