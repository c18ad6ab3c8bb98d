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
from collections.abc import Sequence
from typing import Any

from ..core.records import Tool
from ..dialogue import grounding
from ..dialogue.parameter_labels import label
from ..dialogue.said import user_said
from ..llm.requests import Said, UserRequest
from ..retrieval import nearness
from . import phrasing
from .seeding import seeded
from .user_openings import composed, detail, opening
from .user_words import action_verb, answers_to_options, last_assistant_turn, listing, restated, safe, separators
from .voice import Voice, emoji, finish

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
    return phrasing.sentence([(names.get(k, k), gold[k]) for k in keys], rng)


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
            return safe(request, _vague(rng, voice))  # a real user often misses the deciding detail at first
        vague = answers == 0 and rng.random() < VAGUE_DETAIL
        # asked again, a person says more of what they need: later drafts carry more of it
        drafts = [composed(request, lambda r, k=k: detail(request, r, voice, vague=vague, params=k % 2 == 0,
                                                        most=3 + (k >= DRAFTS // 2) * min(answers, 2)),
                           len(history), "detail", k)
                  for k in range(1 if vague else DRAFTS)]
        need = None if vague else restated(request)
        picks: list[str] = [] if vague else answers_to_options(request, rng, voice)
        before = {m.content for m in history if m.role == "user"}
        options: list[str] = list(dict.fromkeys([*drafts, *([need] if need else []), *picks]))
        said = _nearest(request, [o for o in options if o not in before] or options)  # a person rephrases, not repeats
        if gold and rng.random() < EARLY_VALUE:  # sometimes a value comes early, as real users do
            early = said + " " + values_sentence(tool, gold, [rng.choice(sorted(gold))], rng)
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
    return heard, nearness.margins(heard, request.tool, request.distractors)


def _values_answer(request: UserRequest, rng: random.Random, voice: Voice) -> str:
    history, tool, gold = request.history, request.tool, request.gold_arguments
    remaining = [k for k in gold if k not in revealed(history, tool, gold)]
    if not remaining:
        done = (["That's all. Go ahead."] if voice.terse else
                ["That's everything I have. Please go ahead.", "I think that's all you need, go ahead.",
                 "Nothing else from my side, please go ahead.", "That should be it. Go for it."])
        return finish(voice, rng.choice(done))
    asked = last_assistant_turn(history).lower()
    names = labels(tool)
    wanted = [k for k in remaining if names[k].lower() in asked or k.lower() in asked]
    chosen = wanted[:3] if wanted else remaining[: rng.choice([1, 2])]
    body = values_sentence(tool, gold, chosen, rng)
    if voice.terse:
        return _still_pointing(request, body, rng)
    lead = rng.choice(_LEADS["formal" if voice.formal else "anxious" if voice.anxious else
                             "upbeat" if voice.upbeat else "plain"])
    tail = rng.choice(["Does that look right?", "Let me know if that's wrong.", ""]) if voice.anxious else ""
    if voice.emoji and rng.random() < 0.5:
        tail = (tail + " " + emoji(tool.description, rng)).strip()
    return _still_pointing(request, (finish(voice, lead) + body + (" " + tail if tail else "")).strip(), rng)


def _still_pointing(request: UserRequest, said: str, rng: random.Random) -> str:
    """`said` (values), or `said` with a reminder of what they are for when the values alone would
    leave the user's words pointing nearer another candidate than the seed: ids and labels can pull
    a request towards a neighbour ('the album IDs' towards listing saved albums, not saving them)."""
    if not request.distractors:
        return said
    act, picked = action_verb(request), separators(request, rng, params=False)
    if not picked:
        return said
    listed = listing(picked[:2])
    reminders = ([f"That's to {act} {listed}.", f"Again, I need to {act} {listed}."] if act else []) + \
        [f"That's for {listed}.", f"These are for {listed}, as I said."]
    drafts = [said, *(f"{said} {r}" for r in reminders if safe(request, f"{said} {r}") == f"{said} {r}")]
    _, closeness = _heard(request, drafts)
    if closeness[0] >= 0:
        return said
    return drafts[max(range(len(drafts)), key=lambda i: (closeness[i], -i))]


_LEADS = {"plain": ["", "", "Sure. ", "Of course. ", "Here you go: ", "OK. ", "Right, "],
          "formal": ["Certainly. ", "Of course. ", "Please note: "],
          "anxious": ["Let me check my notes. ", "I think this is right. ", "Okay, one moment. "],
          "upbeat": ["Sure thing! ", "Absolutely! ", "Of course! "]}


def _vague(rng: random.Random, voice: Voice) -> str:
    if voice.terse:
        return rng.choice(["Not sure. The usual one.", "Whatever fits.", "Don't know the name."])
    said = rng.choice(["Hard to say, it's a routine thing for us.", "Not sure what it's called. It's part of my usual work.",
                       "Whatever fits best, honestly. It's the usual process.", "Good question, I've never had to name it.",
                       "Hmm, I'm not sure how it's labelled on your side.", "I don't know the technical term, sorry."])
    return finish(voice, said)


def stated_values(request: UserRequest, keys: list[str], rng: random.Random, override: dict[str, Any] | None = None) -> str:
    """The values of `keys` (gold, or `override` where given) stated as the user states them."""
    gold = {**(request.gold_arguments), **(override or {})}
    return values_sentence(request.tool, gold, keys, rng)
