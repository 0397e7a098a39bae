"""Notebook 05's panels: the player of §1, one enactment by an Ahoy agent with a rule brain played step by step,
and the explore panel of §7, one enactment for the protocol, goal, seed and external event (§5.4) a student picks."""

from coordkit.ahoy import charts
from coordkit.ahoy.model import PROTOCOL_NAMES, AhoyEnactment
from coordkit.player import ModelPlayer, model_player
from coordkit.ui import CheckboxControl, ExperimentPanel, SliderControl, controls

BUYS_ONE_ITEM = ("purchase", "flexible_purchase")  # the others pursue Listing 1.6's goal
GOAL = ["protocols", "item", "budget", "delivery"]  # the controls of what the Ahoy agent enacts, and for what


def player_panel(start: dict | None = None) -> ModelPlayer:
    """Notebook 05, §1 "Watch one run": one enactment played step by step (▶ Play, Step, Reset) for the protocols
    and goal, message delays and seed a student picks; its state view (``charts.ahoy_enactment_now``) is the
    sequence diagram so far, this step's messages marked new."""
    return model_player(
        AhoyEnactment, [*GOAL, "max_delay"], start=start, title="One enactment, step by step", **goal_conditions()
    )


def explore_panel() -> ExperimentPanel:
    """Notebook 05, §7 "Explore": the protocols, the goal (item, budget, delivery), the seed and the trolley event;
    the enactment's sequence diagram, then its message log."""
    return ExperimentPanel(
        play,
        [
            *controls(AhoyEnactment, GOAL, **goal_conditions()),
            SliderControl("seed", 0, 20, default=0),
            CheckboxControl("inject", default=False, label="inject the trolley event"),
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


def goal_conditions() -> dict[str, dict]:
    """When the goal's controls matter: item and budget for one-item purchases, delivery for FlexiblePurchase."""
    return {
        "item": {"active_when": buys_one_item},
        "budget": {"active_when": buys_one_item},
        "delivery": {"active_when": chooses_delivery},
    }


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
