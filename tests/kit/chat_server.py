"""A real OpenAI-compatible chat endpoint on loopback for tests: answers from a script of replies."""

from __future__ import annotations

from tests.kit.loopback import JSONServer


class ChatServer(JSONServer):
    """``replies``: list of (status, content) served in order; the last one repeats."""

    def __init__(self, replies: list[tuple[int, str]]):
        def respond(body: dict, n: int) -> tuple[int, object]:
            status, content = replies[min(n, len(replies)) - 1]
            if status != 200:
                return status, {"error": "boom"}
            return 200, {"choices": [{"message": {"role": "assistant", "content": content}}]}

        super().__init__(respond)
