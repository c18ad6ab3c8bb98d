"""The offline assistant's questions in words: the courtesy and the choice in one sentence, each option
a noun phrase ('the approved budget') or, when every option's description opens with its own verb, an
act ('check the approved budget'). `selection` decides what to ask; this module says it.
"""

from __future__ import annotations

import random
import re

from ..core.records import Tool
from ..core.text import said_as_written
from .nounphrases import BASE_VERBS, the
from .wording import imperative


def option(tool: Tool, phrase: str, verbs: bool) -> str:
    """An option as said: 'the approved budget', or 'check the approved budget' when the question asks
    what the user wants to do and the tool's description opens with a verb."""
    said = " ".join(w if said_as_written(w) else w.lower() for w in phrase.split())
    noun = said if said.lower().startswith(("the ", "a ", "an ")) else the(said)  # 'a single album', 'several albums'
    verb = opening_verb(tool) if verbs else None
    return f"{verb} {noun}" if verb else noun


def opening_verb(tool: Tool) -> str | None:
    """The plain verb a tool's description opens with ('Retrieves ...' -> 'retrieve'), if it does."""
    first = (re.findall(r"[A-Za-z]+", tool.description)[:1] or [""])[0]
    verb = imperative(first)
    return verb if verb in BASE_VERBS or verb in ASK_VERBS else None


# verbs descriptions open with that a person also says when asking for something
ASK_VERBS = frozenset("book cancel check compare create delete find follow get list look play pause remove save search "
                      "send set show skip start stop submit transfer unfollow update upload view add approve assign "
                      "close open move mark change reset schedule register request return fetch retrieve".split())
# A question is one sentence: a courtesy and the choice, so no stock line ("Happy to help.") recurs on its own.
# {o}: the options. Noun frames take 'the approved budget'; verb frames take 'check the approved budget'.
FIRST = ["Sure, I can help you with that, but first, could you tell me whether you need {o}?",
         "I'd be happy to help with that, so could you let me know if you are looking for {o}?",
         "I can help you with that, but to find the right option, do you need {o}?",
         "Of course, I can look into that for you, so which one do you need: {o}?",
         "Happy to help with this, and to get it right, could you tell me if you mean {o}?",
         "Sure, let me help you with that, but are you looking for {o}?",
         "I can certainly help you with that, so just to be sure, do you need {o}?",
         "Glad to help, but before I start, could you tell me whether it is {o}?"]
FIRST_DO = ["Sure, I can help you with that, but first, could you tell me whether you want to {o}?",
            "I'd be happy to help with that, so could you let me know if you want to {o}?",
            "I can help you with that, but to find the right option, do you want to {o}?",
            "Of course, I can look into that for you, so would you like to {o}?",
            "Happy to help with this, and to get it right, could you tell me if you need to {o}?",
            "I can certainly help you with that, so just to be sure, are you trying to {o}?"]
AGAIN = ["Thanks for the details, and to be sure I get this right, do you need {o}?",
         "Thank you, that helps, but could you tell me whether you are looking for {o}?",
         "Got it, thanks, so is it {o}?", "Okay, that narrows it down, so do you mean {o}?",
         "Thanks for explaining, and just to make sure, are you after {o}?",
         "That helps a lot, so could you tell me which one you need: {o}?"]
AGAIN_DO = ["Thanks for the details, and to be sure I get this right, do you want to {o}?",
            "Thank you, that helps, but could you tell me whether you need to {o}?",
            "Got it, thanks, so would you like to {o}?", "Okay, that narrows it down, so are you trying to {o}?",
            "Thanks for explaining, and just to make sure, do you want to {o}?"]
UNSURE = ["No problem, let me put it another way: do you need {o}?",
          "That's okay, so let me ask it differently: is it {o}?",
          "No worries, we can narrow it down together, so are you looking for {o}?"]
UNSURE_DO = ["No problem, let me put it another way: do you want to {o}?",
             "That's okay, so let me ask it differently: are you trying to {o}?",
             "No worries, we can narrow it down together, so would you like to {o}?"]
# a check: the user's words point at one option, and the assistant confirms it against its nearest rival
CHECK = ["Just so I get this right, do you mean {o}?", "Before I go ahead, is it {o}?",
         "Let me make sure I have it: are you looking for {o}?", "Just to confirm before I start, do you need {o}?"]
CHECK_DO = ["Just so I get this right, do you want to {o}?", "Before I go ahead, would you like to {o}?",
            "Let me make sure I have it: are you trying to {o}?", "Just to confirm before I start, do you need to {o}?"]
# an open question's courtesy, by mood, in the same sentence
OPEN_LEADS = {"first": ["Sure, I can help with that, but ", "Happy to help, so ", "I can look into that for you, but ",
                        "Of course, and to find the right option, ", "Glad to help, and first, ",
                        "I can do that, but to pick the right one, ", "Certainly, and so I get it right, ",
                        "Sure thing, but before I start, "],
              "again": ["Thanks, and ", "Got it, so ", "Thank you, and to narrow it down, ", "Okay, so ",
                        "Thanks for that, and ", "Understood, so ", "That helps, and ", "Right, so "],
              "check": ["Just so I get this right, ", "Before I go ahead, ", "Let me make sure I have it: ",
                        "Just to confirm, "],
              "unsure": ["No problem, so ", "That's fine, and ", "No worries, so ", "That's okay, so ",
                         "Not to worry, so ", "That's alright, and ", "Fair enough, so ", "No trouble, and "]}
OPEN = ["Could you tell me one concrete thing you expect to get out of this?",
        "What is the one detail that matters most to you here?",
        "What should be different once this is done, in one concrete example?",
        "Can you name one thing this should change or give you back?",
        "What would you look at first to check that it worked?",
        "Could you walk me through what you would do by hand?", "Who will use the result, and for what?",
        "Is there something you want changed, or only something you want to see?",
        "What happened just before you needed this?", "If this went wrong, what would you notice?",
        "How would you describe it to a colleague?"]


def listed(options: list[str], verbs: bool) -> str:
    """'A or B', 'A, B or C'; verb options repeat 'to' after the first ('check X, or to see Y')."""
    joined = [o if i == 0 or not verbs else f"to {o}" for i, o in enumerate(options)] if len(options) == 2 else options
    return joined[0] + ", or " + joined[1] if len(joined) == 2 else ", ".join(joined[:-1]) + ", or " + joined[-1]


def fresh_form(forms: list[str], asked: str, rng: random.Random) -> str:
    """One of `forms` whose fixed wording (before its slot) no earlier question used."""
    unused = [f for f in forms if f.split("{")[0].strip() not in asked] or forms
    return rng.choice(unused)

