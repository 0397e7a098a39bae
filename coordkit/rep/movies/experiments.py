"""The movie-scheduling experiments of the REP paper (§7, Figure 3), as functions returning tidy DataFrames.

One run is the model itself: ``MovieScheduling(protocol="a2a", sparsity=0.6, rng=0).run()``; many are a sweep
over it: ``sweep(MovieScheduling, {"protocol": ["a2a", "rep_numerical"]}, seeds=20)`` gives one row of
``summary()`` per run. Rule-based REP numerical and A2A runs play the vectorised fast path
(:func:`coordkit.rep.movies.fast.simulate`), the same rounds, so populations can reach 10,000 agents.

- :func:`figure3_sparsity` — Fig. 3 (left): consensus over rounds at 20 agents, fully connected, 30% and 60%
  sparse, for A2A, REP numerical and REP textual.
- :func:`figure3_scaling` — Fig. 3 (right): rounds to converge for 5 to 200 agents at 30% sparsity (further
  with ``sizes``).
- The wall-clock profile of a 200-agent LLM round is :func:`coordkit.rep.movies.profiling.round_profile`: wall
  time never enters a figure's data.
"""

import numpy as np
import pandas as pd

from coordkit import stats
from coordkit.figures import figure
from coordkit.llm import LLMClient
from coordkit.papers import numbers
from coordkit.rep.movies import charts, fast, stand_in
from coordkit.rep.movies.model import MovieScheduling, outcome
from coordkit.sweep import sweep

REGIMES = {"complete": 0.0, "sparse_30": 0.3, "sparse_60": 0.6}  # the paper's three connectivity regimes
SPARSITY_PROTOCOLS = ("rep_numerical", "rep_textual", "a2a")
PAPER_SIZES = (5, 10, 20, 50, 100, 200)
SCALING_PROTOCOLS = ("rep_numerical", "a2a")
SCALING_SPARSITY = 0.3  # the paper's "fixed sparsity" is not stated; the kit takes the middle regime
THRESHOLD = MovieScheduling.parameters["convergence_threshold"].default


def regime_rounds(seed: int, protocol: str, regime: str, llm: LLMClient | None = None) -> pd.DataFrame:
    """One 20-agent run's per-round frame in a connectivity regime; with ``llm``, its calls and fallbacks too."""
    model = MovieScheduling(protocol=protocol, sparsity=REGIMES[regime], llm=llm, rng=seed).run()
    frame = model.frame()
    return frame if llm is None else frame.assign(llm_calls=model.llm_calls, llm_fallbacks=model.llm_fallbacks)


