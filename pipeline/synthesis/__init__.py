"""Stage 3, synthesis: the roles (goal, slots, user proxy, assistant), one two-phase
attempt ending in the validator cascade, and the run: its journal and its scheduling.

May import: core, dialogue, scenarios, ingest, settings, retrieval, runner, llm, validators, export.
"""
