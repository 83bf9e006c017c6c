"""User memory: Markdown records and their book (records), cue-gated extraction (extract), inbox memory
cards (inbox) and the nightly extraction over a day's exchanges (digest). Plain functions; no Prefect."""
