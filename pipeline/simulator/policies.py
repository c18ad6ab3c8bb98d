"""What the offline generation roles share: the goal and slot policies, the offline user's
stop words, tokenising, the plain-language wish of a description and the reply shape.
The user proxy lives in `user`, the assistant in `assistant`; each policy takes its
role's typed request (validated on arrival, read as its JSON fields: `offline.respond`)
and returns reply text in exactly the format the prompt asks for.
"""

from __future__ import annotations

import json
import random
import re
from functools import lru_cache
from typing import Any

from ..core.text import STOP as SHARED_STOP
from ..core.text import stems
from . import gold_values as values

# the shared stop words, a few more, and the offline user's own chatter: it says nothing about any tool
STOP = SHARED_STOP | set(
    "help used given specific work day today task usual process routine thing sort hand fit fits best honestly "
    "clearer matter matters part key specifically good question right sure let clear stuck involving something "
    "get done quick hard say called put option options afraid better mean mine role quite bit "
    "important hey morning us whatever try thanks am what's it's i'm".split()
)
VALUE_SEP = "; "


def _rng(state: dict, *parts: Any) -> random.Random:
    return random.Random(":".join(str(p) for p in (state.get("seed", 0), *parts)))


def tokens(said: str) -> list[str]:
    """The stems of `said`'s content words (`text.stems`), the offline user's chatter left out."""
    return stems(said, STOP)


def tool_words(tool: dict) -> frozenset[str]:
    return _tool_words(tool["name"], tool.get("description", ""))


@lru_cache(maxsize=4096)
def _tool_words(name: str, description: str) -> frozenset[str]:
    return frozenset(tokens(name)) | frozenset(tokens(description))


ACTION_WORDS = {"list", "get", "create", "update", "delete", "search", "find", "view", "show", "check",
                "submit", "add", "remove", "set", "fetch", "lookup", "retrieve", "my", "by", "new", "request",
                "approve", "reject", "cancel", "open", "record", "register", "log", "raise", "run", "detail",
                "status", "summary", "caller", "calling"}


def first_sentence(text: str) -> str:
    sentence = re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0].rstrip(".!? ")
    return sentence[:1].lower() + sentence[1:]


def imperative(sentence: str) -> str:
    """'Lists open tickets' -> 'list open tickets': tool descriptions speak in the third person."""
    head, _, rest = sentence.partition(" ")
    low = head.lower()
    if low.endswith("ies") and len(low) > 4:
        head = low[:-3] + "y"
    elif low.endswith(("ches", "shes", "sses", "xes", "zes")):
        head = low[:-2]
    elif low.endswith("s") and not low.endswith(("ss", "us", "is")) and len(low) > 3:
        head = low[:-1]
    else:
        head = low
    return f"{head} {rest}".strip()


# what a description says about itself before it says what the tool does
_PREAMBLE = re.compile(r"^(?:(?:tool )?description:\s*|(?:this|the) (?:tool|function|endpoint|api|operation|method)"
                       r"(?: will| can)?\s+(?=[a-z]+s\b))", re.IGNORECASE)
_NOT_AN_ACT = re.compile(r"^(?:this|the|it)\b|^(?:belongs|is|are|was|note|deprecated|beta)\b", re.IGNORECASE)


def _plain_case(sentence: str) -> str:
    """A Title Case summary ('Get Show Episodes') in sentence case; acronyms keep their capitals."""
    words = sentence.split()
    if len(words) > 1 and sum(w[:1].isupper() for w in words) >= 0.7 * len(words):
        return " ".join(w if w.isupper() and len(w) > 1 else w.lower() for w in words)
    return sentence


def wish(description: str) -> str:
    """What the tool does, as a need ('list open tickets'): the first sentence of the description
    that says what it does (preambles such as 'This tool belongs to ...' or 'This function' skipped)."""
    for sentence in re.split(r"(?<=[.!?])\s+", description.strip()):
        said = _PREAMBLE.sub("", sentence.strip()).rstrip(".!? ")
        said = re.sub(r"^.*?\btool description:\s*", "", said, flags=re.IGNORECASE)
        if said and said[:1].isalpha() and not _NOT_AN_ACT.match(said):
            said = _plain_case(said)
            return imperative(said[:1].lower() + said[1:])
    return "get this done"


def _reply(thought: str, content: str, calls: list[dict] | None = None) -> str:
    return json.dumps({"thought": thought, "content": content, "tool_calls": calls or []}, ensure_ascii=False)


# ---- goal and slot values -------------------------------------------------------------------------

def goal(state: dict, messages: list[dict]) -> str:
    tool, persona = state["tool"], state["persona"]
    who = persona.get("role") or "an employee"
    attrs = persona.get("attributes") or {}
    where = f" at {attrs['company']}" if attrs.get("company") else ""
    rng = _rng(state, tool["name"], "goal")
    why = rng.choice(["before the end of the week", "for an open request from a colleague",
                      "as part of today's queue", "ahead of a review meeting", "to unblock the team"])
    return json.dumps({"goal": f"As {who}{where}, I need to {wish(tool['description'])} {why}."})


def slots(state: dict, messages: list[dict]) -> str:
    tool, persona = state["tool"], state["persona"]
    props = tool["parameters"].get("properties") or {}
    rng = _rng(state, tool["name"], "slots", state.get("attempt", 0))
    args: dict[str, Any] = {}
    for k in state["required"]:
        schema = props.get(k, {"type": "string"})
        value = values.generate(k, schema, persona, rng, tool)
        taken = {str(v).lower() for v in args.values()}
        for attempt in range(6):  # two parameters, two values: an origin is not its own destination
            if not (isinstance(value, str) and value.lower() in taken):
                break
            anyone = persona if attempt < 3 else {**persona, "attributes": {}}  # past the persona's own city
            value = values.generate(k, schema, anyone, rng, tool)
        args[k] = value
    return json.dumps({"arguments": args}, ensure_ascii=False)
