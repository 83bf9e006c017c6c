"""What must never reach a store or the agent as written, in Chinese and English: secrets (``secrets``: passwords,
keys, tokens and credentials found and masked at write time, on every derived store and every raw read) and text
that tries to change the agent's rules or get secrets out of it (``injection``: held for review, never a fact).

One policy for every layer that writes or reads text (storage, the pipelines, query); it imports only the kernel
(tests/contract/test_layers.py)."""
