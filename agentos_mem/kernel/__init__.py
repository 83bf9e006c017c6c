"""The kernel: small and at the bottom, only what every layer needs: settings, domain types, the clock (dates in the
workspace's time zone), the workspace's paths, atomic files, text tooling, identity templates, the chat-model client,
Prefect's environment and stage progress. It imports nothing of the project above it (tests/contract/test_layers.py);
domain logic lives in the packages just above it (safety, embedders, documents, retrieval, vocabulary)."""
