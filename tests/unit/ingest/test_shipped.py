"""The tool catalog and personas shipped with utcgen are part of the product: present, and clean."""

from __future__ import annotations

from pathlib import Path

from utcgen.pipeline.core.resources import shipped
from utcgen.pipeline.ingest.parsing import CATALOG_SUFFIXES
from utcgen.pipeline.ingest.reader import read_catalog
from utcgen.pipeline.retrieval.personas import load_personas
from utcgen.pipeline.settings.config import load_config

SHIPPED = shipped("catalog", "tools")


def test_shipped_catalog_is_present_and_validates() -> None:
    assert SHIPPED.is_dir(), f"shipped catalog missing: {SHIPPED}"
    files = sorted(p for p in SHIPPED.iterdir() if p.suffix in CATALOG_SUFFIXES)
    assert files, f"no catalog files in {SHIPPED}"
    catalog = read_catalog(SHIPPED)  # raises InputError listing every problem
    assert sorted(f.path for f in catalog.files) == sorted(str(p) for p in files)
    assert catalog.formats == ["native"] and catalog.warnings == []
    assert all(f.tools >= 1 for f in catalog.files)
    assert len({t.name for t in catalog.tools}) == len(catalog.tools)


def test_shipped_personas_are_present_and_load() -> None:
    path = shipped("catalog", "personas.jsonl")
    assert path.is_file(), f"shipped personas missing: {path}"
    personas = load_personas(path)
    assert personas and len({p.id for p in personas}) == len(personas)


def test_default_config_uses_the_shipped_files() -> None:
    config = load_config(None, {})  # a relative path is kept when it exists from the working directory
    assert Path(config.catalog).resolve() == SHIPPED.resolve()
    assert Path(config.personas).resolve() == shipped("catalog", "personas.jsonl").resolve()
