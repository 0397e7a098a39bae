"""Notebook 06's charts and panels at the ends of their controls: every slider position is a value the model accepts,
and Figure 5 stays under Altair's 5,000-row limit (and light in a saved notebook) at any number of queries. The
adoption floor that §6's cost explanation measures. The state view of a network as it stands, and the player that
draws it, which starts at a network a class can watch to its end."""

import dataclasses

import pandas as pd
import pytest

from coordkit.agora import charts
from coordkit.agora.charts import (
    FOUND,
    LOST,
    NAME_ROOM,
    NATURAL_LANGUAGE,
    NEGOTIATED,
    ROUTINE,
    SERVER_X,
    SO_FAR,
    Y_DOMAIN,
    network_now,
)
from coordkit.agora.experiments import adoption_floor, floor_costs, play_both
from coordkit.agora.model import AgoraNetwork, WeatherDemo
from coordkit.agora.panels import (
    PLAYER_START,
    network_controls,
    network_view,
    play_network,
    player_panel,
    weather_controls,
    weather_panel,
    weather_player_panel,
)
from coordkit.agora.tasks import load_catalogue
from coordkit.live_chart import LiveChart, spec_of
from coordkit.ui import ExperimentPanel, SliderControl

ROWS = 4 * charts.POINTS  # Figure 5: two arms, two measures, at most POINTS queries a curve


@pytest.fixture(scope="module")
def short_run() -> pd.DataFrame:
    return play_both(AgoraNetwork, 0, users=10, queries=120).assign(seed=0)


def curves(moving: pd.DataFrame) -> pd.core.groupby.DataFrameGroupBy:
    return moving.groupby(["measure", "arm"])["query"]


def test_figure5_draws_a_long_run_at_evenly_spaced_queries_ending_at_the_last(short_run):
    every = charts.moving(short_run, points=120)
    thinned = charts.moving(short_run, points=40)
    assert curves(every).size().eq(120).all() and curves(thinned).size().eq(40).all()
    for _, queries in curves(thinned):
        assert queries.max() == 120 and set(queries.diff().dropna()) == {3}
    kept = every.merge(thinned[["measure", "arm", "query"]])  # thinning leaves out points, never moves one
    assert (
        kept.sort_values(list(kept.columns[:3]))
        .reset_index(drop=True)
        .equals(thinned.sort_values(list(thinned.columns[:3])).reset_index(drop=True))
    )


def test_sampled_keeps_every_query_of_a_short_run_and_at_most_points_of_a_long_one():
    assert charts.sampled(pd.Series(range(1, 101)), 250) == list(range(1, 101))
    long = charts.sampled(pd.Series(range(1, 2001)), 250)
    assert len(long) == 250 and long[-1] == 2000 and long[:2] == [8, 16]
    assert len(charts.sampled(pd.Series(range(1, 2002)), 250)) == 223  # 2,001 queries: every 9th


@pytest.mark.parametrize(
    "controls, model",
    [(network_controls(), AgoraNetwork), (weather_controls(), WeatherDemo)],
    ids=["network", "weather"],
)
def test_every_slider_position_is_a_value_the_model_accepts(controls, model):
    """Each end of each slider passes its parameter's own check (a relation between two controls, such as checking
    before negotiating, is explained in the status line when a position breaks it)."""
    for slider in (control for control in controls if isinstance(control, SliderControl) and control.name != "seed"):
        declared = model.parameters[slider.name]
        for end in (slider.low, slider.high):
            declared.check(end)  # raises a ParameterError naming the value and the range


def rows_shown(panel: ExperimentPanel) -> list[int]:
    """How many data rows each chart of the panel holds, as its spec was sent to the page."""
    return [
        sum(len(rows) for rows in slot.spec["datasets"].values())
        for slot in panel.output.children
        if isinstance(slot, LiveChart)
    ]


def at_their_maxima(panel: ExperimentPanel) -> None:
    """Every slider of ``panel`` at its maximum (negotiate after first: a user checks before negotiating), then run."""
    sliders = sorted(
        (p for p in panel.params.values() if isinstance(p, SliderControl)), key=lambda p: p.name != "negotiate_after"
    )
    for slider in sliders:
        panel.controls[slider.name].value = slider.high
    panel.refresh()


