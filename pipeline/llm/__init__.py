"""The one LLM path: a litellm gateway (async, bounded, retried, cached, metered) and the
offline backend, a litellm custom provider that needs no network and no key.

May import: `records`, `config`, `errors`, `arguments`. The offline backend imports neither
validators nor synthesis: it gets the dialogue state it needs from the caller.
"""
