"""Personas (ours and PersonaHub-style), the sampler's contract, run configs and prompt files."""

from __future__ import annotations

import json

import pytest

from tests.support.paths import REPO
from utcgen.pipeline.core.errors import InputError
from utcgen.pipeline.core.records import Tool
from utcgen.pipeline.retrieval.personas import PersonaSampler, load_personas
from utcgen.pipeline.settings.config import load_config
from utcgen.pipeline.settings.templates import PromptError, load_prompt, parse_prompt


def write_lines(path, items):
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in items))
    return path


def test_shipped_personas_load_and_cover_lines_of_business():
    personas = load_personas(REPO / "catalog" / "personas.jsonl")
    assert len(personas) >= 500
    lines = {p.line_of_business for p in personas}
    assert len(lines) >= 12 and {"consumer", "software_development"} <= lines
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


@pytest.mark.parametrize("name", ["empty.jsonl", "empty.json"])
def test_an_empty_personas_file_is_said_to_be_empty(tmp_path, name):
    path = tmp_path / name
    path.write_text("\n  \n")
    with pytest.raises(InputError, match=r"empty\.jsonl?: the personas file is empty$"):
        load_personas(path)


def test_personahub_input_persona_field_and_explicit_field(tmp_path):
    """PersonaHub's synthesized-data files keep the text under `input persona`; any other
    name works when given explicitly, and only the text (and an id, if any) is kept."""
    hub = write_lines(tmp_path / "instructions.jsonl", [
        {"input persona": "A night-shift nurse who plans rotas.", "synthesized text": "Draft a rota."},
        {"input persona": "A customs broker in Rotterdam.", "synthesized text": "Classify this."},
    ])
    assert [p.text for p in load_personas(hub)] == ["A night-shift nurse who plans rotas.",
                                                   "A customs broker in Rotterdam."]
    other = write_lines(tmp_path / "other.jsonl", [{"id": 7, "profile": " A bored auditor. ", "text": "ignored"},
                                                   {"profile": "A keen intern.", "role": "ignored"}])
    personas = load_personas(other, field="profile")
    assert [(p.id, p.text, p.role) for p in personas] == [("7", "A bored auditor.", None),
                                                         (personas[1].id, "A keen intern.", None)]
    assert personas[1].id.startswith("ph-")


def test_repeated_personahub_texts_are_one_persona(tmp_path, caplog):
    path = write_lines(tmp_path / "hub.jsonl", [{"persona": "Same person."}, {"persona": "Other."},
                                                {"persona": "Same person."}])
    with caplog.at_level("WARNING", logger="utcgen.personas"):
        assert [p.text for p in load_personas(path)] == ["Same person.", "Other."]
    assert f"{path}: 1 records repeat a persona text already read; each is kept once" in caplog.text


def test_a_file_where_every_record_misses_the_text_gets_one_summary(tmp_path):
    path = write_lines(tmp_path / "hub.jsonl", [
        {"input_persona": f"Clerk number {i}.", "synthesized text": "x"} for i in range(25_000)
    ])
    with pytest.raises(InputError) as err:
        load_personas(path)
    fields = "'input_persona', 'synthesized text'"
    assert err.value.problems == [
        f"{path}: all 25000 records fail the same way; the first 3:",
        *[f"  {path}: line {n}: no persona text: no 'text', 'persona' or 'input persona' field (fields: {fields})"
          for n in (1, 2, 3)],
        f"  fix: pass --persona-field NAME (persona_field: NAME in a run config) naming the field that holds "
        f"the persona text; fields seen: {fields}",
    ]
    assert len(load_personas(path, field="input_persona")) == 25_000
    with pytest.raises(InputError) as err:
        load_personas(path, field="persona")
    assert err.value.problems[1] == f"  {path}: line 1: no persona text: no field 'persona' (fields: {fields})"


def test_many_failures_of_one_kind_are_summarised_next_to_single_ones(tmp_path):
    items = [{"persona": f"P{i}"} for i in range(10)] + ["{broken"] * 5 + [{"persona": 3}]
    path = write_lines(tmp_path / "mixed.jsonl", items)
    with pytest.raises(InputError) as err:
        load_personas(path)
    assert err.value.problems == [
        f"{path}: 5 of 16 records fail the same way; the first 3:",
        *[f"  {path}: line {n}: invalid JSON: Expecting property name enclosed in double quotes"
          for n in (11, 12, 13)],
        "  fix: personas are JSON Lines: one JSON object per line",
        f"{path}: line 16: field 'persona': must be a non-empty string",
    ]


def test_a_small_file_that_fails_entirely_still_says_how_to_fix_it(tmp_path):
    path = write_lines(tmp_path / "two.jsonl", [{"bio": "A."}, {"bio": "B."}])
    with pytest.raises(InputError) as err:
        load_personas(path)
    assert err.value.problems[0] == f"{path}: all 2 records fail the same way:"
    assert err.value.problems[-1].endswith("fields seen: 'bio'")
    assert [p.text for p in load_personas(path, field="bio")] == ["A.", "B."]


def test_persona_field_config_key_and_generate_flag(tmp_path):
    from utcgen.pipeline.cli import build_parser

    assert load_config().persona_field is None
    path = tmp_path / "c.yaml"
    path.write_text("persona_field: input persona\n")
    assert load_config(path).persona_field == "input persona"
    assert load_config(None, {"persona_field": "bio"}).persona_field == "bio"
    args = build_parser().parse_args(["generate", "--persona-field", "bio"])
    assert args.persona_field == "bio"


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
    with pytest.raises(PromptError, match=r"^prompts/t.txt, section '=== user': 'x' is undefined$"):
        prompt.render(name="A")
    with pytest.raises(PromptError, match="version"):
        parse_prompt("t", "=== system\nhi")


def test_the_shipped_default_config_lists_every_setting_at_its_default():
    import yaml

    from utcgen.pipeline.core.resources import shipped
    from utcgen.pipeline.settings.config import RunConfig

    listed = yaml.safe_load((shipped("configs") / "default.yaml").read_text(encoding="utf-8"))
    defaults = RunConfig().model_dump()

    def keys(d: dict, prefix: str = "") -> set[str]:
        out = set()
        for k, v in d.items():
            out |= keys(v, f"{prefix}{k}.") if isinstance(v, dict) and v else {prefix + k}
        return out

    assert keys(listed) == keys(defaults)  # a new setting is documented where users look for it
    assert RunConfig.model_validate(listed).model_dump() == defaults
