"""utcgen: synthetic disambiguation-centric tool-calling dialogues (UTC-Gen engine)."""

import os

__version__ = "0.1.0"

# litellm fetches a model cost map over the network at import unless told otherwise.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
