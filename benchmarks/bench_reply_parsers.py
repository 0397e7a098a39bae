"""How long the reply parsers take on the worst replies the tests know (tests/test_reply_parsers.py's adversarial
corpus: deep nesting, walls of braces, gigantic numbers, 50,000-character replies).

    .venv/bin/python benchmarks/bench_reply_parsers.py

Prints, for each parser (the three helpers, then every LLM policy's), the slowest reply's time (the median of
3 reads) and which reply it was. Target: a few milliseconds; well under 1 s on a loaded machine. The test itself
only fails on a stall.
"""

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from test_reply_parsers import ADVERSARIAL, helpers, llm_examples  # noqa: E402

from coordkit.llm.parsing import ReplyParseError  # noqa: E402

REPEATS = 3


def read_ms(parse, text: str) -> float:
    """The median time of ``REPEATS`` reads of ``text`` (ms)."""
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        try:
            parse(text)
        except ReplyParseError:
            pass
        times.append(1000 * (time.perf_counter() - start))
    return sorted(times)[REPEATS // 2]


def slowest(parse) -> tuple[float, str]:
    """The slowest reply of the corpus for ``parse``: its time (ms) and its first characters."""
    ms, text = max((read_ms(parse, text), text) for text in ADVERSARIAL)
    return ms, f"{text[:24]!r}… ({len(text):,} characters)"


if __name__ == "__main__":
    parsers = [(param.id, param.values[0]) for param in helpers()]
    parsers += [(param.id, lambda text, p=param.values: p[0](text, p[1])) for param in llm_examples()]
    for name, parse in parsers:
        ms, reply = slowest(parse)
        print(f"{name:48} {ms:8.2f} ms  (target: a few ms, < 1,000 ms)  slowest on {reply}")
