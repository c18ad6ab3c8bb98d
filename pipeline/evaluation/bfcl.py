"""`utcgen eval import bfcl`: a benchmark folder from a Berkeley Function-Calling Leaderboard file.

BFCL (v3 and v4) keeps one test entry per line, `{"id", "question": [[messages]], "function": [docs]}`,
and the answers of the answered categories in `possible_answer/<same file name>` as `{"id",
"ground_truth": [{function: {argument: [acceptable values]}}]}`. Each entry becomes a `Case`:
- its functions are the candidates, read by the catalog's BFCL importer (`catalog.importers.bfcl`:
  `dict`, `float`, `tuple`, `any`, ... become JSON Schema) and checked like any catalog tool; a dot in a
  name becomes an underscore (`scoring.stored_name`) so every API accepts the tools;
- its question is the reference dialogue: one user turn per BFCL turn, a system message's text put
  before the user's words (the model under test is shown utcgen's own system prompt);
- its answer (`Case.answer`) keeps BFCL's acceptable values as they are; the case's scenario is
  `explicit` (the request says what to call) or, for the irrelevance categories, `unavailable_tool`.
Multi-turn, memory, web-search and format-sensitivity categories run against BFCL's executable
environments (`initial_config`, `involved_classes`) and Java/JavaScript ones compare language
literals through BFCL's converters: none of those is imported, and asking for one is an InputError.
A malformed line is an InputError naming the file, line and field; with `skip_invalid`, an entry whose
function docs fail the catalog's checks is left out and listed (`ImportSummary.skipped`) instead.
"""

from __future__ import annotations

import json
import re
from importlib.resources import files
from pathlib import Path
from typing import Any

from jinja2 import FunctionLoader
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..core.errors import InputError
from ..core.records import Message, Persona, Tool
from ..ingest.checks import check_tool
from ..ingest.importers.bfcl import extract
from ..settings.templates import jinja_environment
from .benchmark_folder import write_imported
from .cases import AcceptedCall, Case, ExternalAnswer
from .scoring import stored_name

# category -> what is right: "call" (the answer's calls), "none" (no call), "any" (some call)
CATEGORIES: dict[str, str] = {
    "simple": "call", "multiple": "call", "parallel": "call", "parallel_multiple": "call",
    "live_simple": "call", "live_multiple": "call", "live_parallel": "call", "live_parallel_multiple": "call",
    "irrelevance": "none", "live_irrelevance": "none", "live_relevance": "any",
}
ALIASES = {"simple_python": "simple"}  # v4 split `simple` by language; the Python part is v3's `simple`
NOT_IMPORTED = {
    "multi_turn": "it runs against BFCL's executable environments (initial_config, involved_classes)",
    "memory": "it runs against BFCL's executable memory backends",
    "web_search": "it runs against BFCL's executable web-search environment",
    "format_sensitivity": "it varies BFCL's own prompt format, which utcgen does not use",
    "simple_java": "its values are Java literals compared through BFCL's type converters",
    "simple_javascript": "its values are JavaScript literals compared through BFCL's type converters",
    "java": "its values are Java literals compared through BFCL's type converters",
    "javascript": "its values are JavaScript literals compared through BFCL's type converters",
}
_ID = re.compile(r"^(?P<category>[a-z_]+?)_\d+(?:-\d+)*$")
_FILE = re.compile(r"^BFCL_v\d+_(?P<category>[a-z_]+)$")
PERSONA = Persona(id="bfcl", text="A person asking a question of the Berkeley Function-Calling Leaderboard.")
NO_TOOL = Tool(name="no_fitting_tool", description="BFCL irrelevance: none of the candidates serves the request.")


