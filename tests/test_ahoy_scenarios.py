"""Ahoy §5 offline: termination derived from the protocols, the rule brains and counterparts, and the four
scenarios — no violations, every role done, reproducible per seed, the right branch, separate event bindings —
and the model's declared parameters, frame and summary."""

import math
from functools import cache

import pytest
import vl_convert

from coordkit.ahoy import charts, experiments, panels
from coordkit.ahoy.goal import Goal
from coordkit.ahoy.model import AHOY, CONCURRENT, RALEIGH, TROLLEY, AhoyEnactment
from coordkit.ahoy.policies import Counterpart, Turn, rule_brain
from coordkit.ahoy.termination import final_messages, finished
from coordkit.bspl import load
from coordkit.bspl.semantics import Instance, LocalState
from coordkit.live_chart import spec_of
from coordkit.parameters import ParameterError
from coordkit.policies import Policy

PURCHASE, LOGISTICS, FLEXIBLE = load("purchase"), load("logistics"), load("flexible_purchase_corrected")


def test_an_order_takes_several_items():
    """A second RequestWrapping for an order starts a new enactment (its out key itemID is fresh)."""
    merchant = LocalState(LOGISTICS, ("Merchant",))
    merchant.send(Instance.of(LOGISTICS, "RequestLabel", orderID="o", address="Bob's House"))
    merchant.send(Instance.of(LOGISTICS, "RequestWrapping", orderID="o", itemID="i1", item="plate"))
    assert any(f.schema.name == "RequestWrapping" for f in merchant.enabled())


@cache
def runs(seed: int = 0) -> dict[str, AhoyEnactment]:
    return experiments.all_scenarios(seed)


def test_termination_conditions_come_from_the_protocols():
    def finals(protocol, role):
        return [m.name for m in final_messages(protocol, role)]

    assert finals(PURCHASE, "Buyer") == ["reject", "deliver", "completed"]
    assert finals(LOGISTICS, "Merchant") == ["Packed"] and finals(FLEXIBLE, "FlexibleCustomer") == ["receipt"]
    buyer = LocalState(PURCHASE, ("Buyer",))
    for name, values in [
        ("rfq", {}),
        ("quote", {"price": 4}),
        ("accept", {"price": 4, "address": "a", "resp": "ok"}),
        ("deliver", {"address": "a", "outcome": "delivered"}),
    ]:
        buyer.history.append(Instance.of(PURCHASE, name, ID="1", item="pen", **values))
    assert not finished(buyer, {"ID": "1"})  # delivered, but completed is still enabled
    buyer.send(Instance.of(PURCHASE, "completed", ID="1", item="pen", price=4, satisfaction="satisfied"))
    assert finished(buyer, {"ID": "1"})


def test_a_customer_that_paid_waits_for_its_receipt():
    customer = LocalState(FLEXIBLE, ("FlexibleCustomer",))
    for name, values in [
        ("rfq", {}),
        ("offer", {"price": 4}),
        ("accept", {"price": 4, "confirmation": "c"}),
        ("standard_delivery_request", {"confirmation": "c", "standard_delivery": "s"}),
        ("standard_delivery", {"standard_delivery": "s"}),
        ("pay_standard", {"price": 4, "standard_delivery": "s", "payment": "$4"}),
    ]:
        customer.history.append(Instance.of(FLEXIBLE, name, ID="1", item="pen", **values))
    assert not finished(customer, {"ID": "1"})
    customer.history.append(Instance.of(FLEXIBLE, "receipt", ID="1", item="pen", payment="$4", done=True))
    assert finished(customer, {"ID": "1"})


@pytest.mark.parametrize(
    "name",
    [
        "freeness-purchase",
        "freeness-logistics",
        "concurrent",
        "branching-urgent",
        "branching-cheapest",
        "branching-ambiguous",
        "external-event",
    ],
)
def test_every_scenario_completes_without_violations_and_every_role_terminates(name):
    model = runs()[name]
    assert model.violations == 0 and model.finished() and not model.in_transit
    assert model.summary()["llm_calls"] == 0 and model.summary()["decisions"] > 0


