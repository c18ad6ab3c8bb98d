"""The one LLM path: a litellm gateway (async, bounded, retried, cached, metered) and the
model registry (models by role), which owns litellm's set-up and registers the offline simulator
(`pipeline/simulator/`) as a litellm provider.

May import: core, dialogue, scenarios, ingest, settings, retrieval, runner, simulator.
"""
