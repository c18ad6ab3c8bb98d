"""One static HTML page to browse the dialogues of a folder: `utcgen view DIR`.

The page is self-contained (styles and a few lines of script inline, no network), so it opens
from disk or an e-mail attachment. Every text of a dialogue is escaped by the template engine:
a dialogue can hold anything a model wrote. Dialogues are read as the audit reads them
(`reading.load_dialogues`: parquet splits, the run journal, or JSON Lines), accepted first.
"""

from __future__ import annotations

from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from jinja2 import Environment, StrictUndefined

from ..core.files import write_atomic
from ..core.records import Dialogue
from ..core.redaction import redact
from .reading import load_dialogues

TEMPLATE = "view.html.j2"


@lru_cache(maxsize=1)
def _template() -> Any:
    env = Environment(undefined=StrictUndefined, autoescape=True, trim_blocks=True, lstrip_blocks=True)
    return env.from_string(files(__name__.rpartition(".")[0]).joinpath(TEMPLATE).read_text(encoding="utf-8"))


def _searchable(d: Dialogue) -> str:
    """The words a search box finds a dialogue by, lower-cased."""
    parts = [d.id, d.seed_tool.name, d.scenario, d.goal, d.rejection_reason or ""]
    parts += [f"{m.content} {m.thought or ''} {' '.join(c.name for c in m.tool_calls)}" for m in d.messages]
    return " ".join(parts).lower()


def render_view(dialogues: list[Dialogue], title: str, source: str = "") -> str:
    """The HTML page of `dialogues`, accepted ones first, each in its original order."""
    ordered = sorted(dialogues, key=lambda d: not d.accepted)
    return _template().render(title=title, source=source, dialogues=ordered,
                              accepted=sum(d.accepted for d in ordered),
                              scenarios=sorted({d.scenario for d in ordered}),
                              searchable=[_searchable(d) for d in ordered])


def write_view(folder: str | Path, out: str | Path | None = None) -> tuple[Path, int]:
    """Write the page of `folder`'s dialogues to `out` (default: `<folder>.html` beside the folder, so a
    published folder does not carry it); (the page's path, dialogues shown)."""
    folder = Path(folder)
    dialogues, source = load_dialogues(folder)
    page = Path(out) if out is not None else folder.resolve().with_suffix(".html")
    write_atomic(page, redact(render_view(dialogues, f"utcgen: {folder.resolve().name}", source)))
    return page, len(dialogues)
