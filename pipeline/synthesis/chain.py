"""The first step of a multi-step task: which tool's result feeds the seed tool, with its own pool, and
the value its result gave.

A seed job of the `multi_step` scenario takes its seed tool as the second step, its first step a producer
of one of the catalog's chain pairs (`retrieval.chains.plan_chains`) that feeds it; a seed tool nothing
feeds is the first step of a tool it feeds, and a tool in no pair gives way to its nearest tool that is in
one (its near-duplicate, of the same domain). The pair is drawn per job, pairs an output schema shows
preferred; each step's tool gets its own k nearest near-duplicates and a shuffled pool, as any seed
tool does. When no tool near the seed is in a pair, the job plays the default scenario.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from ..core.records import ChainInfo, Tool
from ..dialogue.results import read_argument
from ..retrieval.chains import ChainPair, is_reference, plan_chains
from ..retrieval.index import ToolIndex


class Chains:
    """The catalog's chain pairs, planned once on first use (a run without multi-step tasks never plans them)."""

    def __init__(self, tools: Sequence[Tool], index: ToolIndex) -> None:
        self.named, self.index = {t.name: t for t in tools}, index
        self._pairs: list[ChainPair] | None = None
        self._fed: dict[str, list[ChainPair]] = defaultdict(list)  # by consumer
        self._feeding: dict[str, list[ChainPair]] = defaultdict(list)  # by producer

    def pairs(self) -> list[ChainPair]:
        if self._pairs is None:
            self._pairs = plan_chains(list(self.named.values()), embed=self.index.embedder.encode)
            for pair in self._pairs:
                self._fed[pair.consumer].append(pair)
                self._feeding[pair.producer].append(pair)
        return self._pairs

    def _around(self, tool: Tool) -> list[ChainPair]:
        self.pairs()
        return self._fed.get(tool.name) or self._feeding.get(tool.name) or []

    def plan(self, tool: Tool, k: int, rng: random.Random) -> tuple[Tool, ChainInfo] | None:
        """(the second step's tool, the first step) of a task around seed tool `tool`: a producer that feeds
        it, else, when nothing does, a consumer it feeds (then `tool` is the first step), else the same
        around the nearest tool that is in a pair; drawn among the pairs with the strongest evidence.
        None when neither `tool` nor any of its `NEAREST` nearest tools is in a pair."""
        pairs = self._around(tool)
        for near in ([] if pairs else self.index.distractors(tool, NEAREST)):
            if pairs := self._around(near.tool):
                break
        if not pairs:
            return None
        best = max(_rank(p) for p in pairs)
        pair = rng.choice([p for p in pairs if _rank(p) == best])
        producer, consumer = self.named[pair.producer], self.named[pair.consumer]
        distractors = [n.tool for n in self.index.distractors(producer, k)]
        pool = [producer, *distractors]
        rng.shuffle(pool)
        return consumer, ChainInfo(tool=producer, gold={}, distractors=distractors, candidates=pool,
                                   parameter=pair.parameter, source_path=pair.source_path, evidence=pair.evidence)


NEAREST = 20  # a seed tool in no pair: its nearest tools searched for one that is


def _rank(pair: ChainPair) -> tuple[bool, float]:
    return pair.evidence == "schema", round(pair.score, 1)


def fed_values(result: Any, consumer: Tool) -> dict[str, Any]:
    """The consumer's required references (`chains.is_reference`) the first result gives, each as a reader
    of the result takes it (`results.read_argument`, what the offline assistant reads too)."""
    out = {}
    for key in consumer.required:
        schema = consumer.properties.get(key) or {}
        if is_reference(consumer, key) and (value := read_argument(result, key, schema)) is not None:
            out[key] = value
    return out
