"""The rule-based actor calibrated to the paper: fitted once, in the open, to one published number; every other
published rate is then a prediction.

**What is calibrated, and why.** The kit's actors solve nearly every puzzle, so Tables 2 and 4–7 cannot show the
paper's ranking. Their ``skill`` cannot close the gap: at skill 0 (every value drawn from 1..n) pressure-field still
solves about 98% of Table 2's design, because every tick validates its proposals on forks (§4.3) and decay brings
bad rows back (§6.3.1). What limits a trial is how many usable proposals it gets in its 100 ticks, not how good
each one is. That is what the paper's actors lack: Qwen2.5 models from 0.5B, asked for a bare number in at most 8
tokens at temperatures up to 0.85 (§9.2–9.3), on a task that "remains challenging for current LLMs" (§7.1). Its
decay-on trials end unsolved at a final pressure of about 1 (Table 4): with holes still open, not with wrong
values. So the one calibrated scalar is :class:`~coordkit.pressure.policies.RuleActor`'s ``failure``, the chance
that a proposal is unusable and yields no patch (the conversation's Proposer shares it; the paper uses the same
LLMs for every role, Appendix B §10.4).

**The fit.** Target: pressure-field's pooled solve rate in Table 2 (126/330). Each evaluation plays pressure-field's
330 trials of Table 2's design (:func:`~coordkit.pressure.experiments.table2`, the paper's trial counts, the same
seeds every time) at one ``failure``; :func:`scipy.optimize.bisect` searches [0, 1] for the rate crossing the target,
to a bracket of 1/256, and the fitted value is the evaluation closest to the target. The rate is a step function of
``failure`` (330 trials), so the fit is a bracket, not a point.

**The predictions.** With that one value, every other rate of Tables 2, 4, 5, 6 and 7 is played with the paper's
trial counts and compared with the paper's by Fisher's exact test. Nothing is tuned further. The figure
``pressure-calibrated`` (registered in ``experiments`` with the other figures) plays them with the cached fit.

The tables are played as their registered figures (:func:`coordkit.figures.get`), not imported from
``experiments``, which imports this module for the calibrated figure's chart and comparison.

``python -m coordkit.pressure.calibration`` redoes both (several minutes) and writes ``data/pressure_calibration.csv``
and ``data/pressure_predictions.csv``, which the notebook reads; ``--check`` recomputes and compares instead.
"""

import argparse
import io
import sys
from functools import cache

import pandas as pd
from scipy import optimize

from coordkit import figures, stats
from coordkit.papers import numbers
from coordkit.paths import DATA
from coordkit.pressure import charts
from coordkit.pressure.design import DESIGN_TRIALS

TARGET_FIGURE, TARGET_STRATEGY = "pressure-table2", "pressure_field"
BRACKET = 1 / 256
FIT_FILE = DATA / "pressure_calibration.csv"
PREDICTIONS_FILE = DATA / "pressure_predictions.csv"
SOURCE = (
    "the kit's rule-based actors, played by `python -m coordkit.pressure.calibration`; the paper's numbers from "
    "data/papers/pressure_fields.csv (Rodriguez 2026, Tables 2 and 4-7)"
)
TABLES = {
    "pressure-table2": "Table 2",
    "pressure-ablation": "Table 4",
    "pressure-table5": "Table 5",
    "pressure-table6": "Table 6",
    "pressure-table7": "Table 7",
}


def target() -> tuple[int, int]:
    """Pressure-field's solved and trials in the paper's Table 2 (126, 330)."""
    paper = numbers(TARGET_FIGURE)
    return int(paper.value("solved", TARGET_STRATEGY)), int(paper.value("trials", TARGET_STRATEGY))


def target_trials(failure: float, seeds: int = DESIGN_TRIALS, base_seed: int = 0) -> pd.DataFrame:
    """Pressure-field's trials of Table 2's design (the registered figure) with actors that fail with probability
    ``failure``."""
    table2 = figures.get(TARGET_FIGURE).compute
    return table2(seeds, base_seed, strategies=(TARGET_STRATEGY,), failure=failure)


