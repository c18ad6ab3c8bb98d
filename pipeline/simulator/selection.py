"""How the offline assistant chooses a tool: it commits only when the user's words set its best
candidate apart from every other (`pipeline.grounding`, the rule the `grounding` validator
applies), and otherwise asks a question that contrasts the candidates still in play.

A question names, in a few words of its own, what differs between the candidates it offers:
for each, up to two short noun phrases of its description holding a word the other offered ones
lack ("Are you after actual spend and account group, or the expense report?"; single words of
its description or parameters when no phrase has one). It never pastes a run of a
description, never names a tool, never repeats an option list it offered before (each question
narrows: candidates the user's words ruled out are dropped), and when the user's last answer
added nothing it offers fewer alternatives or asks for one concrete fact. When turns run out
the engine stops the dialogue: the assistant never guesses.

It also asks when the user's words, read as a whole, point nearer to another candidate than to
the one a word set apart (`pipeline.nearness`): a careful listener checks before acting.

Ranking: candidates are ordered by how many others the user's words separate them from, then by
weighted word overlap (`scores`), then by their order in the pool.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from ..core import text
from ..core.records import Tool
from ..dialogue import grounding, shortcuts
from ..dialogue.said import user_said
from ..llm.requests import Said
from ..retrieval import nearness
from .contrasts import coarse, contrast_phrases, setting_words
from .nounphrases import place
from .questions import (
    AGAIN,
    AGAIN_DO,
    CHECK,
    CHECK_DO,
    FIRST,
    FIRST_DO,
    OPEN,
    OPEN_LEADS,
    UNSURE,
    UNSURE_DO,
    fresh_form,
    listed,
    opening_verb,
    option,
)
from .wording import USER_CHATTER, tokens, tool_words

MAX_OPTIONS = 3
MAX_RUN = 4  # at most this many consecutive words of a description in a question
CHECKS = 1  # questions asked, at most, when a word sets a candidate apart but the request reads nearer another
NEAR_MARGIN = 0.015  # how much nearer (cosine) the user's words must be to the best candidate than to any other



def scores(candidates: list[Tool], user_text: str) -> list[tuple[float, Tool]]:
    """Candidates by weighted word overlap with `user_text` (a word every candidate has weighs 0)."""
    said = set(tokens(user_text))
    bags = [tool_words(c) for c in candidates]
    weight = {w: 1.0 - sum(w in b for b in bags) / len(bags) for w in set().union(*bags)} if bags else {}
    # summed in sorted order: a set's order differs between processes, and so would a float sum's last bit
    ranked = [(sum(sorted(weight[w] for w in bag & said)), c) for bag, c in zip(bags, candidates)]
    return sorted(ranked, key=lambda sc: -sc[0])


@dataclass(frozen=True)
class Decision:
    """Either a tool to commit to (`tool`) or a question (`question`), with the private reason."""

    thought: str
    tool: Tool | None = None
    question: str = ""
    options: tuple[str, ...] = ()


CHATTER_STEMS = frozenset(shortcuts.stem(w) for w in USER_CHATTER)  # the offline user's chatter, stemmed


# who the user says they are ("I'm a support engineer at Acme"): about the speaker, not the need ('Supports ...')
_INTRODUCED = re.compile(r"\bI(?:'m| am| work as) an? ((?:(?!\b(?:at|in|based|for(?! an?\b)|and|so|but)\b)[^,.;!?])+)",
                         re.IGNORECASE)  # 'a support engineer for an API' is one role


def evidence(history: Sequence[Said]) -> frozenset[str]:
    """The stems the assistant weighs: the grounding rule's said stems without greetings, small talk and
    words only said of who the user is (a subset of said, so a choice grounded on it is grounded under
    the rule)."""
    return _evidence(user_said(history, until="call", sep=" "))


@lru_cache(maxsize=4096)  # asked again at each step of one decision, on the same words
def _evidence(said: str) -> frozenset[str]:
    rest = set(text.stems(_INTRODUCED.sub(" ", said)))
    about_me = {s for found in _INTRODUCED.finditer(said) for s in text.stems(found.group(1))} - rest
    return frozenset(s for s in grounding.text_stems(said) if s not in CHATTER_STEMS and s not in about_me)


def _separations(said: frozenset[str], candidates: list[Tool]) -> dict[str, dict[str, int]]:
    """name -> {other name: how many said stems fit it and not the other} for the others it is separated from."""
    return _separated(said, tuple((c.name, grounding.vocab(c), grounding.told(c)) for c in candidates))


@lru_cache(maxsize=4096)  # asked again at each step of one decision, and by ranked and in_play alike
def _separated(said: frozenset[str], vocabs: tuple[tuple[str, frozenset[str], frozenset[str]], ...]
               ) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for a, mine, told in vocabs:
        found = {b: len(grounding.separating(said, mine, theirs)) + grounding.names_apart(said, a, told, b, theirs)
                 for b, theirs, _ in vocabs if b != a}
        out[a] = {b: n for b, n in found.items() if n}
    return out


def _ahead(seps: dict[str, dict[str, int]], a: str) -> int:
    """How many candidates `a` has more evidence against than they have against it."""
    return sum(seps[a].get(b, 0) > seps[b].get(a, 0) for b in seps if b != a)


def ranked(candidates: list[Tool], history: Sequence[Said]) -> list[Tool]:
    """The candidates, best first (module docstring)."""
    seps = _separations(evidence(history), candidates)
    overlap = {id(c): s for s, c in scores(candidates, _INTRODUCED.sub(" ", user_said(history, sep=" ")))}
    order = {c.name: i for i, c in enumerate(candidates)}
    return sorted(candidates, key=lambda c: (-_ahead(seps, c.name), -len(seps[c.name]),
                                             -overlap[id(c)], order[c.name]))


def in_play(candidates: list[Tool], history: Sequence[Said]) -> list[Tool]:
    """The candidates the user's words have not ruled out, best first. A candidate is ruled out when
    another is separated from it while it is separated from nothing the other lacks."""
    seps = _separations(evidence(history), candidates)
    out = [c for c in ranked(candidates, history)
           if not any(c.name in seps[o] and o not in seps[c.name] for o in seps)]
    return out


def _question(options: list[Tool], said: frozenset[str], rng: random.Random, asked: str = "",
              mood: str = "first", setting: frozenset[str] = frozenset(), heard: frozenset[str] | None = None
              ) -> tuple[str, list[Tool]]:
    """A contrasting question over `options` and the options it names (those with words of their own);
    its wording differs from the earlier questions in `asked`. `mood`: first, again, check or unsure.
    `heard`: a check names the first option in words the user said ('the issues, or the commits?'), or asks nothing."""
    named: list[tuple[Tool, str]] = []
    used: set[str] = set()
    for o in options:
        # a phrase another option already says, in any form, tells the two apart no more ('the sub-issue, or the sub-issues?')
        words = [w for w in contrast_phrases(o, [p for p in options if p is not o], said, rng, setting)
                 if coarse(w) not in used]
        if heard is not None and o is options[0]:  # a check: the user's own words for what they chose
            words = [w for w in words if any(grounding.fits(shortcuts.stem(x), heard) for x in w.split())]
        if words:
            named.append((o, words[0]))
            used.add(coarse(words[0]))
    if heard is not None and not (named and named[0][0] is options[0]):
        return "", []
    if len(named) < 2:
        return "", []
    # acts when the verbs differ and each option's phrase is what its verb acts on ('set the volume', never
    # 'transfer the device'): else the things alone
    verbs = all(opening_verb(o) for o, _ in named) and len({opening_verb(o) for o, _ in named}) > 1 and \
        all(place(o.description, opening_verb(o) or "", p) == "" for o, p in named)
    phrases = [option(o, p, verbs) for o, p in named]
    forms = {("first", False): FIRST, ("first", True): FIRST_DO, ("again", False): AGAIN, ("again", True): AGAIN_DO,
             ("unsure", False): UNSURE, ("unsure", True): UNSURE_DO, ("check", False): CHECK,
             ("check", True): CHECK_DO}[(mood, verbs)]
    form = fresh_form(forms, asked, rng)
    return form.format(o=listed(phrases, verbs)), [o for o, _ in named]


def recites(text: str, candidates: list[Tool], n: int = MAX_RUN + 1) -> bool:
    """Whether `text` shares a run of `n` consecutive words with a candidate's description."""
    said = shortcuts.split_words(text)
    grams = {tuple(said[i:i + n]) for i in range(len(said) - n + 1)}
    for c in candidates:
        source = shortcuts.split_words(c.description)
        if any(tuple(source[i:i + n]) in grams for i in range(len(source) - n + 1)):
            return True
    return False


