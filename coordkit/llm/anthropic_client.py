"""Claude through the official ``anthropic`` SDK, synchronous and asynchronous.

The key comes only from ``ANTHROPIC_API_KEY``. The model is the argument, else ``COORDKIT_MODEL``, else
:data:`DEFAULT_MODEL` (a current Claude Haiku). The SDK sends each attempt; the retries are the kit's own
(:mod:`coordkit.llm.attempts`), so that every attempt has one deadline for headers and body, no ``retry-after``
waits longer than ``max_wait_s`` (the SDK obeys up to 50 days), a long wait is said, and a provider that fails
every call stops the run. What still fails is raised as :class:`LLMError`, so a policy falls back.

Calls go through aiohttp, whose connection pool keeps one connection per call in flight (httpx's pool scans every
connection at every request: at 200 in flight that scan was nearly half the client's CPU); a synchronous
:meth:`AnthropicClient.complete` runs the same attempts on the kit's background event loop. How many calls are in
flight is the client's :class:`~coordkit.llm.throttle.Concurrency`: it adapts to the answers (429/529, rate-limit
headers, attempts with no answer).

Sampling temperature: the REP paper ran Claude-3-Haiku at temperature 0.1, but the Messages API deprecated
``temperature`` for models from Claude Opus 4.7 on (they answer 400), and SDK 2.x dropped the argument. The
request keeps its temperature (recordings fingerprint it); it is sent, through ``extra_body``, only to models
older than 4.7 that still accept it (:func:`accepts_temperature`).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import weakref
from functools import cache
from typing import TYPE_CHECKING

from coordkit.llm import aio
from coordkit.llm.attempts import MAX_WAIT_S, Answer, AttemptFailed, CallPolicy, Exchange
from coordkit.llm.base import LLMClient, LLMError, LLMReply, LLMRequest, token_count
from coordkit.llm.throttle import Concurrency

if TYPE_CHECKING:
    import anthropic

DEFAULT_MODEL = "claude-haiku-5-5"
MODEL_VARIABLE = "COORDKIT_MODEL"
KEY_VARIABLE = "ANTHROPIC_API_KEY"


def accepts_temperature(model: str) -> bool:
    """Whether the model still takes a sampling temperature: Claude 3 and Claude 4 up to 4.6 do."""
    match = re.match(r"claude-(?:(\d+)(?:-(\d)(?!\d))?-[a-z]+|[a-z]+-(\d+)(?:-(\d)(?!\d))?)", model)
    if not match:
        return False
    major, minor = (match[1], match[2]) if match[1] else (match[3], match[4])
    return (int(major), int(minor or 0)) < (4, 7)


@cache
def sdk():
    """The ``anthropic`` SDK, imported when the first client is made: 3.5 s of CPU that a kernel which imports the
    kit's LLM layer (``open_llm``) but plays rule-based agents no longer pays."""
    import anthropic

    return anthropic


def has_key() -> bool:
    """Whether an Anthropic key is set (its value is never read here)."""
    return bool(os.environ.get(KEY_VARIABLE, "").strip())