def per_run(rounds: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """:func:`~coordkit.rep.movies.model.outcome` of every run (``by`` and seed) in a frame of many runs."""
    rows = [
        {**dict(zip([*by, "seed"], keys)), **outcome(run["consensus"], THRESHOLD)}
        for keys, run in rounds.groupby([*by, "seed"], sort=False)
    ]
    return pd.DataFrame(rows)


def compare_sparsity(rounds: pd.DataFrame) -> pd.DataFrame:
    """The paper's Fig. 3 (left) numbers beside the kit's: columns metric, paper, kit."""
    runs = per_run(rounds, ["protocol", "regime"])
    paper = numbers("rep-movies-fig3-sparsity")
    rows = []
    for regime in REGIMES:
        in_regime = runs[runs["regime"] == regime]
        rep, textual, a2a = (in_regime[in_regime["protocol"] == p] for p in SPARSITY_PROTOCOLS)
        rows += [
            (
                f"final consensus, REP numerical, {regime}",
                paper.text("consensus", "rep"),
                _percent(rep["final_consensus"]),
            ),
            (
                f"convergence round, REP numerical, {regime}",
                f"round {paper.value('convergence_round', f'rep {regime}'):g}",
                _rounds(rep["convergence_round"]),
            ),
            (f"final consensus, REP textual, {regime}", "(not reported apart)", _percent(textual["final_consensus"])),
            (
                f"convergence round, REP textual, {regime}",
                "(not reported apart)",
                _rounds(textual["convergence_round"]),
            ),
            (f"max consensus, A2A, {regime}", paper.text("max_consensus", "a2a"), _percent(a2a["max_consensus"])),
        ]
    final = runs.groupby(["regime", "protocol"])["final_consensus"].mean().unstack()
    above = int((final["rep_numerical"] > final["a2a"]).sum())
    rows.append(("REP numerical's mean final consensus above A2A's", "in every regime", f"in {above} of {len(final)}"))
    return pd.DataFrame(rows, columns=["metric", "paper", "kit"])


@figure(
    "rep-movies-fig3-sparsity",
    "REP §7 Fig. 3 (left): consensus over rounds, 20 agents, fully connected, 30% and 60% sparse",
    chart=charts.figure3_sparsity,
    compare=compare_sparsity,
    default_seeds=5,
    llm_agents=True,
    stand_in=stand_in.reply,
)
def figure3_sparsity(seeds: int = 5, base_seed: int = 0, *, llm: LLMClient | None = None) -> pd.DataFrame:
    """Consensus over rounds for every protocol and regime, one row per protocol, regime, seed and round.

    With ``llm``, the agents are LLM agents (call 1, and REP textual's call 2; see :class:`MovieScheduling`).
    """
    grid = {"protocol": list(SPARSITY_PROTOCOLS), "regime": list(REGIMES)}
    return sweep(regime_rounds, grid, seeds, base_seed=base_seed, fixed={"llm": llm}, desc="Figure 3 (sparsity) runs")


def scaling_run(
    seed: int, protocol: str, population: int, llm: LLMClient | None = None, network: str = "sparse"
) -> dict:
    """One run's outcome at ``SCALING_SPARSITY``: rule-based agents on the fast path; LLM agents on the Mesa
    model, stopped at convergence (no calls once the answer is known)."""
    params = {"protocol": protocol, "population": population, "network": network, "sparsity": SCALING_SPARSITY}
    if llm is None:
        consensus = fast.simulate(seed, **params)["consensus"]
    else:
        model = MovieScheduling(**params, llm=llm, stop_at_convergence=True, rng=seed).run()
        consensus = model.frame()["consensus"]
    return outcome(consensus, THRESHOLD)


def compare_scaling(runs: pd.DataFrame) -> pd.DataFrame:
    """The paper's Fig. 3 (right) claims beside the kit's: columns metric, paper, kit."""
    paper = numbers("rep-movies-fig3-scaling")
    rep, a2a = (runs[runs["protocol"] == p] for p in ("rep_numerical", "a2a"))
    small, large = a2a[a2a["population"] <= 20], a2a[a2a["population"] > 20]
    rows = [
        (f"rounds to converge, REP, {_sizes(rep)} agents", paper.text("rounds_to_converge", "rep"), _by_size(rep)),
        (f"rounds to converge, A2A, {_sizes(small)} agents", paper.text("rounds_to_converge", "a2a"), _by_size(small)),
    ]
    if len(large):
        never = int((~large["converged"]).sum())
        rows.append(
            (
                f"A2A beyond 20 agents ({_sizes(large)})",
                paper.text("rounds_to_converge", "a2a beyond 20 agents"),
                f"never converge in {never} of {len(large)} runs",
            )
        )
    rows += [
        (f"{share} share of a 200-agent LLM round", paper.text("runtime_share", share), "profiling.round_profile()")
        for share in ("inference", "waiting", "communication")
    ]
    return pd.DataFrame(rows, columns=["metric", "paper", "kit"])


@figure(
    "rep-movies-fig3-scaling",
    "REP §7 Fig. 3 (right): rounds to reach 70% consensus for 5 to 200 agents, A2A's DNF region",
    chart=charts.figure3_scaling,
    compare=compare_scaling,
    default_seeds=5,
    llm_agents=True,
    stand_in=stand_in.reply,
)
def figure3_scaling(
    seeds: int = 5,
    base_seed: int = 0,
    *,
    llm: LLMClient | None = None,
    sizes: tuple[int, ...] = PAPER_SIZES,
    network: str = "sparse",
) -> pd.DataFrame:
    """Rounds to converge per protocol and population, one row per protocol, population and seed: the
    :func:`~coordkit.rep.movies.model.outcome` (``convergence_round`` NaN and ``converged`` False for a DNF).

    ``sizes`` beyond the paper's reach 10,000 agents on the fast path (``network="small_world"`` for the
    lightest graphs); LLM agents play at most 1,000.
    """
    grid = {"protocol": list(SCALING_PROTOCOLS), "population": list(sizes)}
    fixed = {"llm": llm, "network": network}
    return sweep(scaling_run, grid, seeds, base_seed=base_seed, fixed=fixed, desc="Figure 3 (scaling) runs")


def _percent(values: pd.Series) -> str:
    summary = stats.mean_sd(values)
    if summary.n == 1:
        return f"{summary.mean:.0%} (one run)"
    interval = stats.mean_interval(values)
    low, high = max(interval.low, 0.0), min(interval.high, 1.0)  # a share's interval, clipped to [0, 1]
    return f"{summary.mean:.0%} ± {summary.sd:.0%} (95% CI {low:.0%}–{high:.0%}, {summary.n} runs)"


def _rounds(values: pd.Series) -> str:
    reached = values.dropna()
    never = len(values) - len(reached)
    text = f"median {reached.median():.0f} (range {reached.min():.0f}–{reached.max():.0f})" if len(reached) else "DNF"
    return text + (f"; {never} of {len(values)} runs never converge" if never and len(reached) else "")


def _sizes(runs: pd.DataFrame) -> str:
    sizes = sorted(runs["population"].unique())
    if len(sizes) < 2:
        return str(sizes[0]) if sizes else "no"
    return f"{sizes[0]}–{sizes[-1]}"


def _by_size(runs: pd.DataFrame) -> str:
    """Median rounds to converge per population ("DNF" where most runs never converge)."""
    parts = []
    for size, group in runs.groupby("population"):
        rounds = group["convergence_round"].fillna(np.inf).median()
        parts.append(f"{size}: {'DNF' if np.isinf(rounds) else f'{rounds:g}'}")
    return "medians " + ", ".join(parts) if parts else "(no runs)"
