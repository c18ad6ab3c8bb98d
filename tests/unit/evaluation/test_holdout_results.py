"""A benchmark case made of a dialogue with tool results: its reference is the disambiguation up to the
first call, so a static replay gives the model no user turn from after a result."""

from __future__ import annotations

import numpy as np

from tests.support.factories import make_dialogue
from tests.support.tool_results import with_results
from utcgen.pipeline.evaluation.families import Similarity
from utcgen.pipeline.evaluation.holdout import build_case


class _Ones:
    def encode(self, texts: list[str]) -> np.ndarray:
        return np.ones((len(texts), 4))


def test_the_reference_of_a_dialogue_with_results_ends_at_its_first_call() -> None:
    plain = make_dialogue(id="plain")
    tools = [plain.seed_tool, *plain.distractor_tools]
    similarity = Similarity(tools, _Ones())
    family = {t.name: t.name for t in tools}
    by_name = {t.name: t for t in tools}
    before, _ = build_case(plain, by_name, family, similarity)
    after, _ = build_case(with_results(plain, error_first=True), by_name, family, similarity)
    assert after.reference == before.reference
    assert after.reference[-1].tool_calls and sum(bool(m.tool_calls) for m in after.reference) == 1
