"""Words the offline roles share: the offline user's chatter (stop words for what it says), the
stems of what was said and of a tool, the plain-language wish of a tool description, and the
assistant's JSON reply."""

from __future__ import annotations

import json
import re
from functools import lru_cache

from lemminflect import getAllLemmas

from ..core.records import Tool
from ..core.text import STOP, stems

# the shared stop words, a few more, and the offline user's own chatter: it says nothing about any tool
USER_CHATTER = STOP | set(
    "help used given specific work day today task usual process routine thing sort hand fit fits best honestly "
    "clearer matter matters part key specifically good question right sure let clear stuck involving something "
    "get done quick hard say called put option options afraid better mean mine role quite bit "
    "important hey morning us whatever try thanks am what's it's i'm writing appreciate assistance require kindly "
    "afternoon evening know don side see find trying sorry wish before after based ask technical term alike around "
    "couldn idea knew looked much never really sound tell ve way word".split()
)


def tokens(said: str) -> list[str]:
    """The stems of `said`'s content words (`text.stems`), the offline user's chatter left out."""
    return stems(said, USER_CHATTER)


def tool_words(tool: Tool) -> frozenset[str]:
    """The stems of a tool's name and description (`tokens`), cached per tool."""
    return _tool_words(tool.name, tool.description)


@lru_cache(maxsize=4096)
def _tool_words(name: str, description: str) -> frozenset[str]:
    return frozenset(tokens(name)) | frozenset(tokens(description))


def imperative(sentence: str) -> str:
    """'Lists open tickets' -> 'list open tickets': tool descriptions speak in the third person."""
    head, _, rest = sentence.partition(" ")
    low = head.lower()
    if (verb := getAllLemmas(low).get("VERB")) and low.endswith("s"):
        head = verb[0]  # 'analyzes' -> 'analyze', which no ending rule gets right ('analyz')
    elif low.endswith("ies") and len(low) > 4:
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


ASKED_AT_ONCE = 4  # values one question asks for: "a few at a time", as the prompts put it; the user answers all of them


def asked_for(spoken: list[str]) -> str:
    """The first ASKED_AT_ONCE of the missing values' labels, as one question lists them ('owner, repo and title')."""
    said = spoken[:ASKED_AT_ONCE]
    return said[0] if len(said) == 1 else ", ".join(said[:-1]) + " and " + said[-1]


def reply_json(thought: str, content: str, calls: list[dict] | None = None) -> str:
    """An assistant turn in the JSON reply protocol every assistant prompt asks for."""
    return json.dumps({"thought": thought, "content": content, "tool_calls": calls or []}, ensure_ascii=False)
