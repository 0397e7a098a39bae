"""The delay paper's experiments (§4) as functions returning tidy DataFrames, registered for `coordkit reproduce`.

- :func:`figure4` — the simplified model over p × α × delay, 500 trials each (Fig. 4): the U-shape.
- :func:`figure3` — strategy rasters (trial × second) for chosen delays (Fig. 3 d–f), simplified or LLM players.
- :func:`asymmetry` — beyond the paper: a fast player against slower and slower opponents.

One trial is the model itself, ``DelayedDilemma(delay_a=5, rng=0).run()``; many are a sweep over it:
``sweep(DelayedDilemma, {"delay_a": [0, 5, 10]}, seeds=50)`` gives one row of ``summary()`` per trial. The
figures of simplified players play the vectorised fast path (:mod:`coordkit.delay.fast`), the same trials. Each
figure is one sweep over its cells (a cell: every trial of one setting, such as one delay), so that ``coordkit
reproduce --engine`` plays them in parallel.
"""

import numpy as np
import pandas as pd

from coordkit.delay import charts, fast, measures, metrics, stand_in
from coordkit.delay.metrics import raster_rows
from coordkit.delay.model import DelayedDilemma
from coordkit.delay.policies import Persona
from coordkit.figures import COMPARISON, figure, refuse_llm
from coordkit.llm import LLMClient
from coordkit.papers import numbers
from coordkit.seeds import derive_seeds
from coordkit.sweeps import sweep_cells

PAPER_P = (0.8, 0.9)
PAPER_ALPHA = (0.1, 0.2)
PAPER_DELAYS = (0, 5, 10, 15, 20)
PAPER_PERSONA = Persona(agreeableness=1, conscientiousness=-1, neuroticism=1)


def simple_trials(
    seeds: list[int], p: float, alpha: float, delay_a: float, delay_b: float | None = None
) -> pd.DataFrame:
    """Many simplified-model trials at once (the fast path): one row of shares and payoffs per trial."""
    played = fast.simulate(seeds, p, alpha, delay_a, delay_b)
    return pd.concat([metrics.shares(played.effective, played.timing), metrics.payoff_totals(played.effective)], axis=1)


