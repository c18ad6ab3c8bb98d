"""The run's settings: the run config and its loading (`config`), which model each role uses (`models`),
the fingerprint that decides a resume (`fingerprint`) and the prompt templates (`templates`).

May import: core, dialogue, scenarios.
"""
