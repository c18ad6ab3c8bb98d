"""Persona-fit validator: the user is someone who would need the seed tool.

Reads the cosine similarity between the persona's text and the seed tool's text that
synthesis records in the persona's attributes (`tool_fit`, the score the persona
sampler ranks by) and fails below MIN_FIT. The threshold is the sampler's own
(pipeline/retrieval/personas.py): the sampler draws only personas that reach it and,
when none in the pool does, composes one for the tool. A dialogue without a recorded
score (data made elsewhere) passes, noted as unchecked. Rule code: low_fit.
"""

from __future__ import annotations

from ..pipeline.core.records import FIT_ATTRIBUTE, Dialogue, Verdict
from ..pipeline.retrieval.personas import MIN_FIT
from .common import Problem, verdict

NAME = "persona_fit"
ATTRIBUTE = FIT_ATTRIBUTE
__all__ = ["ATTRIBUTE", "MIN_FIT", "NAME", "check_persona_fit"]


def check_persona_fit(d: Dialogue) -> Verdict:
    raw = d.user_persona.attributes.get(ATTRIBUTE)
    try:
        fit = float(raw) if raw is not None else None
    except ValueError:
        fit = None
    if fit is None:
        return verdict(NAME, [], "no persona-tool fit recorded: not checked", checked=False)
    problems = [] if fit >= MIN_FIT else [
        Problem("low_fit", f"persona fits {d.seed_tool.name} poorly (similarity {fit:.3f} < {MIN_FIT:.2f})")]
    return verdict(NAME, problems, f"persona fits the tool (similarity {fit:.3f})", checked=True, fit=fit)