def u_shape(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (p, α): mutual cooperation at 0 s, its minimum over 5–10 s and its maximum over 15–20 s, and whether
    the U holds (0 s above the minimum, and 15–20 s recovering above it)."""
    means = frame.groupby(["p", "alpha", "delay"])["mutual_cooperation"].mean().unstack("delay")
    table = pd.DataFrame(
        {
            "at_0s": means[0],
            "min_5_10s": means[[5, 10]].min(axis=1),
            "max_15_20s": means[[15, 20]].max(axis=1),
        }
    )
    table["u_shape"] = (table["at_0s"] > table["min_5_10s"]) & (table["max_15_20s"] > table["min_5_10s"])
    return table.reset_index()


def compare_figure4(frame: pd.DataFrame) -> pd.DataFrame:
    """The paper's claims about Fig. 4 beside the kit's numbers (metric, paper, kit)."""
    paper = numbers("delay-fig4")
    shape = u_shape(frame)
    exploitation = frame.groupby(["p", "alpha", "delay"])["exploitation"].mean().unstack("delay")
    rows = [
        (
            "U-shape of mutual cooperation",
            paper.text("mutual_cooperation"),
            f"holds for {shape['u_shape'].sum()} of {len(shape)} (p, α)",
        )
    ]
    for (p, alpha), row in shape.set_index(["p", "alpha"]).iterrows():
        rows.append(
            (
                f"mutual cooperation, p={p}, α={alpha}",
                "(no numbers printed)",
                f"{row['at_0s']:.2f} at 0 s, {row['min_5_10s']:.2f} min at 5-10 s, "
                f"{row['max_15_20s']:.2f} max at 15-20 s",
            )
        )
    for (p, alpha), row in exploitation.iterrows():
        peak = row[[5, 10]].max()
        verdict = "inverted U" if peak > row[0] and peak > row[[15, 20]].max() else "no inverted U"
        rows.append(
            (
                f"exploitation, p={p}, α={alpha}",
                paper.text("exploitation") if (p, alpha) == (0.8, 0.1) else "",
                " → ".join(f"{value:.2f}" for value in row) + f" ({verdict})",
            )
        )
    return pd.DataFrame(rows, columns=COMPARISON)


@figure(
    "delay-fig4",
    "Delay PD Fig. 4: the simplified model's U-shape of mutual cooperation over delay, p × α",
    chart=charts.figure4,
    compare=compare_figure4,
    default_seeds=500,
    measures=measures.MEASURES,
)
def figure4(
    seeds: int = 500,
    base_seed: int = 0,
    *,
    llm: LLMClient | None = None,
    ps=PAPER_P,
    alphas=PAPER_ALPHA,
    delays=PAPER_DELAYS,
) -> pd.DataFrame:
    """Fig. 4: one row per p, α, delay and trial. Every cell plays the same trial seeds (common random numbers)."""
    refuse_llm(llm, "the simplified model plays it")
    grid = {"p": list(ps), "alpha": list(alphas), "delay": list(delays)}
    frame = sweep_cells(figure4_cell, grid, base_seed, fixed={"trials": seeds}, progress=False)
    return frame[["p", "alpha", "delay", "trial", *frame.columns[:-4]]]


def figure4_cell(seed: int, p: float, alpha: float, delay: float, trials: int) -> pd.DataFrame:
    """One cell of Fig. 4: ``trials`` simplified-model trials (seeds derived from ``seed``) at p, α and delay."""
    played = simple_trials(derive_seeds(seed, trials), p, alpha, delay)
    return played.assign(p=p, alpha=alpha, delay=delay, trial=range(trials))


def compare_figure3(frame: pd.DataFrame) -> pd.DataFrame:
    """Shares of each outcome over the last 20 s per delay, beside the paper's description of Fig. 3."""
    paper = numbers("delay-fig3")
    last = frame[frame["second"] >= frame.groupby("delay")["second"].transform("max") - 19]
    share = last.groupby("delay")["outcome"].value_counts(normalize=True).unstack(fill_value=0.0)
    share = share.reindex(columns=["CC", "DD", "CD", "DC"], fill_value=0.0)
    rows = []
    for measure, columns in (
        ("mutual_cooperation", ["CC"]),
        ("mutual_defection", ["DD"]),
        ("exploitation", ["CD", "DC"]),
    ):
        kit = ", ".join(f"{delay} s: {share.loc[delay, columns].sum():.2f}" for delay in share.index)
        rows.append((measure.replace("_", " "), paper.text(measure), kit))
    return pd.DataFrame(rows, columns=COMPARISON)


@figure(
    "delay-fig3",
    "Delay PD Fig. 3 (d-f): strategy rasters, trial x second, at 0, 5 and 20 s of delay",
    chart=charts.raster,
    compare=compare_figure3,
    default_seeds=10,
    llm_agents=True,
    stand_in=stand_in.reply,
)
def figure3(
    seeds: int = 10,
    base_seed: int = 0,
    *,
    llm: LLMClient | None = None,
    delays=(0, 5, 20),
    p: float = 0.9,
    alpha: float = 0.1,
) -> pd.DataFrame:
    """Fig. 3 (d–f): the outcome of every second of every trial, one row per delay, trial and second.

    Without ``llm``: simplified-model players (the fast path). With it: two LLM players with the paper's persona
    (A=1, C=−1, N=1), each trial a Mesa model; columns llm_calls and llm_fallbacks count per trial.
    """
    grid = {"delay": list(delays)}
    return sweep_cells(
        figure3_cell, grid, base_seed, fixed={"trials": seeds, "p": p, "alpha": alpha, "llm": llm}, progress=False
    )


def figure3_cell(
    seed: int, delay: float, trials: int, p: float, alpha: float, llm: LLMClient | None = None
) -> pd.DataFrame:
    """One delay of Fig. 3: the raster of ``trials`` trials (seeds derived from ``seed``), simplified players on the
    fast path, or with ``llm`` two LLM players with the paper's persona, each trial a Mesa model."""
    trial_seeds = derive_seeds(seed, trials)
    if llm is None:
        played = fast.simulate(trial_seeds, p, alpha, delay)
        codes, calls = played.effective, [(0, 0)] * trials
    else:
        models = [
            DelayedDilemma(delay_a=delay, policy_a="llm", persona_a=PAPER_PERSONA, llm=llm, rng=trial_seed).run()
            for trial_seed in trial_seeds
        ]
        codes = np.concatenate([metrics.effective_codes(m.frame()) for m in models], axis=1)
        calls = [(m.llm_calls, m.llm_fallbacks) for m in models]
    return raster_rows(codes, delay).assign(
        llm_calls=np.repeat([c for c, _ in calls], codes.shape[2]),
        llm_fallbacks=np.repeat([f for _, f in calls], codes.shape[2]),
    )


def compare_asymmetry(frame: pd.DataFrame) -> pd.DataFrame:
    means = frame.groupby("delay_b")[["payoff_a", "payoff_b", "a_exploited", "b_exploited"]].mean()
    rows = [
        (
            f"B's delay {delay:g} s",
            "(beyond the paper)",
            f"payoff A {row['payoff_a']:.0f} vs B {row['payoff_b']:.0f}; "
            f"A exploited {row['a_exploited']:.2f}, B exploited {row['b_exploited']:.2f}",
        )
        for delay, row in means.iterrows()
    ]
    return pd.DataFrame(rows, columns=COMPARISON)


@figure(
    "delay-asymmetry",
    "Beyond the delay paper: a fast player (0 s) against a slower and slower opponent",
    chart=charts.asymmetry,
    compare=compare_asymmetry,
    default_seeds=500,
)
def asymmetry(
    seeds: int = 500,
    base_seed: int = 0,
    *,
    llm: LLMClient | None = None,
    fast_delay: float = 0,
    slow_delays=PAPER_DELAYS,
    p: float = 0.9,
    alpha: float = 0.1,
) -> pd.DataFrame:
    """Beyond the paper: player A keeps ``fast_delay`` while B's delay grows. One row per B delay and trial,
    with the shares, both payoffs, and who was exploited."""
    refuse_llm(llm, "the simplified model plays it")
    grid = {"delay_b": list(slow_delays)}
    return sweep_cells(
        asymmetry_cell,
        grid,
        base_seed,
        fixed={"trials": seeds, "delay_a": fast_delay, "p": p, "alpha": alpha},
        progress=False,
    )


def asymmetry_cell(seed: int, delay_b: float, trials: int, delay_a: float, p: float, alpha: float) -> pd.DataFrame:
    """One of B's delays beside A's: ``trials`` simplified-model trials (seeds derived from ``seed``)."""
    played = simple_trials(derive_seeds(seed, trials), p, alpha, delay_a, delay_b)
    return played.assign(delay_a=delay_a, delay_b=delay_b, trial=range(trials))
