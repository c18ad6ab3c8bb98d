"""What a dialogue says, read from its records: arguments and their comparison, mentions of values, what
the user said, turn labels, names leaked or recited, grounding, value domains, person names and the
question planner (which its callers tell what a scenario type knows from the opening).

May import: core.
"""
