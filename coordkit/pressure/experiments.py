"""The pressure-field paper's experiments (§6, Tables 2–7), as functions returning tidy DataFrames (one row per
trial), registered for `coordkit reproduce`.

One trial is the model itself: ``PressureField(strategy="hierarchical", rng=0).run()``. Each figure is one sweep
(:func:`coordkit.sweeps.sweep`) over the cells of its design (:mod:`coordkit.pressure.design`: a cell is one strategy's
trials under one set of parameters), so ``coordkit reproduce --engine`` plays them in parallel. Every figure's agents
are the paper's LLM actors when ``llm`` is given (then the cells play in this process: a client, its ledger and its
recording cannot travel to worker processes), rule-based actors otherwise.
"""

import math
from dataclasses import dataclass
from functools import partial

import pandas as pd

from coordkit import stats
from coordkit.figures import figure, refuse_llm
from coordkit.llm import LLMClient
from coordkit.papers import Numbers, numbers
from coordkit.pressure import calibration, charts, measures, stand_in
from coordkit.pressure.design import BASELINES, DESIGN_TRIALS, TOP_TIER, design, design_cell, strategy_cell
from coordkit.pressure.design import conversation_seeds as conversation_seeds  # the notebooks' ex.conversation_seeds
from coordkit.pressure.design import trials as trials  # the notebooks' ex.trials
from coordkit.pressure.model import PressureField
from coordkit.pressure.pressure import COUNTINGS
from coordkit.pressure.strategies import STRATEGIES
from coordkit.sweeps import sweep_cells

# --- the statistics the paper reports -----------------------------------------------------------------------------


def strategy_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Solved/N, rate and Wilson 95% interval per strategy, best first."""
    table = stats.proportion_table(frame, "strategy", "solved")
    return table.sort_values("rate", ascending=False, kind="stable").reset_index(drop=True)


def strategy_tests(frame: pd.DataFrame) -> pd.DataFrame:
    """The chi-square across strategies and Fisher's exact test for each pair the paper discusses. The chi-square is
    NaN when every trial has the same outcome (all solved, or none), where it is undefined."""
    table = strategy_table(frame).set_index("strategy")
    same = table["successes"].sum() in (0, table["n"].sum())
    chi = stats.TestResult(math.nan, math.nan) if same else stats.chi_square(table["successes"], table["n"])
    rows = [("chi-square across strategies", chi.statistic, chi.p_value)]
    pairs = [TOP_TIER] + [(top, low) for top in TOP_TIER for low in (*BASELINES, "conversation")]
    for a, b in pairs:
        if a in table.index and b in table.index:
            test = stats.fisher_exact(
                table.at[a, "successes"], table.at[a, "n"], table.at[b, "successes"], table.at[b, "n"]
            )
            rows.append((f"Fisher: {a} vs {b}", test.statistic, test.p_value))
    return pd.DataFrame(rows, columns=["test", "statistic", "p_value"])


@dataclass(frozen=True)
class DecayEffect:
    """Table 3: final pressure with decay on and off, Welch's t of on against off (negative when decay lowers the
    final pressure, as the paper's) and Cohen's d of off against on; both None when neither arm's final pressure
    varies (a few trials that all end alike), where they are undefined."""

    on: stats.MeanSD
    off: stats.MeanSD
    welch: stats.TestResult | None
    cohens_d: float | None

    def __str__(self) -> str:
        if self.welch is None:
            return "undefined: neither arm's final pressure varies"
        return f"t = {self.welch.statistic:.1f}, d = {self.cohens_d:.2f}"


def decay_effect(frame: pd.DataFrame) -> DecayEffect:
    """Table 3 from an ablation frame (:func:`ablation`)."""
    on, off = (frame.loc[frame["decay"] == flag, "final_pressure"] for flag in (True, False))
    try:
        welch, d = stats.welch_t(on, off), stats.cohens_d(off, on)
    except stats.NoSpread:
        welch, d = None, None
    return DecayEffect(stats.mean_sd(on), stats.mean_sd(off), welch, d)


# --- the paper beside the kit ------------------------------------------------------------------------------------


def _rate(successes: int, n: int, low: float, high: float) -> str:
    return f"{successes}/{n} = {100 * successes / n:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"


def _paper_rate(paper: Numbers, condition: str) -> str:
    """The paper's solved/N, rate and Wilson interval for ``condition``, or "-" where it reports none."""
    if not paper.has("solved", condition):
        return "-"
    solved, n, rate, low, high = (
        paper.value(metric, condition) for metric in ("solved", "trials", "rate", "ci_low", "ci_high")
    )
    return f"{solved:.0f}/{n:.0f} = {rate:.1f}% [{low:.1f}, {high:.1f}]"