class _Message(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: str
    content: str


class _Entry(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str
    question: list[list[_Message]] = Field(min_length=1)
    function: list[dict[str, Any]] = Field(min_length=1)


class _AnswerLine(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str
    ground_truth: list[dict[str, dict[str, list[Any]]]]


class ImportSummary(BaseModel):
    """What `import_bfcl` wrote (benchmark.json)."""

    model_config = ConfigDict(extra="forbid")

    out_dir: str
    source: str
    answers: str | None
    benchmark: str = "bfcl"
    category: str
    cases: int
    with_gold_call: int
    skipped: list[str] = Field(default_factory=list)  # "id: why" of entries left out (skip_invalid)

    def to_text(self) -> str:
        answers = f" with answers {self.answers}" if self.answers else ""
        lines = [f"benchmark {self.out_dir}: {self.cases} BFCL {self.category} cases from {self.source}{answers} "
                 f"({self.with_gold_call} with gold calls)"]
        if self.skipped:
            lines += [f"left out {len(self.skipped)} entries whose functions fail the catalog checks:",
                      *(f"  {s}" for s in self.skipped)]
        return "\n".join(lines)


def category_of(path: Path, first_id: str | None, forced: str | None = None) -> str:
    """The BFCL category: `forced` if given, else from the file name (`BFCL_v4_<category>.json`), else from
    the first entry's id (`live_simple_3-2-1`); InputError for a category that is not imported."""
    found = forced
    if found is None and (m := _FILE.match(path.stem)):
        found = m["category"]
    if found is None and first_id and (m := _ID.match(first_id)):
        found = m["category"]
    if found is None:
        raise InputError(f"{path}: cannot tell the BFCL category from the file name or the ids; pass --category")
    found = ALIASES.get(found, found)
    for prefix, why in NOT_IMPORTED.items():
        if found == prefix or found.startswith(prefix + "_"):
            raise InputError(f"{path}: BFCL category {found} is not imported: {why}")
    if found not in CATEGORIES:
        raise InputError(f"{path}: unknown BFCL category {found!r} (imported: {', '.join(CATEGORIES)})")
    return found


def _lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line of a JSON-lines file, or an error naming the line."""
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    out: list[tuple[int, dict[str, Any]]] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{number}: not a JSON line: {exc.msg}") from None
        if not isinstance(item, dict):
            raise InputError(f"{path}:{number}: expected a JSON object, got {type(item).__name__}")
        out.append((number, item))
    return out


def _parse(model: type[BaseModel], path: Path, number: int, item: dict[str, Any]) -> Any:
    try:
        return model.model_validate(item)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(entry)"
        raise InputError(f"{path}:{number}: field {where}: {first['msg']}") from None


def _tools(path: Path, number: int, functions: list[dict[str, Any]]) -> list[Tool]:
    """The entry's function docs through the catalog's BFCL importer and checks; names stored with `_` for `.`."""
    tools: list[Tool] = []
    for i, cand in enumerate(extract(functions, [number] * len(functions)).candidates):
        problems = cand.problems + check_tool(cand.data)
        if problems:
            field, message = problems[0]
            raise InputError(f"{path}:{number}: field function[{i}]{'.' + field if field else ''}: {message}")
        data = dict(cand.data)
        data["name"] = stored_name(data["name"])
        if any(t.name == data["name"] for t in tools):
            raise InputError(f"{path}:{number}: field function[{i}].name: {cand.data['name']!r} is another function's "
                             f"name once dots are written as underscores ({data['name']!r})")
        tools.append(Tool.model_validate(data))
    return tools


def _reference(entry: _Entry) -> list[Message]:
    """One user message per BFCL turn (system text first); assistant messages kept as reference turns."""
    out: list[Message] = []
    for turn in entry.question:
        said: list[str] = []
        for m in turn:
            if m.role == "assistant":
                out.append(Message(role="assistant", content=m.content))
            else:
                said.append(m.content)
        if said:
            out.append(Message(role="user", content="\n\n".join(said)))
    return out


def _accepted(path: Path, number: int, line: _AnswerLine, tools: list[Tool]) -> list[AcceptedCall]:
    names = {t.name for t in tools}
    calls: list[AcceptedCall] = []
    for i, call in enumerate(line.ground_truth):
        if len(call) != 1:
            raise InputError(f"{path}:{number}: field ground_truth.{i}: one function per call, got {len(call)}")
        (name, arguments), = call.items()
        if stored_name(name) not in names:
            raise InputError(f"{path}:{number}: field ground_truth.{i}.{name}: not a function of entry {line.id}")
        calls.append(AcceptedCall(name=stored_name(name), arguments=arguments))
    return calls


def build_cases(questions: Path, answers: Path | None, category: str | None = None, *,
                skipped: list[str] | None = None) -> tuple[str, list[Case]]:
    """(category, cases) of a BFCL questions file and, for the answered categories, its answers file. Given a
    `skipped` list, an entry whose functions fail the catalog checks is noted there and left out."""
    entries = _lines(questions)
    first = entries[0][1].get("id") if entries else None
    cat = category_of(questions, first if isinstance(first, str) else None, category)
    rule = CATEGORIES[cat]
    truth: dict[str, tuple[int, _AnswerLine]] = {}
    if rule == "call":
        if answers is None:
            raise InputError(f"{questions}: BFCL category {cat} needs its answers: pass --answers "
                             f"(BFCL keeps them in possible_answer/{questions.name})")
        for number, item in _lines(answers):
            line = _parse(_AnswerLine, answers, number, item)
            truth[line.id] = (number, line)
    cases: list[Case] = []
    seen: set[str] = set()
    for number, item in entries:
        entry = _parse(_Entry, questions, number, item)
        if entry.id in seen:
            raise InputError(f"{questions}:{number}: field id: {entry.id!r} appears twice")
        seen.add(entry.id)
        try:
            tools = _tools(questions, number, entry.function)
        except InputError as exc:
            if skipped is None:
                raise InputError(f"{exc} (--skip-invalid leaves such entries out)") from None
            skipped.append(f"{entry.id}: {exc}")
            continue
        answer = ExternalAnswer(category=cat, any_call=rule == "any")
        if rule == "call":
            if entry.id not in truth:
                raise InputError(f"{answers}: no answer for entry {entry.id!r} ({questions}:{number})")
            answer.calls = _accepted(answers or questions, *truth[entry.id], tools)
        cases.append(_case(entry, tools, answer))
    if not cases:
        raise InputError(f"{questions}: no entries" + (" left after skipping the invalid ones" if skipped else ""))
    return cat, cases


def _case(entry: _Entry, tools: list[Tool], answer: ExternalAnswer) -> Case:
    by_name = {t.name: t for t in tools}
    if answer.calls:
        gold, arguments = by_name[answer.calls[0].name], answer.calls[0].example()
    else:
        gold, arguments = (tools[0] if answer.any_call else NO_TOOL), {}
    reference = _reference(entry)
    return Case(id=entry.id, gold_tool=gold, gold_arguments=arguments, candidates=tools, persona=PERSONA,
                goal=next((m.content for m in reversed(reference) if m.role == "user"), ""), reference=reference,
                line_of_business=answer.category, family=answer.category, near_duplicate=False,
                max_similarity=0.0, scenario="explicit" if CATEGORIES[answer.category] != "none" else "unavailable_tool",
                source_id=entry.id, answer=answer)


def default_answers(questions: Path) -> Path | None:
    """BFCL's own layout: `possible_answer/<file name>` beside the questions file, when it exists."""
    candidate = questions.parent / "possible_answer" / questions.name
    return candidate if candidate.is_file() else None


def import_bfcl(questions: Path, out: Path | None = None, *, answers: Path | None = None,
                category: str | None = None, skip_invalid: bool = False) -> ImportSummary:
    """Write the benchmark folder `out` (default `eval-out/bfcl-<category>`) from a BFCL file (see the module
    docstring)."""
    questions = Path(questions)
    answers = Path(answers) if answers else default_answers(questions)
    skipped: list[str] | None = [] if skip_invalid else None
    cat, cases = build_cases(questions, answers, category, skipped=skipped)
    out = Path(out) if out is not None else Path("eval-out") / f"bfcl-{cat}"
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: is a file, not a folder")
    summary = ImportSummary(out_dir=str(out), source=str(questions), answers=str(answers) if CATEGORIES[cat] == "call"
                            else None, category=cat, cases=len(cases),
                            with_gold_call=sum(bool(c.answer and c.answer.calls) for c in cases),
                            skipped=skipped or [])
    write_imported(out, cases, summary.model_dump_json(indent=2) + "\n", render_bfcl_card(summary))
    return summary



CARD_TEMPLATE = "bfcl_card.md.j2"
# the card's template (package data beside this module), in the Jinja set-up prompts use too
_TEMPLATES = jinja_environment(
    FunctionLoader(lambda name: files(__name__.rpartition(".")[0]).joinpath(name).read_text(encoding="utf-8")))

def render_bfcl_card(s: ImportSummary) -> str:
    """README.md of an imported benchmark: what it is and how it is scored."""
    return _TEMPLATES.get_template(CARD_TEMPLATE).render(category=s.category, cases=s.cases, source=s.source,
                                                          out_dir=s.out_dir)
