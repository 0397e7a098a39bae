"""The one timing helper the benchmark scripts share."""

import statistics
import time
from collections.abc import Callable


def median_ms(action: Callable[[int], object], repeats: int) -> float:
    """Median wall time of ``action(k)`` for k = 0 .. repeats − 1, in milliseconds."""
    times = []
    for k in range(repeats):
        start = time.perf_counter()
        action(k)
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)
