"""The offline user proxy: a vague opening that fits several candidates, then, when asked, the
details that set the seed tool apart from each of them, then the gold values, in the persona's voice.

Turns are composed from parts (greeting, who is asking, the request, why, a closing) chosen by
the persona's style (`voice`) and the tool's domain, so openings vary as people's do. Details are
short noun phrases of the seed's description (or its parameters' labels) that each other
candidate lacks, so the grounded-selection rule holds once they are said
(/docs: a word the user said fits the chosen tool and not the other). Values are stated by
`phrasing`. Its words are chosen in `user_words`, its opening and details composed in
`user_openings`. It never says a word of any candidate's name nor a run of a description.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import Any

from ..core.records import Tool
from ..dialogue import grounding
from ..dialogue.parameter_labels import label
from ..dialogue.said import user_said
from ..llm.requests import Said, UserRequest
from ..retrieval import nearness
from . import gold_values as values
from . import phrasing
from .nounphrases import place
from .seeding import seeded
from .user_openings import composed, detail, opening
from .user_words import (
    action_verb,
    answers_to_options,
    last_assistant_turn,
    listing,
    restated,
    safe,
    separators,
    spoken_phrase,
    subject,
    work_area,
)
from .voice import Voice, emoji, finish
from .wording import ASKED_AT_ONCE

VAGUE_FIRST_ANSWER = 0.35  # share of users whose first answer does not single out a tool
VAGUE_DETAIL = 0.1        # share of distinguishing answers that use only words the distractors share
EARLY_VALUE = 0.3         # share of distinguishing answers that also give one value
DRAFTS = 6                # ways of saying the detail weighed; the one pointing nearest the seed is said


def labels(tool: Tool) -> dict[str, str]:
    """Each parameter's spoken label (`parameter_labels.label`)."""
    props = tool.properties
    return {k: label(k, s or {}) for k, s in props.items()}


def revealed(history: Sequence[Said], tool: Tool, gold: dict[str, Any]) -> set[str]:
    """Gold keys the user has already stated (as the assistant reads them)."""
    return set(phrasing.read_values(user_said(history, sep="\n"), tool, keys=list(gold)))


def values_sentence(tool: Tool, gold: dict[str, Any], keys: list[str], rng: random.Random) -> str:
    names = labels(tool)
    return phrasing.sentence([(names.get(k, k), values.spoken_option(gold[k], tool.properties.get(k) or {}))
                              for k in keys], rng)


