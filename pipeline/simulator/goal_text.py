"""The offline goal: what a persona wants done with the seed tool, said as the person would say it.

A goal is one or two first-person sentences: who they are (role, company or city), a concrete
reason from their world (a release on Thursday, a playlist for a long run) and the act in plain
words. The act is the description's first statement of what the tool does (`wording.wish`), cut
to its verb and object ('calculate the return on investment'), its verb swapped for the everyday
one ('work out'): it never carries a long run of the description's words.
"""

from __future__ import annotations

import random
import re

from ..core.records import Persona, Tool
from .domains import PLACES, domain_of
from .nounphrases import BASE_VERBS
from .wording import wish

# the word a person uses for a description's verb
EVERYDAY = {"get": "look up", "retrieve": "look up", "fetch": "pull up", "obtain": "get", "calculate": "work out",
            "compute": "work out", "list": "see", "create": "set up", "generate": "put together", "delete": "delete",
            "remove": "remove", "update": "change", "modify": "change", "search": "search", "find": "find",
            "locate": "find", "provide": "get", "return": "get", "determine": "figure out", "estimate": "estimate",
            "check": "check", "add": "add", "save": "save", "display": "see", "query": "look up", "read": "read",
            "lookup": "look up", "look": "look", "show": "see", "hand": "hand over", "convert": "convert", "book": "book", "send": "send"}
# where a description's act stops being the act and starts saying how or for what
_CUT = re.compile(r"\s(?:for|in|with|based|from|by|using|given|that|which|within|via|at|including|when|"
                  r"according|into|across|to|about|per|the user|the authenticated|the caller|the calling|whose|where|rather|than|so|but|such)\b|[,(:;]| - ", re.IGNORECASE)
_VAGUE = re.compile(r"\b(?:a |the )(?:given|specific|specified|certain|particular|provided)\s", re.IGNORECASE)
_ME = [(re.compile(r"\b(?:the |a |an )?(?:caller|calling (?:\w+ )?\w+)'s\b", re.IGNORECASE), "my"),
       (re.compile(r"\bif (?:the )?(?:current )?user follows\b", re.IGNORECASE), "whether I follow"),
       (re.compile(r"\b(?:the |a |an )?(?:current )?user's\b", re.IGNORECASE), "my"),
       (re.compile(r"\b(?:for |of )?(?:the )?current user\b", re.IGNORECASE), ""),
       (re.compile(r"\ban authenticated user's\b|\bthe authenticated user's\b", re.IGNORECASE), "my")]
_TRAILING = frozenset("a an the of and or my its their on to for with all any as one".split())
# a role that is a situation, not a job: 'Moving house' reads 'I'm moving house'
DOING = frozenset("moving relocating buying selling renting travelling traveling studying learning".split())
_BLAND = frozenset("a an the all details detail information info data list lists".split())
_DETERMINERS = frozenset("a an the my several all some your this these multiple one each every whether another other "
                         "new".split())
# verbs a description's act may open with; anything else is a noun phrase ('Fast and precise code search')
VERBS = frozenset(EVERYDAY) | BASE_VERBS | frozenset(
    "follow unfollow save pause skip seek toggle transfer reorder replace upload star unstar fork push merge assign "
    "dismiss mark request submit resolve reply run rerun predict filter reserve translate identify analyze analyse "
    "play schedule cancel publish approve reject invite share sort count compare track monitor verify validate "
    "transform summarize summarise rename archive restore lock unlock enable disable trigger download edit "
    "record log notify post order buy sell subscribe unsubscribe start stop open close read write".split())
READ = frozenset("get retrieve fetch obtain calculate compute list search find locate provide return determine "
                 "estimate check display query read lookup look convert".split())


