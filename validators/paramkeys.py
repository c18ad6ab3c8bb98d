"""Parameter-key validator: nobody reads the schema aloud.

Fails when a user turn, or the public content of an argument-filling assistant turn (where
the assistant asks for values; a selection question may quote what tools do), contains a
parameter key of a candidate tool written as an identifier (`fiscal_year`, `costCenter`,
`api_key`) or the words of a multi-word key that are not everyday speech. Thoughts and tool
calls are private and not checked. Rule codes: user_key, assistant_key.

Which words are everyday speech was decided from the keys of real catalogs
(`shortcuts.distinctive_key_words` has the rule and the figures): an ordinary phrase a user
may say passes ("API key", "e-mail", "phone number", "user name", "start date", "number of
successes", "add-ons" when the description writes it so); a schema's wording fails ("po number",
"gl account", "cost center code", "from cost center"), and so does any key written as an
identifier, `api_key` included.
"""

from __future__ import annotations

from ..pipeline.core.records import Dialogue, Verdict
from ..pipeline.dialogue import shortcuts
from .common import Problem, verdict

NAME = "param_keys"


def check_param_keys(d: Dialogue) -> Verdict:
    tools = [d.seed_tool, *d.candidate_tools]
    keys = sorted({k for t in tools for k in t.properties})
    descriptions: dict[str, str] = {}
    for t in tools:  # a key several tools share may be said as any of their descriptions says it
        for k, schema in t.properties.items():
            text = schema.get("description") if isinstance(schema, dict) else None
            if isinstance(text, str):
                descriptions[k] = f"{descriptions.get(k, '')} | {text}"
    problems: list[Problem] = []
    for i, m in enumerate(d.messages, start=1):
        if m.role not in ("user", "assistant") or not m.content:
            continue
        if m.role == "assistant" and m.phase != "argument_filling":
            continue  # a selection question may quote what the tools do; asking for values is where keys leak
        hits = shortcuts.key_hits(m.content, keys, descriptions)
        if hits:
            who = "user turn" if m.role == "user" else "assistant question"
            problems.append(Problem(f"{m.role}_key", f"{who} (message {i}) exposes parameter key {hits[0]!r}"))
    return verdict(NAME, problems, "no parameter key is spoken", keys=len(keys))
