"""The evaluation records, written once: a benchmark case and the result of one model on it.

A benchmark folder (made by `utcgen eval build`) holds:
- `cases.jsonl`: one `Case` per line (what the runners read; the source of truth);
- `data/cases/train-00000-of-00001.parquet` and `README.md`: the same cases as a dataset;
- `split.json`: a `Split` (which seed tools are held out, and why), which
  `utcgen generate --exclude-split` reads so training data never uses a held-out tool.
An evaluation run folder (made by `utcgen eval run`) holds `results/<case id>.json` (one
`CaseResult` each, written atomically: the resume journal), then `metrics.json`,
`dialogues.parquet` and `report.md`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, field_validator, model_serializer

from ..core.errors import InputError
from ..core.records import DEFAULT_SCENARIO, Message, Persona, ScenarioInfo, Tool, ToolCall, Usage, registered_scenario
from ..scenarios import get as scenario_type
from ..scenarios.multi_step import offered_tools

CASES_FILE = "cases.jsonl"
SPLIT_FILE = "split.json"
RESULTS_DIR = "results"

Mode = Literal["static", "dynamic"]
Group = Literal["family", "line_of_business"]  # what a benchmark holds out whole


class AcceptedCall(BaseModel):
    """One call an imported answer accepts: per argument, the list of acceptable values; `""` among them
    marks an argument that may be left out. A dict among the values is itself argument -> acceptable values."""

    model_config = ConfigDict(extra="forbid")

    name: str                               # as the import stores it (see `evaluation.bfcl`)
    arguments: dict[str, list[Any]]

    def example(self) -> dict[str, Any]:
        """One argument map the answer accepts: the first acceptable value of each argument that may not be
        left out (nested dicts likewise); what the oracle calls and what V* holds."""
        return _example(self.arguments)


def _example(arguments: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, options in arguments.items():
        options = options if isinstance(options, list) else [options]
        if "" in options or not options:
            continue
        out[key] = _example_value(options[0])
    return out


def _example_value(option: Any) -> Any:
    if isinstance(option, dict):
        return _example(option)
    if isinstance(option, list):
        return [_example_value(v) for v in option]
    return option


class ExternalAnswer(BaseModel):
    """What a case imported from another benchmark (BFCL) counts as right, scored by that benchmark's rules
    (`scoring.bfcl_correct`). `calls` empty and `any_call` False: no call is right (irrelevance);
    `any_call`: some call is right, whatever it is (live_relevance)."""

    model_config = ConfigDict(extra="forbid")

    benchmark: Literal["bfcl"] = "bfcl"
    category: str                           # simple, multiple, parallel, ..., live_irrelevance
    calls: list[AcceptedCall] = Field(default_factory=list)
    any_call: bool = False


class Case(BaseModel):
    """One benchmark item: the reference (τ*, V*), what the assistant is shown, and the reference dialogue."""

    model_config = ConfigDict(extra="forbid")

    id: str                                 # the source dialogue's id
    gold_tool: Tool                         # τ*
    gold_arguments: dict[str, Any]          # V*: required key -> value
    candidates: list[Tool]                  # C_k = {τ*} ∪ D_k as shown; unavailable_tool: D_k only
    persona: Persona
    goal: str
    reference: list[Message]                # the reference dialogue: user and assistant turns (multi-step: and the
                                            # first result, up to the second call)
    line_of_business: str | None = None
    family: str                             # near-duplicate family id of τ* (held out as a whole)
    near_duplicate: bool                    # some distractor has A.4 score >= 0.70 with τ*
    max_similarity: float                   # the highest A.4 score between τ* and a distractor
    scenario: str = DEFAULT_SCENARIO        # a registered scenario type; older cases.jsonl load as the default
    # What the scenario changed (masked argument, infeasible value, input fault); empty for disambiguation.
    scenario_info: ScenarioInfo = Field(default_factory=ScenarioInfo)
    q_star: int | None = None               # the fewest questions the case needs (EVPI plan); None if unknown
    source_id: str | None = None            # the id the case has in the benchmark it was imported from
    answer: ExternalAnswer | None = None    # an imported case's own answer and rules (BFCL)

    @field_validator("scenario")
    @classmethod
    def _known_scenario(cls, value: str) -> str:
        return registered_scenario(value)

    @property
    def has_gold_call(self) -> bool:
        """False for an unavailable-tool case (τ* is not a candidate, so no call can be right) and for an
        imported case without exactly one gold call: C.1's single (τ*, V*) does not describe it."""
        if self.answer is not None and len(self.answer.calls) != 1:
            return False
        return scenario_type(self.scenario).expects_call

    @property
    def n_required(self) -> int:
        return len(self.gold_tool.required)

    @property
    def distractors(self) -> list[Tool]:
        return [t for t in self.candidates if t.name != self.gold_tool.name]  # every candidate when unavailable

    @property
    def shown(self) -> list[Tool]:
        """The tools the model under test is shown: the candidates, and a multi-step task's first-step pool
        before them (one tool set for the whole conversation, as the sft rows offer)."""
        return offered_tools(self.scenario_info.chain, self.candidates)

    @property
    def steps(self) -> list[Step]:
        """Each call of a multi-step task in order (the first step from `scenario_info.chain`, then the case's
        own τ* and V*); [] for a case of one call."""
        chain = self.scenario_info.chain
        if chain is None:
            return []
        return [Step(tool=chain.tool, gold=chain.gold, candidates=chain.candidates),
                Step(tool=self.gold_tool, gold=self.gold_arguments, candidates=self.candidates, fed=chain.fed)]


