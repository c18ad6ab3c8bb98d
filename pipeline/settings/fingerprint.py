"""What may change when a run resumes: one table for generation and evaluation, and the fingerprint.

A run folder records the fingerprint of the settings that made it. A re-run into the same
folder resumes only when its fingerprint is the same, so replies made under one setting are
never mixed with replies made under another. The fingerprint hashes every setting (and the
versions of the prompts that shape the replies) except those listed in `MAY_CHANGE` for that
kind of run. An entry is a dotted setting name, or a glob over prompt names
(`prompt_versions.eval_*`), with an optional condition: a conditional entry is left out only
while its condition holds on the settings (e.g. `exclude_split` while it is unset, so folders made
before the setting existed keep their fingerprint).

The settings name input files by path; their content is checked beside the fingerprint
(`file_digests`, kept by the generation journal in `inputs.json`), so that an edited catalog or
persona file is refused on resume too, while folders made before the check keep resuming.

A user's own prompt templates (`prompts_dir`) are hashed by text (`TEMPLATES`, added to the
settings by `RunConfig.fingerprint_settings` only when the folder holds templates), so an edited
template refuses a resume whatever its version line says, while a run with the shipped templates
hashes exactly what it hashed before the setting existed.

`FINGERPRINT_VERSION` names this scheme; manifests record it beside the fingerprint. Version 1
is the scheme every earlier utcgen used (the same values), so existing folders resume.
A later scheme must raise the version and hash it in, so that an old manifest reads as made
by another scheme rather than as another configuration.
"""

from __future__ import annotations

import copy
import fnmatch
import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import TypeAdapter, ValidationError

from ..core.errors import InputError
from ..core.records import DEFAULT_SCENARIO
from .models import MODEL_ROLES, SWITCHED_ROLES, is_offline, model_name

FINGERPRINT_VERSION = 1
Kind = Literal["generate", "evaluate"]
PROMPTS = "prompt_versions"  # the key under which the prompt versions are hashed
TEMPLATES = "prompt_templates"  # the key under which the texts of a user's own templates are hashed
_FLAG: TypeAdapter[bool] = TypeAdapter(bool)


def switch_on(s: Mapping[str, Any], dotted: str) -> bool:
    """Whether the settings (a dump, or a config as written, before validation) turn the feature switch
    `dotted` (`execution.results`) on."""
    node: Any = s
    for key in dotted.split("."):
        node = node.get(key) if isinstance(node, Mapping) else None
    try:
        return _FLAG.validate_python(node)
    except ValidationError:  # unset, or not a flag (validation names it)
        return False


def _offline(s: Mapping[str, Any]) -> bool:
    """Every role the run calls is the offline backend (a switched role counts only while it is on)."""
    return all(is_offline(model_name(m)) for role, m in (s.get("models") or {}).items()
               if role not in SWITCHED_ROLES or switch_on(s, SWITCHED_ROLES[role]))


def _no_results(s: Mapping[str, Any]) -> bool:
    return not switch_on(s, "execution.results")


def only_default_scenario(scenarios: dict[str, float] | None, decision_styles: dict[str, float] | None) -> bool:
    """True when only the default scenario type can be drawn and no decision style is: the
    dialogues of runs made before scenario types existed."""
    return not decision_styles and {k for k, w in (scenarios or {}).items() if w > 0} == {DEFAULT_SCENARIO}


def _default_scenarios(s: Mapping[str, Any]) -> bool:
    return only_default_scenario(s.get("scenarios"), s.get("decision_styles"))


def _no_plan_hint(s: Mapping[str, Any]) -> bool:
    return not (s.get("synthesis") or {}).get("plan_hint")


def _static(s: Mapping[str, Any]) -> bool:
    return s.get("mode") == "static"


@dataclass(frozen=True)
class MayChange:
    """A setting left out of the fingerprint (while `when` holds, if given), and why."""

    name: str
    why: str
    when: Callable[[Mapping[str, Any]], bool] | None = None

    def applies(self, settings: Mapping[str, Any]) -> bool:
        return self.when is None or self.when(settings)


_TRANSPORT = "changes how calls are made, never what they answer"

