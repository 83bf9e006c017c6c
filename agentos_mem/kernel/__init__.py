"""The kernel: small and at the bottom, only what every layer needs. Settings, domain types, the clock (dates in
the workspace's time zone), the workspace and its paths, atomic files, text tooling, identity templates, the
chat-model client, Prefect's environment, the tokenizer, and stage progress. It imports nothing of the project
above it, and holds no other module (tests/contract/test_layers.py): domain logic lives in packages of its own
(safety, embedders, documents, retrieval, vocabulary) just above it."""