def _p(value: float | str) -> str:
    """A published p-value as the paper states it: "p = 0.94", or a bound such as "p < 1e-13"."""
    return f"p {value[0]} {value[1:]}" if isinstance(value, str) else f"p = {value:g}"


def compare_rates(frame: pd.DataFrame, figure_id: str) -> pd.DataFrame:
    """Solved/N with Wilson intervals per strategy, the paper's (from ``figure_id``'s numbers) beside the kit's."""
    paper = numbers(figure_id)
    kit = stats.proportion_table(frame, "strategy", "solved")
    rows = [
        (
            row["strategy"],
            _paper_rate(paper, row["strategy"]),
            _rate(row["successes"], row["n"], row["wilson_low"], row["wilson_high"]),
        )
        for _, row in kit.iterrows()
    ]
    return pd.DataFrame(rows, columns=["metric", "paper", "kit"])


def compare_table2(frame: pd.DataFrame) -> pd.DataFrame:
    """Table 2's rates, its chi-square across strategies and Fisher's test of pressure-field against hierarchical."""
    tests = strategy_tests(frame).set_index("test")
    chi = tests.loc["chi-square across strategies"]
    fisher = tests.loc["Fisher: pressure_field vs hierarchical"]
    paper = numbers("pressure-table2")
    chi_paper = (
        f"{paper.value('chi_square', 'across strategies'):g}, {_p(paper.value('chi_square_p', 'across strategies'))}"
    )
    extra = pd.DataFrame(
        [
            ("chi-square across strategies", chi_paper, _chi_square_text(chi)),
            (
                "Fisher: pressure-field vs hierarchical",
                _p(paper.value("fisher_p", "pressure_field vs hierarchical")),
                f"p = {fisher['p_value']:.2f}",
            ),
        ],
        columns=["metric", "paper", "kit"],
    )
    return pd.concat([compare_rates(frame, "pressure-table2"), extra], ignore_index=True)


def _chi_square_text(chi: pd.Series) -> str:
    if math.isnan(chi["statistic"]):
        return "undefined: every trial had the same outcome"
    return f"{chi['statistic']:.1f}, p = {chi['p_value']:.1e}"


COUNTING_NAMES = {"paper": "kit, per clashing cell", "code": "kit, per pair of rows"}  # the text's and the code's


def compare_countings(frame: pd.DataFrame) -> pd.DataFrame:
    """Table 2's solved/N per strategy: the paper's, then the kit's under each counting (:func:`table2_by_counting`)."""
    paper = numbers("pressure-table2")
    kit = stats.proportion_table(frame, ["strategy", "counting"], "solved").set_index(["strategy", "counting"])
    rows = []
    for strategy in STRATEGIES:
        row = {
            "strategy": strategy,
            "paper's Table 2": f"{paper.value('solved', strategy):.0f}/{paper.value('trials', strategy):.0f}",
        }
        for counting in COUNTINGS:
            solved, n = kit.loc[(strategy, counting), ["successes", "n"]]
            row[COUNTING_NAMES[counting]] = f"{solved}/{n} ({100 * solved / n:.0f}%)"
        rows.append(row)
    return pd.DataFrame(rows)


def compare_ablation(frame: pd.DataFrame) -> pd.DataFrame:
    """Tables 3–4: solved and final pressure per configuration, and the effect of decay (Welch's t, Cohen's d)."""
    paper = numbers("pressure-ablation")
    rows = []
    for (d, i, e), group in frame.groupby(["decay", "inhibition", "examples"], sort=False):
        label = f"D={'TF'[not d]} I={'TF'[not i]} E={'TF'[not e]}"
        published = (
            f"{paper.value('solved', label):.0f}/{paper.value('trials', label):.0f}, "
            f"P {paper.value('final_pressure', label):.2f} ± {paper.value('final_pressure_sd', label):.2f}"
        )
        rows.append(
            (
                label,
                published,
                f"{int(group['solved'].sum())}/{len(group)}, P "
                f"{group['final_pressure'].mean():.2f} ± {group['final_pressure'].std():.2f}",
            )
        )
    effect = decay_effect(frame)
    both = "decay on vs off"
    rows.append(
        (
            "decay: Welch t, Cohen's d",
            f"t = {paper.value('welch_t', both):g}, d = {paper.value('cohens_d', both):g}",
            str(effect),
        )
    )
    on, off = paper.value("final_pressure", "decay on"), paper.value("final_pressure", "decay off")
    rows.append(
        (
            "final pressure, decay on vs off",
            f"{on:.2f} vs {off:.2f} ({off / on:.0f}x)",
            f"{effect.on.mean:.2f} vs {effect.off.mean:.2f}",
        )
    )
    return pd.DataFrame(rows, columns=["metric", "paper", "kit"])