def fit(seeds: int = DESIGN_TRIALS, base_seed: int = 0) -> pd.DataFrame:
    """The bisection, one row per evaluation in the order played: failure, solved, trials, rate, its Wilson
    interval, and ``fitted`` (True on the evaluation closest to the target rate; ties: the later)."""
    solved_target, trials_target = target()
    evaluations = []

    def gap(failure: float) -> float:
        played = target_trials(failure, seeds, base_seed)["solved"]
        evaluations.append({"failure": failure, "solved": int(played.sum()), "trials": len(played)})
        return played.mean() - solved_target / trials_target

    optimize.bisect(gap, 0.0, 1.0, xtol=BRACKET)
    table = pd.DataFrame(evaluations)
    table["rate"] = table["solved"] / table["trials"]
    intervals = [stats.wilson_interval(s, n) for s, n in zip(table["solved"], table["trials"])]
    table["wilson_low"], table["wilson_high"] = [ci.low for ci in intervals], [ci.high for ci in intervals]
    distance = (table["rate"] - solved_target / trials_target).abs()
    table["fitted"] = False
    table.loc[distance[::-1].idxmin(), "fitted"] = True
    return table


def fitted_failure(evaluations: pd.DataFrame) -> float:
    """The ``failure`` of the fitted evaluation."""
    return float(evaluations.loc[evaluations["fitted"], "failure"].iloc[0])


@cache
def load_fit() -> pd.DataFrame:
    """The cached fit (``data/pressure_calibration.csv``)."""
    return pd.read_csv(FIT_FILE, comment="#")


def calibrated_failure() -> float:
    """The fitted ``failure`` from the cache."""
    return fitted_failure(load_fit())


@cache
def load_predictions() -> pd.DataFrame:
    """The cached predictions (``data/pressure_predictions.csv``)."""
    return pd.read_csv(PREDICTIONS_FILE, comment="#")


# --- the predictions -----------------------------------------------------------------------------------------------


def play_tables(failure: float, seeds: int = DESIGN_TRIALS, base_seed: int = 0) -> pd.DataFrame:
    """Tables 2, 4, 5, 6 (escalation on, as the paper ran it) and 7, each its registered figure, with actors that
    fail with probability ``failure``: one row per trial, with the figure it belongs to in ``figure``."""
    as_run = {"pressure-table6": {"escalations": (True,)}}
    tables = {
        figure_id: figures.get(figure_id).compute(seeds, base_seed, failure=failure, **as_run.get(figure_id, {}))
        for figure_id in TABLES
    }
    return pd.concat([frame.assign(figure=figure_id) for figure_id, frame in tables.items()], ignore_index=True)


def _conditions(figure_id: str, frame: pd.DataFrame) -> pd.DataFrame:
    """The kit's solved and trials per condition of ``figure_id``, named as data/papers names the paper's."""
    if figure_id == "pressure-ablation":
        condition = [
            f"D={'TF'[not d]} I={'TF'[not i]} E={'TF'[not e]}"
            for d, i, e in zip(frame["decay"], frame["inhibition"], frame["examples"])
        ]
    elif figure_id == "pressure-table5":
        condition = [f"{s}, {a:.0f} agents" for s, a in zip(frame["strategy"], frame["agent_count"])]
    else:
        condition = frame["strategy"]
    return (
        frame.assign(condition=condition)
        .groupby("condition", sort=False)["solved"]
        .agg(kit_solved="sum", kit_trials="size")
        .reset_index()
    )


def verdict(fisher_p: float, kit_rate: float, paper_rate: float) -> str:
    """ "consistent" when Fisher's exact test cannot tell the kit's rate from the paper's (p >= 0.05), else which is
    higher."""
    if fisher_p >= 0.05:
        return "consistent"
    return "kit higher" if kit_rate > paper_rate else "kit lower"


def predictions(played: pd.DataFrame) -> pd.DataFrame:
    """Every published solve rate beside the kit's (from :func:`play_tables`): one row per table and condition,
    with both Wilson intervals, Fisher's exact p and the :func:`verdict`; ``role`` says which row was fitted."""
    rows = []
    for figure_id, frame in played.groupby("figure", sort=False):
        paper = numbers(figure_id)
        for kit in _conditions(figure_id, frame).itertuples(index=False):
            if not paper.has("solved", kit.condition):
                continue
            solved, trials = int(paper.value("solved", kit.condition)), int(paper.value("trials", kit.condition))
            fisher = stats.fisher_exact(kit.kit_solved, kit.kit_trials, solved, trials)
            paper_ci, kit_ci = (
                stats.wilson_interval(solved, trials),
                stats.wilson_interval(kit.kit_solved, kit.kit_trials),
            )
            fitted = (figure_id, kit.condition) == (TARGET_FIGURE, TARGET_STRATEGY)
            rows.append(
                {
                    "table": TABLES[figure_id],
                    "condition": kit.condition,
                    "role": "fitted" if fitted else "prediction",
                    "paper_solved": solved,
                    "paper_trials": trials,
                    "paper_rate": solved / trials,
                    "paper_low": paper_ci.low,
                    "paper_high": paper_ci.high,
                    "kit_solved": int(kit.kit_solved),
                    "kit_trials": int(kit.kit_trials),
                    "kit_rate": kit.kit_solved / kit.kit_trials,
                    "kit_low": kit_ci.low,
                    "kit_high": kit_ci.high,
                    "fisher_p": fisher.p_value,
                    "verdict": verdict(fisher.p_value, kit.kit_solved / kit.kit_trials, solved / trials),
                }
            )
    return pd.DataFrame(rows)