MAY_CHANGE: dict[str, tuple[MayChange, ...]] = {
    "generate": (
        MayChange("num_dialogues", "the target may grow or shrink: the first N accepted jobs are the same"),
        MayChange("out", "the folder is where the run lives"),
        MayChange("workdir", "where relative paths are read from; the input files' content is checked by digest"),
        MayChange("budget", "a stopped run resumes with a higher budget"),
        MayChange("export", "how the dataset folder is written: redone by every export"),
        MayChange("synthesis.max_jobs_in_flight", "concurrency"),
        MayChange("synthesis.speculate", "when attempts and jobs start; each one's dialogue is the same"),
        MayChange("synthesis.stop_after_same_rejections", "when a fruitless run stops"),
        MayChange("synthesis.stop_min_attempts", "when a run accepting too little stops"),
        MayChange("synthesis.stop_min_acceptance", "when a run accepting too little stops"),
        *(MayChange(f"synthesis.{key}", "at the default: runs made before the setting existed",
                    when=lambda s, key=key, default=default: (s.get("synthesis") or {}).get(key, default) == default)
          for key, default in (("max_description_chars", 2000), ("max_schema_chars", 8000),
                               ("exact_search_up_to", 50_000))),
        *(MayChange(f"llm.{key}", _TRANSPORT) for key in (
            "api_key_env", "max_in_flight", "start_in_flight", "timeout", "max_retries", "abort_after_failures",
            "abort_failure_rate", "backoff_base",
            "backoff_max", "cache", "cache_dir", "direct_client")),
        MayChange("llm.api_base", "the offline backend never calls it", when=_offline),
        # a role's own mapping in `models:` (a role written as a string has none of these keys)
        *(MayChange(f"models.{role}.{key}", _TRANSPORT) for role in MODEL_ROLES
          for key in ("api_key_env", "timeout")),
        MayChange("exclude_split", "unset: runs made before the setting existed", when=lambda s: s.get("exclude_split") is None),
        MayChange("embeddings", "torch: runs made before the setting existed", when=lambda s: s.get("embeddings", "torch") == "torch"),
        MayChange("prompts_dir", f"where the user's templates are read from: their texts are hashed ({TEMPLATES})"),
        MayChange("skip_invalid", "decides only whether broken tools stop the run; the tools that load are the same"),
        MayChange("synthesis.plan_hint", "off: runs made before the setting existed", when=_no_plan_hint),
        MayChange(f"{PROMPTS}.assistant_hint_*", "the hint prompts are unused without plan_hint", when=_no_plan_hint),
        MayChange("scenarios", "disambiguation only: runs made before scenario types existed", when=_default_scenarios),
        MayChange("decision_styles", "none: runs made before decision styles existed", when=_default_scenarios),
        MayChange(f"{PROMPTS}.scenario_*", "the scenario prompts are unused without scenarios", when=_default_scenarios),
        MayChange(f"{PROMPTS}.eval_*", "evaluation prompts never shape a generated dialogue"),
        # tool results: nothing of them is used while off, so runs made before they existed resume
        MayChange("execution", "results off: no tool result is made", when=_no_results),
        MayChange("models.tool_result", "results off: the role is never called", when=_no_results),
        MayChange("llm.structured_output_roles.tool_result", "results off: the role is never called", when=_no_results),
        MayChange(f"{PROMPTS}.tool_result", "results off: the prompt is never rendered", when=_no_results),
        MayChange(f"{PROMPTS}.rules_answer", "results off: the assistant is never told it", when=_no_results),
    ),
    "evaluate": (
        MayChange("benchmark", "the benchmark folder may move; its cases are the results' keys"),
        MayChange("limit", "the number of cases evaluated may grow"),
        *(MayChange(key, "a static run has no user proxy", when=_static)
          for key in ("user_model", "voter_model", "votes", "max_turns")),
    ),
}


# Settings that no longer exist, hashed with the one value they always had when a run was made,
# so that folders made while they existed keep their fingerprint.
RETIRED: dict[str, dict[str, Any]] = {
    "generate": {"llm.send_state": False},  # the offline state header, removed with typed requests
    "evaluate": {},
}


def _set(data: dict[str, Any], dotted: str, value: Any) -> None:
    head, _, rest = dotted.partition(".")
    if not rest:
        data[head] = value
    elif isinstance(data.get(head), dict):
        _set(data[head], rest, value)


def _drop(data: dict[str, Any], dotted: str) -> None:
    head, _, rest = dotted.partition(".")
    if not rest:
        for key in fnmatch.filter(list(data), head) if any(c in head for c in "*?[") else [head]:
            data.pop(key, None)
    elif isinstance(data.get(head), dict):
        _drop(data[head], rest)


def counted(kind: Kind, settings: Mapping[str, Any], prompt_versions: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The settings (and prompt versions) that the fingerprint of `kind` hashes: `settings` minus the
    entries of `MAY_CHANGE[kind]` that apply to them."""
    data = copy.deepcopy(dict(settings))
    if prompt_versions is not None:
        data[PROMPTS] = dict(prompt_versions)
    for entry in MAY_CHANGE[kind]:
        if entry.applies(settings):
            _drop(data, entry.name)
    for dotted, value in RETIRED[kind].items():
        _set(data, dotted, value)
    if isinstance(models := data.get("models"), dict):  # a role's mapping left with its model only is that model
        for role, value in models.items():
            if isinstance(value, dict) and set(value) == {"model"}:
                models[role] = value["model"]
    return data


def fingerprint(kind: Kind, settings: Mapping[str, Any], prompt_versions: Mapping[str, str]) -> str:
    """16 hex digits of SHA-256 over the counted settings as canonical JSON (scheme `FINGERPRINT_VERSION`)."""
    data = counted(kind, settings, prompt_versions)
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()[:16]


def changed_settings(kind: Kind, old: Mapping[str, Any], new: Mapping[str, Any], limit: int = 5) -> list[str]:
    """Dotted names of the counted settings that differ between two runs (at most `limit`)."""
    a = json.loads(json.dumps(counted(kind, old), default=str))
    b = json.loads(json.dumps(counted(kind, new), default=str))
    out: list[str] = []

    def walk(x: Any, y: Any, prefix: str) -> None:
        if isinstance(x, dict) and isinstance(y, dict):
            for key in sorted(set(x) | set(y)):
                walk(x.get(key), y.get(key), f"{prefix}{key}.")
        elif x != y:
            out.append(prefix.rstrip("."))

    walk(a, b, "")
    return out[:limit]


def file_digests(files: Mapping[str, Path]) -> dict[str, str]:
    """sha256 of each input file's bytes, keyed by the path as the user gave it: what makes a resume
    refuse a catalog or persona file edited in place (the settings hold only their paths)."""
    out: dict[str, str] = {}
    for shown, path in files.items():
        digest = hashlib.sha256()
        try:
            with open(path, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
        except OSError as exc:
            raise InputError(f"{shown}: cannot read the input file: {exc.strerror or exc}") from exc
        out[shown] = digest.hexdigest()
    return out


def changed_files(old: Mapping[str, str], new: Mapping[str, str]) -> list[str]:
    """The input files whose content differs between two runs (added and removed files too)."""
    return [name for name in sorted(set(old) | set(new)) if old.get(name) != new.get(name)]
