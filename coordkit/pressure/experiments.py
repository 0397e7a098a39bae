"""The pressure-field paper's experiments (§6, Tables 2–7) with rule-based actors, as functions returning tidy
DataFrames (one row per trial), registered for `coordkit reproduce`.

The paper's 1,078 trials come from four conditions (counts read from the authors' results, see
``data/papers/pressure_fields.csv``): the main grid (7×7, 7 empty, 1/2/4/8 agents), scaling (7×7, 8 empty,
2–32 agents, pressure-field and hierarchical only), escalation (7×7, 8 empty) and easy (5×5, 5 empty). Within a
condition every strategy plays the same puzzles (the trial seeds are shared).
"""

from itertools import product

import pandas as pd

from coordkit import figures, stats
from coordkit.paths import paper_numbers
from coordkit.llm import LLMClient
from coordkit.pressure import charts, stand_in
from coordkit.pressure.model import STRATEGIES, PressureField
from coordkit.seeds import derive_seeds

TOP_TIER = ("pressure_field", "hierarchical")
BASELINES = ("sequential", "random")


def trial(strategy: str = "pressure_field", seed: int = 0, **params) -> PressureField:
    """One trial (see :class:`PressureField` for the parameters), played out."""
    return PressureField(strategy=strategy, rng=seed, **params).run()


def trials(strategy: str, count: int, base_seed: int = 0, **params) -> pd.DataFrame:
    """``count`` trials of one strategy: one row per trial with its parameters and :meth:`PressureField.result`."""
    rows = [
        {"strategy": strategy, "trial": k, **params, **trial(strategy, seed, **params).result()}
        for k, seed in enumerate(derive_seeds(base_seed, count))
    ]
    return pd.DataFrame(rows)


def design(count: int = 30) -> list[tuple[str, str, int, dict]]:
    """The paper's trial design: (condition, strategy, trials, parameters) — 1,078 trials at ``count`` = 30, with
    the conversation baseline's smaller counts (18 and 20 of 30) scaled alike."""
    conversation = {"main": max(1, round(count * 18 / 30)), "other": max(1, round(count * 20 / 30))}
    runs = []
    for agents, strategy in product((1, 2, 4, 8), (*TOP_TIER, *BASELINES)):
        runs.append(("main", strategy, count, {"n": 7, "empty": 7, "agents": agents}))
    runs.append(("main", "conversation", conversation["main"], {"n": 7, "empty": 7}))
    for agents, strategy in product((2, 4, 8, 16, 32), TOP_TIER):
        runs.append(("scaling", strategy, count, {"n": 7, "empty": 8, "agents": agents}))
    for condition, size in (("escalation", {"n": 7, "empty": 8}), ("easy", {"n": 5, "empty": 5})):
        for strategy in STRATEGIES:
            runs.append((condition, strategy, conversation["other"] if strategy == "conversation" else count, size))
    return runs


def table2(count: int = 30, base_seed: int = 0) -> pd.DataFrame:
    """Table 2: every condition of the design, one row per trial (condition, strategy, parameters, result)."""
    seeds = dict(zip(("main", "scaling", "escalation", "easy"), derive_seeds(base_seed, 4)))
    frames = [trials(strategy, size, seeds[condition], **params).assign(condition=condition)
              for condition, strategy, size, params in design(count)]
    return pd.concat(frames, ignore_index=True)


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
            test = stats.fisher_exact(table.at[a, "successes"], table.at[a, "n"], table.at[b, "successes"], table.at[b, "n"])
            rows.append((f"Fisher: {a} vs {b}", test.statistic, test.p_value))
    return pd.DataFrame(rows, columns=["test", "statistic", "p_value"])


def ablation(count: int = 30, base_seed: int = 0, n: int = 5, empty: int = 5) -> pd.DataFrame:
    """Tables 3–4: the 2³ design decay × inhibition × examples for pressure-field, one model (no escalation)."""
    frames = [
        trials("pressure_field", count, base_seed, n=n, empty=empty, decay=d, inhibition=i, examples=e, escalation=False)
        for d, i, e in product((True, False), repeat=3)
    ]
    return pd.concat(frames, ignore_index=True)


def decay_effect(frame: pd.DataFrame) -> pd.DataFrame:
    """Table 3: final pressure with and without decay (mean ± SD), Welch's t and Cohen's d."""
    on, off = (frame.loc[frame["decay"] == flag, "final_pressure"] for flag in (True, False))
    t = stats.welch_t(off, on)
    rows = [("with decay", len(on), on.mean(), on.std()), ("without decay", len(off), off.mean(), off.std())]
    table = pd.DataFrame(rows, columns=["configuration", "n", "final_pressure", "sd"])
    table.attrs.update(welch_t=t.statistic, p_value=t.p_value, cohens_d=stats.cohens_d(off, on))
    return table


def scaling(count: int = 30, base_seed: int = 0) -> pd.DataFrame:
    """Table 5: pressure-field and hierarchical with 2 to 32 agents (7×7, 8 empty)."""
    frames = [trials(s, count, base_seed, n=7, empty=8, agents=a) for a, s in product((2, 4, 8, 16, 32), TOP_TIER)]
    return pd.concat(frames, ignore_index=True)


def escalation(count: int = 30, base_seed: int = 0, conversation_count: int = 20) -> pd.DataFrame:
    """Table 6 and beyond: every strategy on 7×7 with 8 empty, with model escalation on and off."""
    frames = [
        trials(s, conversation_count if s == "conversation" else count, base_seed, n=7, empty=8, escalation=on)
        for on, s in product((True, False), STRATEGIES)
    ]
    return pd.concat(frames, ignore_index=True)


