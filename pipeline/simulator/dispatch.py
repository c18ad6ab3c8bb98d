"""Which policy plays each role: every policy module registers its functions here when it is
imported (`@policy("user")`), and `respond` looks the role up. A new role is a new registered
function; nothing else names it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# a policy takes its role's typed request (`pipeline.llm.requests`) and the rendered messages
Policy = Callable[[Any, list[dict]], str]
POLICIES: dict[str, Policy] = {}


def policy(role: str) -> Callable[[Policy], Policy]:
    """Registers the decorated function as the policy that plays `role`; one policy per role."""

    def register(fn: Policy) -> Policy:
        if role in POLICIES:
            raise ValueError(f"the offline backend already has a policy for role '{role}'")
        POLICIES[role] = fn
        return fn

    return register


def policy_for(role: str) -> Policy:
    """The registered policy for `role`; ValueError when none is."""
    try:
        return POLICIES[role]
    except KeyError:
        raise ValueError(f"offline backend has no policy for role '{role}'") from None
