"""Prompt templates, one file per role and phase; installed as package data `utcgen.prompts`."""
