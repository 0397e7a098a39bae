"""The pressure-field paper's experiments (§6, Tables 2–7), as functions returning tidy DataFrames (one row per
trial), registered for `coordkit reproduce`.

One trial is the model itself: ``PressureField(strategy="hierarchical", rng=0).run()``. The paper's 1,078 trials
come from four conditions (counts read from the authors' results, see ``data/papers/pressure_fields.csv``): the
main grid (7×7, 7 empty, 1/2/4/8 agents), scaling (7×7, 8 empty, 2–32 agents, pressure-field and hierarchical
only), escalation (7×7, 8 empty) and easy (5×5, 5 empty). Within a condition every strategy plays the same puzzles
(the trial seeds are shared). Every figure's agents are the paper's LLM actors when ``llm`` is given, rule-based
actors otherwise.
"""

from dataclasses import dataclass
from functools import partial
from itertools import product

import pandas as pd
from tqdm.auto import tqdm

from coordkit import stats
from coordkit.figures import figure
from coordkit.llm import LLMClient
from coordkit.papers import Numbers, numbers
from coordkit.pressure import charts, stand_in
from coordkit.pressure.model import PressureField
from coordkit.pressure.strategies import STRATEGIES
from coordkit.seeds import derive_seeds

TOP_TIER = ("pressure_field", "hierarchical")
BASELINES = ("sequential", "random")
DESIGN_TRIALS = 30  # the paper's trials per strategy and condition
CONVERSATION_TRIALS = {"main": 18, "escalation": 20, "easy": 20}  # the conversation's, of those 30 (the design)


def conversation_seeds(seeds: int, condition: str) -> int:
    """The conversation baseline's trials in ``condition`` beside ``seeds`` trials of every other strategy, in the
    paper's proportion (18 of 30 in the main condition, 20 of 30 in the others), at least one."""
    return max(1, round(seeds * CONVERSATION_TRIALS[condition] / DESIGN_TRIALS))


def trials(strategy: str, seeds: int, base_seed: int = 0, *, llm: LLMClient | None = None, **params) -> pd.DataFrame:
    """``seeds`` trials of one strategy (seeds derived from ``base_seed``): one row per trial with its parameters
    and :meth:`PressureField.summary`."""
    rows = [
        {
            "strategy": strategy,
            "trial": k,
            **params,
            **PressureField(strategy=strategy, llm=llm, rng=seed, **params).run().summary(),
        }
        for k, seed in enumerate(derive_seeds(base_seed, seeds))
    ]
    return pd.DataFrame(rows)


def _shown(conditions, desc: str) -> tqdm:
    """The conditions of an experiment, with a progress bar (a widget in a notebook, a line on stderr elsewhere)."""
    return tqdm(list(conditions), desc=desc)


def design(seeds: int = DESIGN_TRIALS) -> list[tuple[str, str, int, dict]]:
    """The paper's trial design: (condition, strategy, trials, parameters) — 1,078 trials at 30 ``seeds``, the
    conversation baseline's smaller counts scaled alike (:func:`conversation_seeds`)."""
    runs = []
    for agents, strategy in product((1, 2, 4, 8), (*TOP_TIER, *BASELINES)):
        runs.append(("main", strategy, seeds, {"n": 7, "empty": 7, "agent_count": agents}))
    runs.append(("main", "conversation", conversation_seeds(seeds, "main"), {"n": 7, "empty": 7}))
    for agents, strategy in product((2, 4, 8, 16, 32), TOP_TIER):
        runs.append(("scaling", strategy, seeds, {"n": 7, "empty": 8, "agent_count": agents}))
    for condition, size in (("escalation", {"n": 7, "empty": 8}), ("easy", {"n": 5, "empty": 5})):
        for strategy in STRATEGIES:
            count = conversation_seeds(seeds, condition) if strategy == "conversation" else seeds
            runs.append((condition, strategy, count, size))
    return runs


# --- the statistics the paper reports -----------------------------------------------------------------------------


