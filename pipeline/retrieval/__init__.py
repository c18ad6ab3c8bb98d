"""Stage 2, retrieval: sentence embeddings (cached on disk), the faiss tool index that
finds the k near-duplicate distractors, the Appendix A.4 similarity score, the persona
sampler, the chain pairs a catalog offers (one tool's result feeding another's required parameter),
and catalog statistics built on them.

May import: core, dialogue, scenarios, ingest, settings.
"""
