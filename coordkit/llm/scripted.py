"""A client that answers from a script: for tests and for showing a policy's parsing and fallback."""

from collections.abc import Callable, Iterable
from itertools import cycle

from coordkit.llm.base import LLMClient, LLMError, LLMReply, LLMRequest

Script = Iterable[str | Exception] | Callable[[LLMRequest], str]


class ScriptedClient(LLMClient):
    """Replies with the next scripted text, raises scripted exceptions, and keeps every request it saw.

    ``script`` is either a sequence of replies (strings, or exceptions to raise; ``repeat=True`` cycles it) or
    a function of the request. Running out of replies raises :class:`LLMError`, like a real failed call.
    ``model`` names what answers (it goes into replies, ledgers and recordings).
    """

    default_model = "scripted"
    billable = False

    def __init__(self, script: Script, *, repeat: bool = False, model: str = "scripted"):
        self.default_model = model
        self._respond = script if callable(script) else None
        self._replies = None if callable(script) else (cycle(list(script)) if repeat else iter(list(script)))
        self.requests: list[LLMRequest] = []

    def complete(self, request: LLMRequest) -> LLMReply:
        self.requests.append(request)
        reply = self._respond(request) if self._respond else next(self._replies, None)
        if reply is None:
            raise LLMError("the scripted client has no replies left")
        if isinstance(reply, Exception):
            raise reply
        words = sum(len(text.split()) for _, text in request.messages) + len(request.system.split())
        return LLMReply(
            text=reply,
            model=request.model or self.default_model,
            input_tokens=words,
            output_tokens=len(reply.split()),
        )

    async def complete_async(self, request: LLMRequest) -> LLMReply:
        """Answered at once, in call order: a round's scripted replies do not depend on thread timing."""
        return self.complete(request)