def strategy_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Solved/N, rate and Wilson 95% interval per strategy, best first."""
    table = stats.proportion_table(frame, "strategy", "solved")
    return table.sort_values("rate", ascending=False, kind="stable").reset_index(drop=True)


def strategy_tests(frame: pd.DataFrame) -> pd.DataFrame:
    """The chi-square across strategies and Fisher's exact test for each pair the paper discusses."""
    table = strategy_table(frame).set_index("strategy")
    chi = stats.chi_square(table["successes"], table["n"])
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
    final pressure, as the paper's) and Cohen's d of off against on."""

    on: stats.MeanSD
    off: stats.MeanSD
    welch: stats.TestResult
    cohens_d: float


def decay_effect(frame: pd.DataFrame) -> DecayEffect:
    """Table 3 from an ablation frame (:func:`ablation`)."""
    on, off = (frame.loc[frame["decay"] == flag, "final_pressure"] for flag in (True, False))
    return DecayEffect(stats.mean_sd(on), stats.mean_sd(off), stats.welch_t(on, off), stats.cohens_d(off, on))


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
            ("chi-square across strategies", chi_paper, f"{chi['statistic']:.1f}, p = {chi['p_value']:.1e}"),
            (
                "Fisher: pressure-field vs hierarchical",
                _p(paper.value("fisher_p", "pressure_field vs hierarchical")),
                f"p = {fisher['p_value']:.2f}",
            ),
        ],
        columns=["metric", "paper", "kit"],
    )
    return pd.concat([compare_rates(frame, "pressure-table2"), extra], ignore_index=True)


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
            f"t = {effect.welch.statistic:.1f}, d = {effect.cohens_d:.2f}",
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
    ``strategies``; ``actor`` sets the actors' parameters (such as ``failure``) in every trial."""
    condition_seeds = dict(zip(("main", "scaling", "escalation", "easy"), derive_seeds(base_seed, 4)))
    runs = [run for run in design(seeds) if run[1] in strategies]
    frames = [
        trials(strategy, count, condition_seeds[condition], llm=llm, **params, **actor).assign(condition=condition)
        for condition, strategy, count, params in _shown(runs, "Table 2 conditions")
    ]
    return pd.concat(frames, ignore_index=True)


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
    frames = [
        trials(
            "pressure_field",
            seeds,
            base_seed,
            llm=llm,
            n=n,
            empty=empty,
            decay=d,
            inhibition=i,
            examples=e,
            escalation=False,
            **actor,
        )
        for d, i, e in _shown(product((True, False), repeat=3), "Tables 3-4 conditions")
    ]
    return pd.concat(frames, ignore_index=True)


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
    frames = [
        trials(s, seeds, base_seed, llm=llm, n=7, empty=8, agent_count=a, **actor)
        for a, s in _shown(product((2, 4, 8, 16, 32), TOP_TIER), "Table 5 conditions")
    ]
    return pd.concat(frames, ignore_index=True)


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
    seeds: int = DESIGN_TRIALS, base_seed: int = 0, *, llm: LLMClient | None = None, **actor
) -> pd.DataFrame:
    """Table 6 and beyond: every strategy on 7×7 with 8 empty, with model escalation on and off; ``actor`` as in
    :func:`table2`."""
    frames = [
        trials(
            s,
            conversation_seeds(seeds, "escalation") if s == "conversation" else seeds,
            base_seed,
            llm=llm,
            n=7,
            empty=8,
            escalation=on,
            **actor,
        )
        for on, s in _shown(product((True, False), STRATEGIES), "Table 6 conditions")
    ]
    return pd.concat(frames, ignore_index=True)


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
    frames = [
        trials(
            s,
            conversation_seeds(seeds, "easy") if s == "conversation" else seeds,
            base_seed,
            llm=llm,
            n=5,
            empty=5,
            **actor,
        )
        for s in _shown(STRATEGIES, "Table 7 conditions")
    ]
    return pd.concat(frames, ignore_index=True)


# --- the authors' published code, replayed (notebook 03, §3 and §6) ---------------------------------------------


def published_ablation(seeds: int = 10, base_seed: int = 0, *, n: int = 7, empty: int = 7) -> pd.DataFrame:
    """The ablation of Tables 3–4 as the authors' published code plays it (``mode="published"``), on the size of the
    appendix's command (§9.4: 7×7, 7 empty), one model: decay × examples only, since inhibition does nothing in that
    code (its "decay" switch turns the acceptance gate on)."""
    frames = [
        trials(
            "pressure_field",
            seeds,
            base_seed,
            n=n,
            empty=empty,
            mode="published",
            decay=d,
            inhibition=True,
            examples=e,
            escalation=False,
        )
        for d, e in product((True, False), repeat=2)
    ]
    return pd.concat(frames, ignore_index=True)


def identical_trials(a: PressureField, b: PressureField) -> bool:
    """Whether two played trials are one and the same: the same focus every tick and the same square after it."""
    same_grids = len(a.history) == len(b.history) and all((x == y).all() for x, y in zip(a.history, b.history))
    return bool(same_grids and a.frame()["focus"].equals(b.frame()["focus"]))


# the calibrated figure builds on the tables above; importing it here registers it with the family's figures
from coordkit.pressure import calibration  # noqa: E402, F401
