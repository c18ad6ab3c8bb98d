"""Where the checkout and the test fixtures are, for every test tier (test modules sit at different depths)."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
CATALOGS = FIXTURES / "catalogs"
