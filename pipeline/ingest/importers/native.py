"""Native catalogs: items already have our `Tool` shape; validation does the rest."""

from __future__ import annotations

from typing import Any

from ..common import Candidate, Extracted, not_object


def extract(items: list[Any], lines: list[int | None]) -> Extracted:
    return Extracted([
        Candidate(i, dict(item), lines[i]) if isinstance(item, dict) else not_object(i, item, lines[i])
        for i, item in enumerate(items)
    ])