def test_the_buyer_takes_quotes_within_budget_and_the_merchant_wraps_only_what_arrived():
    model = runs()["concurrent"]
    accepted = [i.payload for i in model.agent(AHOY).states["Purchase"].history if i.schema.name == "accept"]
    assert sorted(a["price"] for a in accepted) == [27, 39, 42]  # the paper's quotes, all within budget
    assert all(a["price"] <= CONCURRENT.budget_for(a["item"]) and "Portland" in a["address"] for a in accepted)
    log = model.messages()
    assert log[log["message"] == "RequestLabel"]["step"].max() < log[log["message"] == "quote"]["step"].min()
    delivered = log[log["message"] == "deliver"]
    for row in log[log["message"] == "RequestWrapping"].itertuples():
        item = row.instance.split("item=")[1].rstrip(")")
        assert (delivered["instance"].str.contains(f"item={item},") & (delivered["step"] < row.step)).any()
    purchase_ids = set(log[log["protocol"] == "Purchase"]["instance"].str.extract(r"ID=([^,]+)")[0])
    order_ids = set(log[log["protocol"] == "Logistics"]["instance"].str.extract(r"orderID=([^,]+)")[0])
    assert len(purchase_ids) == 3 and len(order_ids) == 2 and not purchase_ids & order_ids


def test_concurrent_roles_wrap_and_pack_every_item():
    log = runs()["concurrent"].messages()
    assert (log["message"] == "Packed").sum() == 3 and (log["message"] == "completed").sum() == 3
    wrapped = log[log["message"] == "Wrapped"]["instance"]
    assert wrapped.str.contains("wooden bat.*wrapping=standard").any()
    assert wrapped.str.contains("glass vase.*wrapping=fragile").sum() == 1


def test_an_over_budget_quote_is_rejected_and_the_buyer_still_ends():
    model = AhoyEnactment(budget=3).run()
    assert list(model.messages()["message"]) == ["rfq", "quote", "reject", "completed"]
    assert "satisfaction=none" in model.messages()["instance"].iloc[-1] and model.finished()


def test_runs_are_reproducible_per_seed():
    first = experiments.external_event(seed=7)["external-event"]
    again = experiments.external_event(seed=7)["external-event"]
    assert first.messages().equals(again.messages()) and first.frame().equals(again.frame())
    assert first.summary() == again.summary()
    other = experiments.external_event(seed=8)["external-event"]
    assert not first.messages().equals(other.messages())  # other IDs, other delays


def test_branching_follows_the_users_delivery_preference():
    paths = {name: runs()[f"branching-{name}"].delivery_path() for name in experiments.BRANCHES}
    assert paths == {"urgent": "express", "cheapest": "standard", "ambiguous": "standard"}
    for name in experiments.BRANCHES:
        assert list(runs()[f"branching-{name}"].messages()["message"])[-1] == "receipt"


def test_an_external_event_starts_a_second_enactment_with_its_own_bindings():
    model = experiments.external_event(event_step=2)["external-event"]
    ahoy = model.agent(AHOY)
    assert not ahoy.events.pending and len(ahoy.events.handled) == 1
    log = model.messages()
    rfqs = log[log["message"] == "rfq"]
    assert list(rfqs["step"]) == [1, 2]  # the trolley's rfq follows the event, while the pen is under way
    assert log[log["message"] == "completed"]["step"].min() > 2
    state = ahoy.states["Purchase"]
    known = {
        k["item"]: k
        for k in (state.knowledge({"ID": i.payload["ID"]}) for i in state.history if i.schema.name == "rfq")
    }
    trolley = TROLLEY["metadata"]
    assert known["pen"]["address"] == RALEIGH and known["pen"]["price"] <= 20
    assert known["trolley"]["address"] == trolley["address"] and known["trolley"]["price"] <= trolley["budget"]
    assert known["pen"]["ID"] != known["trolley"]["ID"]
    assert (log["sender"] == AHOY).sum() == 6  # rfq, accept, completed for each: the paper's 6


