"""The persona's voice for the offline user: how a style string ("terse", "upbeat, lots of
exclamation marks", "code-switches between English and German", "casual, lowercase, uses
emoji"...) colours the framing of a turn: greeting, lead, closing, punctuation, a word of the
persona's other language, a fitting emoji.

Only the framing is styled: values are stated by `phrasing` and never touched here, so the
assistant reads them back exactly.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from ..core.records import Persona

# a greeting and a closing word in the languages personas switch to or think in
FOREIGN = {
    "spanish": (["Hola", "Buenas"], ["gracias", "muchas gracias"]),
    "german": (["Hallo", "Servus"], ["danke", "vielen Dank"]),
    "french": (["Bonjour", "Salut"], ["merci", "merci beaucoup"]),
    "japanese": (["こんにちは", "すみません"], ["よろしくお願いします", "ありがとうございます"]),
    "korean": (["안녕하세요"], ["감사합니다", "고맙습니다"]),
    "vietnamese": (["Xin chào", "Chào bạn"], ["cảm ơn", "cảm ơn nhiều"]),
    "czech": (["Ahoj", "Dobrý den"], ["díky", "děkuji"]),
    "portuguese": (["Olá", "Oi"], ["obrigado", "valeu"]),
    "italian": (["Ciao", "Buongiorno"], ["grazie", "grazie mille"]),
    "polish": (["Cześć", "Dzień dobry"], ["dziękuję", "dzięki"]),
    "turkish": (["Merhaba", "Selam"], ["teşekkürler", "sağ olun"]),
    "arabic": (["مرحبا", "السلام عليكم"], ["شكرا", "شكرا جزيلا"]),
    "mandarin": (["你好", "您好"], ["谢谢", "麻烦你了"]),
    "chinese": (["你好", "您好"], ["谢谢", "麻烦你了"]),
    "hindi": (["Namaste", "Namaskar"], ["dhanyavaad", "shukriya"]),
    "dutch": (["Hoi", "Goedemiddag"], ["dank je", "bedankt"]),
    "swedish": (["Hej", "Hallå"], ["tack", "tack så mycket"]),
}
# an emoji that fits what the request is about, by a word of the tool's description
EMOJI = [(("schedul", "calendar", "meeting", "book", "date", "shift", "appointment"), "📅"),
         (("pay", "invoice", "refund", "credit", "budget", "expense", "price", "cost", "spend"), "💸"),
         (("order", "ship", "deliver", "stock", "inventory", "warehouse", "package"), "📦"),
         (("ticket", "incident", "issue", "bug", "outage", "alert"), "🎫"),
         (("report", "analys", "metric", "forecast", "variance", "dashboard"), "📊"),
         (("song", "music", "track", "playlist", "album", "artist"), "🎵"),
         (("repo", "code", "commit", "branch", "pull", "deploy", "build"), "💻"),
         (("hire", "candidate", "employee", "onboard", "leave", "payroll"), "🧑‍💼"),
         (("mail", "message", "email", "notify"), "✉️")]


@dataclass(frozen=True)
class Voice:
    """What a persona's style asks of the framing of each turn."""

    terse: bool = False
    chatty: bool = False
    upbeat: bool = False
    emoji: bool = False
    lower: bool = False
    formal: bool = False
    anxious: bool = False
    phone: bool = False
    language: str | None = None  # the other language a code-switching persona mixes in
    native: str | None = None    # the first language of a non-native speaker: a word of it now and then

    @classmethod
    def of(cls, persona: Persona) -> Voice:
        style = (persona.style or "").lower()
        has = lambda *ws: any(w in style for w in ws)  # noqa: E731
        lang = None
        found = re.search(r"english and (\w+)|(?:speaker|english speaker) \((\w+)\)|(\w+)-english", style)
        if found:
            lang = next(g for g in found.groups() if g)
        return cls(terse=has("terse", "brief", "minimal", "impatient", "blunt", "shorthand", "reserved"),
                   chatty=has("chatty", "verbose", "cheerful", "narrates", "warm", "personal remarks", "at length"),
                   upbeat=has("upbeat", "exclamation", "enthusias", "cheerful"),
                   emoji=has("emoji"), lower=has("lowercase"), phone=has("phone", "typos"),
                   formal=has("formal", "courteous", "very polite", "old-fashioned", "precise"),
                   anxious=has("anxious", "double-check", "hesitant", "stressed", "worried", "nervous"),
                   language=lang if lang in FOREIGN and has("code-switch", "mixes", "switches between") else None,
                   native=lang if lang in FOREIGN and has("non-native", "learning english") else None)


def greeting(voice: Voice, rng: random.Random) -> str:
    """How the first turn opens ('' for a terse persona, now and then for anyone): a word and a comma,
    so the greeting is part of the request's sentence, never a stock line of its own."""
    lang = voice.language or voice.native
    if lang and (voice.language or rng.random() < 0.5):
        return rng.choice(FOREIGN[lang][0]) + ", "
    if voice.terse:
        return rng.choice(["", "", "Hi, ", "Hey, "])
    if voice.formal:
        return rng.choice(["Good morning, ", "Good afternoon, ", "Hello, ", ""])
    if voice.upbeat:
        return rng.choice(["Hi there, ", "Hello, ", "Hey, ", "Morning, "])
    return rng.choice(["Hi, ", "Hello, ", "Hi there, ", "Hey, ", "Good morning, ", "Good afternoon, ", "", "", ""])


CLOSINGS = {"phone": ["thx", "ty", "thx in advance"]}


def closing(voice: Voice, rng: random.Random, topic: str = "") -> str:
    """How a turn ends (often ''): a word of the other language, a texter's 'thx', an emoji. A mood's
    sentence on its own ('Thanks so much!', 'I'd hate to get this wrong.') would be the same line in
    dialogue after dialogue: the mood shows in the request's own wording instead."""
    lang = voice.language or voice.native
    parts: list[str] = []
    mood = next((m for m in ("anxious", "upbeat", "formal", "chatty", "phone") if getattr(voice, m)), None)
    if lang and (voice.language or rng.random() < 0.4):
        word = rng.choice(FOREIGN[lang][1])
        parts.append(word[:1].upper() + word[1:] + ("!" if voice.upbeat else "."))
    elif mood == "phone" and rng.random() < 0.4:
        parts.append(rng.choice(CLOSINGS[mood]))
    if voice.emoji:
        parts.append(emoji(topic, rng))
    return " ".join(parts)


def emoji(topic: str, rng: random.Random) -> str:
    low = topic.lower()
    for stems, mark in EMOJI:
        if any(s in low for s in stems):
            return mark
    return rng.choice(["🙂", "🙏", "👍", "✨"])


def finish(voice: Voice, text: str) -> str:
    """Punctuation and case of the framing (never of stated values: callers style framing only)."""
    if voice.upbeat:  # one exclamation, at the end: a sentence after sentence of them reads as shouting
        text = re.sub(r"\.(?=\s*$)", "!", text)  # a lead's trailing space kept: 'Sure thing, the ...'
    if voice.lower or voice.phone:
        text = text.lower()
    return text
