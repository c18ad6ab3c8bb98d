"""`utcgen prompts show|export` and `prompts_dir:` run as a user runs them."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.cli import REPO, UTCGEN, generate_env
from tests.support.openai_server import ScriptedOpenAIServer
from tests.support.simulator import SPOOL_ENV, decoded, recording_command, simulator_config, simulator_responder, spool_env
from utcgen.pipeline.settings.config import load_config

pytestmark = pytest.mark.slow  # subprocesses, an embedded catalog

LINE = "You keep a pet axolotl named Quillon and mention it once."


def utcgen(tmp_path: Path, *args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([UTCGEN, *args], cwd=REPO, env=generate_env(tmp_path), capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def user_prompt(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    result = utcgen(tmp_path_factory.mktemp("show"), "prompts", "show", "--role", "user", "--json")
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout)


def test_show_user_prints_the_opening_prompt_of_the_sampled_job(user_prompt: dict[str, Any]) -> None:
    job = user_prompt["job"]
    assert set(user_prompt) == {"messages", "response_format", "tools", "job"}
    assert {"seed_tool", "candidates", "candidate_tool_specs", "gold_arguments", "persona"} <= set(job)
    assert job["seed_tool"] in job["candidates"] and len(job["candidates"]) > 2
    assert [s["function"]["name"] for s in job["candidate_tool_specs"]] == job["candidates"]
    text = "\n".join(m["content"] for m in user_prompt["messages"])
    assert [m["role"] for m in user_prompt["messages"]] == ["system", "user"]
    assert job["persona"]["text"] in text and job["goal"] in text
    for name in job["candidates"]:  # the seed tool and the look-alikes the assistant may confuse it with
        assert f'"name": "{name}"' in text
    assert "(nothing yet: you open the conversation)" in text  # the opening turn
    assert "{{" not in text and "{%" not in text
    schema = user_prompt["response_format"]
    assert schema["type"] == "json_schema" and schema["json_schema"]["schema"]["required"] == ["message"]
    assert user_prompt["tools"] is None


def test_show_critic_renders_the_judge_prompt_for_a_whole_dialogue_of_the_same_job(
        tmp_path: Path, user_prompt: dict[str, Any]) -> None:
    result = utcgen(tmp_path, "prompts", "show", "--role", "critic")
    assert result.returncode == 0, result.stderr[-2000:]
    out, job = result.stdout, user_prompt["job"]
    assert out.startswith("=== system ===\n") and "\n=== user ===\n" in out
    assert job["persona"]["text"] in out and job["goal"] in out
    assert "] USER: " in out and "] ASSISTANT" in out  # the transcript of the offline dialogue
    assert f"calls tool {job['seed_tool']}" in out
    fmt = json.loads(out.split("=== response_format ===\n", 1)[1])
    assert fmt["json_schema"]["name"] == "critic_reply" and "passed" in fmt["json_schema"]["schema"]["required"]


def test_show_assistant_in_argument_filling_on_an_openapi_catalog(tmp_path: Path) -> None:
    catalog = REPO / "tests" / "fixtures" / "catalogs" / "store_openapi.yaml"
    result = utcgen(tmp_path, "prompts", "show", "--role", "assistant", "--phase", "argument_filling",
                    "--catalog", str(catalog), "--json")
    assert result.returncode == 0, result.stderr[-2000:]
    shown = json.loads(result.stdout)
    seed = shown["job"]["seed_tool"]
    assert shown["messages"][0]["role"] == "system" and f'"name": "{seed}"' in shown["messages"][0]["content"]
    assert any(m["role"] == "user" for m in shown["messages"][1:])  # the offline user's opening, at least
    names = shown["response_format"]["json_schema"]["schema"]["properties"]["tool_calls"]["items"]["properties"]["name"]
    assert names["enum"] == [seed]  # the settled tool only


def test_a_malformed_template_is_an_error_naming_the_file(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "user.txt").write_text("version: user/9\n=== system\n{% if tool_selection %}\nnever closed\n",
                                     encoding="utf-8")
    result = utcgen(tmp_path, "prompts", "show", "--role", "user", "--prompts-dir", str(folder))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == (
        f"error: {folder / 'user.txt'}: section '=== system', line 2: Unexpected end of template. Jinja was looking "
        "for the following tags: 'elif' or 'else' or 'endif'. The innermost block that needs to be closed is 'if'.")


def test_export_then_an_edited_copy_as_prompts_dir_shapes_a_generate_run(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    result = utcgen(tmp_path, "prompts", "export", str(folder))
    assert result.returncode == 0, result.stderr
    again = utcgen(tmp_path, "prompts", "export", str(folder))
    assert again.returncode == 2 and "--force" in again.stderr
    user = folder / "user.txt"
    user.write_text(user.read_text(encoding="utf-8").replace("=== system\n", f"=== system\n{LINE}\n", 1),
                    encoding="utf-8")

    spool = tmp_path / "requests.jsonl"
    with ScriptedOpenAIServer(simulator_responder) as srv, pytest.MonkeyPatch.context() as patch:
        patch.setenv(SPOOL_ENV, str(spool))
        config = tmp_path / "run.yaml"
        raw = simulator_config(srv.base_url, num_dialogues=2, prompts_dir=str(folder),
                               synthesis={"speculate": False})
        config.write_text(yaml.safe_dump(raw), encoding="utf-8")
        out = tmp_path / "out"
        run = subprocess.run(recording_command("generate", "--config", str(config), "--out", str(out), "--no-progress"),
                             cwd=REPO, env={**generate_env(tmp_path), **spool_env(spool)}, capture_output=True,
                             text=True, timeout=600)
        requests = srv.requests
    assert run.returncode == 0, run.stderr[-3000:]
    by_role: dict[str, list] = {}
    for request in requests:
        found = decoded(request)
        assert found is not None
        by_role.setdefault(found[0], []).append(request)
    # every user prompt the run sent carries the edited line; no other role's does
    assert by_role["user"] and all(LINE in r.messages[0]["content"] for r in by_role["user"])
    assert not any(LINE in json.dumps(r.messages) for role, rs in by_role.items() if role != "user" for r in rs)

    manifest = json.loads((out / "journal" / "run.json").read_text(encoding="utf-8"))
    assert manifest["config"]["prompt_templates"] == {"user.txt": hashlib.sha256(user.read_bytes()).hexdigest()}
    shipped = load_config(config, {"out": str(out)})
    shipped.prompts_dir = None  # the same run with the shipped templates
    assert manifest["fingerprint"] == load_config(config, {"out": str(out)}).fingerprint() != shipped.fingerprint()
