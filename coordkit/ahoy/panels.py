"""Notebook 05's panel: the explore panel of §7, one enactment by an Ahoy agent with a rule brain for the protocol,
goal, seed and external event (§5.4) a student picks."""

from coordkit.ahoy import charts
from coordkit.ahoy.model import PROTOCOL_NAMES, AhoyEnactment
from coordkit.ui import ExperimentPanel, Slider, Toggle, controls

BUYS_ONE_ITEM = ("purchase", "flexible_purchase")  # the others pursue Listing 1.6's goal


def explore_panel() -> ExperimentPanel:
    """Notebook 05, §7 "Explore": the protocols, the goal (item, budget, delivery), the seed and the trolley event;
    the enactment's sequence diagram, then its message log."""
    return ExperimentPanel(
        play,
        [
            *controls(
                AhoyEnactment,
                ["protocols", "item", "budget", "delivery"],
                item={"active_when": buys_one_item},
                budget={"active_when": buys_one_item},
                delivery={"active_when": chooses_delivery},
            ),
            Slider("seed", 0, 20, default=0),
            Toggle("inject", default=False, label="inject the trolley event"),
            *controls(
                AhoyEnactment,
                ["event_step"],
                event_step={"default": 2, "label": "event at step", "active_when": injects_the_event},
            ),
        ],
        chart=show,
        title="An Ahoy agent with a rule brain",
    )


def play(
    protocols: str, item: str, budget: float, delivery: str, seed: int, inject: bool, event_step: int
) -> AhoyEnactment:
    """One enactment for the chosen goal, with the trolley request at `event_step` if `inject` is on."""
    event_step = event_step if inject else None
    return AhoyEnactment(
        protocols=protocols, item=item, budget=budget, delivery=delivery, event_step=event_step, rng=seed
    ).run()


def show(model: AhoyEnactment) -> list:
    """The enactment's sequence diagram, titled with its counts and whether it terminated, then its message log."""
    s = model.summary()
    title = (
        f"{PROTOCOL_NAMES[model.protocols]}: {s['messages']} messages ({s['ahoy_messages']} by ahoy), "
        f"{s['violations']} violations, terminated: {s['terminated']}"
    )
    log = model.messages()
    return [charts.sequence_diagram(log, title), log]


def buys_one_item(values: dict) -> bool:
    """Item and budget make the goal only of Purchase and FlexiblePurchase: Logistics and Purchase + Logistics
    pursue Listing 1.6's orders."""
    return values["protocols"] in BUYS_ONE_ITEM


def chooses_delivery(values: dict) -> bool:
    """Only FlexiblePurchase's customer chooses between standard and express delivery (§5.3)."""
    return values["protocols"] == "flexible_purchase"


def injects_the_event(values: dict) -> bool:
    """The event's step matters only when the trolley event is injected."""
    return values["inject"]