def _names_said(text: str, candidates: list[Tool]) -> bool:
    return any(shortcuts.full_name_hit(text, c.name) for c in candidates)


def _rivals(candidates: list[Tool], history: Sequence[Said], best: Tool) -> list[str]:
    """The names of the candidates the user's words do not put `best` ahead of: those it is not
    separated from, those with more evidence against it than it has against them, and those with as
    much, unless the request read as a whole points nearer `best` by NEAR_MARGIN (`nearness`)."""
    seps = _separations(evidence(history), candidates)
    a = best.name
    rivals = [c for c in candidates if c.name != a and seps[a].get(c.name, 0) <= seps[c.name].get(a, 0)]
    tied = [c for c in rivals if seps[a].get(c.name, 0)]  # as many words each way ('musician' vs 'shows')
    if tied:  # the request read as a whole breaks the tie, when it clearly does
        said = user_said(history, until="call", sep=" ").strip()
        near = nearness.cosines([said], [best, *tied])[0]
        settled = {c.name for c, score in zip(tied, near[1:]) if score < near[0] - NEAR_MARGIN}
        rivals = [c for c in rivals if c.name not in settled]
    return [c.name for c in rivals]


def _nearer(candidates: list[Tool], history: Sequence[Said], best: Tool) -> list[str]:
    """The names of the candidates that what the user said, read as a whole, points nearer to than
    `best`, or about as near (within NEAR_MARGIN: values said later may tip a tie) (`nearness`):
    one word may set `best` apart while the request reads as another's."""
    said = user_said(history, until="call", sep=" ").strip()
    others = [c for c in candidates if c.name != best.name]
    if not said or not others:
        return []
    scores = nearness.cosines([said], [best, *others])[0]
    return [c.name for c, score in zip(others, scores[1:]) if score > scores[0] - NEAR_MARGIN]