def scorecard(table: pd.DataFrame) -> pd.DataFrame:
    """How many predictions per table were consistent with the paper, and how many came out higher or lower."""
    counts = table.query("role == 'prediction'").groupby(["table", "verdict"], sort=False).size().unstack(fill_value=0)
    return counts.reindex(columns=["consistent", "kit higher", "kit lower"], fill_value=0).rename_axis(columns=None)


def readable(table: pd.DataFrame) -> pd.DataFrame:
    """The predictions as the notebook shows them: solved/N, rate and Wilson interval, paper beside kit."""

    def rate(solved, trials, low, high):
        return f"{solved:.0f}/{trials:.0f} = {100 * solved / trials:.0f}% [{100 * low:.0f}, {100 * high:.0f}]"

    return pd.DataFrame(
        {
            "table": table["table"],
            "condition": table["condition"].str.replace("_", "-"),
            "role": table["role"],
            "paper": [rate(*r) for r in table[["paper_solved", "paper_trials", "paper_low", "paper_high"]].values],
            "kit (calibrated)": [rate(*r) for r in table[["kit_solved", "kit_trials", "kit_low", "kit_high"]].values],
            "Fisher p": table["fisher_p"].map("{:.2g}".format),
            "verdict": table["verdict"],
        }
    )


def compare(played: pd.DataFrame) -> pd.DataFrame:
    """Every published solve rate, the paper's beside the calibrated kit's (with Fisher's p and the verdict)."""
    table = readable(predictions(played))
    return pd.DataFrame(
        {
            "metric": table["table"]
            + " · "
            + table["condition"]
            + [" (fitted)" * (r == "fitted") for r in table["role"]],
            "paper": table["paper"],
            "kit": table["kit (calibrated)"] + ", Fisher p = " + table["Fisher p"] + ", " + table["verdict"],
        }
    )


def chart(played: pd.DataFrame):
    """:func:`coordkit.pressure.charts.predictions` of the played tables."""
    return charts.predictions(predictions(played))


# --- the cache ----------------------------------------------------------------------------------------------------


def _write(frame: pd.DataFrame, path, what: str) -> None:
    with open(path, "w") as out:
        out.write(f"# {what}; source: {SOURCE}\n")
        _rounded(frame).to_csv(out, index=False)


def _rounded(frame: pd.DataFrame) -> pd.DataFrame:
    """Rates to 6 decimals; ``failure`` exact (bisection points are short binary fractions) and p-values whole
    (some are below 1e-6)."""
    return frame.round({column: 6 for column in frame.columns if column not in ("failure", "fisher_p")})


def _same(frame: pd.DataFrame, path) -> bool:
    cached = pd.read_csv(path, comment="#")
    fresh = pd.read_csv(io.StringIO(_rounded(frame).to_csv(index=False)))
    return cached.equals(fresh)


def main(argv: list[str] | None = None) -> int:
    """Fit, predict, and write the cache (or, with ``--check``, compare with it)."""
    parser = argparse.ArgumentParser(prog="python -m coordkit.pressure.calibration", description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="recompute and compare with the cached files")
    args = parser.parse_args(argv)
    evaluations = fit()
    failure = fitted_failure(evaluations)
    table = predictions(play_tables(failure))
    print(evaluations.round(4).to_string(index=False))
    print(f"\nfitted failure = {failure:.4f} (target {target()[0]}/{target()[1]})\n")
    print(readable(table).to_string(index=False))
    print()
    print(scorecard(table).to_string())
    if args.check:
        same = _same(evaluations, FIT_FILE) and _same(table, PREDICTIONS_FILE)
        print("\nthe cache " + ("matches" if same else "DIFFERS from") + " the recomputation")
        return 0 if same else 1
    _write(evaluations, FIT_FILE, "the bisection fitting the actors' failure, one evaluation a row")
    _write(table, PREDICTIONS_FILE, "every published solve rate beside the calibrated kit's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
