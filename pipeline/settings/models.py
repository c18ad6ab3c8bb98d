"""Which model each role uses and how it is called: the `models:` and `llm:` sections of a run config."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    SerializerFunctionWrapHandler,
    Tag,
    field_validator,
    model_serializer,
    model_validator,
)

OFFLINE_PROVIDER = "utcgen-offline"  # the offline backend's litellm provider prefix
OFFLINE_MODEL = f"{OFFLINE_PROVIDER}/default"


def is_offline(model: str) -> bool:
    """Whether a litellm model string names the offline backend."""
    return str(model).startswith(f"{OFFLINE_PROVIDER}/")


class Strict(BaseModel):
    """A settings section that refuses unknown keys: a misspelt key fails instead of being ignored."""

    model_config = ConfigDict(extra="forbid")


# Request fields the gateway sets itself: a role's `extra` may not carry them (the sampling ones have
# their own keys in the role's mapping).
OWN_REQUEST_FIELDS = frozenset({"model", "messages", "api_base", "api_key", "base_url", "timeout", "num_retries",
                                "metadata", "stream", "tools", "response_format", "temperature", "max_tokens",
                                "max_completion_tokens"})


class ModelSpec(Strict):
    """One role's model and, where given, its own endpoint and sampling: each key set here overrides
    the `llm:` default for that role only; a key left out keeps the default."""

    model: str
    # Left out: `llm.api_base` / `llm.api_key_env`. Set to null: none for this role (the provider's own
    # endpoint, the provider's own key variable), whatever `llm:` says.
    api_base: str | None = None
    api_key_env: str | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, ge=16)
    timeout: float | None = Field(default=None, gt=0)
    # More request parameters sent as they are, e.g. {reasoning_effort: low} or {top_p: 0.9}.
    extra: dict[str, Any] = Field(default_factory=dict)

    @field_validator("extra")
    @classmethod
    def _not_own(cls, value: dict[str, Any]) -> dict[str, Any]:
        if clash := sorted(set(value) & OWN_REQUEST_FIELDS):
            raise ValueError(f"{', '.join(clash)} cannot be set in extra: the gateway sets "
                             f"{'it' if len(clash) == 1 else 'them'} (temperature and max_tokens have their own keys)")
        return value

    @model_serializer(mode="wrap")
    def _compact(self, handler: SerializerFunctionWrapHandler) -> Any:
        """Only the keys set; a mapping naming nothing but its model is written as the model string, so
        `{model: X}` and `X` are the same setting (and the same fingerprint)."""
        explicit = self.model_fields_set & {"api_base", "api_key_env"}  # a null that overrides `llm:`
        data = {k: v for k, v in handler(self).items() if k == "model" or k in explicit or v not in (None, {})}
        return data["model"] if len(data) == 1 else data

    def own(self, key: str, default: Any) -> Any:
        """This role's value of `key` when its mapping sets it (api_base and api_key_env may be set to
        null), else `default`."""
        value = getattr(self, key)
        if key in ("api_base", "api_key_env"):
            return value if key in self.model_fields_set else default
        return default if value is None else value


# The tags of a role's two forms; a validation error's location leaves them out (`field_path`).
_STRING, _MAPPING = "model string", "model mapping"
# A role's model: a string, or a mapping (validated as one only, so an error names the mapping's field).
RoleModel = Annotated[
    Annotated[str, Tag(_STRING)] | Annotated[ModelSpec, Tag(_MAPPING)],
    Discriminator(lambda v: _MAPPING if isinstance(v, dict | ModelSpec) else _STRING),
]


def field_path(loc: tuple[int | str, ...]) -> str:
    """A pydantic error location as the dotted field name a config file shows (`models.user.temperature`)."""
    return ".".join(str(p) for p in loc if p not in (_STRING, _MAPPING))


# Roles played only when a setting switches their feature on, by that setting's dotted name. Such a role
# has its model in `models:` like any other; a run without the feature never calls it, so it is left out
# of what such a run records (`generation.models`), hashes and writes of its config at the default.
SWITCHED_ROLES: dict[str, str] = {"tool_result": "execution.results"}


class Models(Strict):
    """role -> its model: a litellm model string, or a `ModelSpec` mapping with its own endpoint."""

    goal: RoleModel = OFFLINE_MODEL
    slots: RoleModel = OFFLINE_MODEL
    user: RoleModel = OFFLINE_MODEL
    assistant: RoleModel = OFFLINE_MODEL
    relevancy: RoleModel = OFFLINE_MODEL
    critic: RoleModel = OFFLINE_MODEL
    tool_result: RoleModel = OFFLINE_MODEL  # plays the tool: only with `execution.results`

    @model_serializer(mode="wrap")
    def _switched_at_default(self, handler: SerializerFunctionWrapHandler) -> Any:
        """A switched role at the default model is not written: a config dumps (and its run records)
        what it did before the role existed."""
        data = handler(self)
        for role in SWITCHED_ROLES:
            if getattr(self, role) == OFFLINE_MODEL:
                data.pop(role, None)
        return data

    def spec(self, role: str) -> ModelSpec:
        """The role's setting as a mapping (a bare string is `{model: ...}`)."""
        value = getattr(self, role)
        return value if isinstance(value, ModelSpec) else ModelSpec(model=value)

    def specs(self, roles: Iterable[str] | None = None) -> dict[str, ModelSpec]:
        """role -> its setting, for `roles` (default: `ROLES`, the roles every run calls)."""
        return {role: self.spec(role) for role in (ROLES if roles is None else roles)}

    def names(self, roles: Iterable[str] | None = None) -> dict[str, str]:
        """role -> litellm model string, for `roles` (default `ROLES`): what every dialogue records in
        `generation.models`."""
        return {role: spec.model for role, spec in self.specs(roles).items()}


