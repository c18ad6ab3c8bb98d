"""Prefect flows and deployments (`prefect.yaml`): a thin layer over the library.

`generate_dialogues` maps the library's planned waves of seed jobs onto Prefect tasks
(local threads or Dask workers) and exports; `publish_dataset` uploads a folder to the
Hub. What runs, in which order, and how it resumes is decided in `utcgen.pipeline`.
Nothing in the library imports this package or Prefect.

May import: core, dialogue, scenarios, ingest, settings, retrieval, runner, llm, validators, export, synthesis, evaluation, api.
"""
