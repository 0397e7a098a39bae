"""Notebook 06's panels: the weather demo live (§5.2), and the 100-agent network on demand (§5.3), both arms of
one seed side by side."""

from collections.abc import Callable

import pandas as pd

from coordkit.agora import charts
from coordkit.agora.experiments import play_both, totals
from coordkit.agora.model import AgoraNetwork, WeatherDemo
from coordkit.ui import Choice, ExperimentPanel, Slider, controls


def weather_panel() -> ExperimentPanel:
    """§5.2: Alice's cumulative cost with a negotiated protocol and in natural language only, as the number of
    queries, her thresholds and the two LLMs change. At the declared defaults Alice checks and negotiates at her
    third query; she checks before she negotiates (D.1), so the negotiation threshold comes first, the one to raise
    before the other."""
    return ExperimentPanel(play_weather, weather_controls(), chart=charts.weather)


def weather_controls() -> list[Slider | Choice]:
    """The weather panel's controls: up to 30 queries and thresholds up to 10, then the two LLMs."""
    return controls(
        WeatherDemo,
        ["queries", "negotiate_after", "check_after", "alice_model", "bob_model"],
        queries={"low": 2, "high": 30},
        negotiate_after={"high": 10},
        check_after={"high": 10},
    )


def play_weather(**params) -> pd.DataFrame:
    """Both arms of the weather demo's seed 0 (:func:`~coordkit.agora.experiments.play_both`)."""
    return play_both(WeatherDemo, 0, **params)


NETWORK_CONTROLS = (
    "users",
    "queries",
    "check_after",
    "negotiate_after",
    "server_negotiate_after",
    "budget_shape",
    "sync_interval",
    "failure_rate",
    "transport",
)


def network_panel() -> ExperimentPanel:
    """§5.3: the network with the chosen settings, Agora and its natural-language counterfactual on the same
    queries; Figure 5, D.3's breakdown and the totals. A run takes seconds, so the panel runs on demand."""
    return ExperimentPanel(play_network, network_controls(), chart=network_view, on_demand=True)


def network_controls() -> list[Slider | Choice]:
    """The network panel's controls: the declared parameters of ``NETWORK_CONTROLS`` (up to 200 users), then a
    seed."""
    return [
        *controls(AgoraNetwork, list(NETWORK_CONTROLS), users={"high": 200}),
        Slider("seed", 0, 9),
    ]


def play_network(seed: int, progress: Callable[[float], None] | None = None, **params) -> pd.DataFrame:
    """Both arms of one seed of the network (:func:`~coordkit.agora.experiments.play_both`), with its ``seed``."""
    return play_both(AgoraNetwork, seed, progress=progress, **params).assign(seed=seed)


def network_view(frame: pd.DataFrame) -> list:
    """Figure 5, the cost breakdown beside D.3's, and each arm's totals."""
    return [charts.figure5(frame), charts.cost_shares(frame), totals(frame)]
