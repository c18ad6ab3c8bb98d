"""Short noun phrases of a tool description, for the offline user to say in its own sentences.

A description's words are cut into runs at punctuation, stop words and verbs; a run is kept when it
ends in a noun-like word ('variance analysis', 'shipping address'), never a clause's leading verb,
an adjective, a preposition or a gerund used as a verb, so 'the X' around it reads as English.
"""

from __future__ import annotations

import functools
import re

from lemminflect import getAllLemmas

from ..core import text
from ..core.text import DESCRIPTION_FILLER, STOP, stems
from ..dialogue import shortcuts
from ..dialogue.person_names import PERSON_WORDS
from .wording import USER_CHATTER

# words that carry no meaning a user would lead with, or are verbs in descriptions
PHRASE_FILLER = DESCRIPTION_FILLER | frozenset(
    "above adds after afterwards again allow allows approves asks assigns away back because been before "
    "being below beyond caller callers calling cancels closes comes compare compares creates deletes "
    "during earlier ever fetches finds following found fully gets gives goes half has have how instead "
    "itself later lets lists makes many marks moves much needs never not once opens provide provides "
    "pulls raises rather reach reduces registers rejects retrieves same says searches send sends sets "
    "since stands starts stops submits take takes themselves then unknown until updates used uses wants "
    "when whenever where wherever while whom exist exists fails confirms otherwise modify through unless "
    "null no-op choice together neither nor someone somebody anyone anybody everyone everybody something "
    "anything everything nothing nobody".split()
)
GERUND_NOUNS = set("billing shipping pricing booking onboarding troubleshooting training parking meeting funding "
                   "housing hiring marketing accounting planning scheduling staffing building listing setting "
                   "offering spending pending recording streaming".split())
# verbs that follow 'and' or 'or' in a description ("register a supplier and start its checks")
BASE_VERBS = set("start stop send add make take give keep move mark notify assign attach link remove register approve "
                 "reject cancel close submit apply compare calculate generate upload download create update delete "
                 "return list fetch retrieve get set find search show view check open change know continue decide "
                 "adjust select replace restore attest".split())
_VERB_AFTER = {"to", "that", "which", "who", "will", "can", "may", "must", "then", "it", "they", "also", "should", "would",
               "could", "might", "shall", "optionally", "please"}
# words that open a verb's object: an '-s' word before them is a verb ('the user knows their password')
OBJECT_OPENERS = {"the", "a", "an", "their", "its", "his", "her", "which", "what", "it", "them", "this", "these",
                   "those", "no", "our", "your", "whether"}

def _ok(word: str) -> bool:
    return len(word) > 3 and word not in USER_CHATTER and word not in shortcuts.GENERIC and word not in PHRASE_FILLER


_ADJECTIVES = set("technical internal external annual current final manual actual general additional individual "
                  "optional available relevant related remaining existing multiple several various overall same "
                  "full partial own different whole corporate recent prepaid old new due open closed upcoming valid "
                  "invalid possible unique public private active inactive primary secondary latest relative default "
                  "conceptual native precise accessible pending likely certain obscure initial total decimal "
                  "binomial temporary custom commercial equal free wrong past main influential "
                  "standard".split())


def _nounish(word: str) -> bool:  # nor a word the lexicon lacks with an adjective's ending ('reversible', 'isothermal')
    return not word.endswith(("ly", "ed", "ize", "ise", "ical", "ous", "ful", "less")) and word not in PHRASE_FILLER \
        and word not in _ADJECTIVES and not (word.endswith(("ible", "able", "mal", "ive")) and not getAllLemmas(word))


