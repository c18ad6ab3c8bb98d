"""Stage 1, the tool catalog: the importers for every supported format, the checks that
name file, tool and field for each problem, and the reader that returns `Tool` records.

May import: core, dialogue, scenarios.
"""
