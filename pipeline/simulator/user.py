"""The offline user proxy: a vague opening that fits several candidates, then, when asked, the
details that set the seed tool apart from each of them, then the gold values, in the persona's voice.

Turns are composed from parts (greeting, who is asking, the request, why, a closing) chosen by
the persona's style (`voice`) and the tool's domain, so openings vary as people's do. Details are
short noun phrases of the seed's description (or its parameters' labels) that each other
candidate lacks, so the grounded-selection rule holds once they are said
(/docs: a word the user said fits the chosen tool and not the other). Values are stated by
`phrasing`. It never says a word of any candidate's name nor a run of a description.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from typing import Any

from ..core import text
from ..dialogue import grounding, shortcuts
from ..dialogue.said import user_said
from ..retrieval import nearness
from . import gold_values as values
from . import phrasing
from .nounphrases import BASE_VERBS, UNCOUNTABLE, about, noun_phrases
from .nounphrases import BLAND as _BLAND
from .policies import STOP, _rng, imperative
from .selection import CHATTER
from .voice import Voice, closing, emoji, finish, greeting

VAGUE_FIRST_ANSWER = 0.35  # share of users whose first answer does not single out a tool
VAGUE_DETAIL = 0.1        # share of distinguishing answers that use only words the distractors share
EARLY_VALUE = 0.3         # share of distinguishing answers that also give one value
DRAFTS = 6                # ways of saying the detail weighed; the one pointing nearest the seed is said


def _last_assistant(history: list[dict]) -> str:
    for m in reversed(history):
        if m["role"] == "assistant":
            return m.get("content", "")
    return ""


def user(state: dict, messages: list[dict]) -> str:
    """The user proxy's reply: `{"message": ...}`, as the user prompts ask."""
    if state.get("scenario"):
        from . import scenario_policies

        return json.dumps({"message": scenario_policies.user_text(state)}, ensure_ascii=False)
    return json.dumps({"message": user_text(state)}, ensure_ascii=False)


def labels(tool: dict) -> dict[str, str]:
    """Each parameter's spoken label (`gold_values.label`)."""
    props = tool["parameters"].get("properties") or {}
    return {k: values.label(k, s or {}) for k, s in props.items()}


def revealed(history: list[dict], tool: dict, gold: dict) -> set[str]:
    """Gold keys the user has already stated (as the assistant reads them)."""
    return set(phrasing.read_values(user_said(history, sep="\n"), tool, keys=list(gold)))


def values_sentence(tool: dict, gold: dict, keys: list[str], rng: random.Random) -> str:
    names = labels(tool)
    return phrasing.sentence([(names.get(k, k), gold[k]) for k in keys], rng)


