"""What decides an evaluation run's results (`EvalSettings`), and the prompts whose wording does.

Below the run itself (`run.py`), so the command line checks its flags against these fields' bounds
without loading the evaluation (models, gateway, report).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..scenarios import section_versions as scenario_prompts
from ..settings.fingerprint import fingerprint
from ..settings.models import OFFLINE_MODEL
from ..settings.templates import prompt_versions
from .cases import Mode

DEFAULT_MAX_TURNS = 10  # dynamic: most assistant turns
DEFAULT_MAX_NEW_TOKENS = 256  # hf: tokens generated per turn
# The prompts whose wording changes an evaluation's replies (what the model under test, the proxy,
# the voters and the rubric are shown), by recorded name; other prompts may change without touching
# a run. The scenario types' user sections count too: the dynamic proxy plays scenario cases.
PROMPTS_USED = ("sft_system", "sft_system_chat", "user_tool_selection", "user_argument_filling", "eval_user_vote",
                "eval_conv_rel")


class EvalSettings(BaseModel):
    """Everything that decides a run's results; a resumed run must have the same (see `fingerprint`)."""

    model_config = ConfigDict(extra="forbid")

    benchmark: str
    model: str
    mode: Mode
    api_base: str | None = None
    tool_format: Literal["json", "native"] | None = None  # None: json for litellm models, native for hf:
    user_model: str = OFFLINE_MODEL               # dynamic: the user proxy's generator
    voter_model: str | None = None          # dynamic: None = the user model
    votes: tuple[int, int] | None = (3, 3)  # dynamic: (drafts n, voters m); None = no voting
    rubric_model: str | None = OFFLINE_MODEL      # ConvRel judge; None = no ConvRel
    max_turns: int = Field(DEFAULT_MAX_TURNS, ge=1)
    max_new_tokens: int = Field(DEFAULT_MAX_NEW_TOKENS, ge=1)
    seed: int = 0
    config: str | None = None               # YAML run config for the judge-side gateways (llm settings)
    limit: int | None = Field(None, ge=1)   # evaluate the first N cases only (may grow on resume)

    def fingerprint(self) -> str:
        """What must not change when an evaluation resumes (what may: `fingerprint.MAY_CHANGE`)."""
        versions = prompt_versions()
        used = [*PROMPTS_USED, *scenario_prompts()]
        return fingerprint("evaluate", self.model_dump(), {name: versions[name] for name in used})
