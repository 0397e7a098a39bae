"""The Beer Game: stock-and-flow balance, hand-computed costs, determinism, errors, and REP vs A2A."""

import math
from dataclasses import dataclass, field

import pandas as pd
import pytest
import vl_convert
from hypothesis import given, settings
from hypothesis import strategies as st

from coordkit.live_chart import spec_of
from coordkit.llm import ScriptedClient
from coordkit.parameters import ParameterError
from coordkit.policies import LLMPolicy
from coordkit.rep.beer_game import charts, metrics, panels
from coordkit.rep.beer_game.model import PROTOCOL_NAMES, PROTOCOLS, BeerGame
from coordkit.rep.beer_game.policies import ADJUSTMENT, TARGET, AnchorAndAdjust, RuleSynthesis
from coordkit.rep.protocol import SynthesisRequest
from coordkit.sweeps import sweep


def play(protocol: str = "rep_textual", seed: int = 0, **params) -> BeerGame:
    return BeerGame(protocol=protocol, rng=seed, **params).run()


def test_steady_state_costs_match_a_hand_computation():
    # 2 stages at equilibrium, demand 4 forever: each stage holds 12 cases -> $6 a round; 2 rounds -> $24.
    game = play("base_stock", stages=2, rounds=2, step_round=1, step_size=0, player_spread=0)
    assert game.frame()["cost"].sum() == 24.0


def test_a_demand_step_costs_match_a_hand_computation():
    # Round 1, demand 8. Retailer: 12 + 4 arriving - 8 shipped = 8 held -> $4.
    # Factory: 12 + 4 brewed arriving - 4 ordered by the retailer 2 rounds ago = 12 held -> $6.
    rounds = play("a2a", stages=2, rounds=1, step_round=1, step_size=4).frame()
    costs = rounds[rounds["round"] == 1].set_index("stage")["cost"]
    assert costs.to_dict() == {"retailer": 4.0, "factory": 6.0}


@settings(max_examples=40, deadline=None)
@given(
    protocol=st.sampled_from(PROTOCOLS),
    stages=st.integers(2, 8),
    order_delay=st.integers(1, 4),
    shipping_delay=st.integers(1, 4),
    step_size=st.integers(-4, 12),
    demand_noise=st.sampled_from([0.0, 2.0]),
    seed=st.integers(0, 2**16),
)
def test_no_beer_is_created_or_lost(protocol, stages, order_delay, shipping_delay, step_size, demand_noise, seed):
    game = BeerGame(
        protocol=protocol,
        stages=stages,
        rounds=12,
        order_delay=order_delay,
        shipping_delay=shipping_delay,
        step_size=step_size,
        demand_noise=demand_noise,
        rng=seed,
    )
    before = game.beer_in_system()
    while game.running:
        game.step()
        after = game.beer_in_system()
        assert after == before + game.brewed - game.delivered
        assert all(s.inventory >= 0 and s.backlog >= 0 for s in game.chain)
        assert_supply_lines_are_what_is_owed(game)
        before = after


def assert_supply_lines_are_what_is_owed(game: BeerGame) -> None:
    """A stage's supply line is its orders in the mail, its supplier's backlog to it, and goods on the road."""
    for stage, supplier in zip(game.chain, game.chain[1:]):
        owed = sum(supplier.inbound_orders) + supplier.backlog + sum(stage.inbound_goods)
        assert stage.supply_line == pytest.approx(owed)
    factory = game.chain[-1]
    assert factory.supply_line == pytest.approx(sum(game.brewery_orders) + sum(factory.inbound_goods))


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_same_parameters_and_seed_give_the_same_game(protocol):
    first, second = (play(protocol, seed=7, demand_noise=1.0).frame() for _ in range(2))
    pd.testing.assert_frame_equal(first, second)


