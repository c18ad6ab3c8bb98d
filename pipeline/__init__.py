"""utcgen: synthetic disambiguation-centric tool-calling dialogues (UTC-Gen engine).

The library, one subpackage per layer; bottom to top: `core` (records, errors, files, text),
`dialogue` (what a dialogue says), `scenarios` (the scenario types), `settings` and `ingest` (tool
catalogs), `retrieval` and `runner`, `llm` with the offline `simulator`, then `validators` (beside
this package), `export`, `synthesis`, `evaluation`, `api` (the Python API) and `cli` (the `utcgen`
command). docs/architecture.md lists each layer's modules and what it may import, as the import
contracts in pyproject.toml hold them.
"""

import os

__version__ = "0.1.0"

# litellm fetches a model cost map over the network at import unless told otherwise.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

# The built-in scenario types register their names (`records.SCENARIO_NAMES`) before any record is read,
# whichever module of the library is imported first.
from . import scenarios  # noqa: F401
