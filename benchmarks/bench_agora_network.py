"""Notebook 06's slow cells, timed (issue 48): the network figure, the early-thresholds sweep and the panel's Run.

    .venv/bin/python benchmarks/bench_agora_network.py [--repeats 3] [--before DIR] [--only NAME ...]

Each measurement runs in a fresh interpreter (imports not counted), as the notebook's cell calls it:

- ``network``: ``experiments.network(3)``, cell 58 (three seeds, both arms, on the default engine);
- ``early``: the sweep of cell 62, ``AgoraNetwork`` at ``check_after=1, negotiate_after=2`` over those seeds;
- ``panel``: the network panel's Run at its defaults, ``play_network(0)``, both arms of seed 0 (target: 3 s).

``--before DIR`` times the same calls on another checkout of the kit too (``git worktree add DIR COMMIT``, or
``git archive COMMIT | tar -x -C DIR``), interleaved with this one's, repeat by repeat, so that both meet the same
load; the medians are printed side by side, with the load average before and after. Beside each wall time, the
CPU seconds the kit's own process spent (the routines' sandbox processes not included): on a busy machine the wall
time mostly measures the load (each routine call waits to be scheduled twice), the CPU time far less.
"""

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
CALLS = {
    "network": "from coordkit.agora import experiments\nrun = lambda: experiments.network(3)",
    "early": (
        "from coordkit import sweep\nfrom coordkit.agora import AgoraNetwork\n"
        "run = lambda: sweep(AgoraNetwork, None, [0, 1, 2], fixed={'check_after': 1, 'negotiate_after': 2}, "
        "frame=True, progress=False)"
    ),
    "panel": "from coordkit.agora.panels import play_network\nrun = lambda: play_network(0)",
}
TIMER = """
import time
{setup}
start, cpu = time.perf_counter(), time.process_time()
run()
print(time.perf_counter() - start, time.process_time() - cpu)
"""


def seconds(tree: Path, name: str) -> tuple[float, float]:
    """One timing of ``name`` with the kit at ``tree``, in a fresh interpreter: wall and CPU seconds."""
    environment = {**os.environ, "PYTHONPATH": str(tree)}
    script = TIMER.format(setup=CALLS[name])
    done = subprocess.run(
        [sys.executable, "-c", script], env=environment, cwd=tree, capture_output=True, text=True, check=True
    )
    wall, cpu = done.stdout.split()[-2:]
    return float(wall), float(cpu)


def load() -> str:
    return " ".join(f"{figure:.2f}" for figure in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="timings of each call on each checkout (default 3)")
    parser.add_argument("--before", type=Path, help="another checkout of the kit, timed interleaved with this one")
    parser.add_argument("--only", nargs="+", choices=list(CALLS), default=list(CALLS), help="the calls to time")
    args = parser.parse_args()
    trees = {"this": HERE} | ({"before": args.before.resolve()} if args.before else {})
    print(f"load average (1, 5, 15 min) before: {load()}; {os.cpu_count()} cores")
    times = {(name, label): [] for name in args.only for label in trees}
    for _ in range(args.repeats):
        for name in args.only:
            for label, tree in reversed(trees.items()):
                times[name, label].append(seconds(tree, name))
    print(f"load average (1, 5, 15 min) after:  {load()}")
    for name in args.only:
        row = "   ".join(
            f"{label}: median {statistics.median(wall for wall, _ in times[name, label]):6.2f} s "
            f"({', '.join(f'{wall:.2f}' for wall, _ in times[name, label])}), "
            f"CPU {statistics.median(cpu for _, cpu in times[name, label]):5.2f} s"
            for label in trees
        )
        print(f"{name:8} {row}")


if __name__ == "__main__":
    main()