@functools.lru_cache(maxsize=4096)
def names_thing(word: str) -> bool:
    """Whether 'the WORD' can name something by an English lexicon (lemminflect's): not an adjective or
    adverb alone ('the newest', 'the always', 'the stale') nor a verb's past form ('the lost', 'the
    known'). The lexicon lacks many nouns ('commit', 'template' are verbs only there), so a verb's base or
    '-s' form, and any word it lacks ('repo'), pass: the cutter tells those apart by their place."""
    w = word.lower()
    if w in GERUND_NOUNS or w in UNCOUNTABLE:
        return True
    classes = getAllLemmas(w)
    if not classes:
        return True
    verb = classes.get("VERB", (w,))[0]
    if verb != w and not w.endswith(("s", "ing")):
        return False  # 'lost', 'sent', 'known' (which it also lists as a noun)
    if w.endswith("ing") and set(classes) == {"VERB"}:
        return False  # 'the reports waiting': a participle ('billing', a noun, is listed in GERUND_NOUNS)
    return "NOUN" in classes or set(classes) == {"VERB"}


def _verb_only(word: str) -> bool:
    """A verb's '-s' form the lexicon has no noun reading for ('knows', 'withdraws'; also 'logs')."""
    return word.endswith("s") and set(getAllLemmas(word)) == {"VERB"}


def _acts(word: str) -> bool:
    """A word after a clause's subject: a verb's '-s' form ('asks'), an auxiliary ('does') or an adverb ('explicitly')."""
    return (word.endswith("s") and word in PHRASE_FILLER | THIRD_PERSON) or _verb_only(word) or \
        word in _AUXILIARIES or (word.endswith("ly") and "ADV" in getAllLemmas(word))


_AUXILIARIES = frozenset("is are was were does do did has have had can could will would may might must should".split())
_PLURAL_MODIFIERS = frozenset("sales news sports series analytics settings goods terms arts savings earnings".split())
_AFTER_A_VERB = frozenset("within in on at into onto to by for from with over under before after between during "
                          "the a an their its his her this these those".split())


def _plural_subject_verb(before: str, word: str, after: list[str]) -> bool:
    """A plural noun, then a verb before a preposition or an object: 'anniversaries fall within', a clause's verb."""
    b = before.lower()
    verb = getAllLemmas(word).get("VERB")
    return b.endswith("s") and not b.endswith("ss") and b not in _PLURAL_MODIFIERS and bool(verb) and \
        verb[0] == word and bool(after) and after[0].lower() in _AFTER_A_VERB


def _acts_on(word: str, after: list[str]) -> bool:
    """A verb's base form before its object ('or resume current playback', 'and open the file')."""
    verb = getAllLemmas(word).get("VERB")
    return bool(verb and verb[0] == word and after and (after[0].lower() in OBJECT_OPENERS or after[0].lower() in _ADJECTIVES))


def _gerund_noun(word: str) -> bool:
    """An '-ing' word that names a thing ('billing', 'the ranking'), not an act or a quality ('the
    containing', 'the matching')."""
    classes = getAllLemmas(word)
    return word in GERUND_NOUNS or ("NOUN" in classes and "ADJ" not in classes)


def _adjective(word: str) -> bool:
    """An adjective with no noun reading ('favorable', 'demographic')."""
    classes = getAllLemmas(word.lower())
    return "ADJ" in classes and "NOUN" not in classes


# words of a sentence about the API rather than the tool's job ("This endpoint is in beta; please
# share any feedback", "Use this tool whenever ..."): its phrases would set a tool apart by its
# documentation, not its use
META = frozenset("endpoint endpoints beta feedback deprecated warning api apis tool tools parameter parameters forbidden "
                 "unauthorized".split())


# a sentence saying where or for whom the tool works ("Audiobooks are only available within the US, UK and
# Australia markets") limits it; nobody asks for its places
_LIMITS = re.compile(r"\bonly\s+(?:be\s+)?(?:available|supported|offered|works?)\b", re.IGNORECASE)


def _heading(sentence: str, rest: str) -> bool:
    """A Title Case heading whose words the rest of the description says ('Seek To Position. Seeks to the
    given position...'): a second wording of the act, whose words people never say ('the seek')."""
    words = re.findall(r"[\w'’]+", sentence)
    return bool(words) and all(w[:1].isupper() or w.lower() in STOP for w in words) and \
        set(stems(sentence)) <= set(stems(rest))


