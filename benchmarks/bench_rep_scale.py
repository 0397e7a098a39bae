"""REP beyond the Beer Game: timings against the Fishbanks/movies/scale issue's targets.

    .venv/bin/python benchmarks/bench_rep_scale.py

1. One default Fishbanks game, played and summarised (target < 20 ms).
2. One default 20-agent movie-scheduling run, played and framed (target < 20 ms).
3. 10,000 agents x 20 rounds on the movie fast path, network drawn included (target < 5 s): REP numerical and
   A2A on the default 30%-sparse small world under the §7 reading, and REP numerical on the complete graph with
   30% of its edges deleted (35 million edges) under each reading.
4. One 200-agent round of LLM agents through the real anthropic SDK against the local fake server at 200 ms
   per call, 64 calls in flight at most, three times (target <= 1.5 s), and where its wall clock goes (the
   paper: inference 38%, waiting 59%, communication 3%).
"""

import time

from timing import median_ms

from coordkit.rep.fishbanks.model import Fishbanks
from coordkit.rep.movies import fast
from coordkit.rep.movies.model import MovieScheduling
from coordkit.rep.movies.profiling import round_profile

LARGE = 10_000


def fishbanks() -> None:
    game = median_ms(lambda k: Fishbanks(rng=k).run().summary(), repeats=50)
    print(f"one Fishbanks game (12 companies, 8 seasons), run + summary: {game:6.1f} ms  (target < 20 ms)")


def movies() -> None:
    run = median_ms(lambda k: MovieScheduling(rng=k).run().frame(), repeats=50)
    print(f"one movie run (20 agents, 20 rounds), run + frame:          {run:6.1f} ms  (target < 20 ms)")


def fast_path() -> None:
    for label, params in (
        ("REP numerical, 30% sparse small world, §7", {}),
        ("A2A, 30% sparse small world, §7", {"protocol": "a2a"}),
        ("REP numerical, complete graph 30% sparse, Table 2", {"network": "complete", "reading": "table2"}),
        ("REP numerical, complete graph 30% sparse, §7", {"network": "complete"}),
    ):
        start = time.perf_counter()
        rounds = fast.simulate(0, population=LARGE, rounds=20, **params)
        seconds = time.perf_counter() - start
        print(
            f"fast path, {LARGE:,} agents x 20 rounds, {label}: {seconds:5.2f} s  (target < 5 s; "
            f"final consensus {rounds['consensus'].iloc[-1]:.0%})"
        )


def llm_round(repeats: int = 3) -> None:
    profiles = sorted((round_profile(agents=200, latency_s=0.2) for _ in range(repeats)), key=lambda p: p.round_s)
    profile = profiles[len(profiles) // 2]
    spread = ", ".join(f"{p.round_s:.2f}" for p in profiles)
    print(
        f"one 200-agent LLM round at 200 ms a call, {profile.calls} calls, at most {profile.max_concurrency} in "
        f"flight: median of {repeats} {profile.round_s:.2f} s ({spread})  (target <= 1.5 s)"
    )
    print(profile.compare_with_paper().to_string(index=False))


if __name__ == "__main__":
    fishbanks()
    movies()
    fast_path()
    llm_round()