def test_different_seeds_give_different_players():
    first, second = (play("a2a", seed=s).frame() for s in (1, 2))
    assert not first["order"].equals(second["order"])


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"stages": 1}, "stages=1 is out of range: stages takes an integer from 2 to 8"),
        ({"stages": 9}, "an integer from 2 to 8"),
        ({"order_delay": -1}, "order_delay=-1"),
        ({"shipping_delay": 0}, "shipping_delay=0"),
        ({"step_round": 25}, "after the last round"),
        ({"protocol": "rep"}, "'a2a', 'rep_numerical', 'rep_textual', 'base_stock'"),
        ({"holding_cost": -0.5}, r"holding_cost=-0.5 is out of range: holding_cost takes a number in \[0, 100\]"),
        ({"holding_cost": float("nan")}, "holding_cost=nan is not a finite number"),
        ({"rounds": float("inf")}, "rounds=inf is not an integer"),
        ({"rounds": 20.5}, "rounds=20.5 is not an integer"),
        ({"rounds": 20.0}, "rounds=20.0 is not an integer; pass 20"),
        ({"order_delay": 10**9}, "order_delay=1000000000 is out of range"),
        ({"stages": "4"}, "stages='4' is not a number"),
        ({"player_spread": 1.5}, r"player_spread takes a number in \[0, 1\)"),
        ({"player_spread": 1.0}, "player_spread=1.0 is out of range"),
        ({"consensus": "mean"}, "'median_coordinate'"),
        ({"base_demand": 2, "step_size": -3}, "step_size=-3 would make customer demand negative"),
        ({"stage": 4}, "BeerGame has no parameter 'stage'; did you mean 'stages'?"),
        (
            {"supply_line_weight": 1.5},
            r"supply_line_weight=1.5 is out of range: supply_line_weight takes a number in \[0, 1\]",
        ),
        ({"synthesiser": "median"}, "synthesiser='median' is a str: synthesiser takes a Policy"),
    ],
)
def test_bad_parameters_raise_clear_errors_before_any_work(params, message):
    with pytest.raises(ParameterError, match=message):
        BeerGame(**params)


def test_chain_length_and_stage_names():
    game = play("rep_textual", stages=6, rounds=3, step_round=2)
    assert [s.name for s in game.chain] == ["retailer", "wholesaler", "distributor", "stage 4", "stage 5", "factory"]


def test_rep_players_pass_customer_demand_up_the_chain_one_stage_a_round():
    game = BeerGame(protocol="rep_numerical", step_round=2, rounds=6, rng=0)
    heard = []
    for _ in range(6):
        game.step()
        heard.append([s.client._own.values["customer_demand"] for s in game.chain])
    retailer_saw_rise = next(r for r, row in enumerate(heard) if row[0] > 4)
    assert heard[retailer_saw_rise][3] == 4.0  # the factory has not heard yet ...
    assert heard[retailer_saw_rise + 3][3] == heard[retailer_saw_rise][0]  # ... it hears 3 rounds later


def test_median_consensus_aligns_every_players_coordination_variables():
    game = play("rep_numerical", consensus="median_coordinate", rounds=5)
    thetas = {tuple(sorted(s.client.theta.items())) for s in game.chain}
    assert len(thetas) == 1


def test_rep_beats_a2a_on_cost_and_bullwhip_over_20_seeds():
    """The paper's Insight 1, in direction, for the rule-based populations with default parameters."""
    games = sweep(BeerGame, {"protocol": ["a2a", "rep_numerical", "rep_textual"]}, seeds=range(20), progress=False)
    mean = games.groupby("protocol")[["total_cost", "bullwhip_ratio"]].mean()
    for rep in ("rep_numerical", "rep_textual"):
        assert mean.loc[rep, "total_cost"] < mean.loc["a2a", "total_cost"]
        assert mean.loc[rep, "bullwhip_ratio"] < mean.loc["a2a", "bullwhip_ratio"]


# --- Sterman's parameters and the synthesiser, as declared parameters ------------------------------------------


def test_sterman_parameters_reach_every_player_of_every_protocol():
    sterman = {"smoothing": 0.5, "stock_adjustment": 0.4, "supply_line_weight": 1.0, "desired_stock": 20.0}
    rule = AnchorAndAdjust(**sterman)
    a2a = BeerGame(protocol="a2a", player_spread=0, **sterman, rng=0)
    assert [stage.client.agent.rule for stage in a2a.chain] == [rule] * 4
    rep = BeerGame(protocol="rep_numerical", player_spread=0, **sterman, rng=0)
    assert [stage.client.agent.rule.rule for stage in rep.chain] == [rule] * 4
    assert [stage.client.theta for stage in rep.chain] == [{TARGET: 20.0, ADJUSTMENT: 0.4}] * 4
    base_stock = BeerGame(protocol="base_stock", **sterman, rng=0)
    assert {stage.client.agent.rule.smoothing for stage in base_stock.chain} == {0.5}


def test_player_spread_scales_each_players_parameters_around_the_declared_ones():
    game = BeerGame(protocol="a2a", supply_line_weight=0.5, desired_stock=20.0, player_spread=0.2, rng=3)
    rules = [stage.client.agent.rule for stage in game.chain]
    assert all(0.4 <= r.supply_line_weight <= 0.6 and 16 <= r.desired_stock <= 24 for r in rules)
    assert len({r.supply_line_weight for r in rules}) == 4


