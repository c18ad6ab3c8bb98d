"""Spend limits over a whole run, resumed sessions included (`--max-cost`, `--max-tokens`), and
`RunStopped`, the error of every rule that stops a run with its finished work kept."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..core.errors import UtcgenError
from ..core.records import Usage

MARGIN = 1.25  # items vary: plan each item at 1.25 times the average so far


class RunStopped(UtcgenError):
    """A run stopped by one of its own rules (a budget, a run that cannot reach its target):
    its finished work is kept and exported, and a re-run of the same command resumes."""


class BudgetExceeded(RunStopped):
    """The run stopped before its spend would pass its budget (`--max-cost`, `--max-tokens`)."""

    exit_code = 3


@dataclass(frozen=True)
class Budget:
    """At most `max_cost_usd` dollars and `max_tokens` prompt + completion tokens; None = no limit."""

    max_cost_usd: float | None = None
    max_tokens: int | None = None

    @classmethod
    def of(cls, settings: Any) -> Budget:
        """From a config's `budget:` section (anything with max_cost_usd and max_tokens)."""
        return cls(getattr(settings, "max_cost_usd", None), getattr(settings, "max_tokens", None))

    @property
    def active(self) -> bool:
        return self.max_cost_usd is not None or self.max_tokens is not None

    def over(self, usage: Usage, extra_cost: float = 0.0, extra_tokens: float = 0.0) -> str | None:
        """Which limit `usage` plus the extra expected spend would pass, as its flag; None when within."""
        if self.max_cost_usd is not None and usage.cost_usd + extra_cost > self.max_cost_usd + 1e-12:
            return f"--max-cost ${self.max_cost_usd:g}"
        if self.max_tokens is not None and usage.total_tokens + extra_tokens > self.max_tokens:
            return f"--max-tokens {self.max_tokens:,}"
        return None

    def room(self, spent: Usage, per_item: tuple[float, float] | None, in_flight: int = 0,
             in_flight_spent: Usage | None = None, most: int = 1) -> int:
        """How many new items (up to `most`) may start beside `in_flight` running ones.

        Each item is expected to cost `per_item` (cost, tokens) times `MARGIN`, minus what the
        items in flight already spent. Before any item has finished (`per_item` None) one item
        runs alone, to learn what an item costs."""
        if not self.active:
            return most
        if per_item is None:
            return 1 if in_flight == 0 and most > 0 and self.over(spent) is None else 0
        so_far = in_flight_spent or Usage()
        for new in range(most, 0, -1):
            items = (in_flight + new) * MARGIN
            extra_cost = max(0.0, items * per_item[0] - so_far.cost_usd)
            extra_tokens = max(0.0, items * per_item[1] - so_far.total_tokens)
            if self.over(spent, extra_cost, extra_tokens) is None:
                return new
        return 0

    def exceeded(self, limit: str, spent: Usage, done: str) -> BudgetExceeded:
        """The error a run stopped by the budget raises; `done` says how far it got."""
        return BudgetExceeded(
            f"budget reached: the next jobs would pass {limit}. Spent so far (resumed runs included): "
            f"{spent.calls} calls, {spent.total_tokens:,} tokens, ${spent.cost_usd:.4f}; {done}. Finished jobs "
            "are journaled; jobs not finished (cancelled in flight, or never started) will be run by a resume. "
            "Re-run the same command with a higher --max-cost / --max-tokens (or budget: in the config) to go on.")