def compare_table5(frame: pd.DataFrame) -> pd.DataFrame:
    """Table 5: solved/N with Wilson intervals per agent count and strategy, paper beside kit."""
    paper = numbers("pressure-table5")
    kit = stats.proportion_table(frame, ["agent_count", "strategy"], "solved")
    rows = [
        (
            f"{row['agent_count']} agents, {row['strategy']}",
            _paper_rate(paper, f"{row['strategy']}, {row['agent_count']} agents"),
            _rate(row["successes"], row["n"], row["wilson_low"], row["wilson_high"]),
        )
        for _, row in kit.iterrows()
    ]
    return pd.DataFrame(rows, columns=["metric", "paper", "kit"])


def compare_table6(frame: pd.DataFrame) -> pd.DataFrame:
    """Table 6 (with escalation, as the paper ran it) per strategy, each followed by the kit's rate with escalation
    off (which the paper does not report)."""
    on = compare_rates(frame[frame["escalation"]], "pressure-table6")
    off = {
        row.strategy: _rate(row.successes, row.n, row.wilson_low, row.wilson_high)
        for row in stats.proportion_table(frame[~frame["escalation"]], "strategy", "solved").itertuples()
    }
    rows = []
    for strategy, paper, kit in on.itertuples(index=False):
        rows.append((strategy, paper, kit))
        if strategy in off:
            rows.append((f"{strategy}, escalation off", "-", off[strategy]))
    return pd.DataFrame(rows, columns=["metric", "paper", "kit"])


def compare_table7(frame: pd.DataFrame) -> pd.DataFrame:
    """Table 7: solved/N with Wilson intervals per strategy on easy puzzles, paper beside kit."""
    return compare_rates(frame, "pressure-table7")


# --- the figures --------------------------------------------------------------------------------------------------


@figure(
    "pressure-table2",
    "Pressure fields Table 2: solve rates of the five strategies over the paper's 1,078-trial design",
    chart=partial(charts.rates, paper="pressure-table2"),
    compare=compare_table2,
    default_seeds=30,
    llm_agents=True,
    stand_in=stand_in.reply,
)
def table2(
    seeds: int = DESIGN_TRIALS,
    base_seed: int = 0,
    *,
    llm: LLMClient | None = None,
    strategies: tuple[str, ...] = tuple(STRATEGIES),
    **actor,
) -> pd.DataFrame:
    """Table 2: every condition of the design, one row per trial (condition, strategy, parameters, summary), for
    ``strategies``; ``actor`` sets the actors' parameters (such as ``failure``) in every trial, and any other of
    the model's (``counting="code"``: the published code's counting, :func:`table2_by_counting`)."""
    cells = [k for k, (_, strategy, _, _) in enumerate(design(seeds)) if strategy in strategies]
    fixed = {"per_strategy": seeds, **actor}
    return sweep_cells(
        design_cell, {"cell": cells}, base_seed, fixed={**fixed, "llm": llm}, desc="Table 2 conditions"
    ).drop(columns="cell")


def table2_by_counting(seeds: int = 5, base_seed: int = 0, **actor) -> pd.DataFrame:
    """Table 2 under each counting of column conflicts (``PressureField``'s ``counting``: the paper's text, or the
    authors' published code), on the same trials: :func:`table2`'s rows with a ``counting`` column; ``actor`` as
    in :func:`table2`. :func:`compare_countings` lays it out side by side."""
    return pd.concat(
        [table2(seeds, base_seed, counting=counting, **actor) for counting in COUNTINGS], ignore_index=True
    )


@figure(
    "pressure-ablation",
    "Pressure fields Tables 3-4: decay x inhibition x examples (5x5), final pressure",
    chart=charts.ablation,
    compare=compare_ablation,
    default_seeds=30,
    llm_agents=True,
    stand_in=stand_in.reply,
)
def ablation(
    seeds: int = DESIGN_TRIALS,
    base_seed: int = 0,
    *,
    llm: LLMClient | None = None,
    n: int = 5,
    empty: int = 5,
    **actor,
) -> pd.DataFrame:
    """Tables 3–4: the 2³ design decay × inhibition × examples for pressure-field, one model (no escalation);
    ``actor`` as in :func:`table2`."""
    grid = {"decay": [True, False], "inhibition": [True, False], "examples": [True, False]}
    fixed = {"strategy": "pressure_field", "per_strategy": seeds, "n": n, "empty": empty, "escalation": False, **actor}
    return sweep_cells(strategy_cell, grid, base_seed, fixed={**fixed, "llm": llm}, desc="Tables 3-4 conditions")


