"""A client for OpenAI-compatible chat-completions endpoints: local servers such as Ollama, vLLM and LM Studio.

It speaks plain HTTP through ``httpx`` and retries like the ``anthropic`` SDK: on 408, 409, 429 and 5xx answers,
timeouts and lost connections, with exponential backoff and jitter, or after the wait the server asks for.
Concurrent calls go through aiohttp (``httpx-aiohttp``), whose pool keeps one connection per call in flight, as
many as the client's :class:`~coordkit.llm.throttle.Concurrency` allows; it adapts to the server's answers.
"""

import asyncio
import os
import random
import threading
import time
from weakref import WeakKeyDictionary

import httpx
import httpx_aiohttp

from coordkit.llm import aio
from coordkit.llm.base import LLMClient, LLMError, LLMReply, LLMRequest
from coordkit.llm.throttle import OVERLOAD_STATUS, REFUSED, CallRecord, Concurrency

INITIAL_RETRY_DELAY_S = 0.5  # doubled after every retry ...
MAX_RETRY_DELAY_S = 8.0  # ... up to this
MAX_RETRY_AFTER_S = 60.0  # the longest wait a server's retry-after header can ask for
RETRYABLE_STATUS = frozenset({408, 409, 429})  # and every 5xx
RETRYABLE_ERRORS = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)


