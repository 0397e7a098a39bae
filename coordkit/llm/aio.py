"""Concurrent LLM calls from ordinary code: one round's calls at once, under a bound.

Models are synchronous Mesa code, and a notebook already runs an event loop, so ``asyncio.run`` cannot be
used in either place. :func:`run` hands a coroutine to one long-lived event loop on a background thread and
waits for it; async HTTP clients created on that loop stay valid from round to round.
"""

import asyncio
import threading
from collections.abc import Awaitable, Iterable, Sequence
from concurrent.futures import Future

from coordkit.llm.base import LLMClient, LLMReply, LLMRequest

DEFAULT_CONCURRENCY = 16

_loop: asyncio.AbstractEventLoop | None = None
_lock = threading.Lock()


def _background_loop() -> asyncio.AbstractEventLoop:
    global _loop
    with _lock:
        if _loop is None:
            _loop = asyncio.new_event_loop()
            threading.Thread(target=_loop.run_forever, name="coordkit-llm-loop", daemon=True).start()
        return _loop


def run[T](awaitable: Awaitable[T]) -> T:
    """Run a coroutine on the kit's background event loop and return its result (or raise its exception)."""
    loop = _background_loop()
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        raise RuntimeError("coordkit.llm.aio.run() was called from the loop it runs on; await the coroutine instead")
    future: Future[T] = asyncio.run_coroutine_threadsafe(_as_coroutine(awaitable), loop)
    return future.result()


async def _as_coroutine[T](awaitable: Awaitable[T]) -> T:
    return await awaitable


async def gather_bounded[T](awaitables: Iterable[Awaitable[T]], limit: int = DEFAULT_CONCURRENCY) -> list[T]:
    """Await all, at most ``limit`` at a time, results in order. Exceptions propagate after all have finished,
    so no call is left running (and unaccounted for) when one fails."""
    if limit < 1:
        raise ValueError(f"max_concurrency={limit}: allow at least 1 call at a time")
    gate = asyncio.Semaphore(limit)

    async def bounded(awaitable: Awaitable[T]) -> T:
        async with gate:
            return await awaitable

    results = await asyncio.gather(*(bounded(a) for a in awaitables), return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return results


def complete_all(
    client: LLMClient, requests: Sequence[LLMRequest], max_concurrency: int = DEFAULT_CONCURRENCY
) -> list[LLMReply]:
    """Answer many requests concurrently (at most ``max_concurrency`` in flight); replies in request order."""
    return run(gather_bounded((client.complete_async(r) for r in requests), max_concurrency))