def about(description: str) -> str:
    """`description` without a heading it restates (`_heading`) and its sentences about the API itself (`META`)."""
    sentences = re.split(r"(?<=[.!?])\s+|\n+", description)
    if len(sentences) > 1 and _heading(sentences[0], " ".join(sentences[1:])):
        sentences = sentences[1:]
    kept = [s for s in sentences if not META & {w.lower().strip("_*`") for w in re.findall(r"[\w*`]+", s)}
            and not _LIMITS.search(s)]
    return " ".join(kept or sentences[:1])  # a description all about the API still says what the tool is for first


def noun_phrases(description: str, banned: set[str]) -> list[str]:
    """Short noun phrases of a description (at most 3 words, ending in a noun-like word), never a
    clause's leading verb, nor a word after 'to', 'that' or 'which' (a verb there), nor a banned word."""
    out: list[str] = []
    said = re.sub(r"\bof course\b|['`\"]?\b[a-z]+(?:_[a-z0-9]+)+\b['`\"]?", ",",  # no 'course', no 'total_ranges'
                  text.without_codes(about(description)), flags=re.IGNORECASE)
    for clause in re.split(r"[,.;:()/\[\]\"]| - ", said):
        words = re.findall(r"[A-Za-z][A-Za-z'-]*", clause)
        run: list[str] = []
        for i, raw in enumerate(words):
            w = raw.lower().strip("'-")
            verbish = i == 0 or words[i - 1].lower() in _VERB_AFTER or (w.endswith("s") and i == 1 and
                                                                     words[0].lower() in ("it", "this")) \
                or (i + 1 < len(words) and words[i + 1].lower() in OBJECT_OPENERS and _verb_only(w)) \
                or (words[i - 1].lower() in ("and", "or") and (w in BASE_VERBS or _acts_on(w, words[i + 1:i + 2]))) \
                or (bool(run) and _plural_subject_verb(run[-1], w, words[i + 1:i + 2]))
            code = bool(re.match(r"[a-z]+[A-Z]", raw))  # 'endCursor', 'perPage': a field of the API, no thing one names
            if _ok(w) and not verbish and not code and shortcuts.stem(w) not in banned and "'" not in w \
                    and raw.isascii():
                run.append(raw.strip("'-") if raw[:1].isupper() and i > 0 else w)  # a proper noun keeps its capital
                continue
            head = [x for x in run if not x.endswith("ly")][-1:]  # 'the manager explicitly wants'
            if head and head[0].lower() in PERSON_WORDS and _acts(w):
                run = []  # 'a manager asks', 'the customer wants': who the tool serves, never a thing wanted
            if run and (_modifies(raw, w) or (_adjective(run[-1]) and "NOUN" in getAllLemmas(w))):
                # 'the authenticated GitHub user', 'the Spotify ID', 'favorable outcomes' (a parameter's word):
                # the run only qualifies the next word
                run = []
            _close(run, out)
            run = []
        _close(run, out)
    return [p for p in out if not META & set(p.lower().split())]  # 'the tool', 'the parameters': the API's words


# short heads a description puts after a qualifier ('Spotify ID', 'playlist URI'): the run before them is no thing
_HEADS = frozenset("id ids uri uris url urls key keys user".split())


def _modifies(raw: str, word: str) -> bool:
    """Whether `raw`, the word that ended a run, is the noun that run qualifies: an acronym ('ID',
    'URI'), a short head, or a generic noun ('user', 'data') the cutter leaves out."""
    word = re.sub(r"['’]s?$", "", word)  # "the Spotify user's albums": 'user' is the head 'Spotify' qualifies
    return (raw.isupper() and raw.isalpha() and len(raw) <= 4) or word in _HEADS or \
        (word in shortcuts.GENERIC and word not in BASE_VERBS and word not in {"all", "by", "for", "do"})


