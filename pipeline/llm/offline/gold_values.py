"""Schema-driven value generation and the plain-language phrasing of values.

Used by the offline slot generator (persona-consistent values that validate against
each parameter's schema) and by the offline user and assistant, which must say and
read back values losslessly.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from typing import Any

FIRST = ["Amara", "Bjorn", "Chen", "Dalia", "Emeka", "Farah", "Goran", "Hana", "Ines", "Jonas",
         "Keiko", "Luis", "Maya", "Nikhil", "Olga", "Pedro", "Quinn", "Rania", "Sven", "Tariq"]
LAST = ["Okafor", "Lindqvist", "Wei", "Haddad", "Novak", "Ibarra", "Tanaka", "Mensah", "Kowalski",
        "Fischer", "Rossi", "Khan", "Moreau", "Silva", "Dubois", "Larsen", "Patel", "Nakamura"]
PHRASES = ["quarterly planning offsite", "new hire onboarding", "customer escalation follow-up",
           "annual audit preparation", "vendor consolidation project", "regional sales kickoff",
           "system migration cutover", "compliance refresher", "budget reforecast", "site safety review",
           "product launch support", "contract renewal cycle", "peak season readiness", "team expansion"]
CURRENCIES = ["EUR", "USD", "GBP", "JPY", "CHF", "INR", "BRL", "SGD", "AUD", "CAD", "ZAR", "AED"]
COUNTRIES = ["DE", "US", "GB", "JP", "CH", "IN", "BR", "SG", "AU", "CA", "ZA", "AE", "FR", "MX"]
_PATTERN_TOKEN = re.compile(r"\[(A-Z|0-9|A-Z0-9|a-z|a-z0-9|A-Za-z0-9)\](?:\{(\d+)\})?|([A-Za-z0-9_\- ./:@])(?:\{(\d+)\})?")
_CLASSES = {"A-Z": "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "0-9": "0123456789", "a-z": "abcdefghijklmnopqrstuvwxyz"}


class UnsupportedSchema(ValueError):
    """The schema asks for something the offline generator cannot produce."""


def words(key: str) -> str:
    """`po_number` -> `po number`: how people say a parameter name."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", key).replace("_", " ").replace("-", " ").lower().strip()


def from_pattern(pattern: str, rng: random.Random) -> str:
    """A string matching an anchored pattern of literals and [A-Z]/[0-9]-style classes with {n}."""
    body = pattern.removeprefix("^").removesuffix("$")
    out, pos = [], 0
    while pos < len(body):
        m = _PATTERN_TOKEN.match(body, pos)
        if not m:
            raise UnsupportedSchema(f"pattern {pattern!r} uses syntax beyond literals and simple classes")
        cls, cls_n, lit, lit_n = m.groups()
        if cls:
            alphabet = "".join(_CLASSES[c] for c in re.findall(r"A-Z|a-z|0-9", cls))
            out.extend(rng.choice(alphabet) for _ in range(int(cls_n or 1)))
        else:
            out.append(lit * int(lit_n or 1))
        pos = m.end()
    return "".join(out)