def act(tool: Tool) -> tuple[str, bool]:
    """(the act in plain words, whether it only reads): 'work out the return on investment'."""
    said = wish(tool.description)
    for pattern, mine in _ME:
        said = pattern.sub(mine, said)
    said = re.sub(r"\s*\[[^\]]*\]", "", _VAGUE.sub(" the ", said)).strip()  # '[DEPRECATED]'
    said = re.sub(r"\b(?:just|only|specified|specific|certain|particular) ", "", said)
    said = re.sub(r"\b(new|empty|single|blank), ", r"\1 ", re.sub(r"\b(?:but )?not yet \w+\s?", "", said))
    verb, _, rest = said.partition(" ")
    verb = verb.split("/")[0]  # 'start/resume'
    if verb.lower() not in VERBS:  # 'Fast and precise code search ...': the name says the act
        named = [w for w in re.split(r"[\W_]+", tool.name) if w]
        at = next((i for i, w in enumerate(named) if w.lower() in VERBS), None)
        if at is not None:
            verb, rest = named[at], " ".join(named[:at] + named[at + 1:]).lower()
    lead = re.match(r"(?:for|through|across|about|to|on)\s", rest)  # 'search for', 'look through'
    if lead:
        verb, rest = f"{verb} {lead.group(0).strip()}", rest[lead.end():]
    obj = _object(rest)
    later = re.split(r"(?<=[.!?])\s+", tool.description.strip(), maxsplit=1)[1:]  # past a title
    named = set(re.findall(r"(?<![.!?]\s)\b[A-Z][a-z]+\b", later[0] if later else ""))
    low = set(re.findall(r"\b[a-z]+\b", tool.description))
    words = [w.lower() if w[:1].isupper() and w[1:].islower() and (w not in named or w.lower() in low) else w
             for w in obj.split()]
    cut = next((i for i in range(1, len(words) - 1) if words[i] == "and" and words[i + 1].removesuffix("s") in VERBS), None)
    words = words[:cut]  # 'reset my password and sends ...'
    if len(words) > 7 and "of" in words[:-2]:  # 'the full contents of a customer web order'
        words = words[words.index("of") + 1:]
    if len(words) > 6:  # never a long run of the description: cut before a preposition, else after six words
        at = max((i for i, w in enumerate(words[:6]) if i > 1 and w in ("between", "under", "over", "within", "in", "on")),
                 default=6)
        words = words[:at]
    while words and (words[-1].lower() in _TRAILING or (words[-1].endswith("ed") and len(words) > 1)):
        words.pop()  # 'a purchase order identified', 'rights on'

    if not words:  # a description with no object: the tool's name says it
        words = [w for w in re.split(r"[\W_]+", tool.name) if w][1:] or ["this"]
    if words[0].lower() not in _DETERMINERS and (not words[0].endswith("s") or words[0].endswith(("us", "ss", "is"))) \
            and len(words) <= 3:
        words.insert(0, "the")  # 'get show' -> 'look up the show'
    head, _, prep = verb.lower().partition(" ")
    return f"{EVERYDAY.get(head, head)} {prep} {' '.join(words)}".replace("  ", " "), head in READ


def _object(rest: str) -> str:
    """The object of a description's act: up to where it says how or for what, past a bland head
    ('details for a commit' keeps 'for a commit')."""
    start = 4
    while (cut := _CUT.search(rest, start)) is not None:
        kept = rest[:cut.start()].strip(" .")
        if not set(kept.lower().split()) <= _BLAND:
            return kept
        start = cut.end()
    return rest.strip(" .")


# reasons, by the tool's world, for reading and for changing something; {who}, {when}, {there} filled in
REASONS: dict[str, tuple[list[str], list[str]]] = {
    "music": (["I'm putting together something to listen to on {event}", "{friend} asked what I'd recommend for {event}",
               "I want something new for {event}", "I'm comparing a few albums I keep hearing about",
               "I'm lining up listening for {event}", "I heard something great on the radio and want to dig in"],
              ["I'm getting the music ready for {event}", "I'm tidying up my library before {event}",
               "{friend} and I are sharing music for {event}", "my listening is a mess and I'm sorting it out"]),
    "code": (["a bug report about a {problem} came in this morning", "I'm writing the release notes {when}",
              "{who} asked me to look into a {problem}", "I'm reviewing what changed since the last release"],
             ["we're shipping a fix for a {problem} {when}", "I'm cleaning up after yesterday's incident",
              "{who} asked me to take this over {when}", "the release is planned {when}"]),
    "tickets": (["a customer has been waiting since yesterday", "the queue is backed up {when}",
                 "{who} escalated a case to me this morning"],
                ["I promised a customer an answer {when}", "{who} handed this case to me",
                 "the escalation review is {when}"]),
    "travel": (["I'm planning a trip to {there}", "I have meetings in {there} next month",
                "{friend} and I are comparing options for {there}"],
               ["my plans for {there} changed", "I'm finalising my trip to {there} {when}"]),
    "finance": (["I'm closing the books for the month {when}", "{who} needs the figures {when}",
                 "I'm reviewing my numbers before a decision"],
                ["a payment has to go out {when}", "{who} asked me to sort out the accounts {when}"]),
    "people": (["a new hire starts on Monday", "I'm preparing for a round of interviews {when}",
                "{who} asked me about it this morning"],
               ["a new colleague joins the team {when}", "{who} asked me to update the records {when}"]),
    "general": (["I have to give {who} an answer {when}", "I'm double-checking something before I decide",
                 "{who} asked me about it this morning", "I'm comparing options {when}",
                 "I want the facts straight before I talk to {who}", "I'm preparing notes for {who}",
                 "I'm settling a question that came up over lunch", "I need a number I can rely on {when}"],
                ["{who} asked me to sort it out {when}", "it has been on my list all week",
                 "I promised {who} I'd handle it {when}", "I want it done before {when_noun}"]),
}
WHEN = ["by Friday", "this afternoon", "before tomorrow's stand-up", "before the end of the week", "today",
        "by Thursday", "before my next meeting", "first thing tomorrow"]
WHEN_NOUN = ["the weekend", "Friday", "my next meeting", "the end of the day", "the holidays"]
EVENTS = ["a long run on Saturday", "my sister's wedding", "a road trip", "a dinner party", "the gym",
          "a study session", "a rainy Sunday", "my commute"]
