"""Persona-fit validator: the user is someone who would need the seed tool.

Reads what synthesis records in the persona's attributes: `role_fit`, how far the persona's ROLE
is from the roles that would use the tool and the tool from the tools the role would use
(pipeline/retrieval/rolefit.py: the role plausibly uses the tool up to MAX_SCORE), and `tool_fit`, the cosine between the persona's text and
the tool's (the score the persona sampler ranks by, at least MIN_FIT). The thresholds are the
sampler's own: it draws only personas that meet both and, when none in the pool does, composes one
for the tool. A dialogue with neither recorded (data made elsewhere) passes, noted as unchecked; a
composed persona has no role, so only its text is checked. Rule code: low_fit.
"""

from __future__ import annotations

from ..pipeline.core.records import FIT_ATTRIBUTE, ROLE_FIT_ATTRIBUTE, Dialogue, Verdict
from ..pipeline.retrieval.personas import MIN_FIT
from ..pipeline.retrieval.rolefit import MAX_SCORE, agrees
from .common import Problem, verdict

NAME = "persona_fit"
ATTRIBUTE = FIT_ATTRIBUTE
__all__ = ["ATTRIBUTE", "MAX_SCORE", "MIN_FIT", "NAME", "check_persona_fit"]


def _recorded(d: Dialogue, name: str) -> float | None:
    raw = d.user_persona.attributes.get(name)
    try:
        return float(raw) if raw is not None else None
    except ValueError:
        return None


def check_persona_fit(d: Dialogue) -> Verdict:
    fit, role = _recorded(d, ATTRIBUTE), _recorded(d, ROLE_FIT_ATTRIBUTE)
    if fit is None and role is None:
        return verdict(NAME, [], "no persona-tool fit recorded: not checked", checked=False)
    problems = []
    if role is not None and not agrees(role):
        problems.append(Problem("low_fit", f"the role {d.user_persona.role!r} would not use {d.seed_tool.name} "
                                           f"(role fit {role:.2f} > {MAX_SCORE:g})"))
    if fit is not None and fit < MIN_FIT:
        problems.append(Problem("low_fit", f"persona fits {d.seed_tool.name} poorly (similarity {fit:.3f} < {MIN_FIT:.2f})"))
    said = [f"similarity {fit:.3f}" if fit is not None else "", f"role fit {role:.2f}" if role is not None else ""]
    details = {k: v for k, v in (("fit", fit), ("role_fit", role)) if v is not None}
    return verdict(NAME, problems, f"persona fits the tool ({', '.join(s for s in said if s)})", checked=True, **details)
