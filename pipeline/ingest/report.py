"""How catalog problems and warnings are worded and summarised for people.

A real catalog can carry hundreds of warnings of a few kinds (one BFCL convention rewritten
in every tool) or a handful of broken tools among a thousand good ones. Printing one line
each buries what matters, so this module groups warnings by kind ("617 warnings: 540 x a
boolean with a string enum ... (e.g. ...)") and lists skipped tools up to a limit; the
complete lists are there for ``--verbose``.

A warning's *kind* is its message with the particulars (quoted names, lists, numbers) taken
out: "an enum on an array (BFCL style) is moved to items.enum" is one kind whatever tool it
is about.

Standard library only, like the importers.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

__all__ = ["Notice", "Skipped", "kind", "skipped_lines", "warning_lines"]

EXAMPLES = 3  # examples shown per kind of warning
SKIPPED_SHOWN = 20  # skipped tools listed without --verbose

_PARTICULARS = re.compile(
    r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|\[[^\[\]]*\]|\{[^{}]*\}|(?<![\w.])\d+(?:\.\d+)?(?![\w.])"
)

_LISTED = re.compile(r"\.\.\.(?:(?:,| and| or|, and|, or) \.\.\.)+")


@dataclass(frozen=True)
class Notice:
    """One problem or warning at one spot of a catalog: the file, the tool (a label such as
    ``tool #3 'name' (line 4)``, None for the file as a whole), the field as named in the
    source format ("" when the whole tool is meant) and what is wrong or was changed."""

    file: str
    where: str | None
    field: str
    message: str

    def __str__(self) -> str:
        return ": ".join(x for x in (self.file, self.where, self.field, self.message) if x)

    @property
    def spot(self) -> str:
        """The tool (without line and origin) and field, or the file, for examples."""
        where = self.file if self.where is None else re.sub(r" \(.*\)$", "", self.where)
        return " ".join(x for x in (where, self.field) if x)


@dataclass
class Skipped:
    """A tool (or, `where` None, a file) left out of the catalog, with every problem it has."""

    file: str
    where: str | None
    problems: list[Notice] = field(default_factory=list)

    def line(self, every: bool = False) -> str:
        """``FILE: tool #N 'name': field: why``, the first problem only unless `every`."""
        if every or len(self.problems) == 1:
            return "; ".join(str(p) for p in self.problems)
        more = len(self.problems) - 1
        return f"{self.problems[0]} (and {more} more problem{'s' if more != 1 else ''})"


def kind(message: str) -> str:
    """The message with its particulars replaced by '...': what warnings of one kind share."""
    text = _PARTICULARS.sub("...", message)
    text = _LISTED.sub("...", text)  # "'a', 'b' and 'c'" is one particular, however many it lists
    return re.sub(r"\s+", " ", text).strip()


def warning_lines(warnings: list[Notice], verbose: bool = False, examples: int = EXAMPLES) -> list[str]:
    """Lines that report `warnings`: every one when `verbose` or when there are few; otherwise
    a header and one line per kind, most frequent first, with a few examples each."""
    if verbose or len(warnings) <= examples:
        return [str(w) for w in warnings]
    by_kind: dict[str, list[Notice]] = {}
    for w in warnings:
        by_kind.setdefault(kind(w.message), []).append(w)
    counts = Counter({k: len(v) for k, v in by_kind.items()})
    kinds = len(counts)
    lines = [f"{len(warnings)} warnings of {kinds} kind{'s' if kinds != 1 else ''} (--verbose lists each):"]
    for text, count in counts.most_common():
        shown = by_kind[text][:examples]
        if count == 1:  # a kind met once is said whole: its particulars are all there is to it
            lines.append(f"  {shown[0]}")
            continue
        more = ", ..." if count > len(shown) else ""
        lines.append(f"  {count} x {text} (e.g. {'; '.join(w.spot for w in shown)}{more})")
    return lines


def skipped_lines(skipped: list[Skipped], tools: int, verbose: bool = False,
                  limit: int = SKIPPED_SHOWN) -> list[str]:
    """Lines that say what was skipped: a count, then one line per skipped tool or file (up to
    `limit` unless `verbose`)."""
    if not skipped:
        return []
    files = sum(s.where is None for s in skipped)
    broken = len(skipped) - files
    parts = [f"{broken} broken tool{'s' if broken != 1 else ''}"] if broken else []
    parts += [f"{files} file-level problem{'s' if files != 1 else ''}"] if files else []
    lines = [f"skipped {' and '.join(parts)}; {tools} usable tool{'s' if tools != 1 else ''} kept:"]
    shown = skipped if verbose else skipped[:limit]
    lines += [f"  {s.line(every=verbose)}" for s in shown]
    if len(shown) < len(skipped):
        lines.append(f"  ... and {len(skipped) - len(shown)} more (--verbose lists each)")
    return lines
