"""`utcgen eval build` on a real offline run, and `utcgen generate --exclude-split` on its split."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from tests.support.factories import make_dialogue
from tests.support.runs import lines_subset, run_and_export
from utcgen.pipeline.cli import main
from utcgen.pipeline.core.errors import InputError
from utcgen.pipeline.core.resources import shipped
from utcgen.pipeline.evaluation.benchmark import build_benchmark
from utcgen.pipeline.evaluation.cases import Split, read_cases
from utcgen.pipeline.evaluation.families import Similarity, near_duplicate_families
from utcgen.pipeline.export.reading import load_dialogues
from utcgen.pipeline.ingest.reader import load_catalog
from utcgen.pipeline.retrieval.similarity import NEAR_DUPLICATE_THRESHOLD

RUN_DIALOGUES = 40
# Three lines of business of the shipped catalog (88 tools, several near-duplicate families) and their
# personas: a realistic catalog that embeds in seconds.
LINES = ("finance", "procurement", "supply_chain")


@pytest.fixture(scope="module")
def world(tmp_path_factory, embedder):
    """An offline generate run of 40 dialogues on part of the shipped catalog (its own settings: seed 1, the
    default scenario), and the session's embedder, which it uses.

    The session's embedding cache is linked in at <cache>/embeddings, where `utcgen generate` looks when
    UTCGEN_CACHE_DIR=<cache>: the CLI runs below then embed nothing and load no model. The cache is
    content-addressed (model and text), so sharing it changes no vector."""
    from utcgen.pipeline.settings.config import load_config

    root = tmp_path_factory.mktemp("evalbuild")
    catalog, personas = lines_subset(root, LINES)
    (root / "cache").mkdir()
    (root / "cache" / "embeddings").symlink_to(embedder.cache.dir.parent, target_is_directory=True)
    config = load_config(None, {"out": str(root / "run"), "num_dialogues": RUN_DIALOGUES, "seed": 1,
                                "catalog": str(catalog), "personas": str(personas)})
    config.llm.cache_dir = str(root / "cache")
    run_and_export(config, embedder)
    tools = load_catalog(str(catalog))
    similarity = Similarity(tools, embedder)
    return {"root": root, "run": root / "run", "catalog": catalog, "personas": personas, "embedder": embedder, "tools": tools, "similarity": similarity,
            "family": near_duplicate_families(similarity)}


@pytest.fixture(scope="module")
def by_family(world):
    out = world["root"] / "bench"
    summary = build_benchmark(world["run"], out, holdout=0.25, seed=3, embedder=world["embedder"])
    return out, summary


def test_held_out_families_are_whole_and_cases_come_from_them(world, by_family):
    out, summary = by_family
    split = Split.model_validate_json((out / "split.json").read_text())
    cases = read_cases(out)
    family, held = world["family"], set(split.held_out_tools)
    assert split.by == "family" and split.seed == 3 and split.held_out_groups
    # every tool of a held-out family is held out, and nothing else
    assert held == {name for name, fam in family.items() if fam in split.held_out_groups}
    # no case's seed tool is in a family that was not held out
    assert cases and all(family[c.gold_tool.name] in split.held_out_groups for c in cases)
    assert all(c.family == family[c.gold_tool.name] for c in cases)
    # every near-duplicate of a held-out tool is held out too
    sim, tools = world["similarity"], world["tools"]
    by_name = {t.name: t for t in tools}
    for name in held:
        for other in tools:
            if other.name != name and sim.score(by_name[name], other) >= NEAR_DUPLICATE_THRESHOLD:
                assert other.name in held, (name, other.name)
    # the cases are exactly the accepted dialogues whose seed tool is held out, in the dialogue's candidate order
    dialogues = {d.id: d for d in load_dialogues(world["run"])[0] if d.accepted}
    assert {c.id for c in cases} == {i for i, d in dialogues.items() if d.seed_tool.name in held}
    for c in cases:
        d = dialogues[c.id]
        assert [t.name for t in c.candidates] == [t.name for t in d.candidate_tools]
        assert c.gold_arguments == d.gold_arguments and c.reference[-1].tool_calls[0].name == c.gold_tool.name
        assert c.line_of_business == by_name[c.gold_tool.name].line_of_business
        assert c.near_duplicate == (c.max_similarity >= NEAR_DUPLICATE_THRESHOLD)
        distractor_scores = [sim.score(c.gold_tool, t) for t in c.distractors]
        assert c.max_similarity == pytest.approx(max(distractor_scores), abs=1e-5)
    # the summary describes these cases
    assert summary.cases == len(cases) and summary.accepted == RUN_DIALOGUES
    assert summary.held_out_tools == len(held) and summary.held_out_groups == len(split.held_out_groups)
    assert summary.share_near_duplicate == pytest.approx(sum(c.near_duplicate for c in cases) / len(cases), abs=1e-4)
    assert summary.share_required == pytest.approx(sum(bool(c.gold_tool.required) for c in cases) / len(cases),
                                                   abs=1e-4)
    assert 0 < summary.mean_overlap < 1 and summary.mean_distractors == 5
    assert abs(summary.cases - 0.25 * RUN_DIALOGUES) <= max(family_sizes(cases).values())
    assert "near-duplicate" in summary.to_text()


def family_sizes(cases):
    sizes: dict[str, int] = {}
    for c in cases:
        sizes[c.family] = sizes.get(c.family, 0) + 1
    return sizes


def test_benchmark_folder_loads_as_a_dataset_and_has_a_card(world, by_family, tmp_path):
    import datasets
    import yaml

    out, summary = by_family
    ds = datasets.load_dataset(str(out), cache_dir=str(tmp_path / "hf"))
    assert list(ds) == ["test"]
    rows = ds["test"]
    cases = {c.id: c for c in read_cases(out)}
    assert sorted(rows["id"]) == sorted(cases)
    row = rows[0]
    c = cases[row["id"]]
    assert row["gold_tool"] == c.gold_tool.name and json.loads(row["gold_arguments"]) == c.gold_arguments
    assert row["candidate_tools"] == [t.name for t in c.candidates] and row["near_duplicate"] == c.near_duplicate
    card = (out / "README.md").read_text()
    front = yaml.safe_load(card.split("---")[1])
    assert front["configs"][0]["data_files"][0]["split"] == "test"
    assert f"**{summary.cases} cases**" in card and "utcgen eval run --benchmark" in card
    assert "--exclude-split" in card and "29.2%" in card
    assert not list(out.rglob(".utcgen-tmp-*"))  # atomic writes leave no temporaries


def test_the_split_is_reproducible_and_seeded(world, by_family, tmp_path):
    out, _ = by_family
    again = build_benchmark(world["run"], tmp_path / "again", holdout=0.25, seed=3, embedder=world["embedder"])
    assert (tmp_path / "again" / "split.json").read_text().replace(str(tmp_path / "again"), "") == \
        (out / "split.json").read_text().replace(str(out), "")
    assert (tmp_path / "again" / "cases.jsonl").read_text() == (out / "cases.jsonl").read_text()
    other = build_benchmark(world["run"], tmp_path / "other", holdout=0.25, seed=4, embedder=world["embedder"])
    first = json.loads((out / "split.json").read_text())["held_out_groups"]
    assert json.loads((tmp_path / "other" / "split.json").read_text())["held_out_groups"] != first
    assert other.cases > 0 and again.cases > 0


def test_by_line_of_business(world, tmp_path):
    summary = build_benchmark(world["run"], tmp_path / "lob", by="line_of_business", holdout=0.2, seed=0,
                              embedder=world["embedder"])
    split = Split.model_validate_json((tmp_path / "lob" / "split.json").read_text())
    held, family = set(split.held_out_tools), world["family"]
    lob_tools = {t.name for t in world["tools"] if t.line_of_business in split.held_out_groups}
    assert lob_tools <= held  # the whole line of business ...
    closure = {n for n, f in family.items() if f in {family[t] for t in lob_tools}}
    assert held == closure  # ... and every near-duplicate family of its tools, nothing more
    cases = read_cases(tmp_path / "lob")
    assert all(c.gold_tool.name in held for c in cases) and summary.cases == len(cases)


def test_build_errors_name_the_folder(world, tmp_path):
    with pytest.raises(InputError, match="holdout"):
        build_benchmark(world["run"], tmp_path / "x", holdout=1.0, embedder=world["embedder"])
    with pytest.raises(InputError, match="holdout"):
        build_benchmark(world["run"], tmp_path / "x", holdout=0, embedder=world["embedder"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=f"{tmp_path / 'empty'}: not a `utcgen generate` output"):
        build_benchmark(tmp_path / "empty", tmp_path / "x", embedder=world["embedder"])
    journal = tmp_path / "rejected-only" / "journal"
    journal.mkdir(parents=True)
    rejected = make_dialogue(accepted=False)
    (journal / "job-0000000.json").write_text(json.dumps({"dialogues": [json.loads(rejected.model_dump_json())]}))
    with pytest.raises(InputError, match="rejected-only: no accepted dialogues"):
        build_benchmark(tmp_path / "rejected-only", tmp_path / "x", embedder=world["embedder"])
    with pytest.raises(InputError, match="no such folder"):
        build_benchmark(tmp_path / "missing", tmp_path / "x", embedder=world["embedder"])


def test_generate_with_exclude_split_never_uses_a_held_out_tool(world, by_family, tmp_path, monkeypatch, capsys):
    out, _ = by_family
    split = out / "split.json"
    held = set(json.loads(split.read_text())["held_out_tools"])
    monkeypatch.setenv("UTCGEN_CACHE_DIR", str(world["root"] / "cache"))
    monkeypatch.delenv("UTCGEN_MODEL", raising=False)
    train = tmp_path / "train"
    code = main(["generate", "--exclude-split", str(split), "--num-dialogues", "12", "--seed", "1",
                 "--catalog", str(world["catalog"]), "--personas", str(world["personas"]),
                 "--out", str(train), "--no-progress"])
    assert code == 0
    assert f"{len(held)} held-out tools of {split} removed from the catalog" in capsys.readouterr().err
    rows = pq.read_table(train / "data" / "dialogues" / "train-00000-of-00001.parquet").to_pylist()
    rejected = pq.read_table(train / "data" / "rejected" / "train-00000-of-00001.parquet").to_pylist()
    assert len(rows) == 12
    for row in rows + rejected:
        used = {row["seed_tool"], *row["distractor_tools"], *row["candidate_tools"]}
        assert not used & held, row["id"]
    stats = json.loads((train / "stats.json").read_text())
    assert stats["run"]["config"]["exclude_split"] == str(split)

    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"by": "family"}))
    assert main(["generate", "--exclude-split", str(bad), "--num-dialogues", "2", "--out",
                 str(tmp_path / "never"), "--no-progress"]) == 2
    assert f"{bad}: not a split.json" in capsys.readouterr().err


def test_exclude_split_changes_the_fingerprint_only_when_set():
    from utcgen.pipeline.settings.config import RunConfig

    plain = RunConfig()
    assert RunConfig(exclude_split=None).fingerprint() == plain.fingerprint()
    assert RunConfig(exclude_split="bench/split.json").fingerprint() != plain.fingerprint()


def test_the_catalog_comes_from_the_run_then_the_flag_then_the_shipped_one(tmp_path):
    from utcgen.pipeline.evaluation.holdout import resolve_catalog

    src = tmp_path / "src"
    src.mkdir()
    assert resolve_catalog(src, None) == shipped("catalog", "tools")  # nothing recorded, no flag
    flag = tmp_path / "mine.json"
    flag.write_text("[]")
    assert resolve_catalog(src, flag) == flag
    (src / "stats.json").write_text(json.dumps({"run": {"catalog": "catalog/tools"}}))
    assert resolve_catalog(src, flag).resolve() == shipped("catalog", "tools").resolve()  # the shipped one
    (src / "stats.json").write_text(json.dumps({"run": {"catalog": str(tmp_path / "gone.json")}}))
    assert resolve_catalog(src, flag) == flag
    with pytest.raises(InputError, match="gone.json does not exist here; pass --catalog"):
        resolve_catalog(src, None)
