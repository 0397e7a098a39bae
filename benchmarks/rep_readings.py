"""The figures of docs/rep-readings.md, measured: movie scheduling per reading, regime and population, and
Fishbanks per protocol.

    .venv/bin/python benchmarks/rep_readings.py [--seeds 100] [--thresholds]

Movie scheduling: rule-based agents on the fast path (the Mesa model's rounds, checked equal by
tests/test_movies.py). Prints, per configuration and regime: the mean final consensus, the median convergence
round (from round 1), the share of runs that never converge, the share already at 70% in round 0, and the agents'
mean spread around the group's proposal (under the thresholds reading also the median round to 90% consensus and
the spread after 5 rounds); ``--thresholds`` prints the thresholds reading's tables alone. Fishbanks: 20 default
games per protocol (seeds 0-19): the final population, the seasons above 0.35, the season of collapse, the
industry's boats by season, how many companies sit at one boat, and the gains of REP textual over A2A.
"""

import argparse

import pandas as pd

from coordkit.rep.fishbanks import metrics
from coordkit.rep.fishbanks.model import PROTOCOLS, Fishbanks
from coordkit.rep.movies import fast
from coordkit.rep.movies.experiments import REGIMES, SCALING_SPARSITY
from coordkit.rep.movies.model import MovieScheduling, outcome
from coordkit.seeds import derive_seeds

CONFIGURATIONS = {
    "REP numerical, §7 reading": {"protocol": "rep_numerical"},
    "REP numerical, §7 reading, consensus off (the organiser's)": {"protocol": "rep_numerical", "consensus": None},
    "A2A, §7 reading": {"protocol": "a2a"},
    "REP numerical, Table 2 reading": {"protocol": "rep_numerical", "reading": "table2"},
    "A2A, Table 2 reading": {"protocol": "a2a", "reading": "table2"},
}
THRESHOLDS = {
    "REP numerical, thresholds reading": {"protocol": "rep_numerical", "reading": "thresholds"},
    "A2A, thresholds reading": {"protocol": "a2a", "reading": "thresholds"},
}
SIZES = (5, 10, 20, 50, 100, 200)
ATTENTION = (1, 2, 4, 8, 19)


def runs(seeds: int, by: str, values: dict, play=fast.simulate, **params) -> pd.DataFrame:
    rows = []
    for label, extra in values.items():
        for seed in derive_seeds(0, seeds):
            rounds = play(seed, **params, **extra)
            rows.append(
                {
                    by: label,
                    "spread": rounds["spread"].iloc[-1],
                    "spread_5": rounds["spread"].iloc[min(5, len(rounds) - 1)],
                    "round_90": outcome(rounds["consensus"], 0.9)["convergence_round"],
                    **outcome(rounds["consensus"], 0.7),
                }
            )
    return pd.DataFrame(rows)


def mesa_frame(seed: int, **params) -> pd.DataFrame:
    return MovieScheduling(**params, rng=seed).run().frame()


def table(frame: pd.DataFrame, by: str, thresholds: bool = False) -> pd.DataFrame:
    groups = frame.groupby(by, sort=False)
    columns = {
        "final consensus": groups["final_consensus"].mean().map("{:.0%}".format),
        "median round": groups["convergence_round"].median(),
        "never converge": (1 - groups["converged"].mean()).map("{:.0%}".format),
        "at 70% in round 0": groups["opening_converged"].mean().map("{:.0%}".format),
        "spread": groups["spread"].mean().map("{:.2f}".format),
    }
    if thresholds:
        columns["median round to 90%"] = groups["round_90"].apply(lambda r: r.fillna(float("inf")).median())
        columns["spread after 5 rounds"] = groups["spread_5"].mean().map("{:.2f}".format)
    return pd.DataFrame(columns)


