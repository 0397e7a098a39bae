"""Concurrent LLM calls from ordinary code: one round's calls at once.

Models are synchronous Mesa code, and a notebook already runs an event loop, so ``asyncio.run`` cannot be
used in either place. :func:`run` hands a coroutine to one long-lived event loop on a background thread and
waits for it; async HTTP clients created on that loop stay valid, with their open connections, from round to
round. How many calls are in flight at once is each client's own business (its
:class:`~coordkit.llm.throttle.Concurrency`); a caller may cap it further.
"""

import asyncio
import contextlib
import threading
import weakref
from collections.abc import Awaitable, Iterable, Sequence
from concurrent.futures import Future

from coordkit.llm.base import LLMClient, LLMReply, LLMRequest

CLOSE_TIMEOUT_S = 2.0

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


def close_with(owner: object, http_client) -> None:
    """Close an async HTTP client made on the running loop when ``owner`` is garbage-collected or the program
    ends, on that loop (an aiohttp session left open warns on the notebook's stderr)."""
    weakref.finalize(owner, _close_on, asyncio.get_running_loop(), http_client)


def _close_on(loop: asyncio.AbstractEventLoop, http_client) -> None:
    if loop.is_closed() or not loop.is_running():
        return
    future = asyncio.run_coroutine_threadsafe(http_client.aclose(), loop)
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is not loop:  # on the loop itself the close runs as soon as the current task yields
        with contextlib.suppress(Exception):  # best effort: a connection that will not close is the OS's to end
            future.result(CLOSE_TIMEOUT_S)


async def gather_bounded[T](awaitables: Iterable[Awaitable[T]], limit: int | None = None) -> list[T]:
    """Await all, at most ``limit`` at a time (None: no bound of the caller's own), results in order.
    Exceptions propagate after all have finished, so no call is left running (and unaccounted for) when one
    fails."""
    if limit is not None and limit < 1:
        raise ValueError(f"max_concurrency={limit}: allow at least 1 call at a time, or None for the client's own")
    gate = asyncio.Semaphore(limit) if limit is not None else None

    async def bounded(awaitable: Awaitable[T]) -> T:
        if gate is None:
            return await awaitable
        async with gate:
            return await awaitable

    results = await asyncio.gather(*(bounded(a) for a in awaitables), return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return results


def complete_all(
    client: LLMClient, requests: Sequence[LLMRequest], max_concurrency: int | None = None
) -> list[LLMReply]:
    """Answer many requests concurrently, replies in request order: as many in flight as the client allows
    (see :mod:`coordkit.llm.throttle`), and at most ``max_concurrency`` when given."""
    return run(gather_bounded((client.complete_async(r) for r in requests), max_concurrency))
