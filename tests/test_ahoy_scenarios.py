"""Ahoy §5 offline: termination derived from the protocols, the rule brains and counterparts, and the four
scenarios — no violations, every role done, reproducible per seed, the right branch, separate event bindings."""

from functools import cache

import pytest

from coordkit.ahoy import scenarios
from coordkit.ahoy.brains import brain_factory
from coordkit.ahoy.goal import Goal
from coordkit.ahoy.termination import final_messages, finished
from coordkit.bspl import load
from coordkit.bspl.semantics import Instance, LocalState

PURCHASE, LOGISTICS, FLEXIBLE = load("purchase"), load("logistics"), load("flexible_purchase_corrected")


def test_an_order_takes_several_items():
    """A second RequestWrapping for an order starts a new enactment (its out key itemID is fresh)."""
    merchant = LocalState(LOGISTICS, ("Merchant",))
    merchant.send(Instance.of(LOGISTICS, "RequestLabel", orderID="o", address="Bob's House"))
    merchant.send(Instance.of(LOGISTICS, "RequestWrapping", orderID="o", itemID="i1", item="plate"))
    assert any(f.schema.name == "RequestWrapping" for f in merchant.enabled())


@cache
def runs(seed: int = 0) -> dict[str, scenarios.Run]:
    return {run.scenario: run for run in scenarios.all_scenarios(seed)}


def test_termination_conditions_come_from_the_protocols():
    def finals(protocol, role):
        return [m.name for m in final_messages(protocol, role)]

    assert finals(PURCHASE, "Buyer") == ["reject", "deliver", "completed"]
    assert finals(LOGISTICS, "Merchant") == ["Packed"] and finals(FLEXIBLE, "FlexibleCustomer") == ["receipt"]
    buyer = LocalState(PURCHASE, ("Buyer",))
    for name, values in [("rfq", {}), ("quote", {"price": 4}), ("accept", {"price": 4, "address": "a", "resp": "ok"}),
                         ("deliver", {"address": "a", "outcome": "delivered"})]:
        buyer.history.append(Instance.of(PURCHASE, name, ID="1", item="pen", **values))
    assert not finished(buyer, {"ID": "1"})  # delivered, but completed is still enabled
    buyer.send(Instance.of(PURCHASE, "completed", ID="1", item="pen", price=4, satisfaction="satisfied"))
    assert finished(buyer, {"ID": "1"})


def test_a_customer_that_paid_waits_for_its_receipt():
    customer = LocalState(FLEXIBLE, ("FlexibleCustomer",))
    for name, values in [("rfq", {}), ("offer", {"price": 4}), ("accept", {"price": 4, "confirmation": "c"}),
                         ("standard_delivery_request", {"confirmation": "c", "standard_delivery": "s"}),
                         ("standard_delivery", {"standard_delivery": "s"}),
                         ("pay_standard", {"price": 4, "standard_delivery": "s", "payment": "$4"})]:
        customer.history.append(Instance.of(FLEXIBLE, name, ID="1", item="pen", **values))
    assert not finished(customer, {"ID": "1"})
    customer.history.append(Instance.of(FLEXIBLE, "receipt", ID="1", item="pen", payment="$4", done=True))
    assert finished(customer, {"ID": "1"})


@pytest.mark.parametrize("name", [
    "freeness-purchase",
    "freeness-logistics",
    "concurrent",
    "branching-urgent", "branching-cheapest", "branching-ambiguous", "external-event",
])
def test_every_scenario_completes_without_violations_and_every_role_terminates(name):
    run = runs()[name]
    assert run.model.violations == 0 and run.terminated and not run.model.in_transit
    assert run.summary()["llm_calls"] == 0 and run.summary()["decisions"] > 0


def test_the_buyer_takes_quotes_within_budget_and_the_merchant_wraps_only_what_arrived():
    run = runs()["concurrent"]
    accepted = [i.payload for i in run.model.agent(scenarios.AHOY).states["Purchase"].history
                if i.schema.name == "accept"]
    assert sorted(a["price"] for a in accepted) == [27, 39, 42]  # the paper's quotes, all within budget
    assert all(a["price"] <= scenarios.CONCURRENT.budget_for(a["item"]) and "Portland" in a["address"]
               for a in accepted)
    log = run.messages
    assert log[log["message"] == "RequestLabel"]["step"].max() < log[log["message"] == "quote"]["step"].min()
    delivered = log[log["message"] == "deliver"]
    for row in log[log["message"] == "RequestWrapping"].itertuples():
        item = row.instance.split("item=")[1].rstrip(")")
        assert (delivered["instance"].str.contains(f"item={item},") & (delivered["step"] < row.step)).any()
    purchase_ids = set(log[log["protocol"] == "Purchase"]["instance"].str.extract(r"ID=([^,]+)")[0])
    order_ids = set(log[log["protocol"] == "Logistics"]["instance"].str.extract(r"orderID=([^,]+)")[0])
    assert len(purchase_ids) == 3 and len(order_ids) == 2 and not purchase_ids & order_ids


