"""Evaluation runs end to end: static and dynamic, reference policies and the offline backend as the
model under test, resume, progress, and the `utcgen eval` commands as a user runs them."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import UTCGEN
from tests.support.eval_bench import benchmark, cases, source_folder
from tests.support.paths import REPO
from utcgen.pipeline import simulator as offline
from utcgen.pipeline.core.errors import InputError
from utcgen.pipeline.evaluation.cases import RESULTS_DIR
from utcgen.pipeline.evaluation.metrics import compute_metrics
from utcgen.pipeline.evaluation.run import EvalSettings, Evaluator, result_path


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UTCGEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("UTCGEN_MODEL", raising=False)
    monkeypatch.delenv("UTCGEN_API_BASE", raising=False)


def _run(settings: EvalSettings, out: Path, **kwargs):
    from utcgen.pipeline.llm.gateway import shutdown

    async def go():
        evaluator = Evaluator(settings, out, **kwargs.pop("init", {}))
        try:
            return await evaluator.run(**kwargs), evaluator
        finally:
            evaluator.close()
            await shutdown()

    return asyncio.run(go())


def test_static_oracle_scores_exactly_one_and_never_call_zero(tmp_path: Path) -> None:
    bench = benchmark(tmp_path)
    results, ev = _run(EvalSettings(benchmark=str(bench), model="reference/oracle", mode="static"), tmp_path / "o")
    assert len(results) == 7 and all(r.error is None for r in results)
    m = compute_metrics(ev.cases, results, resamples=50).metrics
    assert (m["acc"].value, m["ftr"].value, m["tar"].value) == (1.0, 0.0, 0.0)
    assert all(len([x for x in r.messages if x.role == "assistant"]) == 1 for r in results)  # the first turn calls
    results, ev = _run(EvalSettings(benchmark=str(bench), model="reference/never-call", mode="static",
                                    rubric_model=None), tmp_path / "n")
    m = compute_metrics(ev.cases, results, resamples=50).metrics
    assert (m["acc"].value, m["tar"].value) == (0.0, 1.0)
    for r, c in zip(results, ev.cases):  # every reference user turn replayed, each answered by the policy
        users = [x.content for x in c.reference if x.role == "user"]
        assert [x.content for x in r.messages if x.role == "user"] == users
        assert r.conv_rel == [] and r.first_calls == []


def test_offline_model_under_test_sees_no_gold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[dict] = []
    real = offline.respond

    def spy(request, messages):
        if request.role == "under_test":
            seen.append(request.model_dump(mode="json", exclude={"role"}))
        return real(request, messages)

    monkeypatch.setattr(offline, "respond", spy)
    bench = benchmark(tmp_path)
    results, ev = _run(EvalSettings(benchmark=str(bench), model="utcgen-offline/default", mode="static"),
                       tmp_path / "run")
    assert seen and all(set(s) == {"candidates", "history"} for s in seen)
    for s in seen:
        assert all(set(m) == {"role", "content", "thought"} for m in s["history"])
    m = compute_metrics(ev.cases, results, resamples=50).metrics
    assert m["acc"].value >= 0.5 and m["conv_rel"].value is not None
    for r in results:
        assert len(r.conv_rel) == sum(x.role == "assistant" for x in r.messages)
        assert r.usage.calls == sum(x.role == "assistant" for x in r.messages) * 2  # model + rubric


def test_dynamic_offline_model_with_voting_proxy(tmp_path: Path) -> None:
    bench = benchmark(tmp_path)
    settings = EvalSettings(benchmark=str(bench), model="utcgen-offline/default", mode="dynamic", votes=(3, 3),
                            max_turns=6)
    results, ev = _run(settings, tmp_path / "run")
    assert len(results) == 7
    for r in results:
        roles = [x.role for x in r.messages]
        assert roles == ["user", "assistant"] * (len(roles) // 2)
        turns = len(roles) // 2
        assert 1 <= turns <= 6 and r.flagged is None and r.error is None
        # per turn: 3 drafts + 3 votes + the model + the rubric
        assert r.usage.calls == turns * 8
    m = compute_metrics(ev.cases, results, resamples=50).metrics
    assert m["acc"].value >= 0.5
    never, _ = _run(settings.model_copy(update={"model": "reference/never-call", "rubric_model": None}),
                    tmp_path / "never")
    assert all(sum(x.role == "assistant" for x in r.messages) == 6 for r in never)


def test_resume_skips_finished_cases_and_refuses_other_settings(tmp_path: Path) -> None:
    bench, out = benchmark(tmp_path), tmp_path / "run"
    settings = EvalSettings(benchmark=str(bench), model="utcgen-offline/default", mode="static", limit=4)
    first, _ = _run(settings, out)
    assert len(first) == 4 and len(list((out / RESULTS_DIR).glob("*.json"))) == 4
    kept, dropped = result_path(out, first[0].case_id), result_path(out, first[1].case_id)
    before = kept.read_text()
    os.utime(kept, (1, 1))
    dropped.unlink()
    updates = []
    second, _ = _run(settings.model_copy(update={"limit": None}), out,
                     on_progress=lambda p: updates.append(p.model_copy(deep=True)))
    assert len(second) == 7
    assert kept.read_text() == before and kept.stat().st_mtime == 1  # not redone
    assert dropped.exists()
    assert updates[0].resumed == 3 and updates[-1].done == 7
    assert updates[-1].spent.calls > 0 and max(u.in_flight for u in updates) >= 1
    with pytest.raises(InputError, match=r"an evaluation made with a different configuration \(.*\bmode\b"):
        _run(settings.model_copy(update={"mode": "dynamic"}), out)
    third, _ = _run(settings.model_copy(update={"rubric_model": None}), out,
                    init={"allow_config_change": True})
    assert len(third) == 4


def test_progress_counts_calls_and_cases(tmp_path: Path) -> None:
    updates = []
    _run(EvalSettings(benchmark=str(benchmark(tmp_path)), model="utcgen-offline/default", mode="static",
                      limit=3), tmp_path / "run", on_progress=lambda p: updates.append(p.model_copy(deep=True)))
    assert [u.done for u in updates] == sorted(u.done for u in updates)
    assert updates[-1].done == updates[-1].target == 3
    calls = [u.spent.calls for u in updates]
    assert calls == sorted(calls) and calls[-1] >= 6 and len(set(calls)) > 3  # moves with every call


def test_bad_input_names_the_flag(tmp_path: Path) -> None:
    bench = benchmark(tmp_path)
    with pytest.raises(InputError, match="--benchmark"):
        Evaluator(EvalSettings(benchmark=str(tmp_path / "nope"), model="reference/oracle", mode="static"), tmp_path)
    with pytest.raises(InputError, match="reference/oracle"):
        Evaluator(EvalSettings(benchmark=str(bench), model="reference/psychic", mode="static"), tmp_path / "r")
    with pytest.raises(InputError, match="config.json"):
        (tmp_path / "empty").mkdir()
        Evaluator(EvalSettings(benchmark=str(bench), model=f"hf:{tmp_path / 'empty'}", mode="static"), tmp_path / "h")


def _cli(*args: str, env: dict) -> subprocess.Popen:
    return subprocess.Popen([UTCGEN, "eval", *args], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _wait(proc: subprocess.Popen) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=300)
    return proc.returncode, out, err


@pytest.mark.slow
def test_cli_build_run_compare(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("UTCGEN_MODEL", "UTCGEN_API_BASE")}
    env.update(UTCGEN_CACHE_DIR=str(tmp_path / "cache"), HF_HUB_OFFLINE="1", LITELLM_LOCAL_MODEL_COST_MAP="True")
    source, bench = source_folder(tmp_path), tmp_path / "bench"
    code, _, err = _wait(_cli("build", "--from", str(source), "--out", str(bench), "--holdout", "0.7", env=env))
    assert code == 0, err[-2000:]
    from utcgen.pipeline.evaluation.cases import read_cases

    built = [(c.id, c.gold_tool.name, c.gold_arguments, [t.name for t in c.candidates]) for c in read_cases(bench)]
    assert built == [(c.id, c.gold_tool.name, c.gold_arguments, [t.name for t in c.candidates]) for c in cases()]

    models = ("reference/oracle", "reference/never-call")
    procs = {m: _cli("run", "--benchmark", str(bench), "--model", m, "--mode", "static", "--out",
                     str(tmp_path / m.split("/")[1]), "--no-progress", env=env) for m in models}
    bad_bench = _cli("run", "--benchmark", str(tmp_path / "missing"), "--model", "reference/oracle", "--mode", "static",
                     "--out", str(tmp_path / "x"), env=env)
    bad_model = _cli("run", "--benchmark", str(bench), "--model", "reference/psychic", "--mode", "static",
                     "--out", str(tmp_path / "y"), env=env)
    runs = {}
    for model, proc in procs.items():
        code, out, err = _wait(proc)
        assert code == 0, err[-2000:]
        assert "7 of 7 cases scored" in out and "report.md" in out
        folder = tmp_path / model.split("/")[1]
        runs[model] = json.loads((folder / "metrics.json").read_text())
        assert (folder / "report.md").is_file() and (folder / "dialogues.parquet").is_file()
    oracle, never = (runs[m]["metrics"] for m in models)
    assert (oracle["acc"]["value"], oracle["ftr"]["value"], oracle["tar"]["value"]) == (1.0, 0.0, 0.0)
    assert (never["acc"]["value"], never["tar"]["value"]) == (0.0, 1.0)
    code, out, err = _wait(bad_bench)
    assert code == 2 and "--benchmark" in err and "missing" in err
    code, out, err = _wait(bad_model)
    assert code == 2 and "reference/psychic" in err

    code, _, err = _wait(_cli("compare", str(tmp_path / "oracle"), str(tmp_path / "never-call"), "--out",
                              str(tmp_path / "cmp.md"), env=env))
    assert code == 0, err[-2000:]
    text = (tmp_path / "cmp.md").read_text()
    assert "reference/oracle" in text and "reference/never-call" in text


def test_offline_model_native_tool_format_calls_as_in_json(tmp_path: Path) -> None:
    bench = benchmark(tmp_path)
    base = EvalSettings(benchmark=str(bench), model="utcgen-offline/default", mode="static", rubric_model=None)
    as_json, _ = _run(base, tmp_path / "json")
    native, _ = _run(base.model_copy(update={"tool_format": "native"}), tmp_path / "native")
    assert [r.first_calls for r in native] == [r.first_calls for r in as_json]
    assert all(m.thought for r in native for m in r.messages if m.role == "assistant")  # reasoning_content read back