class AnthropicClient(LLMClient, Exchange):
    """Claude via the Messages API.

    Args:
        model: model id; default ``$COORDKIT_MODEL`` or :data:`DEFAULT_MODEL`.
        base_url: another endpoint speaking the Messages API (a proxy, or the tests' local fake server).
        max_retries: retries per call on 408/409/429/5xx, timeouts and lost connections.
        timeout_s: seconds before one attempt (headers and body) is abandoned (and retried).
        max_wait_s: the longest the provider can make a call wait between attempts, or hold new calls.
        max_concurrency: the most concurrent calls in flight; None adapts to the provider (see
            :mod:`coordkit.llm.throttle`).
    """

    provider = "the Anthropic API"

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        max_retries: int = 4,
        timeout_s: float = 60.0,
        max_wait_s: float = MAX_WAIT_S,
        max_concurrency: int | None = None,
    ):
        if not has_key():
            raise LLMError(
                f"{KEY_VARIABLE} is not set: export your Anthropic key in the shell that starts Jupyter "
                "(or replay a recording instead, with coordkit.llm.ReplayClient)"
            )
        self.concurrency = Concurrency(max_concurrency)
        self.calls = CallPolicy(
            self, self.concurrency, timeout_s=timeout_s, max_retries=max_retries, max_wait_s=max_wait_s
        )
        self.default_model = model or os.environ.get(MODEL_VARIABLE) or DEFAULT_MODEL
        sdk()  # imported now, not inside a call's deadline
        self._options = {"base_url": base_url, "max_retries": 0, "timeout": timeout_s}
        self._async: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, anthropic.AsyncAnthropic] = (
            weakref.WeakKeyDictionary()
        )

    def __repr__(self) -> str:
        return f"AnthropicClient(model={self.default_model!r})"

    def complete(self, request: LLMRequest) -> LLMReply:
        return aio.run(self.calls.call(request))

    async def complete_async(self, request: LLMRequest) -> LLMReply:
        return await self.calls.call(request)

    async def send(self, request: LLMRequest, retry: int) -> Answer:
        """One attempt through the SDK (which retries nothing itself), numbered as the SDK numbers its own."""
        client, anthropic = self._async_client(), sdk()
        try:
            arguments = self._arguments(request) | {"extra_headers": {"x-stainless-retry-count": str(retry)}}
            raw = await client.messages.with_raw_response.create(**arguments)
            response = raw.http_response
            return Answer(response.status_code, response.headers, await response.aread())
        except anthropic.APIStatusError as error:
            return Answer(error.status_code, error.response.headers, error.response.content)
        except anthropic.APITimeoutError:
            problem = f"did not answer within {self.calls.timeout_s:g} s"
            raise AttemptFailed(problem, timed_out=True, cause="APITimeoutError") from None
        except anthropic.APIConnectionError as error:
            cause = type(error.__cause__ or error).__name__
            problem = f"could not be reached ({cause}): check the network (or replay a recording)"
            raise AttemptFailed(problem, timed_out=False, cause=cause) from None

    def read(self, answer: Answer, request: LLMRequest) -> LLMReply:
        """The reply read from the message's JSON: its text blocks and usage. (The SDK's typed parse builds the
        whole Message with pydantic: 0.5 ms a call, a third of the call's CPU, for three fields.) JSON nested too deep
        for the parser raises RecursionError."""
        try:
            message = json.loads(answer.body)
            text = "".join(block["text"] for block in message["content"] if block.get("type") == "text")
            usage, model = message["usage"], message.get("model")
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            raise LLMError(f"sent a reply that is not a message: {answer.body[:80]!r}", cause="OddReply") from None
        if message.get("type") != "message" or not isinstance(text, str):
            raise LLMError(f"sent a reply that is not a message: {answer.body[:80]!r}", cause="OddReply")
        if not isinstance(usage, dict):
            raise LLMError(f"answered with usage {str(usage)[:60]!r}, not an object of token counts", cause="OddUsage")
        return LLMReply(
            text=text,
            model=model if isinstance(model, str) and model else request.model or self.default_model,
            input_tokens=token_count(usage.get("input_tokens"), "usage.input_tokens"),
            output_tokens=token_count(usage.get("output_tokens"), "usage.output_tokens"),
        )

    def rejected(self, answer: Answer, request: LLMRequest) -> str:
        if answer.status == 401:
            return f"HTTP 401: it refused the key in {KEY_VARIABLE}; check it, or unset it to replay"
        return super().rejected(answer, request)

    def _async_client(self) -> anthropic.AsyncAnthropic:
        """One async SDK client per event loop (its connections belong to the loop that made it), with as many
        connections as calls may be in flight, closed when this client is dropped or the program ends."""
        loop = asyncio.get_running_loop()
        if loop not in self._async:
            import httpx2

            anthropic = sdk()
            pool = httpx2.Limits(max_connections=self.concurrency.ceiling, max_keepalive_connections=None)
            http = anthropic.DefaultAioHttpClient(limits=pool)
            self._async[loop] = anthropic.AsyncAnthropic(**self._options, http_client=http)
            aio.close_with(self, http)
        return self._async[loop]

    def _arguments(self, request: LLMRequest) -> dict:
        model = request.model or self.default_model
        arguments = {
            "model": model,
            "system": request.system,
            "messages": [{"role": role, "content": text} for role, text in request.messages],
            "max_tokens": request.max_tokens,
        }
        if accepts_temperature(model):
            arguments["extra_body"] = {"temperature": request.temperature}
        return arguments
