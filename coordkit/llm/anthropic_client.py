"""Claude through the official ``anthropic`` SDK, synchronous and asynchronous.

The key comes only from ``ANTHROPIC_API_KEY``. The model is the argument, else ``COORDKIT_MODEL``, else
:data:`DEFAULT_MODEL` (a current Claude Haiku). Rate limits, overloads, server errors, timeouts and dropped
connections are retried by the SDK itself (exponential backoff with jitter, honouring ``retry-after``);
what still fails is raised as :class:`LLMError`, so a policy falls back. The SDK reports retries only for a call
that succeeds, so the client counts every HTTP attempt itself (an httpx request hook): a failed call's retries
reach the ledger too.

Concurrent calls (:meth:`AnthropicClient.complete_async`) go through aiohttp, whose connection pool keeps one
connection per call in flight (httpx's pool scans every connection at every request: at 200 in flight that scan was
nearly half the client's CPU). How many are in flight is the client's :class:`~coordkit.llm.throttle.Concurrency`:
it adapts to the answers the SDK's response hook sees (429/529, rate-limit headers, attempts with no answer).

Sampling temperature: the REP paper ran Claude-3-Haiku at temperature 0.1, but the Messages API deprecated
``temperature`` for models from Claude Opus 4.7 on (they answer 400), and SDK 2.x dropped the argument. The
request keeps its temperature (recordings fingerprint it); it is sent, through ``extra_body``, only to models
older than 4.7 that still accept it (:func:`accepts_temperature`).
"""

import asyncio
import json
import os
import re
import time
import weakref
from contextvars import ContextVar

import anthropic
import httpx2

from coordkit.llm import aio
from coordkit.llm.base import LLMClient, LLMError, LLMReply, LLMRequest
from coordkit.llm.throttle import OVERLOAD_STATUS, REFUSED, CallRecord, Concurrency

DEFAULT_MODEL = "claude-haiku-5-5"
MODEL_VARIABLE = "COORDKIT_MODEL"
KEY_VARIABLE = "ANTHROPIC_API_KEY"

_call: ContextVar[CallRecord | None] = ContextVar("anthropic_call", default=None)  # what the HTTP hooks see


def _count_attempt(request) -> None:
    """An httpx request hook: one more HTTP attempt for the call running in this thread or task."""
    call = _call.get()
    if call is not None:
        call.attempts += 1


def accepts_temperature(model: str) -> bool:
    """Whether the model still takes a sampling temperature: Claude 3 and Claude 4 up to 4.6 do."""
    match = re.match(r"claude-(?:(\d+)(?:-(\d)(?!\d))?-[a-z]+|[a-z]+-(\d+)(?:-(\d)(?!\d))?)", model)
    if not match:
        return False
    major, minor = (match[1], match[2]) if match[1] else (match[3], match[4])
    return (int(major), int(minor or 0)) < (4, 7)


def has_key() -> bool:
    """Whether an Anthropic key is set (its value is never read here)."""
    return bool(os.environ.get(KEY_VARIABLE, "").strip())


