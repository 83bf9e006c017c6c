"""The kernel: small and at the bottom. Settings, domain types, the workspace and its paths, text tooling,
the clock (dates in the workspace's time zone), the tokenizer, embedders, the chat-model client, identity
templates and Prefect's environment. It imports nothing of the project above it (tests/contract/test_layers.py)."""
