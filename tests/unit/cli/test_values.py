"""Flag values are checked like the configuration: the same bounds, exit status 2, the flag named."""

from __future__ import annotations

import argparse
import os
import subprocess

import pytest

from tests.support.cli import UTCGEN
from tests.support.paths import REPO
from utcgen.pipeline.cli import build_parser
from utcgen.pipeline.cli.checks import field, field_bounds, number
from utcgen.pipeline.core.errors import InputError
from utcgen.pipeline.evaluation.run import EvalSettings
from utcgen.pipeline.settings.config import BudgetSettings, RunConfig, load_config
from utcgen.pipeline.settings.models import LLMSettings

RUN = ["eval", "run", "--benchmark", "b", "--model", "reference/oracle", "--mode", "static", "--out", "o"]

# (command line, flag the error must name, the bad value as typed)
BAD = [
    (["generate", "--max-in-flight", "-1"], "--max-in-flight", "-1"),
    (["generate", "--max-cost", "-5"], "--max-cost", "-5"),
    (["generate", "--num-dialogues", "0"], "--num-dialogues", "0"),
    (["generate", "--max-tokens", "-1"], "--max-tokens", "-1"),
    (["generate", "--max-tokens", "0"], "--max-tokens", "0"),  # a budget of nothing: refused, not spent past
    (["generate", "--max-cost", "0"], "--max-cost", "0"),
    (["generate", "--max-cost", "inf"], "--max-cost", "inf"),
    (["generate", "--seed", "1.5"], "--seed", "1.5"),
    (["generate", "--workers", "0"], "--workers", "0"),
    (["generate", "--workers", "-2"], "--workers", "-2"),
    (["eval", "build", "--from", "a", "--out", "b", "--holdout", "1"], "--holdout", "1"),
    ([*RUN, "--max-turns", "0"], "--max-turns", "0"),
    ([*RUN, "--limit", "-2"], "--limit", "-2"),
    ([*RUN, "--max-in-flight", "0"], "--max-in-flight", "0"),
    ([*RUN, "--votes", "3,0"], "--votes", "3,0"),
    (["publish", "somewhere", "--repo-id", "a/b", "--connect-timeout", "-1"], "--connect-timeout", "-1"),
    (["catalog", "stats", "somewhere", "--format", "yaml"], "--format", "yaml"),
]


@pytest.mark.slow  # the console script, once per bad value
def test_bad_values_exit_2_naming_the_flag_from_the_console_script(tmp_path) -> None:
    env = {**os.environ, "UTCGEN_CACHE_DIR": str(tmp_path / "cache")}
    procs = [(argv, flag, value, subprocess.Popen([UTCGEN, *argv], cwd=tmp_path, env=env, text=True,
                                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE))
             for argv, flag, value in BAD]
    for argv, flag, value, proc in procs:
        out, err = proc.communicate(timeout=120)
        command = " ".join(argv[:2]) if argv[0] in ("eval", "catalog") else argv[0]
        assert proc.returncode == 2, (argv, err)
        assert f"utcgen {command}: error: argument {flag}" in err and value in err, (argv, err)
        assert "default.yaml" not in err and "Traceback" not in err and out == ""
    assert not (tmp_path / "output").exists()  # refused before anything ran


@pytest.mark.slow  # the console script
def test_num_dialogues_zero_no_longer_blamed_on_the_config_file(tmp_path) -> None:
    run = subprocess.run([UTCGEN, "generate", "--num-dialogues", "0", "--out", str(tmp_path / "o")], cwd=REPO,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2
    assert "argument --num-dialogues: must be >= 1, got 0" in run.stderr
    # the configuration model refuses the same value, for the same reason
    with pytest.raises(InputError, match="num_dialogues"):
        load_config(None, {"num_dialogues": 0})


@pytest.mark.parametrize(("model", "name", "flag", "argv"), [
    (LLMSettings, "max_in_flight", "--max-in-flight", ["generate"]),
    (RunConfig, "num_dialogues", "--num-dialogues", ["generate"]),
    (BudgetSettings, "max_tokens", "--max-tokens", ["generate"]),
    (EvalSettings, "max_turns", "--max-turns", RUN),
    (EvalSettings, "max_new_tokens", "--max-new-tokens", RUN),
    (EvalSettings, "limit", "--limit", RUN),
])
def test_flag_bounds_are_the_model_bounds(model, name, flag, argv, capsys) -> None:
    """The lowest value the model accepts parses; one below it is refused with the model's own bound."""
    [(attr, low)] = field_bounds(model, name)
    assert attr == "ge"
    low = int(low)
    model.__pydantic_validator__.validate_assignment(model.model_construct(), name, low)
    args = build_parser().parse_args([*argv, flag, str(low)])
    assert getattr(args, flag[2:].replace("-", "_")) == low
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args([*argv, flag, str(low - 1)])
    assert exit_.value.code == 2
    assert f"argument {flag}: must be >= {low}, got {low - 1}" in capsys.readouterr().err


def test_bounds_follow_a_changed_model() -> None:
    """Nothing is repeated: a flag bound to a model field reads the field's limits when it parses."""
    from pydantic import BaseModel, Field

    class Limits(BaseModel):
        workers: int = Field(4, gt=2, le=8)
        share: float | None = Field(None, ge=0.5)

    workers, share = field(lambda: Limits, "workers"), field(lambda: Limits, "share")
    assert workers("3") == 3 and workers("8") == 8 and share("0.5") == 0.5
    for parse, text, message in ((workers, "2", "must be > 2, got 2"), (workers, "9", "must be <= 8, got 9"),
                                 (share, "0.25", "must be >= 0.5, got 0.25"), (workers, "4.0", "expected an integer")):
        with pytest.raises(argparse.ArgumentTypeError, match=message):
            parse(text)


def _actions(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _actions(sub, (*path, name))
        else:
            yield path, action


def test_no_flag_takes_an_unchecked_number() -> None:
    """Every numeric flag of every sub-command goes through a checked type, never bare int or float."""
    numeric = [(" ".join(path), a.option_strings) for path, a in _actions(build_parser()) if a.type in (int, float)]
    assert numeric == []
    checked = {(" ".join(path), a.option_strings[0]) for path, a in _actions(build_parser())
               if a.option_strings and getattr(a.type, "__qualname__", "").startswith("number.")}
    assert {("generate", "--max-cost"), ("eval run", "--max-turns"), ("eval build", "--holdout"),
            ("publish", "--connect-timeout")} <= checked


def test_number_refuses_what_no_setting_means() -> None:
    parse = number(float)
    for text in ("nan", "-inf", "1e400", "five"):
        with pytest.raises(argparse.ArgumentTypeError):
            parse(text)
    assert parse("2.5") == 2.5