FRIENDS = ["a friend", "my partner", "my flatmate", "my brother", "my neighbour", "a colleague"]
PROBLEMS = ["failing build", "memory leak", "flaky test", "broken deploy", "slow query", "login error"]

# a goal's frames: an intro (who I am), a reason, an act
FRAMES = [
    "{intro}, and {reason}, so I need to {act}.",
    "{Reason}, so I'd like to {act}.",
    "(I want|I'd like|I need) to {act} because {reason}.",
    "{intro}. {Reason}, which means I have to {act}.",
    "(Since|Now that|Given that) {reason}, I need to {act} {when}.",
    "{Reason}. Could you help me {act}?",
    "{intro} and I'm trying to {act}: {reason}.",
    "(My plan is|My idea is|I'm planning) to {act}, since {reason}.",
    "{intro}. I'd like to {act} {when}, as {reason}.",
    "(Quick one|Short request|One thing): I need to {act}. {Reason}.",
    "(I'm hoping|I'm looking|I've got) to {act} {when}. {Reason}.",
    "{intro}, and I need to {act} - {reason}.",
    "(Today|This week|Right now) I have to {act}, because {reason}.",
    "(What I need is|All I want is|My aim is) to {act}. {Reason}.",
    "(For context,|Some background:|To explain,) {reason}. I'd like to {act} {when}.",
    "{Reason}, and the next step for me is to {act}.",
]

_PROPER = {"Kubernetes", "Shopify", "Instagram", "Java", "Python", "YouTube", "WordPress", "TV", "Spanish", "English"}


def employed(persona: Persona) -> bool:
    """Whether the persona has a job (its facts name an employer): only then does it speak of a manager, a
    team, clients or month-end; a listener, a student or a maintainer of their own project does not."""
    return bool(persona.attributes.get("company"))


def intro(persona: Persona, rng: random.Random) -> str:
    """'I'm a vinyl hobbyist in Leeds', 'I work as an HR coordinator at Obelan Machine Works'."""
    role = re.sub(r"^(?:a|an|the)\s+", "", persona.role or "", flags=re.IGNORECASE)  # 'a service desk lead'
    attrs = persona.attributes
    if not role:
        return f"I'm based in {attrs['city']}" if attrs.get("city") else "I'm sorting this out myself"
    words = [w if w in _PROPER or not (w[:1].isupper() and w[1:].islower()) else w.lower() for w in role.split()]
    said = " ".join(words)
    if words[0] in DOING and len(words) <= 3:
        return f"I'm {said}" + (f" in {attrs['city']}" if attrs.get("city") else "")  # 'moving house'
    first = words[0]
    vowel = first[:1].lower() in "aeiou" if not first.isupper() else first[:1] in "AEFHILMNORSX"
    a = "an" if vowel and not first.startswith(("uni", "use", "eu")) else "a"
    where = [f" at {attrs['company']}" if attrs.get("company") else "", f" in {attrs['city']}" if attrs.get("city") else ""]
    place = rng.choice([w for w in where if w] or [""])
    forms = ["I'm {a} {r}{p}"] * 3 + ["I've been {a} {r}{p} for a few years"]
    if employed(persona):
        forms.append("I work as {a} {r}{p}")  # a job; a consumer's role ('tenant', 'parent') is not one
    return rng.choice(forms).format(a=a, r=said, p=place)  # 'I'm a <role>' openings differ by the role


def _who(persona: Persona, rng: random.Random, domain: str) -> str:
    attrs = persona.attributes
    if domain == "code" and not attrs.get("company"):
        return rng.choice(["a teammate", "another maintainer", "a contributor", "my tech lead", "a user of the project"])
    if attrs.get("company"):
        dept = attrs.get("department")
        return rng.choice(["my manager", f"the {dept} lead" if dept else "my team lead", "a colleague", "a client"])
    return rng.choice(FRIENDS)


def goal_text(tool: Tool, persona: Persona, rng: random.Random) -> str:
    """The persona's goal for `tool`: an intro, a reason of the tool's world, the act (see the module)."""
    doing, reads = act(tool)
    domain = domain_of(tool, persona)
    reason = rng.choice(REASONS.get(domain, REASONS["general"])[0 if reads else 1])
    city = persona.attributes.get("city")
    fill = {"who": _who(persona, rng, domain), "when": rng.choice(WHEN), "when_noun": rng.choice(WHEN_NOUN),
            "event": rng.choice(EVENTS), "friend": rng.choice(FRIENDS), "problem": rng.choice(PROBLEMS),
            "there": rng.choice([p for p in PLACES if p != city])}
    reason = reason.format(**fill)
    frame = re.sub(r"\(([^()]*)\)", lambda m: rng.choice(m.group(1).split("|")), rng.choice(FRAMES))
    when = "" if fill["when"] in reason else fill["when"]  # one time a sentence
    text = frame.format(intro=intro(persona, rng), reason=reason, Reason=reason[:1].upper() + reason[1:], act=doing,
                        when=when)
    return re.sub(r"\s+([.,:?])", r"\1", re.sub(r"\s{2,}", " ", text)).strip()