def thresholds_reading(seeds: int) -> None:
    """The thresholds reading's tables (docs/rep-readings.md, its predictions)."""
    for label, params in THRESHOLDS.items():
        print(f"\n{label}, 20 agents, {seeds} seeds")
        print(table(runs(seeds, "regime", REGIMES, **params), "regime", thresholds=True))
    textual = runs(seeds // 5, "regime", REGIMES, play=mesa_frame, protocol="rep_textual", reading="thresholds")
    print(f"\nREP textual, thresholds reading, 20 agents, {seeds // 5} seeds (the Mesa model)")
    print(table(textual, "regime", thresholds=True))
    sizes = {size: {"population": size, "sparsity": SCALING_SPARSITY} for size in SIZES}
    for protocol in ("rep_numerical", "a2a"):
        print(f"\n{protocol}, thresholds reading, {SCALING_SPARSITY:.0%} sparse small world, {seeds // 2} seeds a size")
        print(table(runs(seeds // 2, "agents", sizes, protocol=protocol, reading="thresholds"), "agents", True))


def fishbanks(games: int = 20) -> None:
    frames = {p: [Fishbanks(protocol=p, rng=seed).run().frame() for seed in range(games)] for p in PROTOCOLS}
    rows = []
    for protocol, frames_of in frames.items():
        for seed, frame in enumerate(frames_of):
            played = frame[frame["season"] > 0]
            rows.append(
                {
                    "protocol": protocol,
                    "seed": seed,
                    **metrics.summary(frame),
                    "boats by company (min-max)": f"{played['boats'].min()}-{played['boats'].max()}",
                    "share at 1 boat": (played["boats"] == 1).mean(),
                }
            )
        industry = pd.concat(frames_of).groupby("season")["boats"].sum() / games
        print(f"{protocol}: the industry's boats by season (mean over {games} games): {industry.round(1).tolist()}")
    table = pd.DataFrame(rows)
    by = table.groupby("protocol")
    print(
        pd.DataFrame(
            {
                "final population": by["final_population"].mean().round(0),
                "sd": by["final_population"].std().round(0),
                "seasons above 0.35": by["seasons_above_threshold"].mean(),
                "collapse season (median)": by["collapse_season"].median(),
                "games without collapse": by["collapse_season"].apply(lambda s: int(s.isna().sum())),
                "share of company-seasons at 1 boat": by["share at 1 boat"].mean().round(2),
            }
        )
    )
    games_table = table.rename(columns={"protocol": "protocol"})
    print("gains of REP textual over A2A (differences):", metrics.gains(games_table))
    wins = (
        table[table["protocol"] == "rep_textual"].set_index("seed")["seasons_above_threshold"]
        > table[table["protocol"] == "a2a"].set_index("seed")["seasons_above_threshold"]
    )
    print(f"games where REP textual spends more seasons above 0.35 than A2A: {int(wins.sum())} of {games}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--thresholds", action="store_true", help="the thresholds reading's tables alone")
    arguments = parser.parse_args()
    seeds = arguments.seeds
    with pd.option_context("display.width", 160, "display.max_columns", 10):
        if arguments.thresholds:
            thresholds_reading(seeds)
            return
        print("Fishbanks, 12 companies, 8 seasons")
        fishbanks()
        for label, params in CONFIGURATIONS.items():
            print(f"\n{label}, 20 agents, {seeds} seeds")
            print(table(runs(seeds, "regime", REGIMES, **params), "regime"))
        textual = runs(seeds // 5, "regime", REGIMES, play=mesa_frame, protocol="rep_textual")
        print(f"\nREP textual, §7 reading, 20 agents, {seeds // 5} seeds (the Mesa model: its updater reads text)")
        print(table(textual, "regime"))
        sizes = {size: {"population": size, "sparsity": SCALING_SPARSITY} for size in SIZES}
        for protocol in ("rep_numerical", "a2a"):
            print(f"\n{protocol}, §7 reading, {SCALING_SPARSITY:.0%} sparse small world, {seeds // 2} seeds a size")
            print(table(runs(seeds // 2, "agents", sizes, protocol=protocol), "agents"))
        for regime in ("complete", "sparse_60"):
            attention = {k: {"attention": k, **REGIMES[regime]} for k in ATTENTION}
            print(f"\nA2A, §7 reading, {regime}, by attention, {seeds * 3 // 5} seeds")
            print(table(runs(seeds * 3 // 5, "attention", attention, protocol="a2a"), "attention"))
        thresholds_reading(seeds)


if __name__ == "__main__":
    main()
