"""The index rebuild pipeline: index units from cards and facts (units) and the rebuild stages, doctor
and embedding cache (stages). Plain functions; no Prefect."""
