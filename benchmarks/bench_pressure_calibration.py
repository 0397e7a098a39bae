"""What the pressure-field calibration costs, and the explore panel's slowest trials (notebook 03, §7–8).

    .venv/bin/python benchmarks/bench_pressure_calibration.py

Prints the wall time of one evaluation of the fit (pressure-field's 330 trials of Table 2's design at the calibrated
``failure``; the fit plays about ten), checks its solve count against the cache (data/pressure_calibration.csv), and
the median time of one explore-panel trial with 32 agents (7×7, 14 empty cells, up to 100 ticks). The whole fit and
its predictions: ``python -m coordkit.pressure.calibration`` (about five minutes; ``--check`` compares with the cache).
"""

import time

from timing import median_ms

from coordkit.pressure import calibration
from coordkit.pressure.model import PressureField

if __name__ == "__main__":
    failure = calibration.calibrated_failure()
    start = time.perf_counter()
    played = calibration.target_trials(failure)
    seconds = time.perf_counter() - start
    cached = calibration.load_fit().query("fitted")["solved"].iloc[0]
    print(f"one evaluation (330 trials, failure {failure:.4f}): {seconds:5.1f} s")
    print(f"  solved {played['solved'].sum()}/330, the cache {cached}/330, the paper {calibration.target()[0]}/330")
    for strategy in ("pressure_field", "random"):
        panel = {"strategy": strategy, "n": 7, "empty": 14, "agent_count": 32}
        trial = median_ms(lambda k, p=panel: PressureField(**p, rng=k).run(), 10)
        print(f"explore panel, {strategy}, 32 agents, 14 empty: {trial:6.0f} ms a trial (median of 10 seeds)")
