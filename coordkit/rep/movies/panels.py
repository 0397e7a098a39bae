"""Notebook 02's fast-path panel (section 3.1): thousands of moviegoers, played with numpy."""

import pandas as pd

from coordkit import viz
from coordkit.rep.movies import fast
from coordkit.ui import ExperimentPanel, controls


def fast_panel(seed: int = 0) -> ExperimentPanel:
    """The consensus round by round of :func:`~coordkit.rep.movies.fast.simulate`, from 100 to 10,000 agents."""

    def play(protocol: str, reading: str, population: int, sparsity: float, consensus: str | None) -> pd.DataFrame:
        params = {"reading": reading, "population": population, "sparsity": sparsity, "consensus": consensus}
        return fast.simulate(seed, protocol=protocol, **params)

    return ExperimentPanel(
        play,
        controls(
            fast.PARAMETERS,
            ["protocol", "reading", "population", "sparsity", "consensus"],
            protocol={"options": list(fast.PROTOCOLS)},
            population={"low": 100, "high": 10_000, "default": 1_000, "step": 100, "label": "agents"},
        ),
        chart=consensus_chart,
    )


def consensus_chart(rounds: pd.DataFrame):
    """The share of agents who would join the group proposal, each round, titled with the final share."""
    share = rounds.assign(consensus=100 * rounds["consensus"])
    final = rounds.iloc[-1]
    title = f"final consensus {final['consensus']:.0%} ({final['participants']:,.0f} agents join)"
    return viz.lines(share, "round", "consensus", title=title, y_title="consensus (%)")
