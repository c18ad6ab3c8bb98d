"""Word tables for the offline value generator: Faker locales and language codes by country,
telephone dialling codes, and the short word pools free-text values are composed with (our own
wording). Kept apart so `value_text` holds only the rules.
"""

from __future__ import annotations

LOCALES = {"US": "en_US", "GB": "en_GB", "IE": "en_IE", "AU": "en_AU", "NZ": "en_NZ", "CA": "en_CA",
           "IN": "en_IN", "DE": "de_DE", "CH": "de_CH", "AT": "de_AT", "FR": "fr_FR", "ES": "es_ES",
           "MX": "es_MX", "IT": "it_IT", "NL": "nl_NL", "PT": "pt_PT", "BR": "pt_BR", "SE": "sv_SE",
           "PL": "pl_PL", "CZ": "cs_CZ", "TR": "tr_TR", "ZA": "en_US", "SG": "en_US", "NG": "en_NG"}

LANGUAGES = {"US": "en", "GB": "en", "IN": "en", "DE": "de", "CH": "de", "FR": "fr", "ES": "es", "MX": "es",
             "IT": "it", "NL": "nl", "PT": "pt", "BR": "pt", "SE": "sv", "PL": "pl", "CZ": "cs", "TR": "tr",
             "JP": "ja", "CN": "zh", "KR": "ko", "AE": "ar", "SA": "ar", "IL": "he", "VN": "vi", "ID": "id"}

MODIFIERS = ["north", "spring", "pilot", "core", "legacy", "second", "main", "east", "summer", "alpha",
             "winter", "west", "shared", "weekly", "night", "early", "late", "prime", "south", "autumn",
             "internal", "partner", "mobile", "retail", "field", "central", "quarterly", "annual"]

VERBS = ["Review", "Plan", "Prepare", "Check", "Clarify", "Document", "Follow up on", "Update on", "Question about"]

WHEN = ["Friday", "Monday", "the end of the month", "the next release", "the quarterly review", "Thursday",
        "the team sync", "next week", "the audit", "the holiday break"]

# head nouns of a parameter naming an organisation: a company name fills it
ORGANISATIONS = frozenset("counterparty party vendor supplier customer client partner merchant carrier firm".split())

BODY = [
    "the {thing} for {who} looks wrong since {when}, could someone take a look",
    "please review the {thing} before {when}, {who} is waiting on it",
    "{who} asked for an update on the {thing} by {when}",
    "we need the {thing} sorted out for {who} ahead of {when}",
    "noticed a problem with the {thing} while testing for {who}, it needs a fix before {when}",
    "the {thing} changed after {when} and {who} would like it checked",
    "adding context on the {thing}: {who} relies on it for {when}",
    "can we agree on the {thing} with {who} before {when}",
]


DIAL = {"US": "+1", "CA": "+1", "GB": "+44", "IE": "+353", "AU": "+61", "NZ": "+64", "ZA": "+27", "SG": "+65",
        "IN": "+91", "ES": "+34", "MX": "+52", "CO": "+57", "CL": "+56", "AR": "+54", "PT": "+351", "BR": "+55",
        "FR": "+33", "MA": "+212", "DE": "+49", "CH": "+41", "IT": "+39", "SE": "+46", "NL": "+31", "CZ": "+420",
        "PL": "+48", "TR": "+90", "AE": "+971", "QA": "+974", "SA": "+966", "EG": "+20", "IL": "+972",
        "NG": "+234", "KE": "+254", "GH": "+233", "CN": "+86", "HK": "+852", "JP": "+81", "KR": "+82",
        "VN": "+84", "ID": "+62", "MY": "+60", "PH": "+63"}

SPOTIFY_KINDS = ("track", "album", "artist", "playlist", "show", "episode", "audiobook", "chapter", "user")

# kinds whose value is one of a few a person would give: a file's media type, a canvas's 'width by height'
CHOICES = {"mime": ["application/json", "text/csv", "application/pdf", "text/plain", "image/png"],
           "dimensions": ["12x16", "16x20", "18x24", "24x36", "30x40", "11x14", "20x30"]}