_DETERMINERS = r"(?:a|an|the|your|each|every|this|that|its|their|my|our|all|any|one|some|new)"


_BEFORE_NOUN = rf"(?:(?:{_DETERMINERS[3:-1]}|single|several|multiple)\s+)*"


def _spaced(phrase: str) -> str:  # a pattern matching `phrase` however a description spaces its words
    return r"\s+".join(re.escape(w) for w in phrase.split())


def place(description: str, verb: str, phrase: str) -> str | None:
    """How `phrase` stands to the description's `verb`: '' when it is the verb's object ('Create a new pull
    request'), a preposition when the verb acts on something there ('... in a GitHub repository': 'in'),
    None when neither ('create the GitHub repository' would say another act)."""
    words = _spaced(phrase)
    between = r"(?:(?!(?:from|in|on|to|into|within|for|of|with|by|at)\b)[\w'-]+\s+){0,2}?"  # 'Remove Items from Library'
    if re.search(rf"\b{re.escape(verb)}\w*\s+{_BEFORE_NOUN}{between}{words}\b", description, re.IGNORECASE):
        return ""
    found = re.search(rf"\b(in|on|to|from|within|into)\s+{_BEFORE_NOUN}(?:[\w'-]+\s+){{0,1}}?{words}\b", description,
                      re.IGNORECASE)  # a place the act happens in, not what it is for ('for a single album')
    return found.group(1).lower() if found else None


_LINKS = "of|for|in|from|between|on|to|within|across|by|into"


def linked(description: str, first: str, second: str) -> tuple[str, str, str] | None:
    """Two phrases as the description ties them, the one it says first leading, the other as said after the
    link ('the winner of a basketball game': ('winner', 'of', 'the basketball game'); 'a code of conduct':
    ('code', 'of', 'conduct')); None when nothing ties them, as 'the winner, along with the game' would
    claim a relation the description never states."""
    for lead, tail in ((first, second), (second, first)):
        words = [_spaced(p) for p in (lead, tail)]
        found = re.search(rf"\b{words[0]}\s+((?:\w+ed\s+)?(?:{_LINKS}))\s+({_BEFORE_NOUN}(?:(?!(?:{_LINKS}|and|or)\b)"
                          rf"[\w-]+(?:['’]s)?\s+){{0,3}}?){words[1]}\b", description, re.IGNORECASE)  # no second link between
        if found:
            return lead, " ".join(found.group(1).lower().split()), the(tail) if found.group(2) else tail
        if re.search(rf"\b{words[1]}['’]s?\s+{words[0]}\b", description, re.IGNORECASE):  # 'an album's tracks'
            return lead, "of", the(tail)
    return None


# words before a noun that may be all that tells two tools apart ('a single album' / 'several albums',
# 'the previous track' / 'the next track'), with the determiner a person says them with
QUALIFIERS = {"single": "a", "several": "", "multiple": "", "previous": "the", "next": "the", "current": "the",
              "first": "the", "last": "the"}


def qualified(description: str, phrases: list[str]) -> list[str]:
    """Each of `phrases` the description puts right after a qualifier (`QUALIFIERS`), with it:
    'single album' from 'information for a single album'. The phrase cutter drops such words, as
    they say nothing on their own; before a noun they may be the whole difference."""
    out: list[str] = []
    heads: set[str] = set()
    for phrase in phrases:
        if phrase.lower() in heads:
            continue  # one qualified form a head ('several albums', not also 'multiple Albums')
        words = _spaced(phrase)
        # the phrase must end there: 'the current Spotify user' qualifies the user, not 'Spotify'
        for found in re.finditer(rf"\b({'|'.join(QUALIFIERS)})\s+{words}\b(?!\s+(?:{'|'.join(_HEADS)})\b)(?!\s+(?-i:[A-Z]{{2,4}})\b)",
                                 description, re.IGNORECASE):
            rest = [w.lower() if re.search(rf"\b{re.escape(w.lower())}\b", description) else w  # a heading's 'Albums'
                    for w in found.group(0).split()[1:]]
            out.append(" ".join([found.group(1).lower(), *rest]))  # as the description has it
            heads.add(phrase.lower())
            break
    return out


