"""Claude through the official ``anthropic`` SDK, synchronous and asynchronous.

The key comes only from ``ANTHROPIC_API_KEY``. The model is the argument, else ``COORDKIT_MODEL``, else
:data:`DEFAULT_MODEL` (a current Claude Haiku). Rate limits, overloads, server errors, timeouts and dropped
connections are retried by the SDK itself (exponential backoff with jitter, honouring ``retry-after``);
what still fails is raised as :class:`LLMError`, so a policy falls back. The SDK reports retries only for a call
that succeeds, so the client counts every HTTP attempt itself (an httpx request hook): a failed call's retries
reach the ledger too.

Sampling temperature: the REP paper ran Claude-3-Haiku at temperature 0.1, but the Messages API deprecated
``temperature`` for models from Claude Opus 4.7 on (they answer 400), and SDK 2.x dropped the argument. The
request keeps its temperature (recordings fingerprint it); it is sent, through ``extra_body``, only to models
older than 4.7 that still accept it (:func:`accepts_temperature`).
"""

import asyncio
import os
import re
import time
import weakref
from contextvars import ContextVar

import anthropic

from coordkit.llm.base import LLMClient, LLMError, LLMReply, LLMRequest

DEFAULT_MODEL = "claude-haiku-5-5"
MODEL_VARIABLE = "COORDKIT_MODEL"
KEY_VARIABLE = "ANTHROPIC_API_KEY"

_attempts: ContextVar[list[int] | None] = ContextVar("anthropic_attempts", default=None)


def _count_attempt(request) -> None:
    """An httpx request hook: one more HTTP attempt for the call running in this thread or task."""
    tally = _attempts.get()
    if tally is not None:
        tally[0] += 1


async def _count_attempt_async(request) -> None:
    _count_attempt(request)


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
    """

    def __init__(
        self, model: str | None = None, *, base_url: str | None = None, max_retries: int = 4, timeout_s: float = 60.0
    ):
        if not has_key():
            raise LLMError(
                f"{KEY_VARIABLE} is not set: export your Anthropic key in the shell that starts Jupyter "
                "(or replay a recording instead, with coordkit.llm.ReplayClient)"
            )
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
        started, tally = time.perf_counter(), [0]
        token = _attempts.set(tally)
        try:
            raw = self._sync.messages.with_raw_response.create(**self._arguments(request))
            return _reply(raw.parse(), raw.retries_taken, time.perf_counter() - started)
        except Exception as error:
            raise _failure(error, retries=max(tally[0] - 1, 0)) from None
        finally:
            _attempts.reset(token)

    async def complete_async(self, request: LLMRequest) -> LLMReply:
        started, tally = time.perf_counter(), [0]
        token = _attempts.set(tally)
        try:
            raw = await self._async_client().messages.with_raw_response.create(**self._arguments(request))
            return _reply(await raw.parse(), raw.retries_taken, time.perf_counter() - started)
        except Exception as error:
            raise _failure(error, retries=max(tally[0] - 1, 0)) from None
        finally:
            _attempts.reset(token)

    def _async_client(self) -> anthropic.AsyncAnthropic:
        """One async SDK client per event loop: its connection pool belongs to the loop that made it."""
        loop = asyncio.get_running_loop()
        if loop not in self._async:
            hooks = {"request": [_count_attempt_async]}
            self._async[loop] = anthropic.AsyncAnthropic(
                **self._options, http_client=anthropic.DefaultAsyncHttpxClient(event_hooks=hooks)
            )
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


def _reply(message, retries: int, latency_s: float) -> LLMReply:
    if not isinstance(message, anthropic.types.Message):  # a non-JSON body comes back as a bare string
        raise TypeError(f"expected a Message, got {type(message).__name__}")
    text = "".join(block.text for block in message.content if getattr(block, "type", "") == "text")
    return LLMReply(
        text=text,
        model=message.model,
        input_tokens=message.usage.input_tokens,
        output_tokens=message.usage.output_tokens,
        latency_s=latency_s,
        metadata={"retries": retries},
    )


def _failure(error: Exception, retries: int) -> LLMError:
    """The SDK's error as an :class:`LLMError` (its message scrubbed of keys, its type named in ``cause``)."""
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
    return LLMError(message, cause=type(error).__name__, retries=retries)
