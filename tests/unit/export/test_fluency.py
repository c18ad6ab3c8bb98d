"""Fluency (`export.fluency`, `export.perplexity`): the real model's scores, its cache, and the figures
when the optional package is missing."""

from __future__ import annotations

import importlib.util
import json
import random
from pathlib import Path

import pytest

from tests.support.factories import make_dialogue
from utcgen.pipeline.cli import main
from utcgen.pipeline.export import fluency, perplexity

NATURAL = ["Can you book me a table for two at an Italian place near the office tomorrow at seven?",
           "Please send the quarterly sales report to my manager before the meeting on Friday."]


def _shuffled(text: str) -> str:
    words = text.split()
    random.Random(1).shuffle(words)
    return " ".join(words)


def _folder(tmp_path: Path, n: int = 3) -> Path:
    lines = [make_dialogue(id=f"d{i}", accepted=True).model_dump_json() for i in range(n)]
    (tmp_path / "records.jsonl").write_text("\n".join(lines) + "\n")
    return tmp_path


def test_a_seeded_sample_is_the_same_from_a_list_or_a_stream() -> None:
    texts = [f"turn {i}" for i in range(50)]
    chosen = fluency.sample(texts, 10)
    assert len(chosen) == 10 and chosen == sorted(chosen, key=texts.index) and chosen == fluency.sample(texts, 10)
    stream = fluency.Reservoir(10)
    for t in texts:
        stream.add(t)
    assert stream.texts() == chosen and stream.seen == 50
    assert fluency.sample(texts[:4], 10) == texts[:4]
    assert fluency.sample(texts, 10, seed=1) != chosen


def test_without_the_extra_audit_says_how_to_add_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == fluency.PACKAGE else real(name, *a))
    folder = _folder(tmp_path)
    assert main(["audit", str(folder), "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)["quality"]
    for role in ("fluency_user", "fluency_assistant"):
        assert figures[role]["value"] is None and figures[role]["met"] is None
        assert "pip install 'utcgen[fluency]'" in figures[role]["reason"]
    assert main(["audit", str(folder)]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("fluency_assistant "))
    assert "not measured" in line and "utcgen[fluency]" in line


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory) -> tuple[perplexity.Scorer, Path]:
    """The real model, converted from its GGUF file into a fresh cache (the slow path, once per module)."""
    if fluency.missing():
        pytest.skip(fluency.missing())
    cache = tmp_path_factory.mktemp("fluency-cache")
    return perplexity.load_scorer(fluency.model_folder(), cache=cache), cache


@pytest.mark.slow
def test_natural_text_scores_lower_than_its_words_shuffled(converted, monkeypatch: pytest.MonkeyPatch) -> None:
    scorer, cache = converted
    for role in ("user", "assistant"):
        natural = scorer.perplexities(NATURAL, role)
        shuffled = scorer.perplexities([_shuffled(t) for t in NATURAL], role)
        assert all(1 < n < s for n, s in zip(natural, shuffled, strict=True)), (role, natural, shuffled)
    batched = scorer.perplexities([*NATURAL, "", "Thanks!"], "user")
    assert batched[2] != batched[2]  # an empty text has no token to score: nan
    monkeypatch.setattr(perplexity, "BATCH_TOKENS", 1)  # one text per forward pass, no padding
    alone = scorer.perplexities([*NATURAL, "", "Thanks!"], "user")
    assert all(abs(a - b) < 1e-4 * b for a, b in zip(alone[:2] + alone[3:], batched[:2] + batched[3:], strict=True))
    again = perplexity.load_scorer(fluency.model_folder(), cache=cache)  # from the cache this time
    assert again.perplexities(NATURAL, "user") == scorer.perplexities(NATURAL, "user")
    assert [p.name for p in (cache / "fluency").iterdir()] == [next((cache / "fluency").iterdir()).name]  # no leftover


@pytest.mark.slow
def test_audit_scores_fluency_with_the_real_model(converted, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    _, cache = converted
    monkeypatch.setenv("UTCGEN_CACHE_DIR", str(cache))
    assert main(["audit", str(_folder(tmp_path)), "--json", "--fluency-turns", "2"]) == 0
    figures = json.loads(capsys.readouterr().out)["quality"]
    for role in ("fluency_user", "fluency_assistant"):
        f = figures[role]
        assert f["turns"] == 2 < f["of"] and f["value"] == pytest.approx(f["perplexity"] / fluency.REFERENCE)
        assert f["perplexity"] > 1 and f["met"] is (f["value"] <= 1.5) and f["target"] == "<= 1.5"