def _checked(candidates: list[Tool], history: Sequence[Said], best: Tool) -> bool:
    """Whether `best` was already set apart before the user's last CHECKS answers, so the questions
    they replied to were checks (`_nearer`): a careful listener checks, then acts on the replies."""
    users = [i for i, m in enumerate(history) if m.role == "user"]
    if len(users) < CHECKS + 1:
        return False
    before = history[: users[-CHECKS]]
    return ranked(candidates, before)[0].name == best.name and not _rivals(candidates, before, best)


def _option_lists(play: list[Tool], unsure: bool) -> list[list[Tool]]:
    """Option lists to try, preferred first: the best candidate with its closest rivals (three, then
    two; two only when the user was unsure), then the best with each other rival, then any pair."""
    best, rest = play[0], play[1:]
    lists = [] if unsure else [play[:MAX_OPTIONS]]
    lists += [[best, r] for r in rest]
    lists += [[a, b] for i, a in enumerate(rest) for b in rest[i + 1:]]
    return [options for options in lists if len(options) >= 2]


def _asked_runs(history: Sequence[Said]) -> set[tuple[str, ...]]:
    """The word runs of every earlier assistant turn: a new question shares none (`validators/repetition`)."""
    return set().union(*(shortcuts.word_runs(m.content) for m in history if m.role == "assistant"))


