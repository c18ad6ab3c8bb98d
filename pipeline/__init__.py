"""utcgen: synthetic disambiguation-centric tool-calling dialogues (UTC-Gen engine).

The library, one subpackage per stage in the order data flows through them:

    catalog/    tool catalogs in any supported format -> checked `Tool` records
    retrieval/  embeddings, faiss index, the A.4 near-duplicate score, persona sampling
    llm/        the litellm gateway every role calls, and the offline backend
    synthesis/  roles, one two-phase attempt, the run with its journal and scheduler
    export/     dataset rows, SFT slices, stats, plots, the card, the Hub upload
    api         the Python API (generate, evaluate, audit) the command calls
    cli/        the `utcgen` command

Shared by all: `records` (the pydantic records, written once), `config`, `errors`,
`prompts` (templates from the shipped prompts/), `files` (atomic writes), `resources` (shipped
files), and one home for each rule the stages share: `arguments` (the one schema-aware argument
comparison and the schema check), `mentions` (whether the user's text states a value), `text`
(words, stop words, stems), `said` (what the user said), `shortcuts` (name leaks, recited
descriptions, spoken parameter keys), `values` (implausible and invented values).
"""

import os

__version__ = "0.1.0"

# litellm fetches a model cost map over the network at import unless told otherwise.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

# The built-in scenario types register their names (`records.SCENARIO_NAMES`) before any record is read,
# whichever module of the library is imported first.
from . import scenarios  # noqa: F401
