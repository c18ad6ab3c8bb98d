"""Stage 2, retrieval: sentence embeddings (cached on disk), the faiss tool index that
finds the k near-duplicate distractors, the Appendix A.4 similarity score, the persona
sampler, and catalog statistics built on them.

May import: `records`, `errors`, `files`, `resources` and `catalog`. Never the LLM,
synthesis, export or validators.
"""
