"""Notebook 06's panels: a smaller network played query by query (§1) and the weather demo too (§5), both drawn
as the network stands (:func:`~coordkit.agora.charts.network_now`); the weather demo's two arms live (§5.2), and the
100-agent network's on demand (§5.3), side by side."""

from collections.abc import Callable, Sequence

import pandas as pd

from coordkit.agora import charts
from coordkit.agora.experiments import play_both, totals
from coordkit.agora.model import AgoraNetwork, WeatherDemo
from coordkit.player import ModelPlayer, model_player
from coordkit.ui import DropdownControl, ExperimentPanel, SliderControl, controls

WEATHER_CONTROLS = ("queries", "negotiate_after", "check_after", "alice_model", "bob_model")
WEATHER_OPTIONS = {"queries": {"low": 2, "high": 30}, "negotiate_after": {"high": 10}, "check_after": {"high": 10}}
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
NETWORK_OPTIONS = {"users": {"high": 200}}
# The player's network, to watch to its end: 10 users' Pareto budgets (D.2) give a few users tens of queries to one
# server, so that D.1's thresholds are reached within the first queries and protocols are negotiated, found in the
# databases and used; 200 queries (the declared small run) at 4 frames a second play in 50 seconds
PLAYER_START = {"users": 10, "queries": 200}
PLAYER_FPS = 4


def player_panel(start: dict | None = None) -> ModelPlayer:
    """§5.3's network played query by query (Play, Step, Reset), drawn as it stands after each query: the protocols
    in use so far and how the latest query went. Agora or natural language only, and the network panel's controls;
    the thresholds and the databases' sync are greyed out without Agora. They start at a network small enough to
    watch to its end (``PLAYER_START``, at ``PLAYER_FPS`` frames a second), the other declared defaults, or at
    ``start``; its sliders reach the paper's 85 users and 1,000 queries, and beyond."""
    agora = ("check_after", "negotiate_after", "server_negotiate_after", "sync_interval")
    options = _greyed_without_agora(NETWORK_OPTIONS, agora)
    start = {**PLAYER_START, **(start or {})}
    return model_player(AgoraNetwork, ["protocol", *NETWORK_CONTROLS], start=start, fps=PLAYER_FPS, **options)


def weather_player_panel(start: dict | None = None) -> ModelPlayer:
    """§5.2's demo played query by query, drawn as the network is (Alice, Bob and the line between them): the
    weather panel's controls, Agora or natural language only, §4.1's standard protocol and the transport; what only
    Agora uses is greyed out without it. They start at the declared defaults, or at ``start``."""
    options = _greyed_without_agora(WEATHER_OPTIONS, ("check_after", "negotiate_after", "standard_protocols"))
    names = ["protocol", *WEATHER_CONTROLS, "standard_protocols", "transport"]
    return model_player(WeatherDemo, names, start=start, **options)


def agora_only(values: dict) -> bool:
    """Whether the protocol is Agora's: the thresholds, the standard protocol and the databases' sync mean nothing
    to natural language only."""
    return values["protocol"] == "agora"


def _greyed_without_agora(options: dict[str, dict], names: Sequence[str]) -> dict[str, dict]:
    """``options`` (a control's name → its overrides), with the controls ``names`` greyed out without Agora."""
    return {**options, **{name: {**options.get(name, {}), "active_when": agora_only} for name in names}}


def weather_panel() -> ExperimentPanel:
    """§5.2: Alice's cumulative cost with a negotiated protocol and in natural language only, as the number of
    queries, her thresholds and the two LLMs change. At the declared defaults Alice checks and negotiates at her
    third query; she checks before she negotiates (D.1), so the negotiation threshold comes first, the one to raise
    before the other."""
    return ExperimentPanel(play_weather, weather_controls(), chart=charts.weather)


def weather_controls() -> list[SliderControl | DropdownControl]:
    """The weather panel's controls: up to 30 queries and thresholds up to 10, then the two LLMs."""
    return controls(WeatherDemo, list(WEATHER_CONTROLS), **WEATHER_OPTIONS)


def play_weather(**params) -> pd.DataFrame:
    """Both arms of the weather demo's seed 0 (:func:`~coordkit.agora.experiments.play_both`)."""
    return play_both(WeatherDemo, 0, **params)


def network_panel() -> ExperimentPanel:
    """§5.3: the network with the chosen settings, Agora and its natural-language counterfactual on the same
    queries; Figure 5, D.3's breakdown and the totals. A run takes seconds, so the panel runs on demand."""
    return ExperimentPanel(play_network, network_controls(), chart=network_view, on_demand=True)


def network_controls() -> list[SliderControl | DropdownControl]:
    """The network panel's controls: the declared parameters of ``NETWORK_CONTROLS`` (up to 200 users), then a
    seed."""
    return [
        *controls(AgoraNetwork, list(NETWORK_CONTROLS), **NETWORK_OPTIONS),
        SliderControl("seed", 0, 9),
    ]


def play_network(seed: int, progress: Callable[[float], None] | None = None, **params) -> pd.DataFrame:
    """Both arms of one seed of the network (:func:`~coordkit.agora.experiments.play_both`), with its ``seed``."""
    return play_both(AgoraNetwork, seed, progress=progress, **params).assign(seed=seed)


def network_view(frame: pd.DataFrame) -> list:
    """Figure 5, the cost breakdown beside D.3's, and each arm's totals."""
    return [charts.figure5(frame), charts.cost_shares(frame), totals(frame)]
