"""Personas (ours and PersonaHub-style), the sampler's contract, run configs and prompt files."""

from __future__ import annotations

import json

import pytest

from utcgen.pipeline.config import load_config
from utcgen.pipeline.errors import InputError
from utcgen.pipeline.retrieval.personas import PersonaSampler, load_personas
from utcgen.pipeline.prompts import PromptError, load_prompt, parse_prompt
from utcgen.pipeline.records import Tool
from tests.conftest import REPO


def write_lines(path, items):
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in items))
    return path


def test_shipped_personas_load_and_cover_lines_of_business():
    personas = load_personas(REPO / "catalog" / "personas.jsonl")
    assert len(personas) >= 300
    assert len({p.line_of_business for p in personas}) >= 8
    assert len({p.id for p in personas}) == len(personas)


def test_personahub_style_records_load(tmp_path):
    path = write_lines(tmp_path / "hub.jsonl", [{"persona": "A payroll clerk in Lagos who double-checks everything."},
                                                {"persona": "A CFO who wants one-line answers.", "extra": 1}])
    personas = load_personas(path)
    assert [p.text for p in personas][1] == "A CFO who wants one-line answers."
    assert all(p.id.startswith("ph-") for p in personas)


def test_persona_errors_name_file_line_and_field(tmp_path):
    path = write_lines(tmp_path / "bad.jsonl", [
        {"id": "a", "text": "fine"},
        "{not json",
    ])
    with pytest.raises(InputError) as err:
        load_personas(path)
    assert f"{path}: line 2: invalid JSON" in str(err.value)
    path = write_lines(tmp_path / "bad2.jsonl", [{"id": "a", "text": "x"}, {"id": "a", "text": "y"},
                                                 {"text": "no id"}, {"persona": ""}])
    with pytest.raises(InputError) as err:
        load_personas(path)
    problems = err.value.problems
    assert any("line 2: field 'id': duplicate" in p for p in problems)
    assert any("line 3: field 'id'" in p for p in problems)
    assert any("line 4: field 'persona'" in p for p in problems)
    assert len(problems) == 3  # all reported at once


def test_sampler_is_deterministic_and_draws_from_the_top_k(embedder):
    personas = load_personas(REPO / "catalog" / "personas.jsonl")[:80]
    tool = Tool(name="approve_expense_report", description="Approve a submitted expense report in your queue.")
    a = PersonaSampler(personas, embedder, k=5, seed=1)
    b = PersonaSampler(personas, embedder, k=5, seed=1)
    top = {p.id for p in a.top_k(tool)}
    draws = [a.sample(tool, attempt=i).id for i in range(30)]
    assert draws == [b.sample(tool, attempt=i).id for i in range(30)]
    assert set(draws) <= top and len(set(draws)) > 1  # random among the top k, never outside it
    assert [PersonaSampler(personas, embedder, k=5, seed=2).sample(tool, attempt=i).id for i in range(30)] != draws


def test_config_defaults_overrides_and_env(tmp_path, monkeypatch):
    monkeypatch.delenv("UTCGEN_MODEL", raising=False)
    config = load_config()
    assert config.backend() == "offline" and config.synthesis.k_distractors == 5
    assert load_config(None, {"num_dialogues": 7}).num_dialogues == 7
    monkeypatch.setenv("UTCGEN_MODEL", "openai/gpt-4o-mini")
    config = load_config()
    assert set(config.models.model_dump().values()) == {"openai/gpt-4o-mini"}
    assert config.backend() == "litellm"


def test_config_errors_name_file_and_field(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("synthesis:\n  max_turns: 0\n  bogus: 1\nmodels: [1]\n")
    with pytest.raises(InputError) as err:
        load_config(path)
    text = str(err.value)
    assert f"{path}: field 'synthesis.max_turns'" in text
    assert "synthesis.bogus" in text and "'models'" in text
    path.write_text("a: [1,\n")
    with pytest.raises(InputError, match="invalid YAML"):
        load_config(path)


def test_fingerprint_ignores_target_count_but_not_seed():
    a, b = load_config(None, {"num_dialogues": 5}), load_config(None, {"num_dialogues": 50})
    assert a.fingerprint() == b.fingerprint()
    assert a.fingerprint() != load_config(None, {"seed": 9}).fingerprint()


def test_every_prompt_file_parses_with_a_version():
    names = [p.stem for p in (REPO / "prompts").glob("*.txt")]
    assert len(names) >= 8
    for name in names:
        prompt = load_prompt(name)
        assert "/" in prompt.version and prompt.sections[0][0] == "system"


def test_prompt_rendering_is_strict():
    prompt = parse_prompt("t", "version: t/1\n=== system\nHello {{name}} {\"json\": 1}\n=== user\n{{x}}")
    assert prompt.render(name="A", x="B") == [{"role": "system", "content": 'Hello A {"json": 1}'},
                                              {"role": "user", "content": "B"}]
    with pytest.raises(PromptError, match="no value for"):
        prompt.render(name="A")
    with pytest.raises(PromptError, match="version"):
        parse_prompt("t", "=== system\nhi")
