"""Models looked up by role: one registry of role -> model entry, plus the call settings they share.

A run builds it from its configuration (`ModelRegistry.from_config`); evaluation builds its
entries directly (`ModelRegistry.of`). The gateway, the start-up checks and the server probe
read only this, never a whole run configuration.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from ..config import LLMSettings
from . import offline

if TYPE_CHECKING:
    from ..config import RunConfig

LOCAL_START_IN_FLIGHT = 2  # a local server is often one model on one thread: start low, grow on success
LOCAL_TIMEOUT = 300.0  # seconds; a local server's queue makes long waits normal
_CREDENTIAL = re.compile(r"KEY|TOKEN|SECRET|PASSWORD")


class ModelEntry(BaseModel):
    """How one role's calls are made: the litellm model string, its server, its key variable and
    the structured-output mode configured for the role (`auto` is resolved per server at call time)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str
    api_base: str | None = None  # never set for the offline provider: it has no server
    api_key_env: str | None = None
    structured_output: str = "auto"

    @property
    def offline(self) -> bool:
        return offline.is_offline(self.model)


@dataclass
class ModelRegistry:
    """role -> ModelEntry, and the settings every call shares (sampling, timeouts, retries, cache,
    in-flight limits, tool format), with the local-server defaults applied (see `effective`)."""

    entries: dict[str, ModelEntry]
    llm: LLMSettings = field(default_factory=lambda: LLMSettings.model_validate({}))

    @classmethod
    def of(cls, models: dict[str, str], llm: LLMSettings | None = None) -> ModelRegistry:
        """Entries for `models` (role -> model string), sharing `llm`'s server, key and modes."""
        llm = llm or LLMSettings.model_validate({})
        entries = {
            role: ModelEntry(model=model, api_base=None if offline.is_offline(model) else llm.api_base,
                             api_key_env=None if offline.is_offline(model) else llm.api_key_env,
                             structured_output=llm.structured_output_roles.get(role, llm.structured_output))  # type: ignore[call-overload]
            for role, model in models.items()
        }
        return cls(entries, llm)

    @classmethod
    def from_config(cls, config: RunConfig) -> ModelRegistry:
        return cls.of(config.models.model_dump(), config.llm)

    def entry(self, role: str) -> ModelEntry:
        try:
            return self.entries[role]
        except KeyError:
            raise KeyError(f"no model for role '{role}'; roles with a model: {', '.join(self.entries)}") from None

    def models(self) -> dict[str, str]:
        """role -> model string."""
        return {role: e.model for role, e in self.entries.items()}

    def remote(self) -> list[str]:
        """The roles whose model is not the offline provider."""
        return [role for role, e in self.entries.items() if not e.offline]

    def effective(self) -> tuple[LLMSettings, int | None]:
        """The shared settings with the local-server defaults applied where the user kept the shipped
        default (a longer timeout for a server on this machine), and the first in-flight limit:
        `llm.start_in_flight` when set, else a low start for a local server, else None (the maximum)."""
        settings = self.llm
        defaults = type(settings).model_fields
        start = settings.start_in_flight
        if is_local(settings.api_base) and self.remote():
            if settings.timeout == defaults["timeout"].default:
                settings = settings.model_copy(update={"timeout": LOCAL_TIMEOUT})
            if start is None:
                start = LOCAL_START_IN_FLIGHT
        return settings, None if start is None else min(start, settings.max_in_flight)


def registry_of(models: ModelRegistry | RunConfig) -> ModelRegistry:
    return models if isinstance(models, ModelRegistry) else ModelRegistry.from_config(models)


def effective_settings(models: ModelRegistry | RunConfig) -> tuple[LLMSettings, int | None]:
    return registry_of(models).effective()


def is_local(api_base: str | None) -> bool:
    """True for a server on this machine (127.0.0.1, localhost, ::1)."""
    if not api_base:
        return False
    from urllib.parse import urlparse

    return (urlparse(api_base).hostname or "") in ("127.0.0.1", "localhost", "::1", "0.0.0.0")


def check_models(models: ModelRegistry | RunConfig) -> list[str]:
    """What would make every call to a role's model fail, found before the first call.

    Unknown providers and credentials missing from the environment; API bases are left to
    litellm's defaults (Ollama's local port, for one), so only credential variables count.
    """
    from .gateway import quiet_litellm

    litellm = quiet_litellm()
    registry = registry_of(models)
    roles_of: dict[str, list[str]] = {}
    for role in registry.remote():
        roles_of.setdefault(registry.entries[role].model, []).append(role)
    problems = []
    key_env = registry.llm.api_key_env
    if roles_of and key_env and not os.environ.get(key_env):
        problems.append(f"llm.api_key_env: the environment variable {key_env} is not set")
    for model, roles in roles_of.items():
        base = registry.entries[roles[0]].api_base
        source = " (from UTCGEN_MODEL)" if os.environ.get("UTCGEN_MODEL") == model else ""
        where = f"models.{'/'.join(roles)} = {model!r}{source}"
        try:
            litellm.get_llm_provider(model, api_base=base)
        except litellm.BadRequestError:
            problems.append(f"{where}: litellm knows no provider for it; write it as provider/model, "
                            "e.g. openai/gpt-4o-mini or hosted_vllm/<name>")
            continue
        if key_env:
            continue
        found = litellm.validate_environment(model=model, api_base=base)
        missing = [key for key in found.get("missing_keys", []) if _CREDENTIAL.search(key)]
        if missing:
            problems.append(f"{where}: needs {' and '.join(missing)} in the environment (for a local server "
                            "that ignores keys any value will do), or name another variable in llm.api_key_env")
    return problems