def test_counting_the_whole_supply_line_tames_the_bullwhip():
    """Sterman (1989): players who underweight their supply line (β < 1) order again what is already on its way."""
    sterman = play("a2a", player_spread=0).summary()
    whole_line = play("a2a", player_spread=0, supply_line_weight=1.0).summary()
    assert whole_line["bullwhip_ratio"] < sterman["bullwhip_ratio"] / 4


@dataclass(frozen=True)
class FixedTarget(RuleSynthesis):
    """A synthesiser that always proposes a stock target of 30 and an adjustment of 0.1, noting what it read."""

    read: list = field(default_factory=list, compare=False)

    def decide(self, request: SynthesisRequest) -> dict[str, float]:
        self.read.append(request)
        return {TARGET: 30.0, ADJUSTMENT: 0.1}


def test_the_textual_updater_synthesises_with_the_synthesiser_it_is_given():
    mine = FixedTarget()
    game = play("rep_textual", synthesiser=mine)
    assert game.policies()[-1] is mine
    assert len(mine.read) == 4 * 19  # every player, from round 2 on (round 1 has no messages yet)
    assert "Customer demand looks like" in mine.read[-1].own_text
    for stage in game.chain:  # the textual updater adopts the proposal (η = 1)
        assert stage.client.theta == {TARGET: 30.0, ADJUSTMENT: 0.1}
    assert not game.frame()["order"].equals(play("rep_textual").frame()["order"])


def test_the_numerical_updater_ignores_the_synthesiser():
    mine = FixedTarget()
    game = play("rep_numerical", synthesiser=mine)
    assert mine.read == []
    pd.testing.assert_frame_equal(game.frame(), play("rep_numerical").frame())


def test_an_llm_synthesis_falls_back_to_the_synthesiser_it_is_given():
    mine = FixedTarget()
    game = play("rep_textual", rounds=3, step_round=2, synthesiser=mine, llm=ScriptedClient(lambda request: "no idea"))
    assert isinstance(game.policies()[-1], LLMPolicy) and game.policies()[-1].fallback is mine
    assert len(mine.read) == 4 * 2 and game.llm_fallbacks > 0


def test_a_sweep_varies_sterman_parameters_and_fixes_a_synthesiser():
    grid = {"supply_line_weight": [0.34, 1.0]}
    games = sweep(
        BeerGame, grid, seeds=2, fixed={"protocol": "rep_textual", "synthesiser": FixedTarget()}, progress=False
    )
    assert games["supply_line_weight"].tolist() == [0.34, 0.34, 1.0, 1.0]
    assert games["total_cost"].nunique() == 4


def known_game(factory_orders: list[float], retailer_backlog: list[float]) -> pd.DataFrame:
    """Two stages over rounds 1-8; customer demand steps from 4 to 8 at round 2; the retailer orders demand."""
    n = len(factory_orders)
    demand = [4.0] + [8.0] * (n - 1)
    return pd.DataFrame(
        {
            "round": list(range(1, n + 1)) * 2,
            "position": [0] * n + [1] * n,
            "stage": ["retailer"] * n + ["factory"] * n,
            "customer_demand": demand * 2,
            "order": demand + factory_orders,
            "backlog": retailer_backlog + [0.0] * n,
            "cost": [1.0] * 2 * n,
        }
    )


def test_bullwhip_ratio_and_total_cost_on_a_known_frame():
    rounds = known_game([4.0, 16.0, 8.0, 8.0], [0.0] * 4)
    demand_var = pd.Series([4.0, 8.0, 8.0, 8.0]).var()
    assert metrics.bullwhip_ratio(rounds) == pytest.approx(pd.Series([4.0, 16, 8, 8]).var() / demand_var)
    assert metrics.total_cost(rounds) == 8.0
    owing = known_game([4.0, 16.0, 8.0, 8.0], [0.0, 2.0, 3.0, 1.0])
    assert metrics.final_backlog(owing) == 1.0  # the retailer's backlog in the last round; the factory owes none