class OpenAICompatibleClient(LLMClient):
    """Answers requests through ``POST {base_url}/chat/completions``.

    The API key, when the server needs one, is read from the environment variable ``api_key_env`` at every
    call and sent as a Bearer token; it is never stored, shown or put into an error. Local servers need none.
    ``max_concurrency``: the most concurrent calls in flight; None adapts to the server (:mod:`~coordkit.llm.throttle`).
    """

    def __init__(
        self,
        model: str,
        base_url: str = "http://localhost:11434/v1",
        *,
        api_key_env: str = "OPENAI_API_KEY",
        timeout_s: float = 60.0,
        max_retries: int = 3,
        max_concurrency: int | None = None,
    ):
        self.concurrency = Concurrency(max_concurrency)
        self.default_model = model
        self.base_url = base_url.rstrip("/")
        self.api_key_env = api_key_env
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self._client: httpx.Client | None = None
        self._clients_lock = threading.Lock()  # complete() may run on many threads, complete_async() on many loops
        self._async_clients: WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = WeakKeyDictionary()

    @property
    def endpoint(self) -> str:
        return f"{self.base_url}/chat/completions"

    def __repr__(self) -> str:
        return f"OpenAICompatibleClient(model={self.default_model!r}, base_url={self.base_url!r})"

    def complete(self, request: LLMRequest) -> LLMReply:
        client, call = self._sync_client(), CallRecord()
        started = time.perf_counter()
        while True:
            try:
                outcome = client.post(self.endpoint, json=self._payload(request), headers=self._headers())
            except httpx.TransportError as error:
                outcome = error
            result = self._settle(outcome, request, started, call)
            if isinstance(result, LLMReply):
                return result
            time.sleep(result)

    async def complete_async(self, request: LLMRequest) -> LLMReply:
        client, call = self._async_client(), CallRecord()
        await self.concurrency.hold(call)
        started = time.perf_counter()  # the call's latency counts from its slot, as the Anthropic client's does
        try:
            while True:
                await self.concurrency.hold(call)  # a retry after a refusal queues for a slot again
                try:
                    outcome = await client.post(self.endpoint, json=self._payload(request), headers=self._headers())
                except httpx.TransportError as error:
                    outcome = error
                result = self._settle(outcome, request, started, call)
                if isinstance(result, LLMReply):
                    return result
                await asyncio.sleep(result)
        finally:
            self.concurrency.give_up(call)

    def close(self) -> None:
        """Close the synchronous client's connections (a later call opens new ones)."""
        with self._clients_lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    async def aclose(self) -> None:
        """Close the running event loop's async client (close it before its loop ends, or its sockets leak)."""
        with self._clients_lock:
            client = self._async_clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.aclose()

    def _sync_client(self) -> httpx.Client:
        with self._clients_lock:
            if self._client is None:
                self._client = httpx.Client(timeout=self.timeout_s)
            return self._client

    def _async_client(self) -> httpx.AsyncClient:
        """One async client per event loop (connections cannot move between loops), with as many connections as
        calls may be in flight, closed when this client is dropped or the program ends."""
        loop = asyncio.get_running_loop()
        with self._clients_lock:
            for closed in [each for each in self._async_clients if each.is_closed()]:
                del self._async_clients[closed]  # its connections died with their loop
            if loop not in self._async_clients:
                pool = httpx.Limits(max_connections=self.concurrency.ceiling, max_keepalive_connections=None)
                client = httpx_aiohttp.HttpxAiohttpClient(timeout=self.timeout_s, limits=pool)
                self._async_clients[loop] = client
                aio.close_with(self, client)
            return self._async_clients[loop]

    def _payload(self, request: LLMRequest) -> dict:
        messages = [{"role": "system", "content": request.system}] if request.system else []
        messages += [{"role": role, "content": text} for role, text in request.messages]
        return {
            "model": request.model or self.default_model,
            "messages": messages,
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
        }

    def _headers(self) -> dict[str, str]:
        key = os.environ.get(self.api_key_env)
        return {"Authorization": f"Bearer {key}"} if key else {}

    def _settle(
        self,
        outcome: httpx.Response | httpx.TransportError,
        request: LLMRequest,
        started: float,
        call: CallRecord,
    ) -> LLMReply | float:
        """The reply, or how long to wait before retrying; raises :class:`LLMError` when there is nothing to retry.
        An async call's outcome also teaches the client's concurrency (an overload or timeout cuts it)."""
        cause = outcome if isinstance(outcome, httpx.TransportError) else None
        self._learn(outcome, call)
        attempt = call.attempts - 1
        if cause is not None:
            problem, retryable, headers = self._transport_problem(cause), isinstance(cause, RETRYABLE_ERRORS), {}
        elif outcome.is_success:
            return self._reply(outcome, request, call, started)
        elif outcome.status_code in RETRYABLE_STATUS or outcome.status_code >= 500:
            problem, retryable = f"answered HTTP {outcome.status_code}: {_error_message(outcome)}", True
            headers = outcome.headers
        else:
            problem, retryable, headers = f"rejected the request: {self._status_problem(outcome, request)}", False, {}
        if not retryable:
            raise self._error(problem, call, cause) from None
        if attempt >= self.max_retries:
            gave_up = f"{problem} (gave up after {attempt + 1} attempt{'s' if attempt else ''})"
            raise self._error(gave_up, call, cause) from None
        return _retry_delay(attempt, headers)

    def _learn(self, outcome: httpx.Response | httpx.TransportError, call: CallRecord) -> None:
        """Count the attempt, and tell the concurrency (for async calls) what the server answered."""
        call.attempts += 1
        status = outcome.status_code if isinstance(outcome, httpx.Response) else None
        call.answers += status is not None
        call.overloads += int(status in OVERLOAD_STATUS)
        if not call.ticket:
            return
        if status is not None and outcome.is_success:
            self.concurrency.succeeded(call.ticket, outcome.headers)
            return
        if status == REFUSED:
            self.concurrency.refused(call.ticket)
        elif status in OVERLOAD_STATUS or isinstance(outcome, httpx.TimeoutException):
            self.concurrency.overloaded(call.ticket)
        else:
            return  # another failure says nothing of the server's load
        self.concurrency.give_up(call)  # while it waits to retry

    def _reply(self, response: httpx.Response, request: LLMRequest, call: CallRecord, started: float) -> LLMReply:
        try:
            body = response.json()
        except ValueError:
            raise self._error(f"answered with a body that is not JSON: {response.text[:200]!r}", call) from None
        try:
            text = body["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            text = None
        if not isinstance(text, str):
            no_text = f"answered without text in choices[0].message.content: {response.text[:200]!r}"
            raise self._error(no_text, call)
        usage = body.get("usage") or {}
        return LLMReply(
            text=text,
            model=body.get("model") or request.model or self.default_model,
            input_tokens=usage.get("prompt_tokens") or 0,
            output_tokens=usage.get("completion_tokens") or 0,
            latency_s=time.perf_counter() - started,
            metadata={"retries": call.attempts - 1, "rate_limited": call.overloads, "in_flight": call.in_flight},
        )

    def _transport_problem(self, error: httpx.TransportError) -> str:
        if isinstance(error, httpx.TimeoutException):
            return f"did not answer within {self.timeout_s} s ({type(error).__name__}); is the model still loading?"
        if isinstance(error, httpx.ConnectError):
            return (
                f"could not be reached ({error}): is the server running? Start Ollama with `ollama serve`, "
                "or check base_url"
            )
        return f"failed: {type(error).__name__}: {error}"

    def _status_problem(self, response: httpx.Response, request: LLMRequest) -> str:
        problem = f"HTTP {response.status_code}: {_error_message(response)}"
        if response.status_code in (401, 403):
            return f"{problem}; put a valid API key in the environment variable {self.api_key_env}"
        if response.status_code == 404:
            model = request.model or self.default_model
            return f"{problem}; check that base_url ends in /v1 and that the server has model {model!r}"
        return problem

    def _error(self, problem: str, call: CallRecord, cause: Exception | None = None) -> LLMError:
        """An error naming the endpoint, with the API key (should a server echo it) masked, carrying the call's
        retries and rate-limit answers; ``cause`` (a transport error) is named, not chained."""
        message = f"{self.endpoint} {problem}"
        key = os.environ.get(self.api_key_env)
        message = message.replace(key, "***") if key else message
        cause_name = type(cause).__name__ if cause else ""
        return LLMError(message, cause=cause_name, retries=call.attempts - 1, rate_limited=call.overloads)


def _error_message(response: httpx.Response) -> str:
    """The server's own explanation: OpenAI's error.message when the body has one, else the start of the body."""
    try:
        error = response.json()["error"]
        return str(error["message"] if isinstance(error, dict) else error)
    except (ValueError, KeyError, TypeError):
        return response.text[:200] or response.reason_phrase


def _retry_delay(attempt: int, headers) -> float:
    """Seconds to wait before retry ``attempt + 1``: what the server asks for, else backoff with jitter."""
    for name, unit_s in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            asked = float(headers[name]) * unit_s
        except (KeyError, ValueError):
            continue
        if asked > 0:
            return min(asked, MAX_RETRY_AFTER_S)
    return min(INITIAL_RETRY_DELAY_S * 2**attempt, MAX_RETRY_DELAY_S) * (1 - 0.25 * random.random())
