"""The plumbing every layer shares: the records (written once), errors that name file, item and field,
atomic files, text helpers, redaction, shipped resources and progress. Nothing here knows a stage.

May import: nothing of utcgen.
"""