class GreedyBuyer(Policy):
    """The Buyer's rule brain, and after each accept a reject too: its 'out resp' is already bound."""

    def __init__(self, buyer: Policy):
        self.buyer = buyer

    def decide(self, turn: Turn) -> list[Instance]:
        chosen = self.buyer.decide(turn)
        protocol = turn.agent.states["Purchase"].protocol
        rejects = [
            Instance.of(
                protocol,
                "reject",
                ID=i.payload["ID"],
                item=i.payload["item"],
                price=i.payload["price"],
                outcome="no",
                resp="no",
            )
            for i in chosen
            if i.schema.name == "accept"
        ]
        return chosen + rejects


def test_a_violating_policy_is_refused_and_counted_while_the_enactment_goes_on():
    model = AhoyEnactment(rng=0)
    (seat,) = model.seats
    seat.policy = GreedyBuyer(seat.policy)
    model.run()
    violations = model.agent(AHOY).violations
    assert model.violations == 1 and "already bound" in violations[0]
    assert "reject" not in set(model.messages()["message"]) and model.finished()
    assert model.frame()["violations"].is_monotonic_increasing and model.frame()["violations"].iloc[-1] == 1


def test_brains_and_counterparts_refuse_roles_they_do_not_know():
    with pytest.raises(KeyError, match="no rule brain for Purchase:Seller"):
        rule_brain("Purchase", "Seller", Goal())
    with pytest.raises(KeyError, match="no counterpart for Purchase:Buyer"):
        Counterpart("Purchase", "Buyer")


def test_the_goal_comes_from_the_parameters_unless_given():
    assert AhoyEnactment().pursued_goal == Goal(items=("pen",), budget=20.0, address=RALEIGH)
    urgent = AhoyEnactment(protocols="flexible_purchase", item="trolley", budget=30, delivery="urgent")
    assert urgent.pursued_goal == Goal(items=("trolley",), budget=30.0, address=RALEIGH, delivery="urgent")
    assert AhoyEnactment(protocols="logistics").pursued_goal.orders == CONCURRENT.orders
    assert AhoyEnactment(protocols="purchase+logistics").pursued_goal is CONCURRENT
    mine = Goal(items=("lamp",), budget=12, address="Elm St")
    model = AhoyEnactment(goal=mine, item="pen").run()
    assert model.pursued_goal is mine and "item=lamp" in model.messages()["instance"].iloc[0] and model.finished()


@pytest.mark.parametrize(
    "params, problem",
    [
        ({"max_delay": 0}, "max_delay=0 is out of range"),
        ({"max_steps": math.inf}, "max_steps=inf is not an integer"),
        ({"max_steps": 10**9}, "max_steps=1000000000 is out of range"),
        ({"budget": math.nan}, "budget=nan is not a finite number"),
        ({"time_limit_s": 0}, "time_limit_s=0 is out of range"),
        ({"event_step": 2.0}, "event_step=2.0 is not an integer; pass 2"),
        ({"event_step": 20, "max_steps": 10}, "event_step=20 comes after the last step"),
        ({"protocols": "flexible"}, "did you mean 'flexible_purchase'"),
        ({"goal": "a pen"}, "goal takes a Goal"),
    ],
)
def test_every_parameter_is_bounded_and_checked(params, problem):
    with pytest.raises(ParameterError, match=problem):
        AhoyEnactment(**params)


def test_a_run_stops_at_its_step_and_time_limits():
    assert AhoyEnactment(max_steps=3).run().steps == 3
    stopped = AhoyEnactment(time_limit_s=1e-9).run()  # §3.3's time limit: any step takes longer
    assert stopped.steps == 1 and not stopped.finished() and stopped.summary()["out_of_time"]
    assert not AhoyEnactment(max_steps=3).run().summary()["out_of_time"]  # off by default: nothing depends on time


