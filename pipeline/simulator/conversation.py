"""The generation roles that converse: the user proxy and the assistant. A user request that
plays a scenario type (its `scenario`), or an assistant request under the prompts that also cover
refusing (`may_decline`), goes to the scenario policies; every other one to the plain
disambiguation protocol (`user`, `assistant`)."""

from __future__ import annotations

import json

from ..llm.requests import AssistantRequest, UserRequest
from . import assistant as plain_assistant
from . import scenario_assistant, scenario_user
from . import user as proxy
from .dispatch import policy


@policy("user")
def user(request: UserRequest, messages: list[dict]) -> str:
    """The user proxy's reply: `{"message": ...}`, as the user prompts ask."""
    said = scenario_user.scenario_user_text(request) if request.scenario else proxy.user_text(request)
    return json.dumps({"message": said}, ensure_ascii=False)


@policy("assistant")
def assistant(request: AssistantRequest, messages: list[dict]) -> str:
    """The generation assistant's turn in the JSON reply protocol."""
    if request.may_decline:
        return scenario_assistant.reply(request)
    return plain_assistant.reply(request)
