"""What a question says of each option it offers: the short noun phrases (or, failing those, single
words) of a tool's description that the other offered tools lack, said as a person would say them
('the latest release', never 'the GitHub repository' beside tools that all work on repositories).
`selection` decides what to ask; this module finds the words.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from ..core import text
from ..core.records import Tool
from ..core.text import DESCRIPTION_FILLER
from ..dialogue import grounding, shortcuts
from .nounphrases import META, QUALIFIERS, about, bland, determined, noun_phrases, qualified, said_alone
from .wording import tokens

WORDS_PER_OPTION = 2

# words that describe no difference a user could recognise
VAGUE = DESCRIPTION_FILLER | frozenset(
    "accept array available boolean comma correct cursor data default deprecated detail details e.g eg "
    "ensure example except false field fields format identified identifier index info information "
    "integer item items limit max maximum min minimum null number numeric object objects offset page "
    "parameter parameters perform provided request response result results separated specified string "
    "true type unavailable unique value values varies vary ".split()
)


def _speakable(tool: Tool) -> dict[str, str]:
    """stem -> a word a person could say for it: from the tool's description and parameters, no
    chatter, no very short or numeric words; description words first."""
    out: dict[str, str] = {}
    codes = text.code_words(tool.description)
    for s, w in grounding.vocab_words(tool).items():
        if w in codes:
            continue  # a fragment of an example id or a URL
        if len(w) < 4 or w.isdigit() or any(ch.isdigit() for ch in w) or w in VAGUE or s in shortcuts.GENERIC:
            continue
        if tokens(w) == []:
            continue  # the offline user's chatter says nothing about a tool
        out[s] = w
    return out


def _naming(tool: Tool) -> set[str]:
    """Stems of the words that name things in a tool: its name's and its parameter keys' words."""
    keys = [text.key_words(k, s) for k, s in tool.properties.items()]
    return {shortcuts.stem(w) for w in [*shortcuts.split_words(tool.name), *(w for k in keys for w in k)]}


def _verbish(word: str, description: str) -> bool:
    """A word that likely says how, not what: an adverb, a past participle or the description's opening verb."""
    opening = shortcuts.split_words(description)[:1]
    return word.endswith(("ly", "ed")) or (bool(opening) and word == opening[0])


def coarse(word: str) -> str:
    """A looser key than the stem, so 'save' and 'saved' count as one word to a listener (each word of a phrase)."""
    return " ".join(re.sub(r"(e|ed|es|s|ing|ion|ions)$", "", w)[:5] for w in word.lower().split())


def contrast_words(option: Tool, others: list[Tool], said: frozenset[str], rng: random.Random) -> list[str]:
    """Up to WORDS_PER_OPTION words `option` has and none of `others` has, in the description's order:
    preferably words that name things (its name's and parameters' words, said as plain words, never
    the name itself), not how-words, not the words of `said` (already in the conversation)."""
    mine = _speakable(option)
    distinct = set(grounding.distinct(mine, [grounding.vocab(o) for o in others]))
    description = option.description.lower()
    naming = _naming(option)
    theirs = {coarse(w) for o in others for w in grounding.vocab_words(o).values()}
    # words only of its sentences about the API ('... missing to build other tool calls') say nothing of its use
    aside = set(shortcuts.split_words(option.description)) - set(shortcuts.split_words(about(option.description)))
    pool = [s for s in mine if s in distinct and coarse(mine[s]) not in theirs and said_alone(mine[s], description)
            and mine[s].lower() not in META  # a word said as 'the X': a thing, not 'the several' or 'the endpoint'
            and (mine[s].lower() not in aside or s in naming)]
    fresh = [s for s in pool if not grounding.fits(s, said)] or pool

    def weight(s: str) -> tuple[int, int, str]:
        w = mine[s]
        return (-(2 * (s in naming) + (w in description) - 2 * _verbish(w, description)), -len(w), s)

    chosen = sorted(fresh, key=weight)[: WORDS_PER_OPTION + 1]
    head, tail = chosen[:1], chosen[1:]
    rng.shuffle(tail)
    picked = head + tail[: WORDS_PER_OPTION - 1]
    return sorted((mine[s] for s in picked), key=lambda w: (description.find(w) if w in description else 10**6, w))


def contrast_phrases(option: Tool, others: list[Tool], said: frozenset[str], rng: random.Random,
                     setting: frozenset[str] = frozenset()) -> list[str]:
    """Up to WORDS_PER_OPTION short noun phrases of `option`'s description ('actual spend', 'account
    group') holding a word that none of `others` has, best first: a phrase whose last word is its own
    ('the latest release', not 'the GitHub repository' beside tools about repositories), not the
    `setting` the candidates share, words not yet in the conversation, a word of its own name, more own
    words; `contrast_words` when no phrase of its description has such a word. A phrase of at most
    three words is the tool's subject in plain speech, never a run of it."""
    description = option.description
    theirs = [grounding.vocab(o) for o in others]
    loose = {coarse(w) for o in others for w in grounding.vocab_words(o).values()}

    def own(word: str) -> bool:  # a qualifier ('single', 'previous') is vague alone, yet may be all that differs
        parts = shortcuts.split_words(word) or [word]  # 'GitHub' is 'git' and 'hub' to a vocabulary
        return (word.lower() not in VAGUE or word.lower() in QUALIFIERS) and coarse(word) not in loose \
            and not all(any(grounding.fits(shortcuts.stem(p), t) for t in theirs) for p in parts) \
            and not any(grounding.fits(shortcuts.stem(word), t) for t in theirs)

    called = {shortcuts.stem(w) for w in shortcuts.split_words(option.name)}
    ranked: list[tuple[int, bool, int, int, int, bool, int, int, str]] = []
    phrases = noun_phrases(description, set())
    for i, phrase in enumerate([*phrases, *qualified(description, phrases)]):
        words = phrase.split()
        mine = [w for w in words if own(w)]
        if mine and len(words) <= 3 and not bland(phrase):  # never 'the Spotify catalog information'
            fresh = any(not grounding.fits(shortcuts.stem(w), said) for w in mine)
            named = any(shortcuts.stem(w) in called for w in mine)  # 'reaction' for add_issue_reaction: what it is
            head = own(words[-1])  # 'the latest release' over 'the GitHub repository' when others say 'repository'
            ranked.append((-head, coarse(words[-1]) in setting, -fresh, -named, -len(mine),
                           not determined(description, phrase), -(len(words) > 1), i, phrase))
    picked = [p for *_, p in sorted(ranked)[:WORDS_PER_OPTION]]  # best first: a phrase of two or three words
    return picked or contrast_words(option, others, said, rng)


def setting_words(pool: Sequence[Tool]) -> frozenset[str]:
    """The words (`_coarse`) in more than half of `pool`'s vocabularies: what the tools share ('repository'
    for GitHub's tools), never what tells one apart."""
    counts: dict[str, int] = {}
    for tool in pool:
        for word in {coarse(w) for w in grounding.vocab_words(tool).values()}:
            counts[word] = counts.get(word, 0) + 1
    return frozenset(w for w, n in counts.items() if 2 * n > len(pool))
