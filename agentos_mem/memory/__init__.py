"""User memory's write path: cue-gated extraction (extract), inbox memory cards (inbox) and the nightly extraction over a day's exchanges (digest). The records themselves and their book
(create/update/recall statistics) are storage (storage/memory_records.py). Plain functions; no Prefect."""
