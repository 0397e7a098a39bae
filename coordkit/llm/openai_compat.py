"""A client for OpenAI-compatible chat-completions endpoints: local servers such as Ollama, vLLM and LM Studio.

It speaks plain HTTP through ``httpx``, with the kit's own attempts (:mod:`coordkit.llm.attempts`), as the
Anthropic client does: retries on 408, 409, 429 and 5xx answers, timeouts and lost connections, one deadline per
attempt, waits bounded by ``max_wait_s``. Calls go through aiohttp (``httpx-aiohttp``), whose pool keeps one
connection per call in flight, as many as the client's :class:`~coordkit.llm.throttle.Concurrency` allows; it
adapts to the server's answers. A synchronous :meth:`~OpenAICompatibleClient.complete` runs the same attempts on
the kit's background event loop.
"""

import asyncio
import json
import os
import threading
from weakref import WeakKeyDictionary

import aiohttp
import httpx
import httpx_aiohttp

from coordkit.llm import aio
from coordkit.llm.attempts import MAX_WAIT_S, Answer, AttemptFailed, CallPolicy, Exchange
from coordkit.llm.base import LLMClient, LLMError, LLMReply, LLMRequest, scrub, token_count
from coordkit.llm.throttle import Concurrency


class OpenAICompatibleClient(LLMClient, Exchange):
    """Answers requests through ``POST {base_url}/chat/completions``.

    The API key, when the server needs one, is read from the environment variable ``api_key_env`` at every
    call and sent as a Bearer token; it is never stored, shown or put into an error. Local servers need none.
    ``timeout_s`` bounds one attempt, headers and body; ``max_wait_s`` any wait the server asks for;
    ``max_concurrency`` the calls in flight (None adapts to the server: :mod:`~coordkit.llm.throttle`).
    """

    def __init__(
        self,
        model: str,
        base_url: str = "http://localhost:11434/v1",
        *,
        api_key_env: str = "OPENAI_API_KEY",
        timeout_s: float = 60.0,
        max_retries: int = 3,
        max_wait_s: float = MAX_WAIT_S,
        max_concurrency: int | None = None,
    ):
        self.concurrency = Concurrency(max_concurrency)
        self.calls = CallPolicy(
            self, self.concurrency, timeout_s=timeout_s, max_retries=max_retries, max_wait_s=max_wait_s
        )
        self.default_model = model
        self.base_url = base_url.rstrip("/")
        self.api_key_env = api_key_env
        self._clients_lock = threading.Lock()  # complete_async() may run on many loops
        self._async_clients: WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = WeakKeyDictionary()

    @property
    def endpoint(self) -> str:
        return f"{self.base_url}/chat/completions"

    @property
    def provider(self) -> str:
        return self.endpoint

    def __repr__(self) -> str:
        return f"OpenAICompatibleClient(model={self.default_model!r}, base_url={self.base_url!r})"

    def complete(self, request: LLMRequest) -> LLMReply:
        return aio.run(self.calls.call(request))

    async def complete_async(self, request: LLMRequest) -> LLMReply:
        return await self.calls.call(request)

    def close(self) -> None:
        """Close the connections of synchronous calls (a later call opens new ones)."""
        aio.run(self.aclose())

    async def aclose(self) -> None:
        """Close the running event loop's async client (close it before its loop ends, or its sockets leak)."""
        with self._clients_lock:
            client = self._async_clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.aclose()

    async def send(self, request: LLMRequest, retry: int) -> Answer:
        """One attempt: the whole answer, or :class:`AttemptFailed` when none came."""
        try:
            response = await self._async_client().post(
                self.endpoint, json=self._payload(request), headers=self._headers()
            )
        except httpx.TransportError as error:
            raise _attempt_failed(error, self.calls.timeout_s) from None
        return Answer(response.status_code, response.headers, response.content)

    def read(self, answer: Answer, request: LLMRequest) -> LLMReply:
        try:
            body = json.loads(answer.body)
        except ValueError:
            raise LLMError(f"answered with a body that is not JSON: {answer.body[:200]!r}", cause="OddReply") from None
        except RecursionError:
            raise LLMError(f"answered with JSON nested too deeply: {answer.body[:80]!r}", cause="OddReply") from None
        try:
            text = body["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            text = None
        if not isinstance(text, str):
            no_text = f"answered without text in choices[0].message.content: {answer.body[:200]!r}"
            raise LLMError(no_text, cause="OddReply")
        usage, model = body.get("usage"), body.get("model")
        if usage is None:
            usage = {}  # a local server may count nothing
        if not isinstance(usage, dict):
            raise LLMError(f"answered with usage {str(usage)[:60]!r}, not an object of token counts", cause="OddUsage")
        return LLMReply(
            text=text,
            model=model if isinstance(model, str) and model else request.model or self.default_model,
            input_tokens=token_count(usage.get("prompt_tokens", 0), "usage.prompt_tokens"),
            output_tokens=token_count(usage.get("completion_tokens", 0), "usage.completion_tokens"),
        )

    def rejected(self, answer: Answer, request: LLMRequest) -> str:
        problem = super().rejected(answer, request)
        if answer.status in (401, 403):
            return f"{problem}; put a valid API key in the environment variable {self.api_key_env}"
        if answer.status == 404:
            model = request.model or self.default_model
            return f"{problem}; check that base_url ends in /v1 and that the server has model {model!r}"
        return problem

    def mask(self, text: str) -> str:
        return scrub(text, self.api_key_env)

    def _async_client(self) -> httpx.AsyncClient:
        """One async client per event loop (connections cannot move between loops), with as many connections as
        calls may be in flight, closed when this client is dropped or the program ends."""
        loop = asyncio.get_running_loop()
        with self._clients_lock:
            for closed in [each for each in self._async_clients if each.is_closed()]:
                del self._async_clients[closed]  # its connections died with their loop
            if loop not in self._async_clients:
                pool = httpx.Limits(max_connections=self.concurrency.ceiling, max_keepalive_connections=None)
                client = httpx_aiohttp.HttpxAiohttpClient(timeout=self.calls.timeout_s, limits=pool)
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


def _attempt_failed(error: httpx.TransportError, timeout_s: float) -> AttemptFailed:
    """What an attempt that got no answer says. (httpx-aiohttp reports a refused connection as ConnectTimeout: it
    tests aiohttp's base class of connection errors before the connector's; the cause tells them apart.)"""
    cause = type(error).__name__
    if isinstance(error, httpx.ConnectError) or isinstance(error.__cause__, aiohttp.ClientConnectorError):
        hint = "is the server running? Start Ollama with `ollama serve`, or check base_url"
        problem = f"could not be reached ({error}): {hint}"
        return AttemptFailed(problem, timed_out=False, cause="ConnectError")
    if isinstance(error, httpx.TimeoutException):
        problem = f"did not answer within {timeout_s:g} s ({cause}); is the model still loading?"
        return AttemptFailed(problem, timed_out=True, cause=cause)
    return AttemptFailed(f"failed: {cause}: {error}", timed_out=False, cause=cause)