# Every role with a model in `models:`, the fields of `Models`: their one definition.
MODEL_ROLES: tuple[str, ...] = tuple(Models.model_fields)
# The generation roles every run calls (a switched role joins them in the runs that switch it on:
# `RunConfig.roles`).
ROLES: tuple[str, ...] = tuple(r for r in MODEL_ROLES if r not in SWITCHED_ROLES)
# The judges: greedy (temperature 0) unless their own mapping in `models:` sets a temperature.
JUDGE_ROLES: tuple[str, ...] = ("relevancy", "critic")
JUDGE_TEMPERATURE = 0.0


def model_name(value: Any) -> str:
    """The litellm model string of a role's setting as written or dumped: a string or a mapping with `model`."""
    if isinstance(value, ModelSpec):
        return value.model
    if isinstance(value, dict):
        return str(value.get("model", ""))
    return str(value)


class LLMSettings(Strict):
    api_base: str | None = None
    api_key_env: str | None = None
    temperature: float = Field(0.7, ge=0, le=2)
    max_tokens: int = Field(1024, ge=16)
    max_in_flight: int = Field(32, ge=1)
    # The first limit of calls in flight per endpoint, before AIMD adapts it (never above
    # max_in_flight). None: 2 for a server on this machine (often one model on one thread),
    # else max_in_flight. Either way the limit grows in slow start until the first 429.
    start_in_flight: int | None = Field(None, ge=1)
    timeout: float = Field(60, gt=0)
    max_retries: int = Field(6, ge=0)
    # A call that fails through its retries rejects its own dialogue; the run stops only when an
    # endpoint keeps failing: this many such calls in a row, or this share of its last 50 calls.
    abort_after_failures: int = Field(10, ge=1, le=10_000)
    abort_failure_rate: float = Field(0.5, gt=0, le=1)
    backoff_base: float = Field(0.5, ge=0)
    backoff_max: float = Field(30, ge=0)
    cache: bool = True
    cache_dir: str | None = None
    # `openai/<name>` at an api_base: send the call with utcgen's own lean client (litellm's request
    # and errors, much less CPU per call; `llm.direct`) instead of through litellm. Other providers
    # always go through litellm.
    direct_client: bool = True
    # How replies are constrained (see pipeline/llm/structured.py): auto | json_schema | json_object | off,
    # for every role, then per role in structured_output_roles (e.g. {user: off}).
    structured_output: Literal["auto", "json_schema", "json_object", "off"] = "auto"
    structured_output_roles: dict[str, Literal["auto", "json_schema", "json_object", "off"]] = Field(
        default_factory=dict)  # keys: MODEL_ROLES
    # The assistant's tool calls: inside its JSON reply (json), or as the API's own tool calls (native).
    tool_format: Literal["json", "native"] = "json"

    @model_validator(mode="before")
    @classmethod
    def _no_send_state(cls, value: Any) -> Any:
        if isinstance(value, dict) and "send_state" in value:
            raise ValueError("llm.send_state is gone: no state is sent to a server any more (the offline backend "
                             "gets each role's typed request in-process); delete the key")
        return value

    @field_validator("structured_output", mode="before")
    @classmethod
    def _yaml_off(cls, value: Any) -> Any:
        return "off" if value is False else value  # YAML 1.1 reads a bare `off` as false

    @field_validator("structured_output_roles", mode="before")
    @classmethod
    def _yaml_off_roles(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        if unknown := sorted(set(value) - set(MODEL_ROLES)):
            raise ValueError(f"unknown role(s) {', '.join(map(str, unknown))}; roles are {', '.join(MODEL_ROLES)}")
        return {k: "off" if v is False else v for k, v in value.items()}
