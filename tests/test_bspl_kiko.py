"""The Kiko-style programming model: decision makers over enabled forms, checked emissions, seeded delivery."""

import math

import pytest

from coordkit.ahoy import charts
from coordkit.bspl import load
from coordkit.bspl.kiko import RECEIVED, START, EnactmentModel, enactment_of
from coordkit.bspl.semantics import Instance
from coordkit.live_chart import spec_of
from coordkit.parameters import ParameterError
from coordkit.views import view_of

PURCHASE = load("purchase")
SYSTEM = {"Purchase": {"Buyer": "ahoy", "Seller": "shop", "Shipper": "ups"}}


def purchase(seed=0, max_delay=2, greedy_buyer=False) -> EnactmentModel:
    return purchase_system(seed, max_delay, greedy_buyer).run()


def purchase_system(seed=0, max_delay=2, greedy_buyer=False) -> EnactmentModel:
    """Purchase with rule-based decision makers, at step 0."""
    model = EnactmentModel(protocols=[PURCHASE], system=SYSTEM, max_delay=max_delay, rng=seed)
    buyer, seller, shipper = (model.agent(n) for n in ("ahoy", "shop", "ups"))

    @buyer.decision
    def buy(agent, forms, event):
        chosen = []
        for form in forms:
            name = form.schema.name
            if name == "rfq" and event.kind == START:
                chosen.append(form.bind(PURCHASE, ID="1", item="pen"))
            elif name == "accept" and event.kind == RECEIVED and event.instance.schema.name == "quote":
                chosen.append(form.bind(PURCHASE, address="Main St", resp="ok"))
                if greedy_buyer:  # tries to reject too: the adapter must refuse it
                    chosen.append(Instance.of(PURCHASE, "reject", ID="1", item="pen", price=4, outcome="no", resp="no"))
            elif name == "completed" and event.kind == RECEIVED and event.instance.schema.name == "deliver":
                chosen.append(form.bind(PURCHASE, satisfaction="happy"))
        return chosen

    seller.decision(
        lambda agent, forms, event: [
            f.bind(PURCHASE, price=4) if f.schema.name == "quote" else f.bind(PURCHASE, shipped=True) for f in forms
        ]
    )
    shipper.decision(lambda agent, forms, event: [f.bind(PURCHASE, outcome="delivered") for f in forms])
    return model


def test_decision_makers_enact_purchase_to_the_end():
    model = purchase()
    messages = model.messages()
    assert list(messages["message"]) == ["rfq", "quote", "accept", "ship", "deliver", "completed"]
    assert list(messages["recipient"]) == ["shop", "ahoy", "shop", "ups", "ahoy", "shop"]
    assert model.violations == 0 and not model.in_transit


def test_the_adapter_refuses_a_violating_message_and_the_enactment_goes_on():
    model = purchase(greedy_buyer=True)
    assert model.violations == 1 and "already bound" in model.agent("ahoy").violations[0]
    assert "reject" not in set(model.messages()["message"]) and "completed" in set(model.messages()["message"])


def test_delivery_is_asynchronous_and_seeded():
    steps = {seed: list(purchase(seed, max_delay=4).messages()["step"]) for seed in range(6)}
    assert steps[3] == list(purchase(3, max_delay=4).messages()["step"])
    assert len({tuple(s) for s in steps.values()}) > 1


def test_the_frame_counts_messages_step_by_step_from_the_initial_state():
    model = purchase()
    frame = model.frame()
    assert list(frame.columns) == ["step", "messages", "in_transit", "violations"]
    assert list(frame["step"]) == list(range(model.steps + 1)) and frame.iloc[0].tolist() == [0, 0, 0, 0]
    sent = model.messages().groupby("step").size().reindex(frame["step"], fill_value=0).cumsum()
    assert list(frame["messages"]) == list(sent)
    assert frame["messages"].iloc[-1] == 6 and frame["in_transit"].iloc[-1] == 0
    assert model.summary() == {"steps": model.steps, "messages": 6, "in_transit": 0, "violations": 0}


def test_without_a_system_each_role_is_played_by_an_agent_named_after_it():
    model = EnactmentModel(rng=0)
    assert sorted(model.by_name) == ["Buyer", "Seller", "Shipper"] and list(model.in_play) == ["Purchase"]
    assert model.agent("Buyer").states["Purchase"].roles == ("Buyer",)
    assert model.run().steps == 1 and model.summary()["messages"] == 0  # nobody decides: nothing happens


def test_bad_systems_and_values_are_refused():
    with pytest.raises(ValueError, match="max_delay=0 is out of range"):
        EnactmentModel(protocols=[PURCHASE], system=SYSTEM, max_delay=0)
    with pytest.raises(ValueError, match="were not given"):
        EnactmentModel(protocols=[PURCHASE], system={"Logistics": {"Merchant": "m"}})
    with pytest.raises(ParameterError, match=r"leaves the roles \['Shipper'\] of Purchase to nobody"):
        EnactmentModel(protocols=[PURCHASE], system={"Purchase": {"Buyer": "b", "Seller": "s"}})
    with pytest.raises(ParameterError, match="list of Protocol objects"):
        EnactmentModel(protocols=["purchase"])
    with pytest.raises(ParameterError, match="max_steps"):
        EnactmentModel(max_steps=math.inf)


def test_the_log_names_each_message_s_outermost_enactment():
    """Purchase's enactments are named by ID; Logistics' by the order (orderID, which every message carries), so an
    item's messages belong to their order's enactment."""
    assert PURCHASE.enactment_keys == ("ID",) and load("logistics").enactment_keys == ("orderID",)
    assert set(purchase().messages()["enactment"]) == {"1"}
    logistics = load("logistics")
    wrapping = Instance.of(logistics, "RequestWrapping", orderID="o1", itemID="i1", item="vase")
    label = Instance.of(logistics, "RequestLabel", orderID="o1", address="Alice's House")
    assert enactment_of(logistics, wrapping) == enactment_of(logistics, label) == "o1"


def test_the_state_view_draws_the_enactment_so_far_with_the_messages_on_their_way():
    """Worked by hand with delays of one step: rfq at step 1, quote at 2, accept at 3, each arriving a step later.
    At step 3 the rfq and the quote have arrived, the accept is new; the title counts the one message on its way."""
    assert view_of(EnactmentModel) is charts.kiko_enactment_now
    model = purchase_system(max_delay=1)
    for _ in range(3):
        model.step()
    spec = spec_of(charts.kiko_enactment_now(model))
    rows = [row for row in spec["datasets"][spec["data"]["name"]] if row["kind"] == "message"]
    assert [(row["message"], row["step"], row["status"]) for row in rows] == [
        ("rfq", 1, "received"),
        ("quote", 2, "received"),
        ("accept", 3, "sent this step"),
    ]
    assert [(row["x"], row["x2"]) for row in rows] == [(0, 1), (1, 0), (0, 1)]  # Buyer, Seller, Shipper's lanes
    assert charts.agent_label(model, "ups") == ("ups", "Shipper")
    assert spec["title"] == [
        "Purchase · step 3 of at most 100 · under way",
        "messages sent: 3 · on their way: 1 · refused by the adapters: 0",
    ]
    model.run()
    assert model.steps == 7  # completed is sent at step 6; step 7 is quiet
    assert spec_of(charts.kiko_enactment_now(model))["title"][0] == (
        "Purchase · step 7 of at most 100 · over: nobody has more to say"
    )
