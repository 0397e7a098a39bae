"""Notebook 06's panels: the weather demo live (§5.2), and the 100-agent network on demand (§5.3), both arms of
one seed side by side."""

import pandas as pd

from coordkit.agora import charts
from coordkit.agora.experiments import play_both, totals
from coordkit.agora.model import PROTOCOLS, AgoraNetwork, WeatherDemo
from coordkit.ui import ExperimentPanel, Slider, controls

PROGRESS_EVERY = 25  # queries between two updates of the progress bar


def weather_panel() -> ExperimentPanel:
    """§5.2: Alice's cumulative cost with a negotiated protocol and in natural language only, as the number of
    queries, her thresholds and the two LLMs change."""

    def play(queries: int, check_after: int, negotiate_after: int, alice_model: str, bob_model: str) -> pd.DataFrame:
        params = dict(check_after=check_after, negotiate_after=negotiate_after, queries=queries)
        return play_both(WeatherDemo, 0, alice_model=alice_model, bob_model=bob_model, **params)

    return ExperimentPanel(
        play,
        controls(
            WeatherDemo,
            ["queries", "check_after", "negotiate_after", "alice_model", "bob_model"],
            queries={"low": 2, "high": 30},
            check_after={"high": 10},
            negotiate_after={"high": 10, "default": 5},  # D.1's 3 and 5, so that either can move up a step
        ),
        chart=charts.weather,
    )


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

    def play(seed: int, progress, **params) -> pd.DataFrame:
        frames = []
        for arm, protocol in enumerate(PROTOCOLS):
            model = AgoraNetwork(protocol=protocol, rng=seed, **params)
            while model.running:
                model.step()
                if model.steps % PROGRESS_EVERY == 0:
                    progress((arm + model.steps / model.queries) / len(PROTOCOLS))
            frames.append(model.frame().assign(protocol=protocol, seed=seed))
        return pd.concat(frames, ignore_index=True)

    return ExperimentPanel(
        play,
        [
            *controls(AgoraNetwork, list(NETWORK_CONTROLS), queries={"default": 500}, users={"high": 200}),
            Slider("seed", 0, 9),
        ],
        chart=network_view,
        on_demand=True,
    )


def network_view(frame: pd.DataFrame) -> list:
    """Figure 5, the cost breakdown beside D.3's, and each arm's totals."""
    return [charts.figure5(frame), charts.cost_shares(frame), totals(frame)]