def test_the_frame_has_a_row_per_step_from_the_initial_state():
    model = runs()["external-event"]
    frame = model.frame()
    assert list(frame.columns) == [
        "step",
        "messages",
        "ahoy_messages",
        "in_transit",
        "decisions",
        "llm_calls",
        "violations",
        "finished",
    ]
    assert list(frame["step"]) == list(range(model.steps + 1))
    assert frame.iloc[0].tolist() == [0, 0, 0, 0, 0, 0, 0, False]
    assert frame.iloc[-1][["messages", "ahoy_messages", "decisions"]].tolist() == [
        len(model.messages()),
        6,
        model.summary()["decisions"],
    ]
    assert frame["finished"].iloc[-1] and not frame["finished"].iloc[:-1].any()


def test_the_summary_holds_no_wall_time_and_a_figure_is_the_same_on_every_run(tmp_path):
    """The defect fixed: ``coordkit reproduce ahoy-scenarios`` wrote each run's wall time, so a new CSV each time."""
    assert "seconds" not in AhoyEnactment().run().summary()
    first, second = (experiments.scenarios(2, 0) for _ in range(2))
    assert "seconds" not in first.columns and "llm_fallbacks" not in first.columns
    first.to_csv(tmp_path / "first.csv", index=False)
    second.to_csv(tmp_path / "second.csv", index=False)
    assert (tmp_path / "first.csv").read_bytes() == (tmp_path / "second.csv").read_bytes()


def test_the_figure_sets_the_kit_beside_the_paper():
    from coordkit import figures

    figure = figures.registered()["ahoy-scenarios"]
    frame = figure.compute(1, 0)
    assert len(frame) == 7 and (frame["violations"] == 0).all()
    compared = figure.compare(frame).set_index("metric")
    assert list(compared.columns) == ["paper", "kit"]
    assert compared.loc["branching-urgent: delivery", "kit"] == "express"
    assert compared.loc["freeness-purchase: llm_calls", "paper"] == "4 LLM calls"
    assert compared.loc["concurrent: seconds", "kit"] == "not comparable: rule brains, no LLM calls"
    assert not compared["kit"].str.contains(r"\d s\b").any()  # no wall time anywhere
    assert figure.chart(frame).to_dict()["mark"]["type"] == "bar"


@pytest.mark.parametrize("event_step", [None, 2])
def test_the_sequence_diagram_takes_its_time_axis_from_its_data(event_step):
    """Lifelines from step 0 to a step past the last message, and no fixed domain: a panel's next enactment changes
    only the diagram's data and height, which the page updates in place. Each step is tall enough for its
    messages' labels."""
    log = AhoyEnactment(event_step=event_step, rng=0).run().messages()
    spec = charts.sequence_diagram(log, "an enactment").to_dict()  # validated against the Vega-Lite schema
    lanes, arrows = spec["layer"][0], spec["layer"][1]
    lifelines = spec["datasets"][lanes["data"]["name"]]
    arrows_y = [row["y"] for row in spec["datasets"][spec["data"]["name"]]]
    assert "data" not in arrows  # the arrows, their heads and labels share the layer's data
    assert {(line["start"], line["end"]) for line in lifelines} == {(0.0, max(arrows_y) + 1)}
    assert not [layer for layer in spec["layer"] if "domain" in layer["encoding"]["y"].get("scale", {})]
    busiest = int(log.groupby("step").size().max())
    pixels_per_step = (spec["height"] - 40) / (max(arrows_y) + 1)
    closest = pixels_per_step / (busiest + 1) if busiest > 1 else pixels_per_step  # two arrows' distance
    assert closest >= charts.MESSAGE_GAP_PX - 0.5  # each label clear of the arrow above it
    svg = vl_convert.vegalite_to_svg(spec)
    assert svg.startswith("<svg") and "NaN" not in svg


