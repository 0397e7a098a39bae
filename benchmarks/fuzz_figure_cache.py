"""Issue 43's byte-flip fuzz of the figure cache: does a damaged cached figure ever load as other data?

    .venv/bin/python benchmarks/fuzz_figure_cache.py                      # 1,500 changes to delay-fig4's file
    .venv/bin/python benchmarks/fuzz_figure_cache.py rep-beer-fig1 --seeds 1 --changes 300

Computes the figure once into an empty cache (in a temporary folder), then, change by change, puts the kept file
back with one byte replaced (a seeded position, and a seeded other value) and asks the cache for the figure again.
Each answer is one of: the exact frame that was kept, read from the file (an exact hit); the frame computed again
(a miss); a frame that differs from the one kept, returned as if it were the figure (a different result); an
exception (a traceback); or the death of the process (a crash) or no answer within a minute (a hang). A cache that
never lies gives 0 different results, 0 tracebacks, 0 crashes. The reads run in a worker process, restarted after
a crash; the figure's compute is replaced by one that counts its calls and returns the kept frame, so that a miss
costs no play. The worker reads with the fingerprint in the kept file's name, so that an edit to the kit during the
run does not turn every read into a miss; each worker first reads the undamaged file, which must be an exact hit.
"""

import argparse
import json
import os
import random
import select
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

MEMORY_LIMIT = 4 << 30  # bytes of address space: a damaged length field must fail here, not swamp a shared machine
HANG_S = 60


def same(a, b) -> bool:
    """Whether two frames are the same data: values, dtypes, column and index types, and each cell's type."""
    import pandas as pd

    try:
        pd.testing.assert_frame_equal(a, b, check_exact=True, check_column_type=True, check_index_type=True)
        return all(list(map(type, a[c])) == list(map(type, b[c])) for c in a.columns if a[c].dtype == object)
    except Exception:  # a damaged frame may fail even to compare, or be no frame at all: it is not the kept one
        return False


def outcome(figure_cache, figure, seeds: int, kept, calls: list) -> str:
    """What one read of the cache gave: "exact hit", "miss", "different result" or "traceback (Error)"."""
    before = len(calls)
    try:
        data = figure_cache.computed(figure, seeds, 0)
    except Exception as error:  # what the fuzz counts, never hides
        return f"traceback ({type(error).__name__})"
    if len(calls) > before:
        return "miss"
    return "exact hit" if same(data, kept) else "different result"


def worker(work: Path, start: int) -> None:
    """Play the changes from ``start`` on, one answer a line on stdout."""
    import dataclasses

    import pandas as pd

    from coordkit import figure_cache, figures

    resource_limit()
    plan = json.loads((work / "plan.json").read_text())
    kept, original = pd.read_pickle(work / "kept.pickle"), (work / "original").read_bytes()  # this script's own files
    code = plan["name"].split("--")[-1].split(".")[0]
    figure_cache.fingerprint = lambda: code
    calls = []

    def compute(seeds, base_seed, **keywords):
        calls.append(seeds)
        return kept.copy(deep=True)

    figure = dataclasses.replace(figures.get(plan["figure"]), compute=compute)
    folder = figure_cache.folder()

    def read(content: bytes) -> str:
        for entry in folder.iterdir():
            entry.unlink()
        path = folder / plan["name"]
        path.write_bytes(content)
        path.chmod(0o600)
        return outcome(figure_cache, figure, plan["seeds"], kept, calls)

    control = read(original)
    if control != "exact hit":
        raise SystemExit(f"the undamaged file gave {control!r}, not an exact hit: the fuzz cannot count")
    for position, flip in plan["changes"][start:]:
        damaged = bytearray(original)
        damaged[position] ^= flip
        print(read(bytes(damaged)), flush=True)


def resource_limit() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def prepare(work: Path, figure_id: str, seeds: int, changes: int, seed: int) -> None:
    """Keep the figure in the cache, and write the plan: the file's name and the seeded changes."""
    from coordkit import figure_cache, figures

    figure = figures.get(figure_id)
    kept = figure_cache.computed(figure, seeds, 0)
    (path,) = [p for p in figure_cache.folder().iterdir() if p.name.startswith(f"{figure_id}--")]
    original = path.read_bytes()
    kept.to_pickle(work / "kept.pickle")
    (work / "original").write_bytes(original)
    rng = random.Random(seed)
    plan = [(rng.randrange(len(original)), rng.randrange(1, 256)) for _ in range(changes)]
    (work / "plan.json").write_text(
        json.dumps({"figure": figure_id, "seeds": seeds, "name": path.name, "changes": plan})
    )
    print(f"{figure_id} at {seeds} seed(s): the kept file {path.name}, {len(original):,} bytes; {changes:,} changes")


def play(work: Path, changes: int) -> Counter:
    """Every change's answer, from workers restarted after each crash or hang."""
    counts = Counter()
    while (done := sum(counts.values())) < changes:
        command = [sys.executable, __file__, "--worker", str(work), "--start", str(done)]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        while sum(counts.values()) < changes:
            ready, _, _ = select.select([process.stdout], [], [], HANG_S)
            line = process.stdout.readline() if ready else None
            if not line:
                break
            counts[line.strip()] += 1
        if sum(counts.values()) < changes:
            process.kill()
            status = process.wait()
            counts["hang" if line is None else f"crash (exit {status})"] += 1
        process.wait()
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("figure", nargs="?", default="delay-fig4", help="a figure id (default: delay-fig4)")
    parser.add_argument("--seeds", type=int, default=2, help="the figure's seeds (default: 2)")
    parser.add_argument("--changes", type=int, default=1500, help="single-byte changes (default: 1,500)")
    parser.add_argument("--seed", type=int, default=43, help="seed of the positions and values (default: 43)")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--start", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        os.environ["COORDKIT_CACHE"] = str(args.worker / "cache")
        return worker(args.worker, args.start)
    with tempfile.TemporaryDirectory(prefix="coordkit-fuzz-") as work:
        os.environ["COORDKIT_CACHE"] = str(Path(work) / "cache")
        prepare(Path(work), args.figure, args.seeds, args.changes, args.seed)
        counts = play(Path(work), args.changes)
    for name in ("different result", "exact hit", "miss"):
        print(f"{name:<28} {counts.pop(name, 0):>6,}")
    failures = {name: counts.pop(name) for name in list(counts) if name.startswith(("crash", "hang"))}
    print(f"{'traceback':<28} {sum(counts.values()):>6,}")
    for name, count in counts.most_common():
        print(f"  {name:<26} {count:>6,}")
    print(f"{'crash or hang':<28} {sum(failures.values()):>6,}")
    for name, count in failures.items():
        print(f"  {name:<26} {count:>6,}")


if __name__ == "__main__":
    main()
