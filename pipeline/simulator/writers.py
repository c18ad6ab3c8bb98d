"""The goal and slot writers: the goal a persona states for a seed tool, and the values it holds
for the tool's required parameters (schema-driven, `gold_values`), from their typed requests."""

from __future__ import annotations

import json
from typing import Any

from ..llm.requests import GoalRequest, SlotsRequest
from . import gold_values as values
from .dispatch import policy
from .goal_text import goal_text
from .seeding import seeded


@policy("goal")
def goal(request: GoalRequest, messages: list[dict]) -> str:
    """`{"goal": ...}`: the persona's need for the seed tool, in the first person (`goal_text`)."""
    rng = seeded(request.seed, request.tool.name, request.persona.role, "goal")
    return json.dumps({"goal": goal_text(request.tool, request.persona, rng)}, ensure_ascii=False)


@policy("slots")
def slots(request: SlotsRequest, messages: list[dict]) -> str:
    """`{"arguments": ...}`: a value for each required parameter, two parameters never sharing one."""
    tool, persona = request.tool, request.persona
    props = tool.properties
    rng = seeded(request.seed, tool.name, "slots", request.attempt)
    args: dict[str, Any] = {}
    for k in request.required:
        schema = props.get(k, {"type": "string"})
        value = values.gold_value(k, schema, persona, rng, tool)
        taken = {str(v).lower() for v in args.values()}
        for attempt in range(6):  # two parameters, two values: an origin is not its own destination
            if not (isinstance(value, str) and value.lower() in taken):
                break
            anyone = persona if attempt < 3 else persona.model_copy(update={"attributes": {}})  # past the persona's own city
            value = values.gold_value(k, schema, anyone, rng, tool)
        args[k] = value
    return json.dumps({"arguments": values.consistent(args, rng)}, ensure_ascii=False)
