"""Person names: the regional name tables, whether a parameter means a person, and whether a
value reads as a person's name.

One definition shared by the offline value generator (which gives a person's name only to a
parameter about a person) and the plausibility rule (which rejects a person's name given to a
parameter about a thing: "era name is Kaito Kobayashi"). Low level: imports nothing of the
pipeline but the text normaliser.

A parameter means a person when its key holds a person word (assignee, reviewer, contact,
first/last/full name...) or when it is a bare `name`-like key whose description speaks of a
person ("name of the employee"). A value reads as a person's name when it is two or three
capitalised words, the first a known given name and the last a known surname (the tables
below, and Faker's English, German, French, Spanish and Italian lists).
"""

from __future__ import annotations

import functools
import random
import re

from faker.providers.person.de_DE import Provider as De
from faker.providers.person.en import Provider as En
from faker.providers.person.es_ES import Provider as Es
from faker.providers.person.fr_FR import Provider as Fr
from faker.providers.person.it_IT import Provider as It

from ..core.records import Persona
from ..core.text import split_words

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

# words of a key or description that name a person (or people)
PERSON_WORDS = frozenset(
    "person people assignee assignees reviewer reviewers author authors contact contacts manager approver "
    "employee employees customer customers passenger passengers traveler traveller travelers travellers guest "
    "guests attendee attendees recipient recipients requester requestor sender signer beneficiary payee "
    "student teacher doctor patient candidate applicant driver agent member members owner owners supervisor "
    "colleague coworker participant participants speaker host organizer organiser interviewer hiring "
    "firstname lastname surname fullname nickname".split()
)
# name parts of a key that make it a person's name on their own
PERSON_NAME_PARTS = frozenset("first last given family full middle maiden legal".split())
# words whose presence in a description of a `name` key mean a thing is named, not a person
THING_WORDS = frozenset(
    "file repository repo branch project event report product vendor supplier company account team site room "
    "course playlist album track artist era tag label topic bucket table database schema field column "
    "channel group workspace folder directory document template queue category model dataset image "
    "package module service server cluster host domain organization organisation display".split()
)


def means_person(key: str, description: str = "") -> bool:
    """Whether parameter `key` (with its description) asks for a person, so a person's name fits it."""
    ws = split_words(key)
    if not ws:
        return False
    if any(w in PERSON_WORDS for w in ws):
        return not any(w in ("id", "ids", "email", "phone", "login", "username", "handle", "count") for w in ws)
    if "name" in ws or "names" in ws:
        if any(w in PERSON_NAME_PARTS for w in ws):
            return True
        if len(ws) == 1:
            desc = split_words(description)[:12]
            return (any(w in PERSON_WORDS or w in ("user", "user's", "individual", "someone") for w in desc)
                    and not any(w in THING_WORDS for w in desc))
    return False


@functools.cache
def _known() -> tuple[frozenset[str], frozenset[str]]:
    """Known given names and surnames, lower-cased: the regional tables and Faker's lists."""
    first = {n.lower() for given, _ in NAMES.values() for n in given}
    last = {n.lower().split()[-1] for _, family in NAMES.values() for n in family}

    for provider in (En, De, Es, Fr, It):
        first |= {str(n).lower() for n in getattr(provider, "first_names", ())}
        last |= {str(n).lower() for n in getattr(provider, "last_names", ())}
    return frozenset(first), frozenset(last)


_CAPITALISED = re.compile(r"[A-Z][a-z'’\-]+")


def looks_like_person_name(text: str) -> bool:
    """Whether `text` reads as a person's full name: 2-3 capitalised words, a known given name
    first and a known surname last."""
    parts = text.strip().split()
    if not 2 <= len(parts) <= 3 or not all(_CAPITALISED.fullmatch(p) for p in parts):
        return False
    first, last = _known()
    return parts[0].lower() in first and parts[-1].lower() in last


def person_name(persona: Persona, rng: random.Random, part: str = "full") -> str:
    """A given name, surname or both, from the persona's country (its region's list)."""
    region = REGION.get((persona.attributes.get("country") or "").upper(), "en")
    first, last = NAMES[region]
    if part == "first":
        return rng.choice(first)
    if part == "last":
        return rng.choice(last)
    return f"{rng.choice(first)} {rng.choice(last)}"
