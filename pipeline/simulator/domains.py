"""Which world a tool belongs to (music, code, tickets, travel, finance, people, or none of them),
read from its name and description, and what people of that world type into a search box.

The offline goal and value writers draw on it so a goal's reason and a search query fit the tool:
a music search gets "miles davis kind of blue", an issue search "is:open label:bug flaky login
test", never two words of the tool's description. The tables are our own small lists; each query
is put together from two or three of them (and the persona's city or handle), so one text rarely
fills unrelated parameters of unrelated tools.
"""

from __future__ import annotations

import random

from ..core.records import Persona, Tool
from ..core.text import split_words

DOMAIN_WORDS: dict[str, frozenset[str]] = {
    "music": frozenset("tracks album albums artist artists playlist playlists song songs spotify audiobook "
                       "audiobooks podcast podcasts episode episodes playback music genre genres lyrics chapters "
                       "radio listening queue shuffle".split()),
    "code": frozenset("repository repositories repo repos github gitlab commit commits branch branches pull merge "
                      "gist gists workflow workflows dependabot copilot codebase release releases fork "
                      "discussion discussions label labels milestone".split()),
    "tickets": frozenset("ticket tickets incident incidents helpdesk outage sla escalation servicedesk "
                         "jira help knowledge article articles faq troubleshooting".split()),
    "procurement": frozenset("supplier suppliers vendor vendors procurement requisition requisitions rfq sourcing "
                             "purchasing".split()),
    "travel": frozenset("flight flights hotel hotels trip trips itinerary airport airline booking reservation "
                        "travel train rental destination".split()),
    "finance": frozenset("invoice invoices payment payments stock stocks price prices currency revenue tax budget "
                         "ledger loan interest investment dividend exchange portfolio expense expenses "
                         "finance financial".split()),
    "people": frozenset("employee employees leave payroll candidate candidates hiring onboarding benefits "
                        "timesheet vacation recruiter applicant applicants hire".split()),
}
# a persona's line of business, when the tool's own words leave the domain open
BY_LINE = {"software_development": "code", "it_service_management": "tickets", "customer_support": "tickets",
           "travel_expense": "travel", "finance": "finance", "procurement": "procurement", "human_resources": "people"}


def domain_of(tool: Tool | None, persona: Persona | None = None) -> str:
    """The tool's world: the domain whose words its name and description use most ('general' for
    none); a tie, or no hit, is settled by the persona's line of business."""
    words = split_words(f"{tool.name} {tool.description}") if tool else []
    score = {d: sum(w in ws for w in words) for d, ws in DOMAIN_WORDS.items()}
    best = max(score.values(), default=0)
    leaders = [d for d, s in score.items() if s == best and s > 0]
    own = BY_LINE.get(str(persona.line_of_business or "")) if persona else None
    if own in leaders or (not leaders and own and tool is None):
        return own or "general"
    return leaders[0] if leaders else "general"


ARTISTS = ["miles davis", "nina simone", "radiohead", "fleetwood mac", "kendrick lamar", "bjork", "daft punk",
           "aretha franklin", "arctic monkeys", "billie eilish", "bob marley", "caetano veloso", "fela kuti",
           "joni mitchell", "massive attack", "rosalia", "the beatles", "taylor swift", "bad bunny", "coldplay",
           "nick drake", "burna boy", "stevie wonder", "khruangbin", "portishead", "bon iver"]
WORKS = ["kind of blue", "live", "greatest hits", "acoustic", "remastered", "unplugged", "first album", "b-sides",
         "deluxe edition", "best of"]
MOODS = ["lo-fi beats for studying", "rainy day jazz", "80s synth pop", "workout hip hop", "bossa nova classics",
         "indie folk evening", "deep focus piano", "afrobeats party", "running 170 bpm", "sunday morning soul",
         "true crime podcast", "history podcast", "sci-fi audiobook"]
LANGS = ["go", "python", "typescript", "rust", "java", "kotlin", "ruby"]
SYMBOLS = ["retryWithBackoff", "parse_config", "useEffect cleanup", "http.Client timeout", "connection pool size",
           "TODO remove before release", "func NewServer", "class RateLimiter", "def handle_webhook",
           "serde rename_all", "@Transactional"]
PROBLEMS = ["memory leak in worker pool", "flaky login test", "timeout on large uploads", "crash on startup",
            "dark mode contrast", "broken link in docs", "slow query on orders page", "race condition in cache",
            "null pointer in parser", "webhook retries duplicated", "OAuth token refresh", "CSV export encoding",
            "pagination skips last page", "build fails on arm64"]
TOPICS = ["rate limiter", "feature flags", "static site generator", "terminal ui", "vector search",
          "markdown parser", "job queue", "openapi client", "kubernetes operator", "image resizing"]
TICKETS = ["VPN drops after sleep", "printer offline on 3rd floor", "password reset not arriving", "laptop won't charge",
           "Outlook keeps asking for password", "refund not received", "order arrived damaged",
           "cannot log in after update", "invoice shows wrong address", "shared drive access denied",
           "two-factor code expired", "payment declined at checkout"]
PLACES = ["Lisbon", "Barcelona", "Tokyo", "New York", "Amsterdam", "Singapore", "Cape Town", "Montreal",
          "Istanbul", "Buenos Aires", "Dublin", "Prague"]
FINANCE = ["unpaid invoices", "overdue payments", "travel expenses", "vendor credit notes", "quarterly revenue",
           "office supplies spend", "software subscriptions", "dividend payments", "refunds issued"]
MONTHS = ["January", "March", "April", "June", "September", "October", "Q1", "Q2", "Q3", "Q4"]
GOODS = ["packaging", "office furniture", "laptop docking stations", "cleaning services", "industrial gloves",
         "freight forwarding", "printer toner", "safety boots", "catering", "cloud hosting"]