class AnthropicClient(LLMClient):
    """Claude via the Messages API.

    Args:
        model: model id; default ``$COORDKIT_MODEL`` or :data:`DEFAULT_MODEL`.
        base_url: another endpoint speaking the Messages API (a proxy, or the tests' local fake server).
        max_retries: the SDK's retries per call on 408/409/429/5xx, timeouts and connection errors.
        timeout_s: seconds before one attempt is abandoned (and retried).
        max_concurrency: the most concurrent calls in flight; None adapts to the provider (see
            :mod:`coordkit.llm.throttle`).
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        max_retries: int = 4,
        timeout_s: float = 60.0,
        max_concurrency: int | None = None,
    ):
        if not has_key():
            raise LLMError(
                f"{KEY_VARIABLE} is not set: export your Anthropic key in the shell that starts Jupyter "
                "(or replay a recording instead, with coordkit.llm.ReplayClient)"
            )
        self.concurrency = Concurrency(max_concurrency)
        self.default_model = model or os.environ.get(MODEL_VARIABLE) or DEFAULT_MODEL
        self._options = {"base_url": base_url, "max_retries": max_retries, "timeout": timeout_s}
        self._sync = anthropic.Anthropic(
            **self._options, http_client=anthropic.DefaultHttpxClient(event_hooks={"request": [_count_attempt]})
        )
        self._async: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, anthropic.AsyncAnthropic] = (
            weakref.WeakKeyDictionary()
        )

    def __repr__(self) -> str:
        return f"AnthropicClient(model={self.default_model!r})"

    def complete(self, request: LLMRequest) -> LLMReply:
        started, call = time.perf_counter(), CallRecord()
        token = _call.set(call)
        try:
            raw = self._sync.messages.with_raw_response.create(**self._arguments(request))
            return _reply(raw.http_response.read(), call, time.perf_counter() - started)
        except Exception as error:
            raise _failure(error, call) from None
        finally:
            _call.reset(token)

    async def complete_async(self, request: LLMRequest) -> LLMReply:
        client = self._async_client()
        call = CallRecord()
        await self.concurrency.hold(call)
        started = time.perf_counter()
        token = _call.set(call)
        try:
            raw = await client.messages.with_raw_response.create(**self._arguments(request))
            return _reply(await raw.http_response.aread(), call, time.perf_counter() - started)
        except Exception as error:
            if isinstance(error, anthropic.APITimeoutError):
                self.concurrency.overloaded(call.ticket)
            raise _failure(error, call) from None
        finally:
            _call.reset(token)
            self.concurrency.give_up(call)

    def _async_client(self) -> anthropic.AsyncAnthropic:
        """One async SDK client per event loop (its connections belong to the loop that made it), with as many
        connections as calls may be in flight, closed when this client is dropped or the program ends."""
        loop = asyncio.get_running_loop()
        if loop not in self._async:
            pool = httpx2.Limits(max_connections=self.concurrency.ceiling, max_keepalive_connections=None)
            hooks = {"request": [self._before_attempt], "response": [self._after_attempt]}
            http = anthropic.DefaultAioHttpClient(limits=pool, event_hooks=hooks)
            self._async[loop] = anthropic.AsyncAnthropic(**self._options, http_client=http)
            aio.close_with(self, http)
        return self._async[loop]

    async def _before_attempt(self, request) -> None:
        """An attempt begins: a retry waits for a slot; an earlier attempt that got no answer timed out (or lost
        its connection)."""
        call = _call.get()
        if call is not None:
            if call.attempts > call.answers:
                self.concurrency.overloaded(call.ticket)
            await self.concurrency.hold(call)
        _count_attempt(request)

    async def _after_attempt(self, response) -> None:
        """An answer: a refusal or an overload cuts the concurrency and frees the call's slot while the SDK waits
        to retry; a success may grow it and carries the quota headers."""
        call = _call.get()
        if call is None:
            return
        call.answers += 1
        if response.status_code in OVERLOAD_STATUS:
            call.overloads += 1
            if response.status_code == REFUSED:
                self.concurrency.refused(call.ticket)
            else:
                self.concurrency.overloaded(call.ticket)
            self.concurrency.give_up(call)
        elif response.is_success:
            self.concurrency.succeeded(call.ticket, response.headers)

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


def _reply(body: bytes, call: CallRecord, latency_s: float) -> LLMReply:
    """The reply read from the message's JSON: its text blocks, model and usage. (The SDK's typed parse builds the
    whole Message with pydantic: 0.5 ms a call, a third of the call's CPU, for three fields.)"""
    message = json.loads(body)
    if not isinstance(message, dict) or message.get("type") != "message":
        raise TypeError(f"expected a message, got {str(message)[:80]!r}")
    text = "".join(block["text"] for block in message["content"] if block.get("type") == "text")
    input_tokens, output_tokens = message["usage"]["input_tokens"], message["usage"]["output_tokens"]
    if not (isinstance(input_tokens, int) and isinstance(output_tokens, int)):
        raise TypeError(f"a message without token counts: {str(message)[:80]!r}")
    return LLMReply(
        text=text,
        model=str(message["model"]),
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        latency_s=latency_s,
        metadata={"retries": max(call.attempts - 1, 0), "rate_limited": call.overloads, "in_flight": call.in_flight},
    )


def _failure(error: Exception, call: CallRecord) -> LLMError:
    """The SDK's error as an :class:`LLMError` (its message scrubbed of keys, its type named in ``cause``)."""
    retries = max(call.attempts - 1, 0)
    if isinstance(error, anthropic.AuthenticationError):
        message = f"Anthropic refused the key in {KEY_VARIABLE} (401): check it, or unset it to replay"
    elif isinstance(error, anthropic.APIStatusError):
        message = f"Anthropic API error {error.status_code} after {retries} retries: {error.message}"
    elif isinstance(error, anthropic.APITimeoutError):
        message = "the Anthropic API timed out on every attempt: retry later or raise timeout_s"
    elif isinstance(error, anthropic.APIConnectionError):
        message = "cannot reach the Anthropic API: check the network (or replay a recording)"
    else:
        message = f"the Anthropic API sent a reply the SDK could not read ({type(error).__name__})"
    return LLMError(message, cause=type(error).__name__, retries=retries, rate_limited=call.overloads)