# Given names and surnames by region, so a value fits the persona's country (plain ASCII spellings).
NAMES: dict[str, tuple[list[str], list[str]]] = {
    "en": (["Olivia", "James", "Amelia", "Noah", "Grace", "Liam", "Chloe", "Ethan", "Ruby", "Owen"],
           ["Walker", "Bennett", "Hughes", "Morgan", "Fletcher", "Reid", "Carter", "Sullivan", "Hayes", "Brooks"]),
    "in": (["Aarav", "Priya", "Rohan", "Ananya", "Vikram", "Kavya", "Arjun", "Meera", "Sanjay", "Divya"],
           ["Sharma", "Iyer", "Reddy", "Nair", "Gupta", "Menon", "Patel", "Rao", "Kulkarni", "Bose"]),
    "es": (["Lucia", "Mateo", "Sofia", "Diego", "Valentina", "Javier", "Camila", "Andres", "Elena", "Pablo"],
           ["Garcia", "Martinez", "Lopez", "Fernandez", "Ruiz", "Moreno", "Herrera", "Castro", "Ortega", "Vargas"]),
    "pt": (["Joao", "Beatriz", "Tiago", "Mariana", "Rafael", "Ines", "Bruno", "Larissa", "Pedro", "Carolina"],
           ["Silva", "Santos", "Oliveira", "Costa", "Pereira", "Almeida", "Ferreira", "Rocha", "Gomes", "Ribeiro"]),
    "fr": (["Camille", "Louis", "Chloe", "Hugo", "Manon", "Lucas", "Juliette", "Theo", "Claire", "Antoine"],
           ["Martin", "Bernard", "Dubois", "Lefevre", "Moreau", "Laurent", "Girard", "Roux", "Fontaine", "Mercier"]),
    "de": (["Lukas", "Anna", "Jonas", "Lea", "Felix", "Marie", "Paul", "Sophie", "Maximilian", "Hannah"],
           ["Muller", "Schmidt", "Schneider", "Fischer", "Weber", "Becker", "Hoffmann", "Wagner", "Koch", "Richter"]),
    "it": (["Giulia", "Marco", "Chiara", "Luca", "Francesca", "Matteo", "Sara", "Alessandro", "Elisa", "Davide"],
           ["Rossi", "Russo", "Ferrari", "Esposito", "Bianchi", "Romano", "Colombo", "Ricci", "Marino", "Greco"]),
    "nordic": (["Erik", "Astrid", "Lars", "Ingrid", "Johan", "Maja", "Nils", "Elsa", "Oskar", "Freja"],
               ["Lindqvist", "Andersson", "Johansson", "Nilsson", "Larsen", "Berg", "Holm", "Dahl", "Eriksson", "Lund"]),
    "nl": (["Daan", "Sanne", "Bram", "Lotte", "Ruben", "Fleur", "Jesse", "Anouk", "Thijs", "Iris"],
           ["de Vries", "Jansen", "Bakker", "Visser", "Smit", "Meijer", "Mulder", "de Boer", "Bos", "Vos"]),
    "cee": (["Jakub", "Zuzana", "Tomas", "Katarzyna", "Piotr", "Agnieszka", "Marek", "Petra", "Michal", "Ewa"],
            ["Novak", "Kowalski", "Dvorak", "Nowak", "Svoboda", "Wisniewska", "Horak", "Zielinski", "Cerny", "Lewandowski"]),
    "tr": (["Emre", "Elif", "Mehmet", "Zeynep", "Can", "Ayse", "Burak", "Deniz", "Kerem", "Selin"],
           ["Yilmaz", "Kaya", "Demir", "Sahin", "Celik", "Aydin", "Ozturk", "Arslan", "Dogan", "Kilic"]),
    "ar": (["Omar", "Layla", "Yousef", "Noor", "Karim", "Mariam", "Hassan", "Salma", "Tariq", "Rania"],
           ["Haddad", "Al Mansouri", "Khalil", "Nasser", "Saleh", "Farouk", "Hamdan", "Aziz", "Mahmoud", "Qureshi"]),
    "he": (["Noa", "Itai", "Tamar", "Yonatan", "Shira", "Eitan", "Maya", "Ariel", "Dana", "Omer"],
           ["Cohen", "Levi", "Mizrahi", "Peretz", "Biton", "Friedman", "Katz", "Azoulay", "Shapiro", "Ben David"]),
    "af": (["Chidi", "Amara", "Kwame", "Ngozi", "Tunde", "Akosua", "Wanjiru", "Kofi", "Thabo", "Zanele"],
           ["Okafor", "Mensah", "Adeyemi", "Owusu", "Kamau", "Nkosi", "Boateng", "Ochieng", "Dlamini", "Eze"]),
    "cn": (["Wei", "Xiu Ying", "Jun", "Li Na", "Hao", "Mei", "Chen", "Yan", "Lei", "Fang"],
           ["Wang", "Li", "Zhang", "Liu", "Chen", "Huang", "Zhao", "Wu", "Zhou", "Lin"]),
    "jp": (["Haruto", "Yui", "Sota", "Aoi", "Ren", "Hina", "Kaito", "Sakura", "Daiki", "Mio"],
           ["Sato", "Suzuki", "Takahashi", "Tanaka", "Watanabe", "Ito", "Yamamoto", "Nakamura", "Kobayashi", "Kato"]),
    "kr": (["Minjun", "Seoyeon", "Jiho", "Haeun", "Dohyun", "Jiwoo", "Yejun", "Sua", "Hyunwoo", "Chaeyoung"],
           ["Kim", "Lee", "Park", "Choi", "Jung", "Kang", "Cho", "Yoon", "Jang", "Lim"]),
    "sea": (["Minh", "Siti", "Anh", "Putri", "Rizal", "Linh", "Ahmad", "Mei Ling", "Joshua", "Andrea"],
            ["Nguyen", "Tran", "Santoso", "Wijaya", "Reyes", "Cruz", "Tan", "Lim", "Abdullah", "Bautista"]),
}
REGION = {"US": "en", "CA": "en", "GB": "en", "IE": "en", "AU": "en", "NZ": "en", "ZA": "af", "SG": "sea",
          "IN": "in", "ES": "es", "MX": "es", "CO": "es", "CL": "es", "AR": "es", "PT": "pt", "BR": "pt",
          "FR": "fr", "MA": "ar", "DE": "de", "CH": "de", "IT": "it", "SE": "nordic", "NL": "nl",
          "CZ": "cee", "PL": "cee", "TR": "tr", "AE": "ar", "QA": "ar", "SA": "ar", "EG": "ar", "IL": "he",
          "NG": "af", "KE": "af", "GH": "af", "CN": "cn", "HK": "cn", "JP": "jp", "KR": "kr", "VN": "sea",
          "ID": "sea", "MY": "sea", "PH": "sea"}