def user_text(state: dict) -> str:
    history, tool = state["history"], state["tool"]
    gold = state.get("gold_arguments") or {}
    voice = Voice.of(state["persona"])
    rng = _rng(state, tool["name"], "user", len(history))
    if not history:
        return composed(state, lambda r: opening(state, r, voice), len(history))
    if state["phase"] == "tool_selection":
        answers = sum(m["role"] == "user" for m in history) - 1
        if answers == 0 and rng.random() < VAGUE_FIRST_ANSWER:
            return _safe(state, _vague(rng, voice))  # a real user often misses the deciding detail at first
        vague = answers == 0 and rng.random() < VAGUE_DETAIL
        # asked again, a person says more of what they need: later drafts carry more of it
        drafts = [composed(state, lambda r, k=k: detail(state, r, voice, vague=vague, params=k % 2 == 0,
                                                        most=3 + (k >= DRAFTS // 2) * min(answers, 2)),
                           len(history), "detail", k)
                  for k in range(1 if vague else DRAFTS)]
        need = None if vague else restated(state)
        picks: list[str] = [] if vague else answers_to_options(state, rng, voice)
        before = {m["content"] for m in history if m["role"] == "user"}
        options: list[str] = list(dict.fromkeys([*drafts, *([need] if need else []), *picks]))
        said = _nearest(state, [o for o in options if o not in before] or options)  # a person rephrases, not repeats
        if gold and rng.random() < EARLY_VALUE:  # sometimes a value comes early, as real users do
            early = said + " " + values_sentence(tool, gold, [rng.choice(sorted(gold))], rng)
            said = early if _safe(state, early) == early else said
        return said
    return _values_answer(state, rng, voice)


def _nearest(state: dict, drafts: list[str]) -> str:
    """The draft after which all the user has said sets the seed apart (`grounding`) from the most
    candidates, then points nearest to it (`nearness`): how a person who knows what they want says
    it. The first on ties."""
    if len(drafts) == 1:
        return drafts[0]
    tool, others = state["tool"], state.get("distractors") or []
    heard, closeness = _heard(state, drafts)
    said = [grounding.said_stems([{"role": "user", "content": h}]) for h in heard]
    apart = [len(others) - len(grounding.unseparated(s, tool, others)) for s in said]  # grounded: all of them
    return drafts[max(range(len(drafts)), key=lambda i: (apart[i], closeness[i], -i))]


def _heard(state: dict, drafts: list[str]) -> tuple[list[str], list[float]]:
    """For each draft: all the user will have said before the call with it, and how much nearer
    that points to the seed than to any distractor (`nearness.margins`)."""
    before = user_said(state["history"], until="call", sep=" ")
    heard = [f"{before} {d}".strip() for d in drafts]
    return heard, nearness.margins(heard, state["tool"], state.get("distractors") or [])


def _values_answer(state: dict, rng: random.Random, voice: Voice) -> str:
    history, tool, gold = state["history"], state["tool"], state.get("gold_arguments") or {}
    remaining = [k for k in gold if k not in revealed(history, tool, gold)]
    if not remaining:
        done = (["That's all. Go ahead."] if voice.terse else
                ["That's everything I have. Please go ahead.", "I think that's all you need, go ahead.",
                 "Nothing else from my side, please go ahead.", "That should be it. Go for it."])
        return finish(voice, rng.choice(done))
    asked = _last_assistant(history).lower()
    names = labels(tool)
    wanted = [k for k in remaining if names[k].lower() in asked or k.lower() in asked]
    chosen = wanted[:3] if wanted else remaining[: rng.choice([1, 2])]
    body = values_sentence(tool, gold, chosen, rng)
    if voice.terse:
        return _still_pointing(state, body, rng)
    lead = rng.choice(_LEADS["formal" if voice.formal else "anxious" if voice.anxious else
                             "upbeat" if voice.upbeat else "plain"])
    tail = rng.choice(["Does that look right?", "Let me know if that's wrong.", ""]) if voice.anxious else ""
    if voice.emoji and rng.random() < 0.5:
        tail = (tail + " " + emoji(tool.get("description", ""), rng)).strip()
    return _still_pointing(state, (finish(voice, lead) + body + (" " + tail if tail else "")).strip(), rng)


def _still_pointing(state: dict, said: str, rng: random.Random) -> str:
    """`said` (values), or `said` with a reminder of what they are for when the values alone would
    leave the user's words pointing nearer another candidate than the seed: ids and labels can pull
    a request towards a neighbour ('the album IDs' towards listing saved albums, not saving them)."""
    if not state.get("distractors"):
        return said
    act, picked = _action(state), separators(state, rng, params=False)
    if not picked:
        return said
    listed = _listing(picked[:2])
    reminders = ([f"That's to {act} {listed}.", f"Again, I need to {act} {listed}."] if act else []) + \
        [f"That's for {listed}.", f"These are for {listed}, as I said."]
    drafts = [said, *(f"{said} {r}" for r in reminders if _safe(state, f"{said} {r}") == f"{said} {r}")]
    _, closeness = _heard(state, drafts)
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


# ---- words that set the seed apart (the grounded-selection rule, `pipeline.grounding`) -----------

def _banned(state: dict, answering: bool = False) -> set[str]:
    """Stems the user must not say. The opening: every word of every candidate's name (the request
    starts under-specified). An answer to the assistant: only what the name_leak rule forbids there
    (`shortcuts.user_name_leaks`), the seed's distinctive name words that its description lacks;
    'tracks' or 'remove' are how people say what they need once asked."""
    tool, distractors = state["tool"], state.get("distractors") or []
    if answering:
        distinctive = shortcuts.distinctive_name_tokens(tool["name"], [d["name"] for d in distractors])
        return set(distinctive - shortcuts.description_stems(tool.get("description", "")))
    return set().union(*(shortcuts.name_tokens(t["name"]) | {shortcuts.stem(w) for w in shortcuts.split_words(t["name"])}
                         for t in [tool, *distractors]))


def _joined(lead: str, rest: str, role: str | None = None) -> str:
    """`lead` then `rest`, whose first letter follows the lead's punctuation ('Hey, could you...')."""
    if lead.endswith(", ") and not re.match(r"I\b|I'|[A-Z]{2}", rest) and not (role and rest.startswith(role)):
        rest = rest[:1].lower() + rest[1:]
    return lead + rest


def separators(state: dict, rng: random.Random, vague: bool = False, params: bool = True, most: int = 3) -> list[str]:
    """Phrases that, said together, set the seed apart from every distractor: noun phrases of its
    description first (they carry its meaning), then its parameters' labels, then enum values;
    topped up to `most` phrases of the description."""
    tool, distractors = state["tool"], state.get("distractors") or []
    banned = _banned(state, answering=bool(state.get("history")))  # an opening says no name word
    bags = [grounding.vocab(d) for d in distractors]
    pool = noun_phrases(tool.get("description", ""), banned)
    pool = [p for p in pool if p.lower() not in _BLAND] + [p for p in pool if p.lower() in _BLAND]  # bland words last
    extra = [values.label(k, s or {}) for k, s in (tool["parameters"].get("properties") or {}).items()]
    extra += [str(v) for s in (tool["parameters"].get("properties") or {}).values() for v in (s or {}).get("enum") or []
              if isinstance(v, str) and re.fullmatch(r"[A-Za-z][a-z ]{2,20}", v)]
    keys = list(tool["parameters"].get("properties") or {})
    extra = [p for p in extra if params and not any(shortcuts.stem(w) in banned for w in shortcuts.split_words(p))
             and not shortcuts.key_hits(p, keys)]
    takes = set(text.stems(" ".join([*keys, *(str((s or {}).get("description") or "")
                                            for s in (tool["parameters"].get("properties") or {}).values())])))

    def does(phrase: str) -> int:  # words of what the tool does, not of what it takes
        return sum(s not in takes for s in text.stems(phrase))


    def covers(phrase: str) -> set[int]:
        said = text.stems(phrase)
        return {i for i, bag in enumerate(bags) if any(not grounding.fits(s, bag) for s in said)}

    if vague:  # words the distractors share: the assistant must ask again
        shared = [p for p in pool if not covers(p)]
        return shared[:1] or pool[-1:]
    left, chosen = set(range(len(bags))), []
    for source in (pool, extra):
        ranked = sorted(source, key=lambda p: (-len(covers(p) & left), -does(p), -len(covers(p)), rng.random()))
        for phrase in ranked:
            if not left and len(chosen) >= 1:
                break
            gain = covers(phrase) & left
            if gain or (not chosen and source is pool):
                chosen.append(phrase)
                left -= gain
            if len(chosen) >= 4:
                break
    # topped up to three phrases of the description, most distinctive first: the need in its own words
    for phrase in sorted(pool, key=lambda p: (-does(p), -len(covers(p)), -len(p.split()), rng.random())):
        if len(chosen) >= most:
            break
        if phrase not in chosen and covers(phrase):
            chosen.append(phrase)
    return chosen


# a description's wording, as a person says the same about their own need
_SWAPS = [(r"\bone or more\b", "a few"), (r"\b(?:the|a) current (?:\w+ )?user'?s?'s\b", "my"),
          (r"\b(?:the|a) user's\b", "my"), (r"\bthe current user\b", "me"), (r"\bthe specified\b", "a given"),
          (r"\ba list of\b", "the list of"), (r"\bis already\b", "are already"),
          (r"\s*'[A-Z][^'\n]{0,30}'\s*", " ")]  # a product's quoted name ('Your Music') goes unsaid


def restated(state: dict) -> str | None:
    """The seed's job said as the user's own need ('I need to check if a few tracks are already saved
    in my library'): the first sentence of its description that starts with a verb, in the first
    person, cut short; None when none does or when it would recite the description or leak a name."""
    description = text.without_codes(about(state["tool"].get("description", "")))
    for sentence in re.split(r"(?<=[.!?])\s+", description.strip()):
        words = sentence.rstrip(".!?").split()
        if len(words) < 4 or not _action_word(words[0]) or sum(w[:1].isupper() for w in words) * 2 > len(words):
            continue  # not a verb's clause, or a Title Case heading
        said = imperative(" ".join(words))
        for pattern, swap in _SWAPS:  # swapped before the cut: a quoted name cut in half would stay half said
            said = re.sub(pattern, swap, said, flags=re.IGNORECASE)
        said = f"I need to {' '.join(said.split()[:16])}."
        return said if _safe(state, said) == said else None
    return None


_ASKING = set("does concern deal fits fit best sounds sound right closer need narrow down after which should rather "
              "are you is it or with".split())  # the words a question asks with, not its options
_OPTION_SPLIT = re.compile(r"\s*(?:[:;]|,?\s+or\s+(?:rather\s+)?(?:with\s+)?|,)\s*")


def answers_to_options(state: dict, rng: random.Random, voice: Voice) -> list[str]:
    """Replies that pick, from the options the assistant's last question offered ('Does it concern
    description, followed, or full and images?'), the words that fit the seed and set it apart from
    a candidate: a person asked to choose answers with the choice. Empty when no option does."""
    asked = _last_assistant(state["history"])
    question = next((q for q in reversed(re.split(r"(?<=[.!?])\s+", asked)) if q.endswith("?")), "")
    if not re.search(r"\bor\b", question):
        return []  # an open question offers nothing to choose from
    tool, others = state["tool"], state.get("distractors") or []
    mine, bags = grounding.vocab(tool), [grounding.vocab(d) for d in others]
    asking, unsaid = STOP | _ASKING, _banned(state, answering=True) | CHATTER  # CHATTER: no listener's evidence
    picks: list[tuple[int, str]] = []
    for piece in _OPTION_SPLIT.split(question.rstrip("?")):
        fit: dict[str, str] = {}  # stem -> its first word: each once ('Saved Albums and albums')
        parts = []  # the option's own phrases ('artist and keywords'), each kept as the words of it that fit
        for part in re.split(r"\s+and\s+", piece):
            kept = []
            for w in re.findall(r"[A-Za-z][\w'-]*", part):
                st = text.stem(w)
                if w.lower() not in asking and st not in fit and st not in unsaid and grounding.fits(st, mine):
                    fit[st] = w
                    kept.append(w)
            if kept:
                parts.append(" ".join(kept))
        apart = sum(any(not grounding.fits(st, bag) for st in fit) for bag in bags)
        if fit and apart:
            picks.append((apart, " and ".join(parts)))
    said = []
    for _, phrase in sorted(picks, key=lambda p: -p[0])[:2]:
        frames = (["{p}.", "The {p} one."] if voice.terse else
                  ["It's the {p} one.", "The {p}, I'd say.", "Out of those, the {p}.", "I'd go with the {p}."])
        reply = rng.choice(frames).format(p=phrase)
        said.append(finish(voice, reply[:1].upper() + reply[1:]))
    return [s for s in said if _safe(state, s) == s]


def _action_word(word: str) -> bool:
    """Whether a description's first word is a verb ('Check', 'Returns', 'Calculate')."""
    verb = imperative(word).lower()
    return verb in BASE_VERBS or verb in shortcuts.GENERIC or (word.lower().endswith("s") and verb != word.lower())


def _topic(state: dict) -> str | None:
    """A noun phrase of the seed's description its distractors share: what the request is about, not which tool."""
    tool, distractors = state["tool"], state.get("distractors") or []
    bags = [grounding.vocab(d) for d in distractors]
    scored = []
    for phrase in noun_phrases(tool.get("description", ""), _banned(state)):
        said = text.stems(phrase)
        shared = sum(all(grounding.fits(s, bag) for s in said) for bag in bags)
        if shared and (len(said) > 1 or phrase.lower() not in _BLAND):
            scored.append((-shared - (len(said) > 1), len(phrase), phrase))
    return sorted(scored)[0][2] if scored else None


def _listing(phrases: list[str]) -> str:
    items = [f"the {p}" for p in phrases]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _area(state: dict) -> str:
    area = (state["tool"].get("line_of_business") or state["persona"].get("line_of_business") or "").replace("_", " ")
    if not area or any(shortcuts.stem(w) in _banned(state) for w in shortcuts.split_words(area)):
        return "day-to-day"
    return area


# ---- composed turns ------------------------------------------------------------------------------

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


def opening(state: dict, rng: random.Random, voice: Voice) -> str:
    """A request in the persona's words, vague enough to fit the seed tool and its distractors."""
    persona = state["persona"]
    topic = _topic(state)
    area = _area(state)
    role = persona.get("role")
    if role and any(shortcuts.stem(w) in _banned(state) for w in shortcuts.split_words(role)):
        role = None
    company = (persona.get("attributes") or {}).get("company")
    countable = topic is not None and not topic.lower().endswith(UNCOUNTABLE)
    about = (f"{rng.choice(['the', 'our', 'some'] if values.is_plural(topic) or not countable else ['the', 'our', 'a'])} {topic}"
             if topic else rng.choice([f"a {area} matter", f"our {area} work", f"something on the {area} side"]))
    if about.startswith("a "):
        about = f"{phrasing.article(about[2:])} {about[2:]}"
    if voice.terse:
        frame = rng.choice([f"Need help with {about}.", f"Question about {about}.", f"Quick one: {about}.",
                            f"{about[:1].upper() + about[1:]}. Can you help?", f"Help with {about}, please."])
        return (finish(voice, _joined(greeting(voice, rng), frame)) + " " + closing(voice, rng, state["tool"].get("description", ""))).strip()
    who = ""
    if role and rng.random() < 0.7:
        at = f" at {company}" if company and rng.random() < 0.6 else ""
        city = str((persona.get("attributes") or {}).get("city") or "")
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
    end = closing(voice, rng, state["tool"].get("description", ""))
    return f"{said} {end}".strip()


def detail(state: dict, rng: random.Random, voice: Voice, vague: bool = False, params: bool = True,
           most: int = 3) -> str:
    """What singles the need out, in its own words, never a tool name's word nor a run of a description
    (`params`: its parameters' labels may serve too; `most`: phrases said at most)."""
    picked = separators(state, rng, vague, params, most)
    if not picked:
        return finish(voice, "It's the usual one we use, I'm afraid I can't put it any better.")
    listed = _listing(picked)
    act = _action(state)
    if voice.terse:
        if act and (rng.random() < 0.5 or _act_separates(state, act)):
            return rng.choice([f"Need to {act} {listed}.", f"To {act} {listed}.", f"I want to {act} {listed}."])
        return rng.choice([f"The one about {listed}.", f"Mainly {listed}.", f"It's {listed} that matter."
                           if len(picked) > 1 else f"It's {listed} that matters."])
    lead = rng.choice(["", "Good question. ", "Sure. ", "Right, so ", "Let me be clearer: ", "Ah, sorry. "]
                      if not voice.formal else ["Certainly. ", "To be precise, ", "Of course. "])
    bodies = [f"it's specifically about {listed}.", f"what I need has to do with {listed}.",
              f"the part that matters is {listed}.", f"I'm after {listed}, that's the key thing.",
              f"it concerns {listed}.", f"I care about {listed} here.", f"it's mostly {listed} I'm dealing with."]
    act = _action(state)
    if act and (rng.random() < 0.6 or _act_separates(state, act)):  # what it does, then what it is about
        bodies = [f"I have to {act} {listed}.", f"I need to {act} {listed}, basically.",
                  f"the job is to {act} {listed}.", f"I'm trying to {act} {listed}."]
    body = rng.choice(bodies)
    if not lead or lead.endswith(". "):
        body = body[:1].upper() + body[1:]
    said = finish(voice, lead) + body
    if voice.anxious and rng.random() < 0.5:
        said += " Does that help narrow it down?"
    end = closing(voice, rng, state["tool"].get("description", "")) if rng.random() < 0.3 else ""
    return f"{said} {end}".strip()


def _act_separates(state: dict, act: str) -> bool:
    """Whether the seed's verb ('remove') is something a distractor does not do ('save'): then the user
    always says it, as a person asked 'which one?' would."""
    verb = shortcuts.stem(act)
    return any(not grounding.fits(verb, grounding.vocab(d)) for d in state.get("distractors") or [])


def composed(state: dict, make: Callable[[random.Random], str], *parts: Any) -> str:
    """The first of a few draws of `make` that gives nothing away (a greeting's 'good' may be a
    tool name's word); the plain fallback line when none does."""
    said = ""
    for attempt in range(6):
        said = make(_rng(state, state["tool"]["name"], "user", *parts, attempt) if attempt else
                    _rng(state, state["tool"]["name"], "user", *parts))
        if _safe(state, said) == said:
            return said
    return _safe(state, said)


def _action(state: dict) -> str | None:
    """The verb the seed's description opens with ('Compares ...' -> 'compare'), unless a name says
    it; a common verb ('remove', 'check') only when it is what sets the seed apart ('save')."""
    first = (re.findall(r"[A-Za-z]+", state["tool"].get("description", ""))[:1] or [""])[0]
    verb = imperative(first).strip()
    if len(verb) < 3 or shortcuts.stem(verb) in _banned(state, answering=bool(state.get("history"))) or verb in STOP:
        return None
    if verb in shortcuts.GENERIC and not (state.get("history") and _act_separates(state, verb)):
        return None
    return verb


def _safe(state: dict, said: str) -> str:
    """`said`, unless it would give the seed tool away by a word of its name or recite a description
    (an answer to the assistant may say the seed's name words that are plain words of its description)."""
    tool, others = state["tool"], state.get("distractors") or []
    allowed = shortcuts.description_stems(tool.get("description", "")) if state.get("history") else frozenset()
    if shortcuts.name_hits(said, tool["name"], [d["name"] for d in others], allowed) or \
            any(shortcuts.recited(said, t.get("description", "")) for t in [tool, *others]):
        return "Honestly, I'm not sure how to put it. Could you walk me through the choices?"
    return said


def stated(state: dict, keys: list[str], rng: random.Random, override: dict[str, Any] | None = None) -> str:
    """The values of `keys` (gold, or `override` where given) stated as the user states them."""
    gold = {**(state.get("gold_arguments") or {}), **(override or {})}
    return values_sentence(state["tool"], gold, keys, rng)
