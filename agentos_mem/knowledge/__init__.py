"""The knowledge base's write path: collect to the inbox, refine (classify, ingest review, versions,
structure), and publishing (pending -> ready). Plain functions; Prefect tasks wrap them (tasks/knowledge.py)."""
