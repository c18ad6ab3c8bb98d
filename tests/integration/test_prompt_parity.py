"""The offline backend sees no more than a real model would: every fact of the typed request a role's
offline policy answers from is written in the prompt that role's model receives.

Real runs are made offline (every scenario type and decision style on the shipped catalog, and a public
OpenAPI document), and every call the offline provider answers is recorded as it arrives: the typed
request (what the policy reads) and the rendered messages (what a model would read). Each leaf of the
request (a string, a number) must appear in the messages. A request field no prompt renders would be
hidden state: a policy could decide from it and reach figures no real model can.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.paths import REPO
from tests.support.runs import run_and_export

# Request fields that carry no fact: which reply among equals (`seed`, `attempt`), the request's role,
# and switches that choose the template (the phase, the declining variant, which opening is written).
NOT_FACTS = {"seed", "attempt", "role", "phase", "may_decline", "write"}
# Paths that carry no fact either: the scenario type's name picks the user prompt's section (which is
# then checked), and a judge's view keeps the record's bookkeeping empty.
NOT_FACT_PATHS = (".scenario.name", ".dialogue.generation")


def leaves(value: Any, path: str = "") -> list[tuple[str, Any]]:
    """(path, value) of every string and number inside `value`, fact-free fields left out."""
    if path.startswith(NOT_FACT_PATHS):
        return []
    if isinstance(value, dict):
        return [leaf for k, v in value.items() if k not in NOT_FACTS for leaf in leaves(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [leaf for i, v in enumerate(value) for leaf in leaves(v, f"{path}[{i}]")]
    if isinstance(value, bool) or value is None or value == "":
        return []
    return [(path, value)]


def shown(value: Any, text: str) -> bool:
    """Whether a prompt writes `value`: as is, JSON-escaped, with its underscores read as spaces
    ('supply chain'), or (a number) in its usual forms."""
    if isinstance(value, str):
        forms = {value, value.strip(), json.dumps(value, ensure_ascii=False)[1:-1], value.replace("_", " ")}
        return any(form in text for form in forms)
    return any(form in text for form in {str(value), json.dumps(value)})


def hidden(calls: list[tuple[Any, list[dict]]]) -> dict[str, list[str]]:
    """role -> the request paths (with their values) that the call's messages do not write."""
    out: dict[str, list[str]] = {}
    for request, messages in calls:
        text = "\n".join(str(m.get("content") or "") for m in messages)
        for path, value in leaves(request.model_dump(mode="json")):
            if not shown(value, text):
                out.setdefault(request.role, []).append(f"{path} = {str(value)[:80]!r}")
    return out


@pytest.fixture(scope="module")
def recorded(scenario_run: dict[str, Any], tmp_path_factory: pytest.TempPathFactory,
             embedder: Any) -> list[tuple[Any, list[dict]]]:
    """Every (request, messages) the offline provider answered in two real runs: the session's run of the
    shipped catalog's tools of three lines of business with every scenario type and decision style
    (tests/conftest.py records it), and a small run on a public OpenAPI document."""
    from utcgen.pipeline import simulator as offline
    from utcgen.pipeline.settings.config import load_config

    calls: list[tuple[Any, list[dict]]] = list(scenario_run["calls"])
    original = offline.respond

    def record(request: Any, messages: list[dict]) -> str:
        calls.append((request, messages))
        return original(request, messages)

    root = tmp_path_factory.mktemp("parity")
    config = load_config(None, {"catalog": str(REPO / "tests" / "fixtures" / "catalogs" / "store_openapi.yaml"),
                                "num_dialogues": 4, "seed": 6, "out": str(root / "run")})
    config.llm.cache_dir = str(root / "cache")
    patch = pytest.MonkeyPatch()
    patch.setattr(offline, "respond", record)
    try:
        run_and_export(config, embedder)
    finally:
        patch.undo()
    return calls


def test_every_role_was_recorded(recorded: list[tuple[Any, list[dict]]]) -> None:
    roles = {request.role for request, _ in recorded}
    assert roles >= {"goal", "slots", "user", "assistant", "relevancy", "critic"}, roles


def test_every_fact_a_policy_reads_is_in_the_prompt(recorded: list[tuple[Any, list[dict]]]) -> None:
    missing = hidden(recorded)
    assert not missing, "request facts no prompt shows:\n" + "\n".join(
        f"{role}: {len(paths)} hidden, e.g. {paths[:5]}" for role, paths in missing.items())


def test_the_check_catches_a_hidden_fact(recorded: list[tuple[Any, list[dict]]]) -> None:
    """A request whose prompt lost one fact is caught: the check can fail."""
    request, messages = next((r, m) for r, m in recorded if r.role == "user")
    goal = request.goal
    stripped = [{**m, "content": str(m.get("content") or "").replace(goal, "")} for m in messages]
    assert any(path == ".goal" for path in (p.split(" = ")[0] for p in hidden([(request, stripped)]).get("user", [])))
