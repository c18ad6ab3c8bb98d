"""Data-quality figures of a folder of dialogues: would someone train on them?

The rule validators judge one dialogue at a time; these figures judge the set, the way a
data scientist reading the output would, and each has a target (`TARGETS`) that `utcgen
audit` prints beside it. All but `acceptance` are over the accepted dialogues:

* `seed_closest`: share of dialogues with a tool call whose seed tool is the candidate whose
  text (name read aloud + description) is most similar, by sentence embedding (cosine), to
  what the user said before the first call: was the choice earned by the user's words?
* `role_mismatch`: share of dialogues whose persona's role would not plausibly use the seed tool
  (`retrieval.rolefit`, judged on the role and its line of business, not the persona's text);
  personas without a role are counted apart, not judged;
* `description_echo`: share of assistant turns (public content) repeating a run of `RUN`
  consecutive words of any candidate's description (case and punctuation ignored);
* `repeated_runs`: dialogues in which two assistant turns share a run of `RUN` words, and how
  many such pairs of turns there are;
* `shared_values`: share of string gold values (each occurrence) whose text is used, across
  the folder, by 3 or more unrelated parameters: at least 3 different keys in at least 3
  different tools (a stock phrase filling parameters it does not fit);
* `non_whole`: gold values of count, number or id-like parameters (integer type, or key or
  description saying count, number, id, page, limit, size, quantity...) that are not whole;
* `opening_trigrams`: distinct word trigrams / all word trigrams over the first user turns
  (the evaluation's word tokens);
* `stock_lines`: the largest share of dialogues any one sentence of a public user or assistant
  turn is found in (case and spacing ignored, counted once per dialogue), among sentences found
  in at least `STOCK_MIN` dialogues; a sentence above `STOCK_SHARE` is a stock line, and how many
  there are and the commonest are reported with it;
* `fluency_user`, `fluency_assistant`: median per-token perplexity of the role's public turns under a
  small real language model, as a ratio to that of requests real users typed (`export.fluency`;
  measured only when asked, and only with the `fluency` extra installed);
* `acceptance`: accepted dialogues / attempts.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..core.records import Dialogue, Tool
from ..core.text import sentences, split_words, spoken, word_tokens
from ..dialogue.said import user_said
from ..dialogue.shortcuts import REPEAT_N, recited, word_runs
from ..retrieval.nearness import Embed, default_embed, name_and_description, unit
from ..retrieval.rolefit import role_mismatch
from .fluency import add_dialogue, fluency, samples

if TYPE_CHECKING:
    from .perplexity import Scorer

RUN = REPEAT_N  # words in a run that counts as echoed or repeated
SHARED_BY = 3  # unrelated parameters a string value may not fill
STOCK_SHARE = 0.02  # a sentence in more than this share of dialogues is a stock line...
STOCK_MIN = 3  # ...when it is in at least this many (in a small set, two dialogues are coincidence)
WHOLE_WORDS = frozenset("count counts number numbers num id ids page pages limit size quantity qty".split())

COUNTS = frozenset({"repeated_runs", "non_whole"})  # figures that are counts, not shares

# figure -> (comparison, target); `utcgen audit` marks each figure pass or fail against it
TARGETS: dict[str, tuple[str, float]] = {
    "seed_closest": (">=", 0.90),
    "role_mismatch": ("<=", 0.05),
    "description_echo": ("<=", 0.05),
    "repeated_runs": ("<=", 0),
    "shared_values": ("<=", 0.05),
    "non_whole": ("<=", 0),
    "opening_trigrams": (">=", 0.60),
    "stock_lines": ("<=", STOCK_SHARE),
    "fluency_user": ("<=", 1.5),
    "fluency_assistant": ("<=", 1.5),
    "acceptance": (">=", 0.30),
}
RATIOS = frozenset({"fluency_user", "fluency_assistant"})  # figures that are ratios, not shares


def meets(name: str, value: float | None) -> bool | None:
    """Whether `value` reaches the target of figure `name`; None when there was nothing to measure."""
    if value is None:
        return None
    op, target = TARGETS[name]
    return value >= target if op == ">=" else value <= target


def _candidates(d: Dialogue) -> list[Tool]:
    """The seed tool first, then every other candidate once."""
    seen = {d.seed_tool.name}
    out = [d.seed_tool]
    for t in [*d.candidate_tools, *d.distractor_tools]:
        if t.name not in seen:
            seen.add(t.name)
            out.append(t)
    return out


def seed_closest(dialogues: Sequence[Dialogue], embed: Embed | None = None) -> tuple[float | None, int]:
    """(share of dialogues whose seed is the candidate closest to the user's words before the call, dialogues measured)."""
    cases: list[tuple[str, list[str]]] = []
    for d in dialogues:
        if not any(m.tool_calls for m in d.messages):
            continue
        said = user_said(d.messages, until="call", sep=" ").strip()
        tools = _candidates(d)
        if said and len(tools) > 1:
            cases.append((said, [name_and_description(t) for t in tools]))
    if not cases:
        return None, 0
    texts = sorted({t for said, tools in cases for t in [said, *tools]})
    index = {t: i for i, t in enumerate(texts)}
    vectors = unit((embed or default_embed)(texts))
    hits = 0
    for said, tools in cases:
        scores = vectors[[index[t] for t in tools]] @ vectors[index[said]]
        hits += bool(scores[0] >= scores[1:].max())  # the seed is first; a tie counts as closest
    return hits / len(cases), len(cases)


def _public_turns(d: Dialogue) -> list[str]:
    return [m.content for m in d.messages if m.role == "assistant" and m.content.strip()]


def description_echo(dialogues: Sequence[Dialogue]) -> tuple[float | None, int]:
    """(share of assistant turns repeating RUN words of a candidate's description, turns measured)."""
    echoed = turns = 0
    for d in dialogues:
        descriptions = [t.description for t in _candidates(d) if t.description]
        for text in _public_turns(d):
            turns += 1
            echoed += any(recited(text, desc, n=RUN, content=0) for desc in descriptions)
    return (echoed / turns if turns else None), turns


def repeated_runs(dialogues: Sequence[Dialogue]) -> tuple[int, int]:
    """(dialogues where two assistant turns share a run of RUN words, pairs of such turns)."""
    dialogues_hit = pairs = 0
    for d in dialogues:
        runs = [word_runs(t, RUN) for t in _public_turns(d)]
        mine = sum(bool(runs[i] & runs[j]) for i in range(len(runs)) for j in range(i + 1, len(runs)))
        dialogues_hit += mine > 0
        pairs += mine
    return dialogues_hit, pairs


def _leaves(key: str, value: Any) -> Iterator[tuple[str, Any]]:
    """(innermost key, value) of every scalar in a gold value; list items keep their list's key."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(str(k), v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _leaves(key, v)
    else:
        yield key, value


def _gold(d: Dialogue) -> Iterator[tuple[str, Any]]:
    for key, value in d.gold_arguments.items():
        yield from _leaves(key, value)


def shared_value_rate(dialogues: Sequence[Dialogue]) -> tuple[float | None, int, list[str]]:
    """(share of string gold values used by SHARED_BY+ unrelated parameters, values measured, a few such values)."""
    uses: dict[str, set[tuple[str, str]]] = defaultdict(set)
    occurrences: list[str] = []
    for d in dialogues:
        for key, value in _gold(d):
            if isinstance(value, str) and value.strip():
                text = " ".join(split_words(value)) or value.strip().casefold()
                uses[text].add((d.seed_tool.name, spoken(key)))
                occurrences.append(text)
    shared = {v for v, pairs in uses.items()
              if len({k for _, k in pairs}) >= SHARED_BY and len({t for t, _ in pairs}) >= SHARED_BY}
    if not occurrences:
        return None, 0, []
    examples = sorted(shared, key=lambda v: (-len(uses[v]), v))[:5]
    return sum(v in shared for v in occurrences) / len(occurrences), len(occurrences), examples


def whole_kind(key: str, schema: dict[str, Any] | None) -> bool:
    """Whether a parameter holds a count, number or id: integer-typed, or its key or description says so."""
    schema = schema or {}
    kinds = schema.get("type")
    if "integer" in (kinds if isinstance(kinds, list) else [kinds]):
        return True
    said = set(split_words(key)) | set(split_words(str(schema.get("description") or "")))
    return bool(said & WHOLE_WORDS)


def _not_whole(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, str):
        try:
            value = float(value.strip().replace(",", ""))
        except ValueError:
            return False
    return isinstance(value, int | float) and math.isfinite(value) and not float(value).is_integer()


def non_whole(dialogues: Sequence[Dialogue]) -> tuple[int, list[str]]:
    """(gold values of count/number/id parameters that are not whole numbers, a few as `tool.key=value`)."""
    found: list[str] = []
    for d in dialogues:
        props = d.seed_tool.properties
        for key, value in d.gold_arguments.items():
            schema = props.get(key)
            for _, leaf in _leaves(key, value):
                if whole_kind(key, schema) and _not_whole(leaf):
                    found.append(f"{d.seed_tool.name}.{key}={leaf}")
    return len(found), found[:5]


def opening_trigrams(dialogues: Iterable[Dialogue]) -> tuple[float | None, int]:
    """(distinct word trigrams / all word trigrams over the first user turns, all trigrams)."""
    grams: list[tuple[str, ...]] = []
    for d in dialogues:
        first = next((m.content for m in d.messages if m.role == "user"), "")
        words = word_tokens(first)
        grams += [tuple(words[i:i + 3]) for i in range(len(words) - 2)]
    return (len(set(grams)) / len(grams) if grams else None), len(grams)


class StockCounter:
    """Sentences of public user and assistant turns, lower-cased with spacing collapsed, each counted once per
    dialogue, added one dialogue at a time (an export counts them without keeping the run)."""

    def __init__(self) -> None:
        self.found: Counter[str] = Counter()
        self.dialogues = 0

    def add(self, d: Dialogue) -> None:
        self.dialogues += 1
        self.found.update({" ".join(s.casefold().split()) for m in d.messages if m.role in ("user", "assistant")
                           for s in sentences(m.content)})

    def result(self, top: int = 5) -> tuple[float | None, int, list[tuple[str, float]]]:
        """(largest share of dialogues a sentence found in STOCK_MIN+ of them reaches, 0.0 when none is; how
        many sentences are stock lines; the `top` commonest of those with their shares)."""
        if not self.dialogues:
            return None, 0, []
        common = [(text, n / self.dialogues) for text, n in sorted(self.found.items(), key=lambda kv: (-kv[1], kv[0]))
                  if n >= STOCK_MIN]
        stock = [(text, share) for text, share in common if share > STOCK_SHARE]
        return (common[0][1] if common else 0.0), len(stock), stock[:top]

    def figure(self) -> dict[str, Any]:
        share, count, top = self.result()
        return {"value": share, "stock_lines": count, "dialogues": self.dialogues,
                "top": [{"text": text, "share": s} for text, s in top]}


def stock_lines(dialogues: Sequence[Dialogue], top: int = 5) -> tuple[float | None, int, list[tuple[str, float]]]:
    """`StockCounter.result` over `dialogues`."""
    counter = StockCounter()
    for d in dialogues:
        counter.add(d)
    return counter.result(top)


class StreamedQuality:
    """The figures an export gathers dialogue by dialogue (accepted ones): stock lines, and fluency over a
    seeded sample of at most `fluency_turns` turns per role (0: not measured)."""

    def __init__(self, fluency_turns: int = 0) -> None:
        self.stock, self.turns = StockCounter(), fluency_turns
        self.samples = samples((), max(fluency_turns, 0))

    def add(self, d: Dialogue) -> None:
        self.stock.add(d)
        add_dialogue(self.samples, d)

    def result(self, scorer: Scorer | None = None) -> dict[str, Any]:
        fluent = fluency(self.samples, self.turns, scorer)
        return with_targets({"stock_lines": self.stock.figure(), "fluency_user": fluent["user"],
                             "fluency_assistant": fluent["assistant"]})


def with_targets(figures: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each figure with its target as shown ("<= 2%", ">= 90%", "<= 1.5") and whether its value meets it."""
    for name, f in figures.items():
        op, target = TARGETS[name]
        shown = f"{target:g}" if name in COUNTS | RATIOS else f"{target:.0%}"
        f.update(target=f"{op} {shown}", met=meets(name, f["value"]))
    return figures


def quality(dialogues: Sequence[Dialogue], embed: Embed | None = None, fluency_turns: int = 0,
            scorer: Scorer | None = None) -> dict[str, Any]:
    """Every figure of the module docstring, each with its target and whether it is met; fluency over at
    most `fluency_turns` turns per role (0: not measured), scored by `scorer` (default: loaded if needed)."""
    accepted = [d for d in dialogues if d.accepted]
    closest, measured = seed_closest(accepted, embed)
    mismatch, judged, unjudged, mismatched = role_mismatch(accepted, embed)
    echo, turns = description_echo(accepted)
    repeated, pairs = repeated_runs(accepted)
    shared, values, shared_examples = shared_value_rate(accepted)
    fractional, fractional_examples = non_whole(accepted)
    trigrams, total_trigrams = opening_trigrams(accepted)
    acceptance = len(accepted) / len(dialogues) if dialogues else None
    counted = StockCounter()
    for d in accepted:
        counted.add(d)
    fluent = fluency(samples(accepted, max(fluency_turns, 0)), fluency_turns, scorer)
    figures: dict[str, dict[str, Any]] = {
        "seed_closest": {"value": closest, "dialogues": measured},
        "role_mismatch": {"value": mismatch, "dialogues": judged, "no_role": unjudged, "examples": mismatched},
        "description_echo": {"value": echo, "assistant_turns": turns},
        "repeated_runs": {"value": repeated, "pairs": pairs},
        "shared_values": {"value": shared, "string_values": values, "examples": shared_examples},
        "non_whole": {"value": fractional, "examples": fractional_examples},
        "opening_trigrams": {"value": trigrams, "trigrams": total_trigrams},
        "stock_lines": counted.figure(),
        "fluency_user": fluent["user"],
        "fluency_assistant": fluent["assistant"],
        "acceptance": {"value": acceptance, "attempts": len(dialogues), "accepted": len(accepted)},
    }
    return with_targets(figures)
