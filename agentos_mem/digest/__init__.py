"""The daily digest pipeline: reading logs (logformat), importers of public datasets, fact extraction
(extract: rules; model_extract: the optional chat model) and the day's stages (stages). Plain functions; no Prefect."""