def test_the_network_panel_draws_its_charts_at_every_slider_maximum():
    """2,000 queries (and 200 users, thresholds of 100, ...) at once: the run that failed with Altair's MaxRowsError
    (8,000 rows > 5,000) before Figure 5 was thinned. About ten seconds."""
    panel = ExperimentPanel(play_network, network_controls(), chart=network_view, on_demand=True, run_on_start=False)
    at_their_maxima(panel)
    assert panel.values["queries"] == 2000 and panel.last_error is None, panel.status.value
    assert rows_shown(panel) == [ROWS, 8]  # Figure 5, and D.3's eight bars
    assert isinstance(panel.output.children[-1].outputs[0], dict)  # the totals table


def test_the_weather_panel_draws_its_chart_at_every_slider_maximum():
    panel = weather_panel()
    at_their_maxima(panel)
    assert panel.values["queries"] == 30 and panel.last_error is None, panel.status.value
    assert rows_shown(panel) == [2 * 31]  # both arms, queries 0 to 30


def queries(protocol: str, costs: list[float]) -> pd.DataFrame:
    """One seed's arm: the start, then user u1's four queries of a task to s and u2's one, each with its cost."""
    users = ["", "u1", "u2", "u1", "u1", "u1"]
    return pd.DataFrame(
        {
            "seed": 0,
            "protocol": protocol,
            "query": range(6),
            "user": users,
            "server": ["" if not user else "s" for user in users],
            "task": ["" if not user else "t" for user in users],
            "cost": [0.0, *costs],
        }
    )


def test_the_adoption_floor_is_each_pairs_first_queries_and_bounds_the_cost_ratio():
    frame = pd.concat([queries("agora", [2, 2, 2, 1, 0]), queries("natural_language", [2, 2, 2, 2, 2])])
    assert adoption_floor(frame, 3).tolist() == [False, True, True, True, True, False] * 2  # u1's 4th is above
    assert adoption_floor(frame, 1).tolist() == [False, True, True, False, False, False] * 2
    found = floor_costs(frame, 3)
    assert found["user–server–task pairs"] == 2 and found["queries below the floor (%)"] == 80.0
    assert found["their cost to Agora (USD)"] == 7 and found["Agora's cost (USD)"] == 7
    assert found["cost ratio at most"] == round(10 / 7, 2) and found["cost ratio"] == round(10 / 7, 2)
    assert floor_costs(frame, 1)["cost ratio at most"] == 2.5  # the two first queries cost 4 of natural language's 10


# --- the state view: the network as it stands ---------------------------------------------------------------------


def drawn(model: AgoraNetwork | WeatherDemo) -> dict:
    """What the view shows of ``model`` now: its title and subtitle, its lines as (edge, how), the ringed agents,
    where each agent stands, the users' names beside their places and the view's height."""
    spec = spec_of(network_now(model))
    (rows,) = spec["datasets"].values()
    agents = [row for row in rows if row["part"] == "agent"]
    return {
        "title": spec["title"]["text"],
        "subtitle": spec["title"]["subtitle"],
        "lines": {(row["edge"], row["how"]) for row in rows if row["part"] == "line"},
        "ringed": [row["agent"] for row in agents if row["ring"]],
        "names": {row["label"]: (row["x"], row["y"]) for row in rows if row["part"] == "user_name"},
        "height": spec["height"],
        "places": {row["agent"]: (row["x"], row["y"]) for row in agents},
    }