class Step(BaseModel):
    """One call of a multi-step case: its tool, its values, its own candidates, and (the second step) the
    values the first result gave, which are among `gold` too."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: Tool
    gold: dict[str, Any]
    candidates: list[Tool]
    fed: dict[str, Any] = Field(default_factory=dict)


class Split(BaseModel):
    """Which seed tools a benchmark holds out, so training data can exclude them."""

    model_config = ConfigDict(extra="forbid")

    by: Group
    held_out_tools: list[str]               # every tool of a held-out family / line of business
    held_out_groups: list[str]              # the family ids or line-of-business names held out
    source: str                             # the folder the cases came from
    seed: int


class CaseResult(BaseModel):
    """One model on one case: its transcript and everything the metrics and patterns need."""

    model_config = ConfigDict(extra="forbid")

    case_id: str
    model: str
    mode: Mode
    messages: list[Message]                 # the evaluated dialogue; assistant turns are the model's
    first_calls: list[ToolCall] = Field(default_factory=list)  # every call of the first tool-bearing turn
    conv_rel: list[float] = Field(default_factory=list)        # per assistant turn, in {0, 0.5, 1}
    patterns: dict[str, int] = Field(default_factory=dict)     # error pattern -> count over the model's calls
    # a multi-step case: per step, every call of the turn that made it ([] when the step made none); left out
    # of the file when None, so results of one-call cases read as they always have
    steps: list[list[ToolCall]] | None = None
    flagged: str | None = None              # dynamic: the user-side checker's reason to exclude it
    error: str | None = None                # the run could not finish the case (counted, not scored)
    usage: Usage = Field(default_factory=Usage)
    elapsed_s: float = 0.0

    @model_serializer(mode="wrap")
    def _without_null_steps(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out = handler(self)
        if isinstance(out, dict) and out.get("steps") is None:
            out.pop("steps", None)
        return out


def read_cases(folder: Path) -> list[Case]:
    """The cases of a benchmark folder, with a clear error naming the file and line."""
    path = Path(folder) / CASES_FILE
    if not path.is_file():
        raise InputError(f"{folder}: not a benchmark folder (no {CASES_FILE}); make one with `utcgen eval build`")
    cases: list[Case] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            cases.append(Case.model_validate_json(line))
        except ValueError as exc:
            raise InputError(f"{path}:{number}: not a benchmark case: {exc}") from None
    return cases
