"""The one resumable runner behind `utcgen generate`, the Prefect flows and `utcgen eval run`.

Kept apart as in the rest of the library: `checkpoint` keeps a run folder (the manifest with
the settings' fingerprint, one atomic file per finished item, the sessions' wall time);
`budget` says whether the spend so far allows more work; `loop` decides what runs next,
either in a window of items in flight on one event loop (`run_window`) or in waves of
batches that an orchestrator runs elsewhere (`run_waves`), and stops for the budget or a
kind's own stop rule. What an item is, how it runs and when a run is complete is the
caller's `Work`; nothing here knows dialogues, cases or Prefect.

May import: core, dialogue, scenarios, ingest, settings.
"""

from .budget import Budget, BudgetExceeded, RunStopped
from .checkpoint import Checkpoint
from .loop import Gateways, Meter, RunProgress, Work, batches, run_waves, run_window

__all__ = ["Budget", "BudgetExceeded", "Checkpoint", "Gateways", "Meter", "RunProgress", "RunStopped", "Work", "batches", "run_waves", "run_window"]