@pytest.mark.parametrize("standard, fourth", [(False, NEGOTIATED), (True, FOUND)], ids=["negotiated", "standard"])
def test_the_weather_view_colours_each_query_as_it_went(standard, fourth):
    """§5.2 by hand: Alice asks in natural language three times; at her fourth query she looks, finds nothing and
    negotiates (or finds Bob's standard protocol, §4.1, with nothing to negotiate); from then on both use their
    routines. The grey line of the protocol they share comes with it and stays; the title counts as the model does."""
    pair = "alice → weather"
    lines = {1: {(pair, NATURAL_LANGUAGE)}, 4: {(pair, SO_FAR), (pair, fourth)}, 5: {(pair, SO_FAR), (pair, ROUTINE)}}
    with WeatherDemo(queries=5, standard_protocols=standard, rng=0) as demo:
        for query in range(6):
            if query:
                demo.step()
            shown = drawn(demo)
            assert shown["lines"] == lines.get(query, lines[1] if query else set())
            assert shown["ringed"] == (["alice"] if query else [])
            protocols = "0 protocols" if query < 4 or standard else "1 protocol"
            pairs = "1 pair of agents uses one" if query >= 4 else "0 pairs of agents use one"
            cost = demo.frame()["cumulative_cost"].iloc[query]
            assert shown["title"] == f"query {query} of 5 · {protocols} negotiated · {pairs} · {cost:.2f} USD so far"
        assert shown["subtitle"][0] == "query 5: alice asked weather for queryWeather, through routines"
        assert shown["subtitle"][1].startswith("routines have answered 40% of the queries so far")  # 2 of 5


def test_natural_language_only_draws_no_protocol():
    with AgoraNetwork(protocol="natural_language", users=10, queries=40, rng=0) as network:
        for _ in range(40):
            network.step()
            assert {how for _, how in drawn(network)["lines"]} == {NATURAL_LANGUAGE}
        assert drawn(network)["subtitle"][1].startswith("routines have answered 0% of the queries so far")


def test_a_querys_lines_are_its_messages_and_the_grey_lines_the_pairs_that_negotiated_or_found_a_protocol():
    """Each step's coloured lines are the pairs that exchanged messages in that query, the user's first (a taxi
    query reaches the traffic server too, Figure 4), and the grey lines are exactly the pairs whose line was once
    coloured as negotiating or finding a protocol: a pair starts to use one in no other way. At seed 7 the taxi
    server negotiates with the traffic server within the 60 queries (at seeds 0-6 it has not yet)."""
    started = set()
    with AgoraNetwork(users=10, queries=60, rng=7) as network:
        while network.running:
            network.step()
            lines = drawn(network)["lines"]
            now = {edge: how for edge, how in lines if how != SO_FAR}
            latest = network.latest
            sent = {f"{exchange.sender} → {exchange.receiver}" for exchange in network.latest_exchanges()}
            assert set(now) == sent | {f"{latest['user']} → {latest['server']}"}
            if latest["server"] == "taxi":
                assert "taxi → traffic" in now
            started |= {edge for edge, how in now.items() if how in (NEGOTIATED, FOUND)}
            assert {edge for edge, how in lines if how == SO_FAR} == started
    assert "taxi → traffic" in started  # servers negotiate with the servers they ask, too


def test_a_lost_query_draws_its_users_line_as_lost():
    with AgoraNetwork(users=10, queries=60, failure_rate=0.5, rng=0) as network:
        while network.latest["mode"] != "lost":
            network.step()
        latest = network.latest
        assert (f"{latest['user']} → {latest['server']}", LOST) in drawn(network)["lines"]
        assert drawn(network)["subtitle"][0].endswith(f"for {latest['task']}, lost")


def test_the_agents_stand_still_through_a_run_servers_right_of_the_servers_that_ask_them():
    """The layout depends on the run's agents only. Worked from the catalogue: weather's workflow (ski lodge and
    tours ask it) comes first in the servers' column, then traffic's (taxi, and restaurant, which asks delivery);
    a server others ask stands one column right of its askers, at their mean height."""
    with AgoraNetwork(users=10, queries=30, rng=0) as network:
        before = drawn(network)["places"]
        while network.running:
            network.step()
        assert drawn(network)["places"] == before
    users = [before[f"user{i:03d}"] for i in range(10)]
    assert users == [(0.0, 1 - (rank + 0.5) / 10) for rank in range(10)]
    places = charts.server_places(load_catalogue().graph())
    first = ["ski_lodge", "tours", "taxi", "restaurant", "hotel", "cinema", "flights", "car_rental", "trains"]
    first += ["museum", "currency_exchange", "parking"]
    assert {name: places[name] for name in first} == {
        name: (SERVER_X[0], 1 - (rank + 0.5) / 12) for rank, name in enumerate(first)
    }
    height = {name: places[name][1] for name in places}
    assert places["weather"] == (SERVER_X[1], pytest.approx((height["ski_lodge"] + height["tours"]) / 2))
    assert places["delivery"] == (SERVER_X[1], height["restaurant"])
    assert places["traffic"] == (SERVER_X[2], pytest.approx((height["taxi"] + height["delivery"]) / 2))