DIAL = {"US": "+1", "CA": "+1", "GB": "+44", "IE": "+353", "AU": "+61", "NZ": "+64", "ZA": "+27", "SG": "+65",
        "IN": "+91", "ES": "+34", "MX": "+52", "CO": "+57", "CL": "+56", "AR": "+54", "PT": "+351", "BR": "+55",
        "FR": "+33", "MA": "+212", "DE": "+49", "CH": "+41", "IT": "+39", "SE": "+46", "NL": "+31", "CZ": "+420",
        "PL": "+48", "TR": "+90", "AE": "+971", "QA": "+974", "SA": "+966", "EG": "+20", "IL": "+972",
        "NG": "+234", "KE": "+254", "GH": "+233", "CN": "+86", "HK": "+852", "JP": "+81", "KR": "+82",
        "VN": "+84", "ID": "+62", "MY": "+60", "PH": "+63"}
# abbreviations in parameter names, said in full
SPELLED = {"po": "purchase order", "gl": "ledger", "sku": "stock item", "qty": "quantity", "num": "number",
           "no": "number", "amt": "amount", "dept": "department", "emp": "employee", "mgr": "manager",
           "ref": "reference", "desc": "description", "addr": "address", "org": "organisation", "id": "ID",
           "ids": "IDs", "uom": "unit of measure", "eta": "arrival time", "sla": "service level", "dob": "birth date",
           "iban": "IBAN", "vat": "VAT", "url": "link", "msg": "message", "tz": "time zone",
           "kg": "in kilograms", "km": "in kilometres", "cm": "in centimetres", "pct": "percentage",
           "hrs": "hours", "usd": "in US dollars", "eur": "in euros", "lbs": "in pounds", "max": "maximum",
           "min": "minimum", "avg": "average", "pos": "position", "cc": "cost center", "fx": "exchange",
           "rep": "representative", "rfq": "quote request", "hr": "HR"}


