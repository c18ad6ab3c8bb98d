"""Models looked up by role: one registry of role -> model entry, each with its own endpoint and
sampling, plus the call settings every role shares.

A run builds it from its configuration (`ModelRegistry.from_config`); evaluation builds its
entries directly (`ModelRegistry.of`). The gateway, the start-up checks and the server probe
read only this, never a whole run configuration.

An entry is resolved once, here: the role's own keys in `models:` (`settings.models.ModelSpec`), else the
`llm:` defaults, with two defaults of its own: the judges (`config.JUDGE_ROLES`) sample greedily
unless their mapping sets a temperature, and a role at a server on this machine gets the longer
local timeout unless a timeout was set.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field

from .. import simulator
from ..settings.models import JUDGE_ROLES, JUDGE_TEMPERATURE, LLMSettings, ModelSpec, is_offline

if TYPE_CHECKING:
    from ..settings.config import RunConfig

LOCAL_START_IN_FLIGHT = 2  # a local server is often one model on one thread: start low, grow on success
LOCAL_TIMEOUT = 300.0  # seconds; a local server's queue makes long waits normal
_CREDENTIAL = re.compile(r"KEY|TOKEN|SECRET|PASSWORD")


class ModelEntry(BaseModel):
    """How one role's calls are made: the litellm model string, its server, its key variable, its
    sampling and timeout, the extra request parameters sent as they are, and the structured-output
    mode configured for the role (`auto` is resolved per server at call time)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str
    api_base: str | None = None  # never set for the offline provider: it has no server
    api_key_env: str | None = None
    structured_output: str = "auto"
    temperature: float = 0.7
    max_tokens: int = 1024
    timeout: float = 60.0
    extra: dict[str, Any] = Field(default_factory=dict)

    @property
    def offline(self) -> bool:
        return is_offline(self.model)

    @property
    def endpoint(self) -> tuple[str, str | None]:
        """What calls in flight, learnt request forms and dropped parameters are kept per."""
        return self.model, self.api_base


def register_offline() -> None:
    """Adds the offline provider (`pipeline.simulator`) to litellm, once per process: the registry is
    the one module that knows the simulator, so the gateway asks it here."""
    simulator.register_provider()


def quiet_litellm() -> Any:
    """litellm, quiet and with the offline provider registered: what every use in this package expects
    (the gateway, its direct client, the failure and parameter checks ask for it here)."""
    import litellm  # lazy: litellm takes seconds to import; audit, view, catalog and --help never call a model

    litellm.suppress_debug_info = True
    register_offline()
    return litellm


def role_entry(role: str, spec: ModelSpec, llm: LLMSettings) -> ModelEntry:
    """The role's entry: its own keys over `llm`'s, with the judge and local-server defaults."""
    defaults = LLMSettings.model_fields
    if is_offline(spec.model):
        api_base = key_env = None
    else:
        api_base, key_env = spec.own("api_base", llm.api_base), spec.own("api_key_env", llm.api_key_env)
    temperature = spec.own("temperature", JUDGE_TEMPERATURE if role in JUDGE_ROLES else llm.temperature)
    local = is_local(api_base) and llm.timeout == defaults["timeout"].default
    timeout = spec.own("timeout", LOCAL_TIMEOUT if local else llm.timeout)
    return ModelEntry(model=spec.model, api_base=api_base, api_key_env=key_env,
                      structured_output=llm.structured_output_roles.get(role, llm.structured_output),
                      temperature=temperature, max_tokens=spec.own("max_tokens", llm.max_tokens), timeout=timeout,
                      extra=dict(spec.extra))


@dataclass
class ModelRegistry:
    """role -> ModelEntry, and the settings every call shares (retries, cache, in-flight limits, tool
    format), with the local-server defaults applied (see `effective`)."""

    entries: dict[str, ModelEntry]
    llm: LLMSettings = field(default_factory=lambda: LLMSettings.model_validate({}))

    @classmethod
    def of(cls, models: Mapping[str, str | ModelSpec], llm: LLMSettings | None = None) -> ModelRegistry:
        """Entries for `models` (role -> model string, or a role's own mapping), over `llm`'s defaults."""
        llm = llm or LLMSettings.model_validate({})
        entries = {role: role_entry(role, spec if isinstance(spec, ModelSpec) else ModelSpec(model=spec), llm)
                   for role, spec in models.items()}
        return cls(entries, llm)

    @classmethod
    def from_config(cls, config: RunConfig) -> ModelRegistry:
        """Entries for the roles the run calls (`RunConfig.roles`: a switched role only when it is on)."""
        return cls.of(config.models.specs(config.roles()), config.llm)

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
        default (a longer timeout for a server on this machine), and the first in-flight limit of
        `llm.api_base`'s endpoints (see `start_in_flight`). Each entry carries its own timeout."""
        settings = self.llm
        defaults = type(settings).model_fields
        if is_local(settings.api_base) and self.remote() and settings.timeout == defaults["timeout"].default:
            settings = settings.model_copy(update={"timeout": LOCAL_TIMEOUT})
        return settings, self.start_in_flight(settings.api_base if self.remote() else None)

    def start_in_flight(self, api_base: str | None) -> int | None:
        """The first in-flight limit of an endpoint at `api_base`: `llm.start_in_flight` when set, else a
        low start for a server on this machine, else None (the maximum)."""
        start = self.llm.start_in_flight
        if start is None and is_local(api_base):
            start = LOCAL_START_IN_FLIGHT
        return None if start is None else min(start, self.llm.max_in_flight)


def registry_of(models: ModelRegistry | RunConfig) -> ModelRegistry:
    return models if isinstance(models, ModelRegistry) else ModelRegistry.from_config(models)


def is_local(api_base: str | None) -> bool:
    """True for a server on this machine (127.0.0.1, localhost, ::1)."""
    if not api_base:
        return False

    return (urlparse(api_base).hostname or "") in ("127.0.0.1", "localhost", "::1", "0.0.0.0")


def check_models(models: ModelRegistry | RunConfig) -> list[str]:
    """What would make every call to a role's model fail, found before the first call.

    Unknown providers and credentials missing from the environment; API bases are left to
    litellm's defaults (Ollama's local port, for one), so only credential variables count.
    """
    litellm = quiet_litellm()
    registry = registry_of(models)
    shared = registry.llm.api_key_env
    problems = []
    # Each key variable once: `llm.api_key_env` for the roles that take it from there, else the roles naming it.
    unset: dict[str, list[str]] = {}
    for role in registry.remote():
        key_env = registry.entries[role].api_key_env
        if key_env and not os.environ.get(key_env):
            unset.setdefault(key_env, []).append(role)
    for key_env, roles in unset.items():
        where = "llm.api_key_env" if key_env == shared else f"models.{'/'.join(roles)}.api_key_env"
        problems.append(f"{where}: the environment variable {key_env} is not set")
    groups: dict[tuple[str, str | None, str | None], list[str]] = {}
    for role in registry.remote():
        e = registry.entries[role]
        groups.setdefault((e.model, e.api_base, e.api_key_env), []).append(role)
    for (model, base, key_env), roles in groups.items():
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
                            "that ignores keys any value will do), or name another variable in llm.api_key_env "
                            "or in the role's own api_key_env")
    return problems