def test_concurrent_roles_wrap_and_pack_every_item():
    log = runs()["concurrent"].messages
    assert (log["message"] == "Packed").sum() == 3 and (log["message"] == "completed").sum() == 3
    wrapped = log[log["message"] == "Wrapped"]["instance"]
    assert wrapped.str.contains("wooden bat.*wrapping=standard").any()
    assert wrapped.str.contains("glass vase.*wrapping=fragile").sum() == 1


def test_an_over_budget_quote_is_rejected_and_the_buyer_still_ends():
    run = scenarios.enact("tight", [PURCHASE], Goal(items=("pen",), budget=3, address="Main St"))
    assert list(run.messages["message"]) == ["rfq", "quote", "reject", "completed"]
    assert "satisfaction=none" in run.messages["instance"].iloc[-1] and run.terminated


def test_runs_are_reproducible_per_seed():
    first = scenarios.external_event(seed=7).messages
    assert first.equals(scenarios.external_event(seed=7).messages)
    assert not first.equals(scenarios.external_event(seed=8).messages)  # other IDs, other delays


def test_branching_follows_the_users_delivery_preference():
    paths = {name: scenarios.delivery_path(runs()[f"branching-{name}"]) for name in scenarios.BRANCHES}
    assert paths == {"urgent": "express", "cheapest": "standard", "ambiguous": "standard"}
    for name in scenarios.BRANCHES:
        assert list(runs()[f"branching-{name}"].messages["message"])[-1] == "receipt"


def test_an_external_event_starts_a_second_enactment_with_its_own_bindings():
    run = scenarios.external_event(at_step=2)
    ahoy = run.model.agent(scenarios.AHOY)
    assert not ahoy.events.pending and len(ahoy.events.handled) == 1
    log = run.messages
    rfqs = log[log["message"] == "rfq"]
    assert list(rfqs["step"]) == [1, 2]  # the trolley's rfq follows the event, while the pen is under way
    assert log[log["message"] == "completed"]["step"].min() > 2
    state = ahoy.states["Purchase"]
    known = {k["item"]: k for k in (state.knowledge({"ID": i.payload["ID"]}) for i in state.history
                                    if i.schema.name == "rfq")}
    trolley = scenarios.TROLLEY["metadata"]
    assert known["pen"]["address"] == scenarios.RALEIGH and known["pen"]["price"] <= 20
    assert known["trolley"]["address"] == trolley["address"] and known["trolley"]["price"] <= trolley["budget"]
    assert known["pen"]["ID"] != known["trolley"]["ID"]
    assert (log["sender"] == scenarios.AHOY).sum() == 6  # rfq, accept, completed for each: the paper's 6


def test_a_violating_decision_maker_is_refused_and_counted_while_the_enactment_goes_on():
    def greedy(protocol_name, role, goal):
        brain = brain_factory(protocol_name, role, goal)

        def decide(agent, forms, event):  # after each accept, a reject too: its 'out resp' is already bound
            chosen = brain(agent, forms, event)
            rejects = [Instance.of(agent.state_of(i).protocol, "reject", ID=i.payload["ID"], item=i.payload["item"],
                                   price=i.payload["price"], outcome="no", resp="no")
                       for i in chosen if i.schema.name == "accept"]
            return chosen + rejects

        return decide

    run = scenarios.programming_freeness(brain_factory=greedy)[0]
    violations = run.model.agent(scenarios.AHOY).violations
    assert run.model.violations == 1 and "already bound" in violations[0]
    assert "reject" not in set(run.messages["message"]) and run.terminated


def test_brains_and_counterparts_refuse_roles_they_do_not_know():
    from coordkit.ahoy.counterparts import counterpart

    with pytest.raises(KeyError, match="no rule brain for Purchase:Seller"):
        brain_factory("Purchase", "Seller", Goal())
    with pytest.raises(KeyError, match="no counterpart for Purchase:Buyer"):
        counterpart("Purchase", "Buyer")


def test_the_figure_sets_the_kit_beside_the_paper():
    from coordkit import figures

    figure = figures.get("ahoy-scenarios")
    frame = figure.compute(1, 0)
    assert len(frame) == 7 and (frame["violations"] == 0).all()
    compared = figure.compare(frame)
    assert list(compared.columns) == ["metric", "paper", "kit"]
    assert compared.set_index("metric").loc["branching-urgent: delivery", "kit"] == "express"
    assert figure.chart(frame).to_dict()["mark"]["type"] == "bar"