def person_name(persona: dict, rng: random.Random, part: str = "full") -> str:
    """A given name, surname or both, from the persona's country (its region's list)."""
    region = REGION.get(((persona.get("attributes") or {}).get("country") or "").upper(), "en")
    first, last = NAMES[region]
    if part == "first":
        return rng.choice(first)
    if part == "last":
        return rng.choice(last)
    return f"{rng.choice(first)} {rng.choice(last)}"


def label(key: str) -> str:
    """How people refer to a parameter: abbreviations spelled out; a long name turned round
    ('cost_center_code' -> 'code for the cost center') so no one reads the schema aloud."""
    ws = words(key).split()
    spoken = " ".join(SPELLED.get(w, w) for w in ws).split()
    if ws[0] in ("from", "to") and len(spoken) >= 2:
        return f"{' '.join(spoken[1:])} it {'comes from' if ws[0] == 'from' else 'goes to'}"
    if len(ws) >= 3 and len(spoken) >= 2:
        return f"{spoken[-1]} for the {' '.join(spoken[:-1])}"
    return " ".join(spoken)


def _date(rng: random.Random) -> dt.date:
    return dt.date(2026, 1, 5) + dt.timedelta(days=rng.randint(0, 540))


def _string(key: str, schema: dict, persona: dict, rng: random.Random) -> str:
    attrs = persona.get("attributes") or {}
    fmt = schema.get("format")
    k = key.lower()
    if fmt == "date":
        return _date(rng).isoformat()
    if fmt == "date-time":
        d = _date(rng)
        return f"{d.isoformat()}T{rng.choice([8, 9, 10, 11, 13, 14, 15, 16]):02d}:{rng.choice([0, 15, 30, 45]):02d}:00Z"
    if fmt == "email":
        company = re.sub(r"[^a-z]", "", (attrs.get("company") or "example").lower()) or "example"
        person = person_name(persona, rng).lower().replace(" ", ".")
        return f"{person}@{company}.com"
    by_attribute = {
        "currency": "currency", "country_code": "country", "country": "country", "city": "city",
        "timezone": "timezone", "department": "department", "company": "company",
        "cost_center": "cost_center", "employee_id": "employee_id",
    }
    if k.endswith("_currency") or k.endswith("_country_code"):
        # a pair (from/to, base/quote, origin/destination): vary it, keep one side the persona's
        pool = CURRENCIES if k.endswith("currency") else COUNTRIES
        own = attrs.get("currency" if k.endswith("currency") else "country")
        if own and k.startswith(("from", "base", "origin", "home", "source")):
            return own
        return rng.choice([c for c in pool if c != own])
    for suffix, attr in by_attribute.items():
        if k == suffix and attrs.get(attr):
            value = attrs[attr]
            if not schema.get("pattern") or re.fullmatch(schema["pattern"].strip("^$"), value):
                return value
    if schema.get("pattern"):
        pattern = schema["pattern"].removeprefix("^").removesuffix("$")
        if re.fullmatch(r"(\[0-9\]\{4\}|\\d\{4\})-(\[0-9\]\{2\}|\\d\{2\})", pattern):
            return _date(rng).strftime("%Y-%m")  # a year-month, not any six digits
        if re.fullmatch(r"(\[0-9\]\{4\}|\\d\{4\})", pattern):
            return str(_date(rng).year)
        return from_pattern(schema["pattern"], rng)
    if any(w in k for w in ("phone", "mobile", "telephone")):
        dial = DIAL.get((attrs.get("country") or "").upper(), "+1")
        return f"{dial} {rng.randint(200, 989)} {rng.randint(100, 999)} {rng.randint(1000, 9999)}"
    if "name" in k and any(w in k for w in ("first", "given")):
        return person_name(persona, rng, "first")
    if "name" in k and any(w in k for w in ("last", "family", "surname")):
        return person_name(persona, rng, "last")
    if "surname" in k:
        return person_name(persona, rng, "last")
    if "name" in k and not any(w in k for w in ("file", "project", "event", "report", "product", "vendor",
                                                "supplier", "company", "account", "team", "site", "room", "course")):
        return person_name(persona, rng)
    if any(w in k for w in ("location", "site", "office", "address")):
        return f"{attrs.get('city', 'Head')} office, floor {rng.randint(1, 12)}"
    if k.endswith("id") or k.endswith("number") or k.endswith("code") or k.endswith("ref"):
        prefix = "".join(w[0] for w in words(key).split()[:-1]).upper() or "REF"
        return f"{prefix}-{rng.randint(10000, 99999)}"
    text = rng.choice(PHRASES)
    return text if "title" not in k else text.title()


