"""utcgen: synthetic, disambiguation-centric tool-calling dialogues (the UTC-Gen engine of DiaFORGE).

The Python API, loaded on first use so that `import utcgen` stays cheap:

- `generate(num_dialogues=..., out=..., seed=...)`: run the engine, get the dataset folder as a
  `datasets.DatasetDict` of its configs (`dialogues`, `sft`, `preference`, `rejected`);
- `evaluate(benchmark=..., model=..., mode=...)`: evaluate a model on a benchmark, get its metrics;
- `audit(folder)`: every rule validator's pass rate and the data-quality figures of a folder;
- `reward_function(prompts, completions, **columns)`: a reward for TRL's `GRPOTrainer` on `sft` rows.

The library itself is `utcgen.pipeline` (see docs/architecture.md).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for editors and type checkers; at run time the names load on first use
    from .pipeline.api import audit, evaluate, generate
    from .pipeline.evaluation.reward import reward_function

# Public name -> the module that defines it.
_API = {"generate": ".pipeline.api", "evaluate": ".pipeline.api", "audit": ".pipeline.api",
        "reward_function": ".pipeline.evaluation.reward"}
__all__ = ["audit", "evaluate", "generate", "reward_function"]  # the keys of _API


def __getattr__(name: str) -> Any:
    if name not in _API:
        raise AttributeError(f"module 'utcgen' has no attribute {name!r}")
    return getattr(importlib.import_module(_API[name], __name__), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_API])