JOBS = ["senior data engineer", "product designer", "payroll specialist", "customer success manager",
        "backend developer", "warehouse supervisor", "financial analyst", "recruiting coordinator"]
PEOPLE_TOPICS = ["parental leave policy", "onboarding checklist", "remote work allowance", "performance review form",
                 "relocation package", "sick leave balance", "referral bonus"]


def _code_query(tool: Tool | None, persona: Persona, rng: random.Random) -> str:
    """A GitHub-style search, by what the tool searches: code, issues, pull requests, users or repositories."""
    ws = set(split_words(tool.name if tool else ""))
    lang = rng.choice(LANGS)
    if ws & {"code"}:
        return rng.choice([f"{rng.choice(SYMBOLS)} language:{lang}", f"{rng.choice(SYMBOLS)} in:file language:{lang}",
                           f"{rng.choice(SYMBOLS)} path:src/{rng.choice(MODULES).split('-')[0]}"])
    if ws & {"issues", "issue"}:
        return f"{rng.choice(['is:open label:bug', 'is:issue is:open', 'is:closed', 'label:help-wanted'])} {rng.choice(PROBLEMS)}"
    if ws & {"pull", "pr", "prs", "requests"}:
        return f"is:pr {rng.choice(['is:open', 'is:merged', 'draft:true'])} {rng.choice(PROBLEMS)}"
    if ws & {"users", "user"}:
        city = str(persona.attributes.get("city") or rng.choice(PLACES))
        return f"location:{city.split()[0]} language:{lang}"
    if ws & {"repositories", "repos", "repository"}:
        return f"{rng.choice(TOPICS)} language:{lang} stars:>{rng.choice([50, 100, 500])}"
    return rng.choice([f"{rng.choice(PROBLEMS)}", f"{rng.choice(TOPICS)} {lang}", rng.choice(SYMBOLS)])


def search_query(tool: Tool | None, persona: Persona, rng: random.Random) -> str | None:
    """What a person of the tool's world types into its search box; None in a world with no table
    (the caller words a query from the tool's own noun phrases)."""
    domain = domain_of(tool, persona)
    city = str(persona.attributes.get("city") or rng.choice(PLACES))
    if domain == "music":
        artist = rng.choice(ARTISTS)
        return rng.choice([f"{rng.choice(MOODS)} playlist", rng.choice(MOODS), f"{artist} {rng.choice(WORKS)}",
                           f"artist:{artist}", f"{artist} album", f"{artist} tracks",
                           f"genre:{rng.choice(['jazz', 'soul', 'indie', 'afrobeat', 'ambient'])} year:{rng.randint(1960, 2024)}"])
    if domain == "code":
        return _code_query(tool, persona, rng)
    if domain == "tickets":
        return rng.choice(TICKETS)
    if domain == "travel":
        there = rng.choice([p for p in PLACES if p != city])
        return rng.choice([f"{city} to {there}", f"hotels in {there}", f"{there} {rng.choice(['weekend', 'direct', 'cheapest'])}"])
    if domain == "finance":
        return f"{rng.choice(FINANCE)} {rng.choice(MONTHS)}"
    if domain == "procurement":
        return f"{rng.choice(GOODS)}{rng.choice(['', ' supplier', ' vendor'])}"
    if domain == "people":
        return rng.choice([f"{rng.choice(JOBS)} {city}", rng.choice(PEOPLE_TOPICS)])
    return None


# the names a code base is made of: repositories, modules, files
MODULES = ["billing", "checkout", "payments", "auth", "search", "notifications", "inventory", "analytics", "gateway",
           "scheduler", "docs-site", "mobile-app", "design-system", "data-pipeline", "webhooks", "onboarding",
           "reporting", "admin-portal", "sync-worker", "feature-flags"]
SUFFIXES = ["service", "api", "app", "web", "tools", "sdk", "cli", "infra", ""]
FILE_STEMS = ["handler", "client", "config", "utils", "models", "routes", "service", "index", "settings", "retry",
              "cache", "middleware", "schema", "README"]
MUSIC_TAGS = ["dinner", "party", "workout", "chill", "focus", "sleep", "romance", "decades", "jazz", "hip-hop",
              "indie", "latin", "afro", "classical"]
LABELS = ["bug", "enhancement", "documentation", "performance", "security", "needs-triage", "regression",
          "good first issue", "dependencies", "help wanted"]
EXTENSIONS = {"go": "go", "python": "py", "typescript": "ts", "rust": "rs", "java": "java", "kotlin": "kt", "ruby": "rb"}


def code_thing(rng: random.Random) -> str:
    """A piece of work on a code base, as a developer names it ('flaky login test')."""
    return rng.choice(PROBLEMS) if rng.random() < 0.7 else f"{rng.choice(TOPICS)} support"


def world_thing(tool: Tool | None, persona: Persona, rng: random.Random) -> str | None:
    """What a text in the tool's world is about ('the refund not received', 'my travel expenses March');
    None in a world with no table."""
    domain = domain_of(tool, persona)
    if domain == "code":
        return code_thing(rng)
    if domain == "tickets":
        return rng.choice(TICKETS)
    if domain == "finance":
        return f"{rng.choice(FINANCE)} for {rng.choice(MONTHS)}"
    if domain == "people":
        return rng.choice(PEOPLE_TOPICS)
    if domain == "procurement":
        return f"{rng.choice(GOODS)} order"
    if domain == "travel":
        return f"trip to {rng.choice(PLACES)}"
    if domain == "music":
        return f"playlist for {rng.choice(['the weekend', 'my run', 'the party', 'the road trip', 'studying'])}"
    return None