def generate(key: str, schema: dict, persona: dict, rng: random.Random) -> Any:
    """One value for parameter `key` that validates against `schema`."""
    if schema.get("enum"):
        return rng.choice(schema["enum"])
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((t for t in kind if t != "null"), "string")
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "integer" and "year" in words(key).split():
        lo, hi = max(int(schema.get("minimum", 2024)), 2024), min(int(schema.get("maximum", 2027)), 2027)
        return rng.randint(lo, hi) if lo <= hi else int(schema.get("minimum", 2026))
    if kind == "integer" and "month" in words(key).split():
        return rng.randint(max(1, int(schema.get("minimum", 1))), min(12, int(schema.get("maximum", 12))))
    if kind == "integer":
        lo = int(schema.get("minimum", 1))
        small = any(w in key for w in ("day", "night", "quantity", "count", "seat", "guest", "attendee", "unit", "headcount"))
        if small:
            lo = max(lo, -50)
        hi = int(schema.get("maximum", max(lo + 1, 10 if small else 500)))
        hi = min(hi, max(lo + 1, 50 if small else 5000))  # a plausible number, not any the schema allows
        return rng.randint(lo, hi)
    if kind == "number":
        lo = float(schema.get("minimum", 10))
        hi = float(schema.get("maximum", max(lo + 1, 5000)))
        return round(rng.uniform(lo, hi), 2)
    if kind == "array":
        items = schema.get("items") or {"type": "string"}
        n = rng.randint(max(1, schema.get("minItems", 1)), max(1, min(schema.get("maxItems", 3), 3)))
        values: list[Any] = []
        for _ in range(n * 4):
            v = generate(key.removesuffix("s"), items, persona, rng)
            if v not in values:
                values.append(v)
            if len(values) == n:
                break
        return values
    if kind == "object":
        props = schema.get("properties") or {}
        return {k: generate(k, s, persona, rng) for k, s in props.items() if k in (schema.get("required") or [])}
    if kind in (None, "string"):
        value = _string(key, schema, persona, rng)
        lo, hi = schema.get("minLength"), schema.get("maxLength")
        if hi is not None and len(value) > hi:
            value = value[:hi].rstrip()
        if lo is not None and len(value) < lo:
            value = value + " " + rng.choice(PHRASES)
        return value
    raise UnsupportedSchema(f"parameter '{key}': type {kind!r}")


def say(value: Any) -> str:
    """How a user says a value; `read` inverts it for every generated value."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        parts = [say(v) for v in value]
        return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def read(text: str, schema: dict) -> Any:
    """Parses a spoken value back to the schema's type; returns the text when it cannot."""
    text = text.strip().strip('"').strip()
    kind = schema.get("type")
    try:
        if kind == "boolean":
            low = text.lower()
            if low in ("yes", "true", "y"):
                return True
            if low in ("no", "false", "n"):
                return False
            return text
        if kind == "integer":
            return int(text.replace(",", ""))
        if kind == "number":
            number = float(text.replace(",", ""))
            return int(number) if number.is_integer() else number
        if kind == "array":
            items = [p for p in re.split(r",\s*|\s+and\s+", text) if p]
            return [read(p, schema.get("items") or {"type": "string"}) for p in items]
    except ValueError:
        return text
    return text