def test_a_chain_is_settled_once_its_orders_are_in_line_with_demand_and_its_backlog_is_cleared():
    calm_from_4 = [4.0, 16.0, 12.0, 9.0, 7.0, 8.0, 8.0, 8.0]  # 12 is off by more than 0.25 x 8; 9 and 7 are not
    assert metrics.rounds_to_stabilise(known_game(calm_from_4, [0.0] * 8), step_round=2) == 2
    owing_until_5 = [0.0, 0.0, 3.0, 5.0, 1.0, 0.0, 0.0, 0.0]  # orders in line from round 4, backlog from round 6
    assert metrics.rounds_to_stabilise(known_game(calm_from_4, owing_until_5), step_round=2) == 4
    owing_again_at_7 = [*owing_until_5[:6], 1.0, 0.0]  # settled in the last round only: not for good
    assert math.isnan(metrics.rounds_to_stabilise(known_game(calm_from_4, owing_again_at_7), step_round=2))
    assert metrics.rounds_to_stabilise(known_game(calm_from_4, owing_again_at_7), step_round=2, hold=1) == 6
    still_swinging = [4.0, 16.0, 12.0, 9.0, 7.0, 8.0, 8.0, 20.0]
    assert math.isnan(metrics.rounds_to_stabilise(known_game(still_swinging, [0.0] * 8), step_round=2))


def test_players_see_their_neighbours_last_messages():
    game = BeerGame(protocol="a2a", rounds=3, step_round=2, rng=0)
    game.step()
    game.step()
    wholesaler = game.chain[1]
    notes = wholesaler.observation(wholesaler.client.transport.receive(wholesaler.unique_id)).neighbour_notes
    assert [note.split(" ordered ")[0] for note in notes] == ["retailer", "distributor"]
    assert "demand looks like" in notes[0]


# --- charts -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stages", [2, 4, 8])
def test_the_game_view_shows_each_measure_by_stage_with_demand_on_the_orders_row(stages):
    game = play(stages=stages)
    rounds = game.frame()
    spec = charts.game_view(rounds).to_dict()  # validated against the Vega-Lite schema
    (values,) = spec["datasets"].values()
    table = pd.DataFrame(values)
    assert (
        spec["title"]
        == f"Total cost ${metrics.total_cost(rounds):,.0f} · bullwhip ratio {metrics.bullwhip_ratio(rounds):.1f}"
    )
    assert list(table.groupby("measure", sort=False).size().index) == list(charts.GAME_VIEW_ROWS.values())
    demand = table[table["dashed"]]
    assert set(demand["measure"]) == {charts.GAME_VIEW_ROWS["order"]}
    assert demand["cases"].tolist() == rounds.drop_duplicates("round")["customer_demand"].tolist()
    inventory = table[table["measure"] == "inventory"].sort_values(["round", "position"])
    assert inventory["cases"].tolist() == rounds.sort_values(["round", "position"])["inventory"].tolist()
    assert table[~table["dashed"]]["stage"].nunique() == stages
    svg = vl_convert.vegalite_to_svg(spec)
    assert svg.startswith("<svg") and "NaN" not in svg


def test_the_game_view_says_when_there_is_no_bullwhip_ratio():
    rounds = play(step_size=0).frame()
    assert charts.game_view(rounds).to_dict()["title"].endswith("no bullwhip ratio (demand never varies)")


