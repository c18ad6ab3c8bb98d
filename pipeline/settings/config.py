"""Run configuration: YAML file -> typed model, with CLI and environment overrides."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_serializer,
)

from ..core.errors import InputError
from ..core.records import DECISION_STYLES, DEFAULT_SCENARIO
from ..core.resources import resolve, shipped
from ..scenarios import get as scenario_type
from ..scenarios import names as scenario_names
from .fingerprint import TEMPLATES, fingerprint, switch_on
from .models import MODEL_ROLES, ROLES, SWITCHED_ROLES, LLMSettings, Models, Strict, field_path, is_offline
from .templates import SWITCHED_PROMPTS, prompt_versions, prompts_from, template_digests


class SynthesisSettings(Strict):
    k_distractors: int = Field(5, ge=1, le=50)
    persona_top_k: int = Field(8, ge=1)
    max_turns: int = Field(10, ge=1, le=50)
    max_attempts: int = Field(5, ge=1, le=20)
    slot_retries: int = Field(3, ge=0)
    reply_retries: int = Field(2, ge=0)
    # Seed jobs synthesised at once. None: twice llm.max_in_flight, so that every call slot has a job
    # with a call to make while others validate, journal or wait for their next turn (`jobs_in_flight`).
    max_jobs_in_flight: int | None = Field(None, ge=1)
    # Use call slots that would sit idle (the end of a run) for work the dataset may need: a job's next
    # attempt before its current one is judged, and a few jobs past the expected prefix. Results are
    # the same; some of those calls are thrown away. Off: no call the dataset may not need, a slower end.
    # Never for the offline backend (its calls are CPU, not waiting).
    speculate: bool = True
    # Stop the run when this many jobs in a row (in order of completion) were rejected for the same
    # reason category (e.g. "unparseable reply"): the model or prompt is failing the same way. 0 = never.
    stop_after_same_rejections: int = Field(20, ge=0)
    # The low-acceptance stop, whatever the mix of reasons (`synthesis.schedule.check_acceptance`): once
    # the run's finished jobs hold `stop_min_attempts` attempts (at least 5 per job slot,
    # `max_jobs_in_flight`) and none was accepted, or twice that many and fewer than
    # `stop_min_acceptance` of them were, the run stops with exit 1. 0 = never.
    stop_min_attempts: int = Field(50, ge=1, le=1_000_000)
    stop_min_acceptance: float = Field(0.02, ge=0, le=1)
    # Give the assistant the question planner's best next question (`planning.next_question`) as a
    # private note in its prompt (prompts/assistant_hint_*.txt). Off: the prompts are today's.
    plan_hint: bool = False
    # Prompts show at most this many characters of a tool's description and of its parameters'
    # JSON Schema; longer ones are cut with one warning naming the tool (a 1 MB description would
    # make every prompt about 250k tokens). The records keep the tool whole.
    max_description_chars: int = Field(2000, ge=100, le=1_000_000)
    max_schema_chars: int = Field(8000, ge=200, le=1_000_000)
    # Distractors come from an exact index up to this many catalog tools, from an approximate (IVF)
    # one above it (`retrieval.index`): faster at 10^5+ tools, and may pick another near neighbour.
    exact_search_up_to: int = Field(50_000, ge=2)


class BudgetSettings(Strict):
    """Spend limits over the whole run, resumes included; None = no limit. Not part of the
    fingerprint: a stopped run resumes with a higher budget."""

    max_cost_usd: float | None = Field(None, gt=0)  # a budget of nothing would stop before the first call
    max_tokens: int | None = Field(None, ge=1)


class ExportSettings(Strict):
    """How the dataset folder is written; not part of the fingerprint (a resume may re-export differently)."""

    # sft rows: chat = OpenAI messages with reasoning_content and native tool_calls; json = one JSON reply string.
    sft_format: Literal["chat", "json"] = "chat"
    # Local tokenizer folder for the token-length statistics; None = a byte-based estimate.
    tokenizer: str | None = None
    # A parquet shard is closed once it holds this many MB of Arrow data (as `datasets.push_to_hub` does).
    shard_mb: float = Field(500.0, gt=0)
    # Turns per role the card's fluency figures score (export.fluency; the `fluency` extra): 0 = not measured.
    # About 0.2 s a turn on two cores, plus a few seconds to load the model (half a minute the first time).
    fluency_turns: int = Field(0, ge=0)


class ExecutionSettings(Strict):
    """After the call: whether each tool call gets its result (the `tool_result` role plays the tool),
    and the share of those results that are errors (`dialogue.outcomes.result_error`). Off: the
    dialogues end at the call, as every run made before the setting existed."""

    results: bool = False
    error_share: float = Field(0.15, ge=0, le=1)


DEFAULT_SCENARIOS = {DEFAULT_SCENARIO: 1.0}


def _weights(value: Any, allowed: tuple[str, ...], what: str) -> dict[str, float]:
    """A {name: weight} mix: known names, finite weights >= 0, at least one above 0 (an empty mix is allowed
    only where the caller says so)."""
    if not isinstance(value, dict):
        raise ValueError(f"expected a mapping of {what} to weights, got {type(value).__name__}")
    out: dict[str, float] = {}
    for name, weight in value.items():
        if name not in allowed:
            raise ValueError(f"unknown {what[:-1]} '{name}'; known: {', '.join(allowed)}")
        if isinstance(weight, bool) or not isinstance(weight, int | float) or not math.isfinite(weight) or weight < 0:
            raise ValueError(f"{what[:-1]} '{name}': weight must be a finite number >= 0, got {weight!r}")
        out[name] = float(weight)
    if out and not any(out.values()):
        raise ValueError(f"every {what[:-1]} weight is 0: give at least one a positive weight")
    return out


class RunConfig(Strict):
    catalog: str = "catalog/tools"
    personas: str = "catalog/personas.jsonl"
    persona_field: str | None = None  # the field holding each persona's text (default: detected)
    num_dialogues: int = Field(60, ge=1)
    seed: int = Field(0, ge=-(2**63), le=2**63 - 1)  # a 64-bit integer: it is stored in every record's parquet row
    # A benchmark's split.json (`utcgen eval build`): its held-out tools are removed from the catalog
    # before retrieval, so they are neither seed tools nor distractors of this run.
    exclude_split: str | None = None
    # Leave out catalog tools that cannot be imported (listed at start-up) instead of refusing the
    # catalog; the run still needs two usable tools (`--skip-invalid`).
    skip_invalid: bool = False
    out: str = "output"
    # Where this run's relative paths (catalog, personas, exclude_split, out) are read from; unset: the
    # working directory. The flow sets its own, so Dask workers started in other folders open the same
    # files; only where they are read changes, never which content (inputs.json digests it).
    workdir: str | None = None
    # Scenario types drawn per seed job, by weight (pipeline/scenarios/, drawn in pipeline/synthesis/draw.py). The default makes
    # today's disambiguation dialogues only; e.g. {disambiguation: 0.5, explicit: 0.1, ...} mixes them.
    scenarios: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_SCENARIOS))
    # User decision styles drawn per seed job, by weight; empty = none (the user proxy answers as before).
    decision_styles: dict[str, float] = Field(default_factory=dict)
    # How the embedding model runs (`retrieval.embeddings.BACKENDS`): torch (sentence-transformers), onnx
    # (the same vectors, faster), onnx-int8 (faster still, slightly different vectors and neighbours) or
    # openvino-int8 (the fastest and closer to torch than onnx-int8; the `openvino` extra).
    embeddings: Literal["torch", "onnx", "onnx-int8", "openvino-int8"] = "torch"
    # A folder of the user's own prompt templates (file names as in prompts/, e.g. user.txt): each file
    # there replaces the shipped template of its name, the others stay in force (`utcgen prompts export`
    # writes the shipped ones out to edit). Their texts enter the fingerprint; unset: the shipped ones.
    prompts_dir: str | None = None
    synthesis: SynthesisSettings = Field(default_factory=lambda: SynthesisSettings.model_validate({}))
    models: Models = Field(default_factory=Models)
    llm: LLMSettings = Field(default_factory=lambda: LLMSettings.model_validate({}))
    export: ExportSettings = Field(default_factory=lambda: ExportSettings.model_validate({}))
    budget: BudgetSettings = Field(default_factory=lambda: BudgetSettings.model_validate({}))
    execution: ExecutionSettings = Field(default_factory=lambda: ExecutionSettings.model_validate({}), validate_default=True)

    @model_serializer(mode="wrap")
    def _execution_at_default(self, handler: SerializerFunctionWrapHandler) -> Any:
        """`execution` at its default is not written: a config dumps (and its run records in run.json and
        stats.json) what it did before the section existed."""
        data = handler(self)
        if self.execution == ExecutionSettings.model_validate({}):
            data.pop("execution", None)
        return data

    @field_validator("scenarios", mode="before")
    @classmethod
    def _scenario_mix(cls, value: Any) -> Any:
        mix = _weights(value, scenario_names(), "scenarios")
        if not mix:
            raise ValueError("the scenario mix is empty: give at least one scenario a positive weight")
        return mix

    @field_validator("execution")
    @classmethod
    def _chains_need_results(cls, value: ExecutionSettings, info: ValidationInfo) -> ExecutionSettings:
        """A multi-step task's second call takes a value from the first one's result: results must be on."""
        mix = info.data.get("scenarios") or {}
        chained = [name for name, weight in mix.items() if weight > 0 and scenario_type(name).chained]
        if chained and not value.results:
            raise ValueError(f"scenarios.{chained[0]} needs tool results: set results: true here")
        return value

    @field_validator("decision_styles", mode="before")
    @classmethod
    def _style_mix(cls, value: Any) -> Any:
        return _weights(value or {}, tuple(DECISION_STYLES), "decision_styles")

    def located(self, path: str) -> Path:
        """`path` as this process opens it: under `workdir` when relative (a shipped file such as
        `catalog/tools` that is not there is the one of this install), else as given."""
        given = Path(path)
        if given.is_absolute() or not self.workdir:
            return given
        there = Path(self.workdir) / given
        if there.exists():
            return there
        installed = Path(resolve(path))
        return installed if installed.is_absolute() else there

    def jobs_in_flight(self) -> int:
        """Seed jobs run at once: `synthesis.max_jobs_in_flight`, or twice the call slots when unset."""
        return self.synthesis.max_jobs_in_flight or 2 * self.llm.max_in_flight

    def switched_on(self) -> frozenset[str]:
        """The dotted names of the feature switches this run turns on (`models.SWITCHED_ROLES`,
        `templates.SWITCHED_PROMPTS`)."""
        return frozenset({"execution.results"} if self.execution.results else ())

    def roles(self) -> tuple[str, ...]:
        """The roles this run calls: every generation role, and each switched role whose feature is on."""
        on = self.switched_on()
        return ROLES + tuple(role for role, switch in SWITCHED_ROLES.items() if switch in on)

    def backend(self) -> Literal["offline", "litellm"]:
        """`offline` when every role this run calls uses the built-in offline provider, else `litellm`."""
        offline = all(is_offline(m) for m in self.models.names(self.roles()).values())
        return "offline" if offline else "litellm"

    def prompt_versions(self) -> dict[str, str]:
        """The versions of the prompts this run may render (its own templates', under `prompts_dir`):
        what its records and its fingerprint list."""
        with prompts_from(self.prompts_folder()):
            return prompt_versions(switched_on=self.switched_on())

    def prompts_folder(self) -> Path | None:
        """`prompts_dir` as this process opens it; None: the shipped templates only."""
        return self.located(self.prompts_dir) if self.prompts_dir else None

    def fingerprint_settings(self) -> dict[str, Any]:
        """The settings the fingerprint hashes and a run's manifest records: every setting, and with
        `prompts_dir` the digests of the user's templates (`fingerprint.TEMPLATES`)."""
        settings = self.model_dump()
        on = self.switched_on()  # a switched template whose switch is off is never rendered: not hashed
        if digests := {name: digest for name, digest in template_digests(self.prompts_folder()).items()
                       if SWITCHED_PROMPTS.get(Path(name).stem, "") in ("", *on)}:
            settings[TEMPLATES] = digests
        return settings

    def fingerprint(self) -> str:
        """What must not change when a run resumes: every setting that changes a reply or a record,
        the prompt versions and the texts of the user's own templates; what may change is the table in
        `fingerprint.MAY_CHANGE`."""
        return fingerprint("generate", self.fingerprint_settings(), self.prompt_versions())


def load_config(path: str | Path | None = None, overrides: dict[str, Any] | None = None, *,
                model: str | None = None, models: dict[str, Any] | None = None) -> RunConfig:
    """The run configuration every entry point uses (the CLI, the flows, the library).

    Reads the YAML file (default: the shipped configs/default.yaml), then applies, each over
    the last: `overrides` (top-level keys; None values are skipped), UTCGEN_API_BASE, the model
    for every role (`model`, else UTCGEN_MODEL), and `models` for single roles (a model string, or a
    mapping as in the file's `models:`)."""
    path = Path(path) if path else shipped("configs", "default.yaml")
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except OSError as exc:
        raise InputError(f"{path}: cannot read config: {exc.strerror or exc}") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        raise InputError(f"{path}:{where} invalid YAML: {getattr(exc, 'problem', exc)}") from exc
    if not isinstance(raw, dict):
        raise InputError(f"{path}: expected a mapping at the top level")
    for key, value in (overrides or {}).items():
        if value is not None:
            raw[key] = value
    if every := model or os.environ.get("UTCGEN_MODEL"):  # every role the run calls (a switched one when on)
        raw["models"] = {role: every for role in MODEL_ROLES
                         if role in ROLES or switch_on(raw, SWITCHED_ROLES[role])}
    if models:
        if unknown := sorted(set(models) - set(MODEL_ROLES)):
            raise InputError(f"models: unknown role(s) {', '.join(unknown)}; roles are {', '.join(MODEL_ROLES)}")
        raw["models"] = {**(raw.get("models") or {}), **models}
    if api_base := os.environ.get("UTCGEN_API_BASE"):
        raw.setdefault("llm", {})["api_base"] = api_base
    try:
        config = RunConfig.model_validate(raw)
    except ValidationError as exc:
        problems = [
            f"{path}: field '{field_path(err['loc'])}': {err['msg']}" for err in exc.errors()
        ]
        raise InputError(problems) from exc
    config.catalog = resolve(config.catalog)
    config.personas = resolve(config.personas)
    return config
