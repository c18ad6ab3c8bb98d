"""What the offline user may say and which of its words set the seed tool apart: the stems it
must not say (`banned_stems`), the phrases that separate the seed from every distractor
(`separators`, the grounded-selection rule of `pipeline.grounding`), the seed's job restated as
the user's need, answers that pick from the assistant's options, and the check that a turn gives
nothing away (`safe`).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from functools import lru_cache

from ..core import text
from ..core.records import Tool
from ..dialogue import grounding, shortcuts
from ..dialogue.parameter_labels import label
from ..llm.requests import Said, UserRequest
from .goal_text import employed
from .nounphrases import BASE_VERBS, OBJECT_OPENERS, QUALIFIERS, about, bland, determined, noun_phrases, qualified, the, thing
from .selection import CHATTER_STEMS
from .voice import Voice, finish
from .wording import USER_CHATTER, imperative


def user_said(history: Sequence[Said]) -> str:
    """Everything the user said so far, its turns joined by spaces."""
    return " ".join(s.content for s in history if s.role == "user")


def last_assistant_turn(history: Sequence[Said]) -> str:
    for m in reversed(history):
        if m.role == "assistant":
            return m.content
    return ""


def banned_stems(tool: Tool, others: Sequence[str], answering: bool = False) -> set[str]:
    """Stems the user must not say, `others` being the other candidates' names. The opening: every
    word of every candidate's name (the request starts under-specified). An answer to the assistant:
    only what the name_leak rule forbids there (`shortcuts.user_name_leaks`), the seed's distinctive
    name words that its description lacks; 'tracks' or 'remove' are how people say what they need
    once asked."""
    if answering:
        distinctive = shortcuts.distinctive_name_tokens(tool.name, list(others))
        return set(distinctive - shortcuts.description_stems(tool.description))
    return set().union(*(shortcuts.name_tokens(name) | {shortcuts.stem(w) for w in shortcuts.split_words(name)}
                         for name in [tool.name, *others]))


def said_banned(request: UserRequest, answering: bool = False) -> set[str]:
    """`banned_stems` for the user of `request`: its tool against its distractors."""
    return banned_stems(request.tool, [d.name for d in request.distractors], answering)


def _other_options(request: UserRequest) -> set[str]:
    """The enum values of the tool's parameters, as said ('customer order'), other than those the user
    wants (its gold arguments): naming one would state a value the user does not mean."""
    gold = request.gold_arguments
    out: set[str] = set()
    for key, schema in request.tool.properties.items():
        wanted = gold.get(key)
        chosen = set(map(str, wanted)) if isinstance(wanted, list) else {str(wanted)}
        out |= {str(v).replace("_", " ").lower() for v in (schema or {}).get("enum") or [] if str(v) not in chosen}
    return out


def separators(request: UserRequest, rng: random.Random, vague: bool = False, params: bool = True, most: int = 3) -> list[str]:
    """Phrases that, said together, set the seed apart from every distractor: noun phrases of its
    description first (they carry its meaning), then its parameters' labels, then enum values;
    topped up to `most` phrases of the description."""
    tool, distractors = request.tool, request.distractors
    banned = said_banned(request, answering=bool(request.history))  # an opening says no name word
    bags = [grounding.vocab(d) for d in distractors]
    pool = noun_phrases(tool.description, banned)
    pool += [p for p in qualified(tool.description, pool) if shortcuts.stem(p.split()[0]) not in banned]
    # phrases the description puts an article before first (surely nouns: 'the saved albums'), bland ones last
    # a bland word alone ('the number' of 'the number of episodes returned') names nothing the user wants
    pool = [p for p in pool if not bland(p)] or pool
    wrong = _other_options(request)  # 'the customer order' when the reason wanted is 'project': a wrong value
    pool = [p for p in pool if p.lower() not in wrong]
    pool = sorted(pool, key=lambda p: not determined(tool.description, p))
    extra = [label(k, s or {}) for k, s in tool.properties.items()]
    options = [str(v) for s in tool.properties.values() for v in (s or {}).get("enum") or []
               if isinstance(v, str) and re.fullmatch(r"[A-Za-z][a-z ]{2,20}", v)]
    extra = [p for p in extra if thing(p)] + [o if thing(o) else f"{o} ones" for o in options if o.lower() not in wrong]
    keys = list(tool.properties)
    extra = [p for p in extra if params and not any(shortcuts.stem(w) in banned for w in shortcuts.split_words(p))
             and not shortcuts.key_hits(p, keys)]
    takes = set(text.stems(" ".join([*keys, *(str((s or {}).get("description") or "")
                                            for s in tool.properties.values())])))

    def does(phrase: str) -> int:  # words of what the tool does, not of what it takes
        return sum(s not in takes for s in text.stems(phrase))


    def covers(phrase: str) -> set[int]:
        said = text.stems(phrase)
        return {i for i, bag in enumerate(bags) if any(not grounding.fits(s, bag) for s in said)}

    if vague:  # words the distractors share: the assistant must ask again
        shared = [p for p in pool if not covers(p)]
        return shared[:1] or pool[-1:]
    earlier = user_said(request.history).lower()

    def said(phrase: str) -> bool:  # said in an earlier turn: asked again, a person adds what they have not said
        return bool(re.search(rf"\b{re.escape(phrase.lower())}\b", earlier))

    left, chosen = set(range(len(bags))), []
    for source in (pool, extra):
        ranked = sorted(source, key=lambda p: (-len(covers(p) & left), not determined(tool.description, p), -does(p),
                                               -len(covers(p)), rng.random()))
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
    for phrase in sorted(pool, key=lambda p: (not determined(tool.description, p), -does(p), -len(covers(p)),
                                              -len(p.split()), rng.random())):
        if len(chosen) >= most:
            break
        if phrase not in chosen and covers(phrase) and not said(phrase):
            chosen.append(phrase)
    # a phrase inside another said ('album' beside 'single album') says nothing more: said once
    words = [frozenset(p.lower().split()) for p in chosen]
    return [p for i, (p, w) in enumerate(zip(chosen, words)) if not any(w < other for other in words)
            and w not in words[:i]]  # 'several Artists' after 'several artists' neither


# a description's wording, as a person says the same about their own need
_SWAPS = [(r"\bone or more\b", "a few"), (r"\b(?:the|a) current (?:\w+ )?user'?s?'s\b", "my"),
          (r"\b(?:the|a) user's\b", "my"), (r"\bthe current user\b", "me"), (r"\bthe specified\b", "a given"),
          (r"\ba list of\b", "the list of"), (r"\bis already\b", "are already"),
          (r"\s*'[A-Z][^'\n]{0,30}'\s*", " ")]  # a product's quoted name ('Your Music') goes unsaid


def restated(request: UserRequest) -> str | None:
    """The seed's job said as the user's own need ('I need to check if a few tracks are already saved
    in my library'): the first sentence of its description that starts with a verb, in the first
    person, cut short; None when none does or when it would recite the description or leak a name."""
    description = text.without_codes(about(request.tool.description))
    for sentence in re.split(r"(?<=[.!?])\s+", description.strip()):
        words = sentence.rstrip(".!?").split()
        if len(words) < 4 or not _action_word(words[0]) or sum(w[:1].isupper() for w in words) * 2 > len(words) \
                or (words[0].lower() in _ACCESS and words[1].lower() not in OBJECT_OPENERS) or words[0].lower() in _CAN:
            continue  # not a verb's clause, a Title Case heading, a kind of access ('Write operations for ...') or
            # what the tool can do ('Supports adding comments': nobody needs to 'support adding')
        said = imperative(" ".join(words))
        for pattern, swap in _SWAPS:  # swapped before the cut: a quoted name cut in half would stay half said
            said = re.sub(pattern, swap, said, flags=re.IGNORECASE)
        said = f"I need to {' '.join(said.split()[:16])}."
        return said if safe(request, said) == said else None
    return None


# where a question's options begin: after the last words that ask ("..., do you need the A, or the B?")
_ASKED_WITH = re.compile(r"(?:\b(?:whether|if) you (?:need to|want to|need|are looking for|mean)|\bdo you (?:need|want to|mean)"
                         r"|\bis it|\bare you (?:after|looking for|trying to)|\bwould you like to|\bwhether it is"
                         r"|\bwhat is it closest to|:)\s+", re.IGNORECASE)
_OPTION_SPLIT = re.compile(r",\s*or\s+(?:to\s+)?|,\s+|\s+or\s+(?:to\s+)?")
# a qualifier said with no article ('several albums', 'multiple albums') opens a noun option too
_ARTICLES = ("the ", "a ", "an ", "your ", "my ", *(f"{q} " for q, det in QUALIFIERS.items() if not det))


def offered(question: str) -> list[str]:
    """The options a question offers ('the approved budget', 'check the spend'), in its words; [] for an
    open question."""
    question = question.strip()
    starts = [m.end() for m in _ASKED_WITH.finditer(question)]
    if not starts or not question.endswith("?"):
        return []
    options = question[starts[-1]:-1]
    if not re.search(r"\bor\b", options):
        return []
    return [o.strip() for o in _OPTION_SPLIT.split(options) if o.strip()]


def answers_to_options(request: UserRequest, rng: random.Random, voice: Voice) -> list[str]:
    """Replies that pick, from the options the assistant's last question offered, the one whose words
    all fit the seed and set it apart from a candidate, said whole ('I need the approved budget.'):
    a person asked to choose answers with the choice. Empty when no option does."""
    asked = last_assistant_turn(request.history)
    question = next((q for q in reversed(re.split(r"(?<=[.!?])\s+", asked)) if q.endswith("?")), "")
    tool, others = request.tool, request.distractors
    mine, bags = grounding.vocab(tool), [grounding.vocab(d) for d in others]
    described = frozenset(text.stems(tool.description))  # what the tool is for, not what it takes
    unsaid = said_banned(request, answering=True) | CHATTER_STEMS
    picks: list[tuple[int, str]] = []
    wrong = _other_options(request)
    for option in offered(question):
        if re.sub(r"^(?:the|a|an|some)\s+", "", option.lower()) in wrong:
            continue  # an option of a parameter the user wants another value of
        stems = [text.stem(w) for w in re.findall(r"[A-Za-z][\w'-]*", option) if w.lower() not in USER_CHATTER]
        content = [st for st in stems if st not in text.STOP]
        if not content or any(st in unsaid or not grounding.fits(st, mine) for st in content) or \
                not any(grounding.fits(st, described) for st in content):
            continue  # another candidate's option, or one only the seed's parameters mention ('the organization')
        apart = sum(any(not grounding.fits(st, bag) for st in content) for bag in bags)
        if apart:
            picks.append((apart, option))
    said = []
    for _, option in sorted(picks, key=lambda p: -p[0])[:2]:
        noun = option.lower().startswith(_ARTICLES)
        frames = (["{p}.", "{p}, please."] if voice.terse else
                  ["I'm looking for {p}.", "Yes, I think it's {p} I'm after.", "Oh, it's {p} I'm interested in.",
                   "Right, I'm looking for {p}.", "I'm looking for {p}, I think.", "I'd say {p}, that's what I need.",
                   "It's {p} I'm interested in."] if noun else
                  ["I want to {p}.", "I need to {p}.", "I'm trying to {p}.", "I'd like to {p}.", "Right, I need to {p}."])
        reply = rng.choice(frames).format(p=option)
        said.append(finish(voice, reply[:1].upper() + reply[1:]))
    return [s for s in said if safe(request, s) == s]


# verbs that also name a kind of access before a noun ('write operations', 'read access')
_ACCESS = frozenset({"read", "write"})
_CAN = frozenset("supports allows enables lets provides offers".split())


def _action_word(word: str) -> bool:
    """Whether a description's first word is a verb ('Check', 'Returns', 'Calculate')."""
    verb = imperative(word).lower()
    return verb in BASE_VERBS or verb in shortcuts.GENERIC or (word.lower().endswith("s") and verb != word.lower())


def topic_phrase(request: UserRequest) -> str | None:
    """A noun phrase of the seed's description its distractors share: what the request is about, not which tool."""
    tool, distractors = request.tool, request.distractors
    bags = [grounding.vocab(d) for d in distractors]
    scored = []
    # what the description leads with is its subject; a later sentence's phrase is a detail ('Australia markets')
    lead = re.split(r"(?<=[.!?])\s+", about(tool.description).strip())
    first = " ".join(lead[:2]).lower()
    held = {label(k, s or {}).lower() for k, s in tool.properties.items()}  # a value the user gives: 'my owner'
    banned = said_banned(request)
    for phrase in noun_phrases(tool.description, banned):
        said = text.stems(phrase)
        shared = sum(all(grounding.fits(s, bag) for s in said) for bag in bags)
        after = re.search(rf"\b{re.escape(phrase)}\s+([\w-]+)", tool.description, re.IGNORECASE)
        if after and shortcuts.stem(after.group(1)) in banned:
            continue  # 'base' of 'the base branch' when 'branch' goes unsaid: 'help with the base' names nothing
        if shared and not bland(phrase) and phrase.lower() not in held:
            scored.append((-shared - (len(said) > 1), phrase.lower() not in first, len(phrase), phrase))
    return _named_only(sorted(scored)[0][3]) if scored else None


# heads that say only that there is something to know: 'Spotify catalog information' is said 'Spotify'
_WHATEVER = frozenset("information info data details metadata content".split())


def _named_only(phrase: str) -> str:
    """A phrase of a product's name and vague words ('Spotify catalog information') as the name alone,
    which is what a person says ('something in Spotify'); any other phrase as it is."""
    words = phrase.split()
    names = [w for w in words if text.is_name(w)]
    return names[0] if len(names) == 1 and len(words) > 1 and words[-1].lower() in _WHATEVER else phrase


def spoken_phrase(phrase: str) -> str:
    """A description's phrase as said: a Title Case heading ('Saved Albums', 'Playback') in lower case,
    acronyms and names ('ID', 'Spotify', 'GitHub') kept."""
    words = phrase.split()
    if words and all(w[:1].isupper() for w in words):
        return " ".join(w if text.said_as_written(w) else w.lower() for w in words)
    return phrase


def subject(request: UserRequest) -> str | None:
    """The topic the candidates share as said in a sentence: a product's name alone ('Spotify'), else a
    phrase with 'the' ('the saved albums'); None when they share none."""
    topic = topic_phrase(request)
    if topic is None:
        return None
    said = spoken_phrase(topic)
    if " " not in said and said[:1].isupper():
        return said if not text.english(said) else f"the {said.lower()}"  # a heading ('Image') is a common word
    return f"the {said}"


def neutral(request: UserRequest, phrases: list[str]) -> list[str]:
    """The `phrases` (reasons, deadlines) that hold no word of any tool offered: a reason is small
    talk, and a tool's word in it ('the first time' beside 'the index of the first item') would
    count as a word about the need. All of them when none is free of such words."""
    bags = [grounding.vocab(t) for t in [request.tool, *request.distractors]]
    kept = [p for p in phrases if not any(grounding.fits(s, bag) for s in _said(p) for bag in bags)]
    return kept or phrases


@lru_cache(maxsize=256)
def _said(phrase: str) -> frozenset[str]:
    return grounding.said_stems([{"role": "user", "content": phrase}])


def listing(phrases: list[str]) -> str:
    items = [the(p) for p in phrases]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def work_area(request: UserRequest) -> str:
    """The line of business the opening may name: the tool's, else the persona's when it has a job there
    (nobody calls their music 'the consumer side'); 'day-to-day' when there is none to say."""
    own = request.persona.line_of_business if employed(request.persona) else None
    area = (request.tool.line_of_business or own or "").replace("_", " ")
    if area[:1].isupper():
        return "day-to-day"  # a heading of the API ('Player', 'Image'), no line of work: never 'our Player work'
    bags = [grounding.vocab(t) for t in (request.tool, *request.distractors)]
    if not area or any(shortcuts.stem(w) in said_banned(request) or 0 < sum(grounding.fits(shortcuts.stem(w), b)
                       for b in bags) < len(bags) for w in shortcuts.split_words(area)):
        return "day-to-day"  # a word of some candidates, not all ('developers'), would point at them
    return " ".join(_ACRONYMS.get(w, w) for w in area.split())  # 'IT service management', not 'it service ...'


_ACRONYMS = {"it": "IT", "hr": "HR", "crm": "CRM", "erp": "ERP", "qa": "QA"}


def act_separates(request: UserRequest, act: str) -> bool:
    """Whether the seed's verb ('remove') is something a distractor does not do ('save'): then the user
    always says it, as a person asked 'which one?' would."""
    verb = shortcuts.stem(act)
    return any(not grounding.fits(verb, grounding.vocab(d)) for d in request.distractors)


# words that follow a noun, not an imperative verb, at a description's start
_NOT_AFTER_VERB = frozenset("for of in on with that which to and or is are".split())
# what an API does, not what a person asks for: 'I want to return the execution status' says a refund
_API_ONLY_VERBS = frozenset({"return", "yield", "output"})


def action_verb(request: UserRequest) -> str | None:
    """The verb the seed's description opens with ('Compares ...' -> 'compare'), unless a name says
    it; a common verb ('remove', 'check') only when it is what sets the seed apart ('save')."""
    first, after = ([*re.findall(r"[A-Za-z]+", request.tool.description)[:2], "", ""])[:2]
    verb = imperative(first).strip()
    if after.lower() in _NOT_AFTER_VERB:
        return None  # 'Tools for GitHub Projects': a noun, not a verb
    banned = said_banned(request, answering=bool(request.history))
    if len(verb) < 3 or shortcuts.stem(verb) in banned or verb in USER_CHATTER or verb in _API_ONLY_VERBS:
        return None
    if verb in shortcuts.GENERIC and not (request.history and act_separates(request, verb)):
        return None
    return verb


def safe(request: UserRequest, said: str) -> str:
    """`said`, unless it would give the seed tool away by a word of its name or recite a description
    (an answer to the assistant may say the seed's name words that are plain words of its description)."""
    tool, others = request.tool, request.distractors
    allowed = shortcuts.description_stems(tool.description) if request.history else frozenset()
    if shortcuts.name_hits(said, tool.name, [d.name for d in others], allowed) or \
            any(shortcuts.recited(said, t.description) for t in [tool, *others]):
        earlier = " ".join(m.content for m in request.history if m.role == "user")
        return next((f for f in UNSAYABLE if f not in earlier), UNSAYABLE[-1])
    return said


# what the user says when every way it has of putting its need would give a tool away: each once a dialogue
UNSAYABLE = ["Honestly, I'm not sure how to put it, so could you walk me through the choices?",
             "I'm finding it hard to describe, so could you tell me what the options are?",
             "Sorry, I don't know how to explain it better, so what would you suggest?",
             "I'm not sure what else to say about it, so could you list what you can do?",
             "It's hard to put into words, so maybe you could ask me something more specific?",
             "I really can't describe it any better, I'm afraid, so what do you need to know?"]
