"""Small hand-made benchmark cases and results for the evaluation tests."""

from __future__ import annotations

from typing import Any

from utcgen.pipeline.core.records import Message, Persona, Tool, ToolCall
from utcgen.pipeline.evaluation.cases import Case, CaseResult


def tool(name: str, properties: dict[str, str], required: list[str] | None = None,
         line_of_business: str = "it_service_management") -> Tool:
    """A tool whose properties are name -> JSON Schema type; all required unless told."""
    return Tool(name=name, description=f"{name.replace('_', ' ')} in the enterprise system.",
                parameters={"type": "object",
                            "properties": {k: {"type": t, "description": k} for k, t in properties.items()},
                            "required": list(properties) if required is None else required},
                line_of_business=line_of_business)


TICKET = tool("create_ticket", {"title": "string", "priority": "string", "note": "string"}, ["title", "priority"])
INCIDENT = tool("create_incident", {"title": "string", "severity": "integer"})
CASE_TOOL = tool("open_case", {"customer_id": "string"})
GOLD = {"title": "Printer jam", "priority": "high"}


def case(case_id: str = "c1", candidates: list[Tool] | None = None, gold: Tool = TICKET,
         arguments: dict[str, Any] | None = None, *, line_of_business: str = "it_service_management",
         near_duplicate: bool = False) -> Case:
    """A case on `gold` (default create_ticket with V* = GOLD) among `candidates` (default: gold first)."""
    arguments = dict(GOLD if arguments is None else arguments)
    return Case(
        id=case_id, gold_tool=gold, gold_arguments=arguments,
        candidates=candidates or [gold, INCIDENT, CASE_TOOL],
        persona=Persona(id="p1", text="An IT support lead in Berlin."), goal="Get the printer fixed.",
        reference=[Message(role="user", content="My printer keeps jamming."),
                   Message(role="assistant", content="What should the ticket say, and how urgent is it?"),
                   Message(role="user", content="Printer jam, high priority."),
                   Message(role="assistant", tool_calls=[ToolCall(name=gold.name, arguments=arguments)])],
        line_of_business=line_of_business, family=f"fam-{gold.name}", near_duplicate=near_duplicate,
        max_similarity=0.75 if near_duplicate else 0.5,
    )


def calls(*pairs: tuple[str, dict[str, Any]]) -> list[ToolCall]:
    return [ToolCall(name=n, arguments=a) for n, a in pairs]


def result(case_id: str, first: list[ToolCall] | None = None, *, text: list[str] | None = None,
           conv_rel: list[float] | None = None, flagged: str | None = None, error: str | None = None,
           model: str = "test/model") -> CaseResult:
    """A static result: user turns, assistant turns with `text` (questions), then one turn with `first` calls."""
    messages: list[Message] = [Message(role="user", content="My printer keeps jamming.")]
    for said in text or []:
        messages += [Message(role="assistant", content=said, thought="secret thinking words"),
                     Message(role="user", content="Printer jam, high priority.")]
    if first:
        messages.append(Message(role="assistant", tool_calls=first))
    return CaseResult(case_id=case_id, model=model, mode="static", messages=messages, first_calls=first or [],
                      conv_rel=conv_rel or [], flagged=flagged, error=error)


def replay(c: Case, policy, model: str = "reference/test") -> CaseResult:
    """Static evaluation in miniature: the reference user turns in order, the policy answering each,
    stopping at the first turn with a tool call."""
    messages: list[Message] = []
    first: list[ToolCall] = []
    for turn in c.reference:
        if turn.role != "user":
            continue
        messages.append(Message(role="user", content=turn.content))
        reply = policy(c, list(messages))
        messages.append(reply)
        if reply.tool_calls:
            first = list(reply.tool_calls)
            break
    return CaseResult(case_id=c.id, model=model, mode="static", messages=messages, first_calls=first)
