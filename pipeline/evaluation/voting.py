"""The voting user proxy of dynamic evaluation (App. C.3).

For each user turn, n drafts come from the generator (the user-proxy role, n different
nonces and seeds), then m voters (role `voter`, prompt `eval_user_vote`) each see the drafts in
their own seeded random order and pick one; a vote is mapped back through its permutation to
the draft's original index, and the mode wins (ties: the lowest original index). A voter whose
reply names no draft abstains; with no vote at all the first draft is used.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from dataclasses import dataclass, field

from ..core.records import Message, Usage, persona_text
from ..llm.gateway import Gateway
from ..llm.replies import ReplyError, bare_json, find_object
from ..llm.requests import VoterRequest, said
from ..scenarios import plain_dialogue
from ..settings.templates import load_prompt
from ..synthesis.roles import Roles, history_text
from .cases import Case


def permutation(rng: random.Random, n: int) -> list[int]:
    """`shown[i]` is the original index of the draft shown at position i."""
    order = list(range(n))
    rng.shuffle(order)
    return order


def original_index(choice: int, shown: list[int]) -> int:
    """A vote for shown position `choice` (0-based) as the draft's original index."""
    return shown[choice]


def pool(votes: list[int], n: int) -> int:
    """The mode of the votes (original indices); ties and no votes go to the lowest index."""
    counts = Counter(v for v in votes if 0 <= v < n)
    if not counts:
        return 0
    best = max(counts.values())
    return min(i for i, c in counts.items() if c == best)


def parse_choice(text: str, n: int) -> int | None:
    """The 0-based position a voter picked, or None if its reply names none of 1..n (or is JSON but not an object)."""
    if bare_json(text):
        return None
    try:
        data = find_object(text)
        value = data.get("choice", data.get("draft", ""))
        choice = int(value)
    except (ReplyError, TypeError, ValueError):
        match = re.search(r"\b(\d+)\b", text)
        if not match:
            return None
        choice = int(match.group(1))
    return choice - 1 if 1 <= choice <= n else None


def vote_schema(n: int) -> dict:
    """The voter's reply, sent as response_format where the server takes one."""
    return {"type": "object", "properties": {"choice": {"type": "integer", "minimum": 1, "maximum": n},
                                             "reason": {"type": "string"}},
            "required": ["choice"], "additionalProperties": False}


def scenario_context(case: Case) -> dict | None:
    """What the generation user proxy is told of the case's scenario (its facts, the opening as meant
    and as faulted), so it plays the scenario as in generation; None for a plain disambiguation case
    (today's prompts and state, hence unchanged disambiguation runs)."""
    info = case.scenario_info
    if plain_dialogue(case.scenario, info):
        return None
    context: dict = {"name": case.scenario, "info": info.model_dump(mode="json")}
    if info.fault is not None:
        context.update(original=info.fault.original, faulted=info.fault.faulted)
    return context


@dataclass
class UserProxy:
    """The frozen user proxy: one utterance per call, by plain sampling or by multi-sample voting.

    `votes=(n, m)`, or None for a single draft. The phase it plays is decided by the caller."""

    gateway: Gateway
    votes: tuple[int, int] | None = (3, 3)
    seed: int = 0
    usage: Usage = field(default_factory=Usage)
    ballots: list[dict] = field(default_factory=list)  # per voted turn: drafts, votes and the winner

    async def utter(self, case: Case, phase: str, history: list[Message], turn: int,
                    context: dict | None = None) -> str:
        """The next user turn; `context` (what the user role is told of the scenario) defaults to the case's."""
        context = context or scenario_context(case)
        fault = case.scenario_info.fault
        if turn == 0 and not history and fault is not None and fault.faulted:
            return fault.faulted  # the recorded faulted opening: every model faces the same fault
        base = self.seed * 1_000_003 + turn
        n = self.votes[0] if self.votes else 1
        drafts = []
        for i in range(n):
            roles = Roles(self.gateway, attempt_tag=f"eval-user/{case.id}/{turn}/{i}")
            drafts.append(await roles.user(phase, case.gold_tool, case.persona, case.goal, case.distractors,
                                           case.gold_arguments, history, base * 10 + i, context))
            self.usage.add(roles.usage)
        if not self.votes or n == 1:
            return drafts[0]
        winner, votes = await self.vote(case, drafts, history, turn)
        self.ballots.append({"turn": turn, "drafts": drafts, "votes": votes, "winner": winner})
        return drafts[winner]

    async def vote(self, case: Case, drafts: list[str], history: list[Message], turn: int) -> tuple[int, list[int]]:
        m = self.votes[1] if self.votes else 1
        rng = random.Random(f"{self.seed}:{case.id}:{turn}:vote")
        votes: list[int] = []
        for j in range(m):
            shown = permutation(rng, len(drafts))
            listed = "\n".join(f"{k + 1}. {json.dumps(drafts[i], ensure_ascii=False)}" for k, i in enumerate(shown))
            request = VoterRequest(persona=case.persona, goal=case.goal, history=said(history),
                                   shown=[drafts[i] for i in shown])
            messages = load_prompt("eval_user_vote").render(persona=persona_text(request.persona), goal=request.goal,
                                                            transcript=history_text(history), drafts=listed)
            reply = await self.gateway.chat(request, messages, nonce=f"eval-vote/{case.id}/{turn}/{j}",
                                            schema=vote_schema(len(drafts)))
            self.usage.add(reply.usage)
            choice = parse_choice(reply.text, len(drafts))
            if choice is not None:
                votes.append(original_index(choice, shown))
        return pool(votes, len(drafts)), votes
