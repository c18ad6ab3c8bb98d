"""The catalog shipped in catalog/tools must always load cleanly."""

from __future__ import annotations

from pathlib import Path

import pytest

from utcgen.pipeline.catalog.reader import CATALOG_SUFFIXES, read_catalog

SHIPPED = Path(__file__).resolve().parents[1] / "catalog" / "tools"


def test_shipped_catalog_validates() -> None:
    files = [p for p in SHIPPED.glob("*") if p.suffix in CATALOG_SUFFIXES] if SHIPPED.is_dir() else []
    if not files:
        pytest.skip("catalog/tools has no catalog files yet")
    catalog = read_catalog(SHIPPED)  # raises InputError listing every problem
    assert len(catalog.files) == len(files)
    assert all(f.tools >= 1 for f in catalog.files)
    assert len({t.name for t in catalog.tools}) == len(catalog.tools)
