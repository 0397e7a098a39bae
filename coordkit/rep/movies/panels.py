"""Notebook 02's movie panels: one run of the Mesa model played round by round (section 2.1) and played out at every
change of its controls (section 2.6), and thousands of moviegoers played with numpy on the fast path (section 3.1)."""

from typing import Any

import pandas as pd

from coordkit import viz
from coordkit.player import ModelPlayer, model_player
from coordkit.rep.movies import charts, fast
from coordkit.rep.movies.model import MovieScheduling
from coordkit.ui import ExperimentPanel, controls, model_panel

EXPLORED = ["protocol", "reading", "population", "sparsity", "consensus", "attention", "opening"]


def _a2a_under_section7(values: dict) -> bool:
    """Whether the group votes on the organiser's proposal (A2A under the §7 reading): ``consensus`` has no say."""
    return values["protocol"] == "a2a" and values["reading"] == "section7"


def _a2a_reads_some(values: dict) -> bool:
    """Whether A2A agents weigh at most ``attention`` messages (the §7 and thresholds readings)."""
    return values["protocol"] == "a2a" and values["reading"] != "table2"


CONTROLS = {  # the explore panel's and the player's
    "population": {"label": "agents"},
    "consensus": {"active_when": lambda values: not _a2a_under_section7(values)},
    "attention": {"active_when": _a2a_reads_some},
}


def movies_player_panel(
    start: dict | None = None, policy: Any = None, model: type[MovieScheduling] = MovieScheduling
) -> ModelPlayer:
    """One run played round by round (▶ Play, Step, Reset) in its state view,
    :func:`~coordkit.rep.movies.charts.movie_night_now`: the network with each agent's vote and this round's
    messages, and the map of the proposals with the group's moving; the controls are :func:`explore_panel`'s, at
    the declared defaults or at ``start``; with ``policy`` (a student's rule), the agents' policy too, started at
    it. ``model`` may be a subclass of
    MovieScheduling (a student's): it plays in the same player."""
    return model_player(model, EXPLORED, start=start, policy=policy, **CONTROLS)


def explore_panel(start: dict | None = None) -> ExperimentPanel:
    """One run of the Mesa model (:func:`~coordkit.rep.movies.charts.round_view`: the network, the map of the
    proposals, the consensus over rounds), at the declared defaults or at ``start``."""
    return model_panel(MovieScheduling, EXPLORED, chart=charts.round_view, start=start, **CONTROLS)


def fast_panel(seed: int = 0, start: dict | None = None) -> ExperimentPanel:
    """The consensus round by round of :func:`~coordkit.rep.movies.fast.simulate`, from 20 to 10,000 agents; the
    controls start at the declared defaults, or at ``start``."""

    def play(protocol: str, reading: str, population: int, sparsity: float, consensus: str | None) -> pd.DataFrame:
        params = {"reading": reading, "population": population, "sparsity": sparsity, "consensus": consensus}
        return fast.simulate(seed, protocol=protocol, **params)

    return ExperimentPanel(
        play,
        controls(
            fast.PARAMETERS,
            ["protocol", "reading", "population", "sparsity", "consensus"],
            start=start,
            protocol={"options": list(fast.PROTOCOLS)},
            population={"low": 20, "high": 10_000, "step": 20, "label": "agents"},
        ),
        chart=consensus_chart,
    )


def consensus_chart(rounds: pd.DataFrame):
    """The share of agents who would join the group proposal, each round, titled with the final share."""
    share = rounds.assign(consensus=100 * rounds["consensus"])
    final = rounds.iloc[-1]
    title = f"final consensus {final['consensus']:.0%} ({final['participants']:,.0f} agents join)"
    return viz.lines(share, "round", "consensus", title=title, y_title="consensus (%)")