def the(phrase: str) -> str:
    """`phrase` with the determiner it is said with: 'the album', 'a single album', 'several albums'."""
    det = QUALIFIERS.get(phrase.split()[0].lower(), "the") if phrase else "the"
    return f"{det} {phrase}".strip()


def determined(description: str, phrase: str) -> bool:
    """Whether `phrase` follows a determiner in `description` ('for a cost center', 'the saved
    albums', 'each open ticket'), perhaps after an adjective or two: then it is surely a noun phrase,
    one a person can put 'the' before."""
    words = _spaced(phrase)
    return bool(re.search(rf"\b{_DETERMINERS}\s+(?:[\w'-]+\s+){{0,2}}?{words}\b", description, re.IGNORECASE))


def owned(description: str, phrase: str) -> bool:
    """Whether `description` says whose `phrase` is ('your playlists', "the user's saved albums"): a person's own."""
    words = _spaced(phrase)
    return bool(re.search(rf"\b(?:your|my|their|our|his|her|own|\w+['’]s?)\s+(?:[\w-]+\s+){{0,2}}?{words}",
                          description, re.IGNORECASE))


_USAGE = re.compile(r"^(?:use|used|useful|ideal|best|call)\b", re.IGNORECASE)


def usage_only(description: str, phrase: str) -> bool:
    """Whether `phrase` is said only in the description's notes on when to use the tool ('Use when a
    manager asks ...', 'Useful for finding specific changes'): the situation, not the thing the tool acts on."""
    words = _spaced(phrase)
    found = [bool(_USAGE.match(s.strip())) for s in re.split(r"(?<=[.!?])\s+|\n+", description)
             if re.search(rf"\b{words}\b", s, re.IGNORECASE)]
    return bool(found) and all(found)


def thing(phrase: str) -> bool:
    """Whether a parameter's label or an enum value names a thing one can put 'the' before ('the
    market', 'the playlist'), not a preposition, an adjective or a participle ('the after', 'the closed')."""
    words = phrase.lower().split()
    return bool(words) and _nounish(words[-1]) and names_thing(words[-1]) and words[-1] not in _NOT_THINGS and \
        not (len(words) == 1 and words[0] in _ACTS) and \
        not (words[-1].endswith("ing") and not _gerund_noun(words[-1]))  # 'the containing


def said_alone(word: str, description: str) -> bool:
    """Whether a lone word of `description` can be said as 'the WORD': a `thing` the lexicon knows as a
    noun, or one it lacks, or one the description puts a determiner before ('a commit'); never a verb
    the lexicon has no noun for ('the corresponds', 'the seek')."""
    lemmas = getAllLemmas(word.lower())
    return thing(word) and ("NOUN" in lemmas or not lemmas or  # right after its determiner: not 'the context corresponds'
                            bool(re.search(rf"\b{_DETERMINERS}\s+{re.escape(word)}\b", description, re.IGNORECASE)))


# words a label or an option can end in that name no thing ('order by', 'failed only', 'none')
_NOT_THINGS = frozenset("of by at to for in on with from after before since until such how all none other only any "
                        "sort done read sent seen".split())


# quantities and references a description puts before a noun ('several episodes', 'the provided repository'):
# the user says the noun
_QUANTIFIERS = frozenset("several multiple various many single specific specified given certain provided requested "
                         "supplied existing current unique particular forbidden obscure".split())
# verbs that end a clause's subject ('the response includes') and are never a plural noun ('tracks', 'logs' are)
_CLAUSE_VERBS = frozenset("includes contains blocks returns allows requires indicates represents specifies defaults "
                          "matches exists fails confirms depending belongs meets owns".split())