def user_text(request: UserRequest) -> str:
    history, tool = request.history, request.tool
    gold = request.gold_arguments
    voice = Voice.of(request.persona)
    rng = seeded(request.seed, tool.name, "user", len(history))
    if not history:
        return composed(request, lambda r: opening(request, r, voice), len(history))
    if request.phase == "tool_selection":
        answers = sum(m.role == "user" for m in history) - 1
        if answers == 0 and rng.random() < VAGUE_FIRST_ANSWER:
            return safe(request, _vague(request, rng, voice))  # a real user often misses the deciding detail at first
        vague = answers == 0 and rng.random() < VAGUE_DETAIL
        # asked again, a person says more of what they need: later drafts carry more of it
        drafts = [composed(request, lambda r, k=k: detail(request, r, voice, vague=vague, params=k % 2 == 0,
                                                        most=2 + (k >= DRAFTS // 2)),
                           len(history), "detail", k)
                  for k in range(1 if vague else DRAFTS)]
        need = None if vague else restated(request)
        need = finish(voice, need) if need else None  # in the user's own case and punctuation, as all they say
        picks: list[str] = [] if vague else answers_to_options(request, rng, voice)
        before = {m.content for m in history if m.role == "user"}
        options: list[str] = list(dict.fromkeys([*drafts, *([need] if need else []), *picks]))
        fresh = [o for o in options if o not in before and not said_before(history, o)]
        said = _nearest(request, fresh or options)  # a person rephrases, not repeats
        unsaid = sorted(set(gold) - revealed(history, tool, gold))  # a value said once is not said again
        if unsaid and rng.random() < EARLY_VALUE:  # sometimes a value comes early, as real users do
            value = values_sentence(tool, gold, [rng.choice(unsaid)], rng)
            joined = said.endswith(".") and value.startswith("The ")  # one sentence: '..., and the date is ...'
            early = f"{said[:-1]}, and {value[:1].lower()}{value[1:]}" if joined else f"{said} {value}"
            said = early if safe(request, early) == early else said
        return said
    return _values_answer(request, rng, voice)


def _nearest(request: UserRequest, drafts: list[str]) -> str:
    """The draft after which all the user has said sets the seed apart (`grounding`) from the most
    candidates, then points nearest to it (`nearness`): how a person who knows what they want says
    it. The first on ties."""
    if len(drafts) == 1:
        return drafts[0]
    tool, others = request.tool, request.distractors
    heard, closeness = _heard(request, drafts)
    said = [grounding.said_stems([{"role": "user", "content": h}]) for h in heard]
    apart = [len(others) - len(grounding.unseparated(s, tool, others)) for s in said]  # grounded: all of them
    return drafts[max(range(len(drafts)), key=lambda i: (apart[i], closeness[i], -i))]


def _heard(request: UserRequest, drafts: list[str]) -> tuple[list[str], list[float]]:
    """For each draft: all the user will have said before the call with it, and how much nearer
    that points to the seed than to any distractor (`nearness.margins`)."""
    before = user_said(request.history, until="call", sep=" ")
    heard = [f"{before} {d}".strip() for d in drafts]
    # at three decimals: drafts that differ only in a reason read about as near, and float noise (the same
    # text embedded in another process's batch) must not choose between them
    return heard, [round(m, 3) for m in nearness.margins(heard, request.tool, request.distractors)]


def _values_answer(request: UserRequest, rng: random.Random, voice: Voice) -> str:
    history, tool, gold = request.history, request.tool, request.gold_arguments
    remaining = [k for k in gold if k not in revealed(history, tool, gold)]
    names = labels(tool)
    asked = last_assistant_turn(history).lower()
    again = [k for k in gold if k not in remaining and names[k].lower() in asked]
    if not remaining and again:  # asked to check a value already given: the same value, checked
        lead = rng.choice(["I checked again, and ", "I've just double-checked: ", "It should be right: "])
        body = values_sentence(tool, gold, again[:2], rng)
        return finish(voice, lead) + body[:1].lower() + body[1:]
    if not remaining:
        known = listing([names[k] for k in list(gold)[:2]]) if gold else "details"
        done = (["That's all, go ahead."] if voice.terse else
                [f"I already gave you {known}, so that's everything I have.", f"You have {known} now, so please go ahead.",
                 f"I think {known} are all you need, so go ahead.", f"That's it from my side, {known} are above."])
        return finish(voice, rng.choice(done))
    wanted = [k for k in remaining if names[k].lower() in asked or k.lower() in asked]
    chosen = wanted[:ASKED_AT_ONCE] if wanted else remaining[: rng.choice([1, 2])]
    body = values_sentence(tool, gold, chosen, rng)
    if voice.terse:
        return _still_pointing(request, body, rng)
    lead = rng.choice(_LEADS["formal" if voice.formal else "anxious" if voice.anxious else
                             "upbeat" if voice.upbeat else "plain"])
    if lead and body.startswith(("The ", "For ")):
        body = finish(voice, lead) + body[:1].lower() + body[1:]
    if rng.random() < 0.8 and body.endswith("."):  # a word more, in the same sentence, as people add
        last = chosen[-1]
        said = phrasing.remark(last, tool.properties.get(last) or {}, gold[last], rng) if rng.random() < 0.6 else None
        body = body[:-1] + (said or rng.choice(phrasing.AFTERWORDS)) + ("!" if voice.upbeat else ".")
    tail = ""
    if voice.anxious and rng.random() < 0.5:
        tail = rng.choice([f"I double-checked the {names[chosen[0]]}.", f"Tell me if the {names[chosen[0]]} looks wrong.",
                           f"I hope I have the {names[chosen[0]]} right."])
    if voice.emoji and rng.random() < 0.5:
        tail = (tail + " " + emoji(tool.description, rng)).strip()
    return _still_pointing(request, (body + (" " + tail if tail else "")).strip(), rng)


def _still_pointing(request: UserRequest, said: str, rng: random.Random) -> str:
    """`said` (values), or `said` with a reminder of what they are for when the values alone would
    leave the user's words pointing nearer another candidate than the seed: ids and labels can pull
    a request towards a neighbour ('the album IDs' towards listing saved albums, not saving them)."""
    if not request.distractors:
        return said
    act, picked = action_verb(request), separators(request, rng, params=False)
    if not picked:
        return said
    listed = listing([spoken_phrase(p) for p in picked[:2]])
    # the act only on what it is done to: 'create the GitHub repository' of a pull request asks for another act
    acts = act and len(picked) == 1 and place(request.tool.description, act, picked[0]) == ""
    reminders = ([f"That's so I can {act} {listed}.", f"Remember, I need to {act} {listed}."] if acts else []) + \
        [f"It's all for {listed}.", f"These are for {listed}, as I said."]
    drafts = [said, *(f"{said} {r}" for r in reminders if safe(request, f"{said} {r}") == f"{said} {r}")]
    _, closeness = _heard(request, drafts)
    if closeness[0] >= 0:
        return said
    return drafts[max(range(len(drafts)), key=lambda i: (closeness[i], -i))]


def said_before(history: Sequence[Said], said: str) -> bool:
    """Whether a sentence of `said` is one the user already said in this dialogue: nobody repeats a line."""
    earlier = {s for m in history if m.role == "user" for s in sentences(m.content)}
    return any(s in earlier for s in sentences(said))


def sentences(said: str) -> list[str]:
    """`said` cut into sentences, each in lower case with its spacing normalised."""
    return [" ".join(s.lower().split()) for s in re.split(r"(?<=[.!?])\s+", said.strip()) if s.strip()]


# how a statement of values starts, in the same sentence ("Sure, the due date is ..."), and what may follow it
_LEADS = {"plain": ["", "Sure, ", "Of course, ", "Sure, I can give you that: ", "Yes, I have it here: ",
                    "Of course, here it is: ", "Sure, here you go: ", "Sure, I have that here: "],
          "formal": ["Of course, ", "", "Certainly, here it is: ", "Of course, I have it here: "],
          "anxious": ["I think ", "If I'm reading my notes right, ", ""],
          "upbeat": ["Sure thing, ", "Absolutely, ", "Of course, "]}


# a vague answer, in three parts drawn apart so that no one sentence recurs across a run: not knowing, what
# little the user knows ({a}: the subject the candidates share, or nothing when they share none), a softener
_UNSURE = ["I'm not sure", "Honestly, I don't know", "Hard to say", "I couldn't tell you which one", "Good question",
           "I wish I knew", "I'm not really sure", "I don't know the technical term", "I can't say which of those it is"]
_KNOWN = ["it's just something to do with {a}", "all I know is that it's about {a}", "it has to do with {a}",
          "it's something involving {a}", "it concerns {a}", "it's about {a}, that's all I know",
          "I only know it's about {a}", "it's something with {a}"]
_KNOWN_NOTHING = ["I only know what I'm trying to get done", "I don't know what these things are called",
                  "I just know what I need", "I've never needed a word for it", "the options don't mean much to me",
                  "those all sound alike to me", "I only know what I want out of it", "I've never looked at it that way"]
_SOFTENERS = ["", "", "", ", sorry", ", I'm afraid", ", to be honest"]


def _vague(request: UserRequest, rng: random.Random, voice: Voice) -> str:
    """An answer that does not single out a tool: the subject every candidate shares, no more."""
    area = work_area(request)
    about = subject(request) or (f"the {area} side" if area != "day-to-day" else None)  # 'the day-to-day side' names nothing
    if voice.terse:
        return (rng.choice([f"Not sure, something to do with {about}.", f"No idea what it's called, it's {about}."]) if about
                else rng.choice(["Not sure, sorry.", "No idea what it's called.", "Couldn't tell you, sorry."]))
    known = rng.choice(_KNOWN).format(a=about) if about else rng.choice(_KNOWN_NOTHING)
    unsure = rng.choice(_UNSURE)
    soft = rng.choice([s for s in _SOFTENERS if "honest" not in s or "Honest" not in unsure])  # said once is enough
    return finish(voice, f"{unsure}, {known}{soft}.")


def stated_values(request: UserRequest, keys: list[str], rng: random.Random, override: dict[str, Any] | None = None) -> str:
    """The values of `keys` (gold, or `override` where given) stated as the user states them."""
    gold = {**(request.gold_arguments), **(override or {})}
    return values_sentence(request.tool, gold, keys, rng)