def _plan(candidates: list[Tool], history: Sequence[Said], earlier: list[frozenset[str]],
          rng: random.Random, mood: str, rivals: list[str]) -> tuple[str, tuple[str, ...]]:
    """The question to ask now and the option names it offers (empty: an open question)."""
    # words already in the conversation (the user's, or offered in an earlier question) are avoided
    said = evidence(history) | frozenset(grounding.said_stems(
        [{"role": "user", "content": m.content} for m in history if m.role == "assistant"]))
    asked = " ".join(m.content for m in history if m.role == "assistant")
    before = _asked_runs(history)
    best = ranked(candidates, history)[0]
    playing = [c.name for c in in_play(candidates, history)]
    by_name = {c.name: c for c in candidates}
    order = sorted(rivals, key=lambda n: (n not in playing, playing.index(n) if n in playing else 0))
    play = [best, *(by_name[n] for n in order)]
    setting = setting_words(candidates)  # what the candidates share, once per question
    heard = evidence(history) if mood == "check" else None  # a check names the choice in the user's words,
    tries = [(o, h) for h in ([heard, None] if heard is not None else [None])  # else in its own
             for o in _option_lists(play, mood in ("unsure", "check"))]
    for options, words in tries:
        if frozenset(c.name for c in options) in earlier:
            continue
        text, named = _question(options, said, rng, asked, mood, setting, words)
        key = frozenset(c.name for c in named)
        if text and key not in earlier and not recites(text, candidates) and not _names_said(text, candidates) \
                and not shortcuts.word_runs(text) & before:
            return text, tuple(sorted(key))
    fresh = [q for q in OPEN if q[1:] not in asked] or OPEN
    leads = [x for x in OPEN_LEADS[mood] if x not in asked] or OPEN_LEADS[mood]
    question = rng.choice(fresh)
    return rng.choice(leads) + question[:1].lower() + question[1:], ()


def _progress(candidates: list[Tool], history: Sequence[Said]) -> int:
    return sum(sum(v.values()) for v in _separations(evidence(history), candidates).values())


def decide(candidates: list[Tool], history: Sequence[Said], seed: int = 0, ask_first: bool = False,
           near: bool = True) -> Decision:
    """Commit to the best candidate when the user's words ground it, else a contrasting question.
    `ask_first`: the protocol wants at least one clarifying question before any commitment (the
    plain disambiguation dialogue); the question then checks the best against its nearest rivals.
    `near`: also ask when the words read nearer another candidate (`_nearer`); off where an opening
    states the need in full and a question would be an over-clarification (scenario openings)."""
    earlier: list[frozenset[str]] = []
    for i, m in enumerate(history):  # the option lists offered before: replayed, each from its own prefix
        if m.role == "assistant" and any(u.role == "user" for u in history[:i]):
            earlier.append(frozenset(_decide(candidates, history[:i], seed, earlier, ask_first, near).options))
    return _decide(candidates, history, seed, [e for e in earlier if e], ask_first, near)


def _decide(candidates: list[Tool], history: Sequence[Said], seed: int, earlier: list[frozenset[str]],
            ask_first: bool, near: bool) -> Decision:
    order = ranked(candidates, history)
    best = order[0]
    rivals = _rivals(candidates, history, best)
    asked_before = any(m.role == "assistant" for m in history)
    nearer = [] if rivals or not near or _checked(candidates, history, best) else _nearer(candidates, history, best)
    rivals = rivals or nearer
    if not rivals and (asked_before or not ask_first or len(candidates) < 2):
        thought = (f"What the user said sets {best.name} apart from every other candidate. I will use it."
                   if len(candidates) > 1 else f"{best.name} is the only tool offered. I will use it.")
        return Decision(thought=thought, tool=best)
    check = not rivals
    if check:  # grounded at once, but the protocol asks first: check the best against its nearest rivals
        rivals = [c.name for c in order[1:MAX_OPTIONS]]
    user_turns = [i for i, m in enumerate(history) if m.role == "user"]
    unsure = len(user_turns) >= 2 and _progress(candidates, history[: user_turns[-1]]) >= _progress(candidates, history)
    rng = random.Random(f"{seed}:{len(history)}:{best.name}")
    mood = "unsure" if unsure else "first" if not asked_before else "check" if check or nearer else "again"
    text, options = _plan(candidates, history, [e for e in earlier if e], rng, mood, rivals)
    thought = (f"{best.name} looks right; one question to be sure it is not {' or '.join(rivals)}." if check else
               f"The user's words set {best.name} apart, yet read closer to {', '.join(nearer)}. I must ask, not guess."
               if nearer else
               f"Still possible: {', '.join([best.name, *rivals])}; nothing the user said yet sets "
               f"{best.name} apart from {', '.join(rivals)}. I must ask, not guess.")
    return Decision(thought=thought, question=text, options=options)
