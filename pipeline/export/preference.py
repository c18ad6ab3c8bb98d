"""The `preference` config: pairs of a gold assistant turn and a wrong one, for DPO and other preference trainers.

Every row reuses an `sft` slice (`slicing.slice_dialogue`) as is: its `prompt` and `tools`, and its
`completion` as `chosen`. `rejected` is one message of the same shape: a wrong turn of a named
pattern (`wrong_turns`, and at a turn answering a tool result `wrong_answers`), or the run's own
rejected attempt at that point when the attempt's dialogue up to the turn is word for word the
accepted one's (`run_attempt`: what the engine's model really said where its sibling got it right). A turn yields one row per pattern that fits
it. Each wrong turn draws from a random source seeded by the run seed, the dialogue id, the turn
and the pattern, so an export is the same every time.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..core.records import Dialogue, Message
from ..dialogue.results import has_results
from .rows import DEFAULT_SFT_FORMAT, PreferenceRow
from .slicing import chat_message, slice_dialogue
from .wrong_answers import ANSWER_MAKERS
from .wrong_turns import MAKERS, GoldTurn


def _same(a: Message, b: Message) -> bool:
    """Two turns that say and do the same (labels and phase aside)."""
    return (a.role, a.content.strip(), a.tool_calls) == (b.role, b.content.strip(), b.tool_calls)


def _spoken(d: Dialogue) -> list[Message]:
    return [m for m in d.messages if m.role != "system"]


def _attempt_turns(d: Dialogue, attempts: Iterable[Dialogue]) -> dict[int, list[Message]]:
    """Per assistant-turn index of `d`: the rejected attempts' turns where they first part from `d`, after
    the same candidates and the same words up to that turn."""
    mine = _spoken(d)
    names = [t.name for t in d.candidate_tools]
    out: dict[int, list[Message]] = {}
    for other in attempts:
        if other.seed_tool.name != d.seed_tool.name or [t.name for t in other.candidate_tools] != names:
            continue
        theirs = _spoken(other)
        i = next((i for i, (a, b) in enumerate(zip(mine, theirs)) if not _same(a, b)), None)
        if i is None or mine[i].role != "assistant" or theirs[i].role != "assistant":
            continue
        turn = sum(m.role == "assistant" for m in mine[:i])
        if all(not _same(theirs[i], seen) for seen in out.get(turn, [])):
            out.setdefault(turn, []).append(theirs[i])
    return out


def preference_rows(accepted: Iterable[Dialogue], rejected: Iterable[Dialogue] = (),
                    sft_format: str = DEFAULT_SFT_FORMAT) -> list[PreferenceRow]:
    """The preference rows of a run: every fitting pattern at every assistant turn of each accepted dialogue."""
    rejected = [d for d in rejected if not d.accepted]
    out: list[PreferenceRow] = []
    for d in accepted:
        if not d.accepted:
            continue
        spoken = _spoken(d)
        positions = [i for i, m in enumerate(spoken) if m.role == "assistant"]
        # where each spoken turn is in `d.messages`, when its calls carry ids (a dialogue with tool results)
        at = [i for i, m in enumerate(d.messages) if m.role != "system"] if has_results(d.messages) else None
        attempts = _attempt_turns(d, rejected)
        for row, position in zip(slice_dialogue(d, sft_format), positions):
            index = None if at is None else at[position]
            turn = GoldTurn(dialogue=d, history=spoken[:position], gold=spoken[position],
                            seed=f"{d.generation.seed}:{d.id}:{row.turn_index}", at=index)
            wrong = [(name, make(turn)) for name, make in {**MAKERS, **ANSWER_MAKERS}.items()]
            wrong += [("run_attempt", m) for m in attempts.get(row.turn_index, [])]
            for pattern, message in wrong:
                if message is None:
                    continue
                out.append(PreferenceRow(dialogue_id=d.id, turn_index=row.turn_index, scenario=d.scenario,
                                         pattern=pattern, action=row.action, tools=row.tools, prompt=row.prompt,
                                         chosen=row.completion, rejected=[chat_message(message, sft_format, index)]))
    return out