@figure(
    "pressure-table5",
    "Pressure fields Table 5: pressure-field and hierarchical from 2 to 32 agents",
    chart=partial(charts.scaling, paper="pressure-table5"),
    compare=compare_table5,
    default_seeds=30,
    llm_agents=True,
    stand_in=stand_in.reply,
)
def scaling(seeds: int = DESIGN_TRIALS, base_seed: int = 0, *, llm: LLMClient | None = None, **actor) -> pd.DataFrame:
    """Table 5: pressure-field and hierarchical with 2 to 32 agents (7×7, 8 empty); ``actor`` as in :func:`table2`."""
    grid = {"agent_count": [2, 4, 8, 16, 32], "strategy": list(TOP_TIER)}
    fixed = {"per_strategy": seeds, "n": 7, "empty": 8, **actor}
    return sweep_cells(strategy_cell, grid, base_seed, fixed={**fixed, "llm": llm}, desc="Table 5 conditions")


@figure(
    "pressure-table6",
    "Pressure fields Table 6: harder puzzles (7x7, 8 empty), model escalation on and off",
    chart=partial(charts.rates, paper="pressure-table6"),
    compare=compare_table6,
    default_seeds=30,
    llm_agents=True,
    stand_in=stand_in.reply,
)
def escalation(
    seeds: int = DESIGN_TRIALS,
    base_seed: int = 0,
    *,
    llm: LLMClient | None = None,
    escalations: tuple[bool, ...] = (True, False),
    **actor,
) -> pd.DataFrame:
    """Table 6 and beyond: every strategy on 7×7 with 8 empty, with model escalation on and off (``escalations``:
    Table 6 as the paper ran it is ``(True,)``; every cell plays the same trials, so either setting's rows are the
    same alone or together); ``actor`` as in :func:`table2`."""
    grid = {"escalation": list(escalations), "strategy": list(STRATEGIES)}
    fixed = {"per_strategy": seeds, "condition": "escalation", "n": 7, "empty": 8, **actor}
    return sweep_cells(strategy_cell, grid, base_seed, fixed={**fixed, "llm": llm}, desc="Table 6 conditions")


@figure(
    "pressure-table7",
    "Pressure fields Table 7: easy puzzles (5x5, 5 empty)",
    chart=partial(charts.rates, paper="pressure-table7"),
    compare=compare_table7,
    default_seeds=30,
    llm_agents=True,
    stand_in=stand_in.reply,
)
def easy(seeds: int = DESIGN_TRIALS, base_seed: int = 0, *, llm: LLMClient | None = None, **actor) -> pd.DataFrame:
    """Table 7: every strategy on easy puzzles (5×5, 5 empty); with ``llm``, LLM actors and conversation roles;
    ``actor`` as in :func:`table2`."""
    fixed = {"per_strategy": seeds, "condition": "easy", "n": 5, "empty": 5, **actor}
    return sweep_cells(
        strategy_cell, {"strategy": list(STRATEGIES)}, base_seed, fixed={**fixed, "llm": llm}, desc="Table 7 conditions"
    )


@figure(
    "pressure-calibrated",
    "Pressure fields Tables 2, 4-7 with the actors calibrated to one number (Table 2's pressure-field rate)",
    chart=calibration.chart,
    compare=calibration.compare,
    default_seeds=DESIGN_TRIALS,
    measures=measures.CALIBRATED,
)
def calibrated(seeds: int = DESIGN_TRIALS, base_seed: int = 0, *, llm: LLMClient | None = None) -> pd.DataFrame:
    """Tables 2, 4, 5, 6 and 7 with the cached calibrated ``failure`` (:func:`calibration.play_tables`); the
    paper's trial counts at 30 ``seeds``."""
    refuse_llm(llm, "the calibration is of the rule-based actors")
    return calibration.play_tables(calibration.calibrated_failure(), seeds, base_seed)


# --- the authors' published code, replayed (notebook 03, §3 and §6) ---------------------------------------------


def published_ablation(seeds: int = 10, base_seed: int = 0, *, n: int = 7, empty: int = 7) -> pd.DataFrame:
    """The ablation of Tables 3–4 as the authors' published code plays it (``mode="published"``), on the size of the
    appendix's command (§9.4: 7×7, 7 empty), one model: decay × examples only, since inhibition does nothing in that
    code (its "decay" switch turns the acceptance gate on)."""
    grid = {"mode": ["published"], "decay": [True, False], "inhibition": [True], "examples": [True, False]}
    fixed = {"strategy": "pressure_field", "per_strategy": seeds, "n": n, "empty": empty, "escalation": False}
    return sweep_cells(
        strategy_cell,
        grid,
        base_seed,
        fixed=fixed,
        desc="published ablation conditions",
        progress=False,
    )


def identical_trials(a: PressureField, b: PressureField) -> bool:
    """Whether two played trials are one and the same: the same focus every tick and the same square after it."""
    same_grids = len(a.history) == len(b.history) and all((x == y).all() for x, y in zip(a.history, b.history))
    return bool(same_grids and a.frame()["focus"].equals(b.frame()["focus"]))
