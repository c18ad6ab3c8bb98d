"""What the export needs to know about the run, beyond the dialogues themselves."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .. import __version__
from ..core.records import Usage
from ..settings.templates import prompt_versions


class RunInfo(BaseModel):
    """Run-level facts recorded in stats.json and shown in the dataset card."""

    model_config = ConfigDict(extra="forbid")

    backend: Literal["offline", "litellm"]
    models: dict[str, str] = Field(description="Model of each role.")
    seed: int
    requested: int | None = Field(None, description="Accepted dialogues asked for.")
    catalog: str | None = None
    config: dict[str, Any] | None = Field(None, description="The run configuration, as JSON values.")
    prompt_versions: dict[str, str] = Field(default_factory=prompt_versions)
    usage: Usage | None = Field(
        None, description="Calls, tokens and cost of the run; None: the sum over the exported dialogues."
    )
    wall_time_s: float | None = None
    llm: dict[str, Any] | None = Field(
        None, description="How the run called its models: spend over every journaled job and the budget, "
        "retries by reason, and the adaptive calls-in-flight limit of each endpoint (final value, bounded trace)."
    )
    utcgen_version: str = __version__
    # For the card only.
    pretty_name: str = "utcgen synthetic disambiguation tool-calling dialogues"
    license: str = "apache-2.0"
    repo_id: str | None = None

    @property
    def offline(self) -> bool:
        """True when no language model was called: the built-in offline backend wrote every reply."""
        return self.backend == "offline"
