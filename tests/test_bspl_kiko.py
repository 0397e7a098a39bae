"""The Kiko-style programming model: decision makers over enabled forms, checked emissions, seeded delivery."""

import pytest

from coordkit.bspl import load
from coordkit.bspl.kiko import RECEIVED, START, EnactmentModel, messages_frame
from coordkit.bspl.semantics import Instance

PURCHASE = load("purchase")
SYSTEM = {"Purchase": {"Buyer": "ahoy", "Seller": "shop", "Shipper": "ups"}}


def purchase(seed=0, max_delay=2, greedy_buyer=False) -> EnactmentModel:
    model = EnactmentModel([PURCHASE], SYSTEM, max_delay=max_delay, rng=seed)
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

    seller.decision(lambda agent, forms, event: [
        f.bind(PURCHASE, price=4) if f.schema.name == "quote" else f.bind(PURCHASE, shipped=True) for f in forms])
    shipper.decision(lambda agent, forms, event: [f.bind(PURCHASE, outcome="delivered") for f in forms])
    return model.run()


def test_decision_makers_enact_purchase_to_the_end():
    model = purchase()
    messages = messages_frame(model)
    assert list(messages["message"]) == ["rfq", "quote", "accept", "ship", "deliver", "completed"]
    assert list(messages["recipient"]) == ["shop", "ahoy", "shop", "ups", "ahoy", "shop"]
    assert model.violations == 0 and not model.in_transit


def test_the_adapter_refuses_a_violating_message_and_the_enactment_goes_on():
    model = purchase(greedy_buyer=True)
    assert model.violations == 1 and "already bound" in model.agent("ahoy").violations[0]
    assert "reject" not in set(messages_frame(model)["message"]) and "completed" in set(messages_frame(model)["message"])


def test_delivery_is_asynchronous_and_seeded():
    steps = {seed: list(messages_frame(purchase(seed, max_delay=4))["step"]) for seed in range(6)}
    assert steps[3] == list(messages_frame(purchase(3, max_delay=4))["step"])
    assert len({tuple(s) for s in steps.values()}) > 1


def test_bad_systems_are_refused():
    with pytest.raises(ValueError, match="at least one step"):
        EnactmentModel([PURCHASE], SYSTEM, max_delay=0)
    with pytest.raises(ValueError, match="were not given"):
        EnactmentModel([PURCHASE], {"Logistics": {"Merchant": "m"}})
