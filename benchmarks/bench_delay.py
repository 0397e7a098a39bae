"""Delay-dilemma timings against the delay issue's targets.

    .venv/bin/python benchmarks/bench_delay.py

Prints the median wall time of one Mesa trial (two simplified players, 60 s of play at 1 s ticks; target < 5 ms),
the whole Figure-4 grid on the vectorised fast path (p × α × 5 delays × 500 trials = 10,000 trials) and 20,000
trials (the issue's figure; 1,000 per cell; target < 2 s), and the fast path's speed-up over the Mesa model.
"""

from timing import median_ms

from coordkit.delay import DelayedDilemma
from coordkit.delay.experiments import figure4


def one_trial(delay: float, seed: int = 1) -> DelayedDilemma:
    return DelayedDilemma(delay_a=delay, p=0.9, alpha=0.1, rng=seed).run()


if __name__ == "__main__":
    for delay in (0, 20):
        one = 0.001 * median_ms(lambda k, delay=delay: one_trial(delay), 200)
        print(f"one Mesa trial, delay {delay:2d} s:          {1000 * one:6.2f} ms   (target < 5 ms)")
    grid = 0.001 * median_ms(lambda k: figure4(500), 5)
    print(f"Figure 4 grid, 10,000 trials (fast path): {grid:6.2f} s    (with the per-trial shares and payoffs)")
    double = 0.001 * median_ms(lambda k: figure4(1000), 3)
    print(f"Figure 4 grid, 20,000 trials (fast path): {double:6.2f} s    (target < 2 s)")
    mesa = 0.001 * median_ms(lambda k: [one_trial(10, seed=s) for s in range(200)], 1) / 200
    print(
        f"fast path vs Mesa model per trial:       {1000 * double / 20000:6.3f} ms vs {1000 * mesa:.2f} ms "
        f"({mesa / (double / 20000):,.0f}x)"
    )