def test_the_sequence_diagram_colours_each_enactment_and_names_it_in_a_legend():
    """§5.4's interleaved enactments: the pen's messages share one colour, the trolley's another, in the order they
    start; §5.2's orders are coloured by order (their items' messages included)."""
    log = experiments.external_event(seed=0)["external-event"].messages()
    spec = charts.sequence_diagram(log, "two enactments").to_dict()
    arrows = spec["layer"][1]
    colour = arrows["encoding"]["color"]
    assert colour["field"] == "enactment" and colour["legend"]["title"] == "enactment"
    assert colour["sort"] == {"field": "started", "op": "min"}
    rows = spec["datasets"][spec["data"]["name"]]
    by_enactment = {}
    for row in rows:
        by_enactment.setdefault(row["enactment"], []).append(row["instance"])
    assert sorted(by_enactment, key=lambda e: min(r["y"] for r in rows if r["enactment"] == e)) == [
        f"Purchase {key}" for key in dict.fromkeys(log["enactment"])
    ]
    assert len(by_enactment) == 2
    for enactment, instances in by_enactment.items():
        item = enactment.split()[1].split("-")[0]
        assert len(instances) == 6 and all(f"item={item}" in i for i in instances)
    concurrent = experiments.concurrent_roles(seed=0)["concurrent"].messages()
    logistics = concurrent[concurrent["protocol"] == "Logistics"]
    orders = logistics["instance"].str.extract(r"orderID=([^,)]+)")[0]
    assert (logistics["enactment"] == orders).all() and logistics["enactment"].nunique() == 2


def test_the_explore_panel_starts_with_the_pen_purchase_and_draws_its_diagram_and_log():
    panel = panels.explore_panel()
    assert panel.values == {
        "protocols": "purchase",
        "item": "pen",
        "budget": 20.0,
        "delivery": "",
        "seed": 0,
        "inject": False,
        "event_step": 2,
    }
    assert panel.params["protocols"].values == ("purchase", "logistics", "flexible_purchase", "purchase+logistics")
    assert (panel.controls["budget"].min, panel.controls["budget"].max) == (0, 60)
    assert (panel.controls["event_step"].min, panel.controls["event_step"].max) == (1, 8)
    assert panel.controls["inject"].description == "inject the trolley event"
    run = AhoyEnactment(rng=0).run()
    title = "Purchase: 6 messages (3 by ahoy), 0 violations, terminated: True"
    assert panel.output.children[0].spec == spec_of(charts.sequence_diagram(run.messages(), title))
    assert panel.result.messages().equals(run.messages()) and panel.last_error is None


def test_the_explore_panel_injects_the_trolley_event_at_the_chosen_step():
    panel = panels.explore_panel()
    panel.controls["inject"].value = True
    assert panel.result.event_step == 2 and panel.last_error is None
    assert panel.result.messages()["enactment"].nunique() == 2  # the pen's enactment and the trolley's (§5.4)
    assert panel.output.children[0].spec["title"].startswith("Purchase: 12 messages")


@pytest.mark.parametrize(
    "protocol, greyed",
    [
        ("purchase", {"delivery"}),
        ("logistics", {"item", "budget", "delivery"}),
        ("flexible_purchase", set()),
        ("purchase+logistics", {"item", "budget", "delivery"}),
    ],
)
def test_the_explore_panel_greys_out_what_the_protocol_or_the_event_ignores(protocol, greyed):
    panel = panels.explore_panel()
    panel.controls["protocols"].value = panel.params["protocols"].values.index(protocol)
    assert {name for name, control in panel.controls.items() if control.disabled} == greyed | {"event_step"}
    panel.controls["inject"].value = True
    assert {name for name, control in panel.controls.items() if control.disabled} == greyed
    assert panel.result.protocols == protocol and panel.last_error is None