def easy(count: int = 30, base_seed: int = 0, conversation_count: int = 20, llm: LLMClient | None = None) -> pd.DataFrame:
    """Table 7: every strategy on easy puzzles (5×5, 5 empty); with ``llm``, LLM actors and conversation roles."""
    options = {} if llm is None else {"llm": llm}
    frames = [trials(s, conversation_count if s == "conversation" else count, base_seed, n=5, empty=5, **options)
              for s in STRATEGIES]
    return pd.concat(frames, ignore_index=True)


# --- the paper beside the kit ------------------------------------------------------------------------------------

def _paper(table: int) -> pd.DataFrame:
    numbers = paper_numbers("pressure_fields")
    return numbers[numbers["table"] == table]


def _rate(solved: int, n: int, low: float, high: float) -> str:
    return f"{solved}/{n} = {100 * solved / n:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"


def compare_rates(frame: pd.DataFrame, table: int, by: str = "strategy") -> pd.DataFrame:
    """Solved/N with Wilson intervals, paper beside kit, per strategy (or per ``by`` and strategy)."""
    paper = _paper(table)
    groups = ["strategy"] if by == "strategy" else [by, "strategy"]
    kit = stats.proportion_table(frame, groups, "solved")
    rows = []
    for _, row in kit.iterrows():
        label = row["strategy"] if by == "strategy" else f"{row[by]} agents, {row['strategy']}"
        mask = paper["strategy"] == row["strategy"]
        if by != "strategy":
            mask &= paper["condition"] == f"{row[by]} agents"
        match = paper[mask]
        published = match.iloc[0] if len(match) else None
        paper_text = (f"{int(published['solved'])}/{int(published['n'])} = {published['rate_pct']:.1f}% "
                      f"[{published['ci_low_pct']:.1f}, {published['ci_high_pct']:.1f}]") if published is not None else "-"
        rows.append((label, paper_text, _rate(row["successes"], row["n"], row["wilson_low"], row["wilson_high"])))
    return pd.DataFrame(rows, columns=["metric", "paper", "kit"])


def compare_table2(frame: pd.DataFrame) -> pd.DataFrame:
    tests = strategy_tests(frame).set_index("test")
    chi = tests.loc["chi-square across strategies"]
    fisher = tests.loc["Fisher: pressure_field vs hierarchical"]
    extra = pd.DataFrame([
        ("chi-square across strategies", "68.1, p < 1e-13", f"{chi['statistic']:.1f}, p = {chi['p_value']:.1e}"),
        ("Fisher: pressure-field vs hierarchical", "p = 0.94", f"p = {fisher['p_value']:.2f}"),
    ], columns=["metric", "paper", "kit"])
    return pd.concat([compare_rates(frame, 2), extra], ignore_index=True)


def compare_ablation(frame: pd.DataFrame) -> pd.DataFrame:
    paper = _paper(4).set_index("condition")
    rows = []
    for (d, i, e), group in frame.groupby(["decay", "inhibition", "examples"], sort=False):
        label = f"D={'TF'[not d]} I={'TF'[not i]} E={'TF'[not e]}"
        published = paper.loc[label]
        rows.append((label, f"{int(published['solved'])}/30, P {published['final_pressure']:.2f} ± {published['sd']:.2f}",
                     f"{int(group['solved'].sum())}/{len(group)}, P {group['final_pressure'].mean():.2f} ± "
                     f"{group['final_pressure'].std():.2f}"))
    effect = decay_effect(frame)
    rows.append(("decay: Welch t, Cohen's d", "t = -32.2, d = 4.15",
                 f"t = {-effect.attrs['welch_t']:.1f}, d = {effect.attrs['cohens_d']:.2f}"))
    rows.append(("final pressure, decay on vs off", "1.18 vs 58.14 (49x)",
                 f"{effect['final_pressure'][0]:.2f} vs {effect['final_pressure'][1]:.2f}"))
    return pd.DataFrame(rows, columns=["metric", "paper", "kit"])


def compare_escalation(frame: pd.DataFrame) -> pd.DataFrame:
    on = compare_rates(frame[frame["escalation"]], 6)
    off = stats.proportion_table(frame[~frame["escalation"]], "strategy", "solved")
    on["kit, escalation off"] = [_rate(r["successes"], r["n"], r["wilson_low"], r["wilson_high"]) for _, r in off.iterrows()]
    return on


TABLES = [
    ("pressure-table2", "Pressure fields Table 2: solve rates of the five strategies over the paper's 1,078-trial design",
     table2, charts.rates, compare_table2, 30),
    ("pressure-ablation", "Pressure fields Tables 3-4: decay x inhibition x examples (5x5), final pressure",
     ablation, charts.ablation, compare_ablation, 30),
    ("pressure-table5", "Pressure fields Table 5: pressure-field and hierarchical from 2 to 32 agents",
     scaling, charts.scaling, lambda frame: compare_rates(frame, 5, by="agents"), 30),
    ("pressure-table6", "Pressure fields Table 6: harder puzzles (7x7, 8 empty), model escalation on and off",
     escalation, charts.rates, compare_escalation, 30),
]
for figure_id, description, compute, chart, compare, default in TABLES:
    figures.register(figures.Figure(figure_id, description, compute, chart, compare, default_seeds=default))

TABLE_7 = figures.register(figures.Figure(
    "pressure-table7", "Pressure fields Table 7: easy puzzles (5x5, 5 empty)",
    compute=lambda count, base_seed, llm=None: easy(count, base_seed, conversation_count=max(1, round(count * 2 / 3)), llm=llm),
    chart=charts.rates, compare=lambda frame: compare_rates(frame, 7), default_seeds=30, stand_in=stand_in.reply,
))
