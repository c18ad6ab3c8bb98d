"""The one interface every validator has: a name, a kind and `check(dialogue, gateway) -> Verdict`.

A rule (`kind == "rule"`) is a pure function of the dialogue; a judge (`kind == "llm"`) asks a
model through the gateway. Both give the uniform `Verdict` (passed, reason, details) whose
`validator` is the stage's name. The cascade (`cascade.STAGES`) lists them in order and
registers them by name (`cascade.stage`), so no other module compares names or kinds itself.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal

from ..pipeline.core.records import Dialogue, Verdict

if TYPE_CHECKING:
    from .judge import ChatGateway

Kind = Literal["rule", "llm"]


@dataclass(frozen=True)
class Rule:
    """A rule validator: `run(dialogue)` is pure and synchronous (the audit replays it on any record)."""

    name: str
    run: Callable[[Dialogue], Verdict]
    # The model roles this rule judges: each one's prompt states it (prompts/rules_<role>.txt, `contract`).
    tells: tuple[str, ...] = ()
    # Why no model role is told, when `tells` is empty (the rule judges something no model writes).
    untold: str = ""
    kind: ClassVar[Kind] = "rule"

    async def check(self, dialogue: Dialogue, gateway: ChatGateway | None = None) -> Verdict:
        return self.run(dialogue)


@dataclass(frozen=True)
class Judge:
    """An LLM judge: asks its model through the gateway; `rejects_as` names its failure in run statistics."""

    name: str
    ask: Callable[[Dialogue, ChatGateway], Awaitable[Verdict]]
    rejects_as: str
    tells: tuple[str, ...] = ()
    untold: str = ""
    kind: ClassVar[Kind] = "llm"

    async def check(self, dialogue: Dialogue, gateway: ChatGateway | None = None) -> Verdict:
        if gateway is None:
            raise ValueError(f"validator '{self.name}' is an LLM judge: it needs a gateway")
        return await self.ask(dialogue, gateway)


Validator = Rule | Judge