def test_the_players_have_the_explore_panels_controls_and_grey_out_what_only_agora_uses():
    for player, panel_controls, agora_only in (
        (player_panel(), network_controls(), ["check_after", "negotiate_after", "server_negotiate_after"]),
        (weather_player_panel(), weather_controls(), ["check_after", "negotiate_after", "standard_protocols"]),
    ):
        try:
            for control in panel_controls:  # the same, but for when they are greyed out and where they start
                if control.name != "seed":
                    shown = dataclasses.replace(player.params[control.name], active_when=None, default=control.default)
                    assert shown == control
            player.step()
            assert player.model.steps == 1 and player.last_error is None
            player.controls["protocol"].value = 1  # natural language only
            assert all(player.controls[name].disabled for name in agora_only)
        finally:
            player.model.close()


def test_the_player_starts_at_a_network_a_class_watches_to_its_end_in_a_minute_in_which_protocols_spread():
    """The player's defaults play to their end in at most a minute's frames at its speed, and in that run users
    reach both of D.1's thresholds, protocols are negotiated (servers with servers too), some pairs adopt one they
    did not negotiate (found in a listing or a database), and routines answer queries. Its sliders still reach the
    paper's 85 users and 1,000 queries."""
    player = player_panel()
    model = player.model
    assert {name: getattr(model, name) for name in PLAYER_START} == PLAYER_START
    assert len(model.plan) <= 60 * player.speed.value  # steps, at the frames a second it starts at
    assert player.params["users"].high >= 85 and player.params["queries"].high >= 1000
    assert player.run_to_end() is model and not model.running and model.steps == len(model.plan)
    assert player.last_error is None
    frame = model.frame()
    assert frame["checked"].sum() > 0 and frame["negotiated"].sum() > 0
    assert (frame["mode"] == "protocol").mean() > 0.5 and frame["routine_calls"].sum() > 0
    in_use = {edge for edge, how in drawn(model)["lines"] if how == SO_FAR}
    assert len(in_use) > frame["negotiated"].sum()  # some pairs found theirs
    assert any(not edge.startswith("user") for edge in in_use)  # a server asks a server in a protocol


@pytest.mark.parametrize("users", [1, 10, 28])
def test_the_view_names_every_user_when_the_names_fit(users):
    """Each user's name stands at its dot, from the first frame, with at least ``NAME_ROOM`` px to the next."""
    if users == 1:
        model = WeatherDemo(queries=1, rng=0)
    else:
        model = AgoraNetwork(users=users, queries=users, rng=0)
    with model:
        shown = drawn(model)
        assert shown["names"] == {name: place for name, place in shown["places"].items() if name in shown["names"]}
        assert sorted(shown["names"]) == sorted(user.name for user in model.user_agents)
        heights = sorted(y for _, y in shown["names"].values())
        px = shown["height"] / (Y_DOMAIN[1] - Y_DOMAIN[0])
        assert all((above - below) * px >= NAME_ROOM for below, above in zip(heights, heights[1:]))


@pytest.mark.parametrize("users", [29, 85])
def test_the_view_names_only_the_asker_when_every_name_would_not_fit(users):
    """At the paper's 85 users the names would overlap: only the user who sent the latest query is named, beside
    its ring (no one before the first query)."""
    with AgoraNetwork(users=users, queries=users, rng=0) as network:
        assert drawn(network)["names"] == {}
        for _ in range(3):
            network.step()
            shown = drawn(network)
            assert list(shown["names"].items()) == [(network.latest["user"], shown["places"][network.latest["user"]])]
            assert shown["ringed"] == [network.latest["user"]]
