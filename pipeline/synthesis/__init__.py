"""Stage 3, synthesis: the roles (goal, slots, user proxy, assistant), one two-phase
attempt ending in the validator cascade, and the run: its journal and its scheduling.

May import every stage below it (catalog, retrieval, llm), `validators` and `export`.
"""