def test_figure_1c_compares_cost_ratios_with_the_papers_not_dollars():
    games = sweep(BeerGame, {"protocol": ["a2a", "rep_numerical", "rep_textual"]}, seeds=5, progress=False)
    spec = charts.cost_ratios(games).to_dict()
    table = pd.DataFrame(spec["datasets"][spec["data"]["name"]]).set_index(["ratio", "source"])
    cost = games.groupby("protocol")["total_cost"].mean()
    versus_a2a, versus_numerical = "REP textual / A2A", "REP textual / REP numerical"
    assert table.loc[(versus_a2a, "paper (LLM)"), "cost ratio"] == pytest.approx(4251 / 7300)
    assert table.loc[(versus_numerical, "paper (LLM)"), "cost ratio"] == pytest.approx(4251 / 4680)
    kit = table.loc[(versus_a2a, "kit (rules)")]
    assert kit["cost ratio"] == pytest.approx(cost["rep_textual"] / cost["a2a"])
    assert kit["low"] < kit["cost ratio"] < kit["high"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_frame_pipelines_add_up_to_each_supply_line(protocol):
    rounds = play(protocol, stages=5, order_delay=3, shipping_delay=1, demand_noise=2.0).frame()
    assert rounds["orders_in_mail"].map(len).tolist() == [3, 3, 3, 3, 1] * 21  # the factory's: production requests
    assert rounds["goods_on_road"].map(len).tolist() == [1, 1, 1, 1, 2] * 21  # the factory's: brewing
    supplier_backlog = rounds.groupby("round")["backlog"].shift(-1).fillna(0.0)  # the brewery owes nothing
    in_transit = rounds["orders_in_mail"].map(sum) + supplier_backlog + rounds["goods_on_road"].map(sum)
    assert in_transit.tolist() == pytest.approx(rounds["supply_line"].tolist())


def test_the_frame_pipelines_are_the_models_at_the_end_of_each_round():
    game = BeerGame(protocol="a2a", rng=0)
    game.step()
    game.step()
    last = game.frame().query("round == 2").set_index("stage")
    retailer, wholesaler = game.chain[:2]
    assert last.loc["retailer", "orders_in_mail"] == tuple(wholesaler.inbound_orders)
    assert last.loc["retailer", "orders_in_mail"][-1] == retailer.order  # this round's order, just posted
    assert last.loc["wholesaler", "goods_on_road"] == tuple(wholesaler.inbound_goods)
    assert last.loc["factory", "orders_in_mail"] == tuple(game.brewery_orders)


@pytest.mark.parametrize(("protocol", "stages", "t"), [("a2a", 4, 0), ("a2a", 4, 12), ("rep_textual", 6, 7)])
def test_the_chain_at_a_round_draws_each_stages_books_pipelines_and_message(protocol, stages, t):
    rounds = play(protocol, stages=stages).frame()
    table = charts.chain_table(rounds, t)
    now = rounds[rounds["round"] == t].sort_values("position")
    books = table[table["kind"] == "books"]["text"].tolist()[2:]  # after the customers' and the brewery's
    assert books == [
        f"demand {r.demand:.0f}\nstock {r.inventory:.0f}\nowes {r.backlog:.0f}\norders {r.order:.0f}"
        for r in now.itertuples()
    ]
    orders = table[table["kind"] == "order bar"].sort_values("x")["cases"].tolist()
    assert orders == [cases for mail in now["orders_in_mail"] for cases in mail[::-1]]  # next to arrive rightmost
    beer = table[table["kind"] == "beer bar"].sort_values("x")["cases"].tolist()
    assert beer == [cases for road in now["goods_on_road"] for cases in road]  # next to arrive leftmost
    lines = table[table["kind"] == "message"].sort_values("y")["text"]
    assert " ".join(lines) == " ".join(" ".join((m or charts.NO_MESSAGE).split()) for m in now["message"])
    theta = table[(table["kind"] == "stage label") & table["text"].str.startswith("target")]
    assert len(theta) == (stages if protocol == "rep_textual" else 0)
    spec = charts.chain_at(rounds, t).to_dict()  # validated against the Vega-Lite schema
    assert spec["width"] <= 968 and spec["height"] == charts.chain_at(rounds, 1).to_dict()["height"]
    svg = vl_convert.vegalite_to_svg(spec)
    assert "NaN" not in svg and f"round {t} of 20" in svg


def test_the_chain_refuses_a_round_the_game_did_not_play():
    with pytest.raises(ValueError, match="round 21 is not in the frame"):
        charts.chain_table(play("a2a").frame(), 21)


@pytest.mark.parametrize(("protocol", "params"), [("a2a", {}), ("rep_textual", {"stages": 5, "order_delay": 3})])
def test_the_state_view_draws_the_chain_as_the_model_holds_it_at_every_round(protocol, params):
    game = BeerGame(protocol=protocol, rng=1, demand_noise=2.0, **params)
    heights = set()
    while True:
        table = charts.state_table(game)
        pd.testing.assert_frame_equal(table, charts.chain_table(game.frame(), game.steps))  # the frame's round
        books = table[table["kind"] == "books"]["text"].tolist()[2:]
        assert books[0] == (
            f"demand {game.chain[0].incoming_order:.0f}\nstock {game.chain[0].inventory:.0f}\n"
            f"owes {game.chain[0].backlog:.0f}\norders {game.chain[0].order:.0f}"
        )
        spec = charts.chain(game).to_dict()
        assert spec["title"]["text"] == (
            f"round {game.steps} of {game.rounds} · {PROTOCOL_NAMES[protocol]} · "
            f"customers want {game.customer_demand:.0f} cases"
        )
        heights.add(spec["height"])
        if not game.running:
            break
        game.step()
    assert game.steps == game.rounds and len(heights) == 1  # the drawing keeps its size through the game


def test_a_box_fills_with_its_stock_from_the_bottom_and_its_backlog_from_the_top():
    # Round 1, demand 8, nothing in stock: the retailer receives 4 cases, ships them and owes 4; the factory
    # receives 4 brewed cases and ships the retailer's order of 4 placed in the steady state.
    game = BeerGame(protocol="a2a", stages=2, rounds=1, step_round=1, step_size=4, initial_inventory=0, rng=0)
    game.step()
    fills = charts.state_table(game).query("kind in ('stock', 'backlog')")
    assert fills[["kind", "y", "y2", "cases"]].values.tolist() == [
        ["stock", charts.BOX_BOTTOM, charts.BOX_BOTTOM, 0.0],  # the retailer's: empty
        ["backlog", charts.BOX_TOP, charts.BOX_TOP + 4 * charts.PX_PER_CASE, 4.0],  # 4 cases, 2 px a case
        ["stock", charts.BOX_BOTTOM, charts.BOX_BOTTOM, 0.0],  # the factory's
        ["backlog", charts.BOX_TOP, charts.BOX_TOP, 0.0],
    ]
    # 100 cases owed fill the whole box (45 cases' room at 2 px a case); the label still says 100
    game = BeerGame(protocol="a2a", stages=2, rounds=1, step_round=1, step_size=100, initial_inventory=0, rng=0)
    game.step()
    table = charts.state_table(game)
    retailer = table.query("kind == 'backlog'").iloc[0]
    assert (retailer["y"], retailer["y2"], retailer["cases"]) == (charts.BOX_TOP, charts.BOX_BOTTOM, 100.0)
    assert "owes 100" in table.query("kind == 'books'")["text"].iloc[2]


def test_a_message_longer_than_its_room_is_cut_and_the_first_round_says_none_was_sent_yet():
    game = BeerGame(protocol="a2a", stages=2, rng=0)
    first = charts.state_table(game).query("kind == 'message'")["text"].tolist()
    assert first == [charts.NO_MESSAGE] * 2
    game.step()
    game.chain[0].message = "word " * 200  # an LLM's long reasoning
    lines = charts.state_table(game).query("kind == 'message'")["text"].tolist()
    assert len(lines) == charts.MESSAGE_LINES[False] + 1  # the retailer's two lines, the factory's one
    assert lines[1].endswith("…") and not lines[0].endswith("…")


def test_the_player_starts_at_round_zero_and_steps_the_game_round_by_round():
    player = panels.player_panel(start={"protocol": "a2a"})  # as notebook 01 calls it
    assert list(player.values) == [*panels.EXPLORED, "seed"] and player.values["protocol"] == "a2a"
    assert player.model.steps == 0 and player.model.protocol == "a2a"
    player.step()
    game = BeerGame(protocol="a2a", rng=0)
    game.step()
    assert player.output.children[0].spec == spec_of(charts.chain(game))  # the chart on screen: round 1
    player.controls["protocol"].value = PROTOCOLS.index("base_stock")  # greyed out as in the explore panel
    disabled = {name for name, control in player.controls.items() if control.disabled}
    assert disabled == {"consensus", "supply_line_weight", "player_spread", "seed"}
    assert player.model.steps == 0 and player.model.protocol == "base_stock"


def test_the_explore_panel_greys_out_what_the_settings_make_irrelevant():
    panel = panels.explore_panel()
    assert list(panel.values) == [*panels.EXPLORED, "seed"] and panel.values["protocol"] == "rep_textual"
    disabled = {name for name, control in panel.controls.items() if control.disabled}
    assert disabled == set()
    panel.controls["step_size"].value = 0
    assert panel.controls["step_round"].disabled
    panel.controls["protocol"].value = PROTOCOLS.index("base_stock")
    disabled = {name for name, control in panel.controls.items() if control.disabled}
    assert disabled == {"consensus", "step_round", "supply_line_weight", "player_spread", "seed"}
    panel.controls["demand_noise"].value = 1.0
    assert not panel.controls["seed"].disabled
    assert panel.result.protocol == "base_stock" and panel.last_error is None


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_summary_reads_the_columns_it_needs_and_says_what_the_whole_frame_says(protocol):
    for seed, stages in ((0, 4), (1, 6), (2, 8)):
        game = BeerGame(protocol=protocol, stages=stages, rng=seed).run()
        from_the_frame = metrics.summary(game.frame(), game.step_round)
        summary = game.summary()
        assert pd.Series(summary).drop(["llm_calls", "llm_fallbacks"]).equals(pd.Series(from_the_frame))