# verbs that open a clause in descriptions and that the cutter can take for a noun's modifier
_LEAD_VERBS = frozenset("manage configure enable disable trigger reorder".split())
_ACTS = BASE_VERBS | _LEAD_VERBS  # a lone word of these is an act, never a thing
_SPANS = frozenset("year time term day week month quarter level scale range size".split())
_SCOPES = frozenset("level wide based specific scoped only".split())  # 'org-level', 'company-wide', 'repo-scoped'


def _modifier(word: str) -> bool:
    """A compound that only qualifies a noun ('current-year', 'real-time', 'long-term', 'two-day')."""
    first, _, last = word.lower().rpartition("-")
    return bool(first) and ((last in _SPANS and "ADJ" in getAllLemmas(first.split("-")[0])) or last in _SCOPES)


def _close(run: list[str], out: list[str]) -> None:
    while run and not (_nounish(run[-1]) and names_thing(run[-1])):
        run = run[:-1]
    run = run[-3:]  # at most three words, cut before the checks of how a phrase may start
    while len(run) > 1 and run[0].lower() in _QUANTIFIERS:
        run = run[1:]
    while run and run[0].endswith("ing") and run[0].lower() not in GERUND_NOUNS:
        run = run[1:]  # 'choosing', 'refunding': a verb, not a thing
    while len(run) > 1 and run[0].lower() in _CLAUSE_OPENERS:
        run = run[1:]  # 'triggers order creation', 'manage GitHub Projects': the verb of a clause, then its object
    while run and run[-1] in _CLAUSE_VERBS:
        run = run[:-1]  # 'the response includes': a clause's subject and verb, not a thing
        while run and not _nounish(run[-1]):
            run = run[:-1]
    if len(run) == 1 and (run[0].lower() in _ACTS or (run[0][:1].isupper() and not run[0].rstrip("s").isupper()
                                                       and not getAllLemmas(run[0].lower()))):
        return  # 'create' alone is an act, never 'the create'; 'Seattle' alone is a name, never 'the Seattle'
    if len(run) == 1 and _modifier(run[0]):
        return  # 'current-year' of 'the current-year budget' whose head was cut: a modifier, never 'our current-year'
    while run and run[0].endswith("ing") and len(run) > 1 and run[0] in ("including", "containing", "using"):
        run = run[1:]
    phrase = " ".join(run)
    if phrase.lower() == "least":
        return  # 'at least one': no thing
    if phrase and phrase.lower() not in {p.lower() for p in out}:  # 'Saved Albums' and 'saved albums' are one
        out.append(phrase)


# verbs of a description's clauses that the phrase cutter can take for nouns ('triggers order creation')
THIRD_PERSON = frozenset("triggers returns includes contains allows requires indicates represents specifies shows "
                         "records tracks logs stores links enables supports handles manages controls defines "
                         "describes identifies determines affects matches replaces exists defaults blocks fails "
                         "confirms follows meets belongs owns".split())
_CLAUSE_OPENERS = THIRD_PERSON | _LEAD_VERBS  # a clause's verb before its object ('triggers order creation')
def bland(phrase: str) -> bool:
    """Whether a phrase names nothing in particular: bland words, adjectives and names only ('the number', 'the
    available information', 'an example', 'the Spotify URIs')."""
    words = phrase.split()  # a product's name says no more than the API it names ('Spotify catalog information')
    return bool(words) and all(w.lower() in BLAND or _adjective(w) or text.is_name(w) for w in words)


BLAND = set("example examples number numbers count open method methods type types status value values amount name names list "
             "code codes date dates period periods time times result results field fields entry entries "
             "parameter parameters information details request requests response object objects resource "
             "resources endpoint endpoints item items body bodies uri uris url urls id ids json catalog days weeks "
             "months hours minutes seconds money".split())
# nouns that take no 'a': "some information", never "an information"
UNCOUNTABLE = ("information", "data", "metadata", "content", "music", "feedback", "equipment", "software",
               "access", "advice", "inventory", "spend", "payroll", "research", "progress", "work", "stock")
