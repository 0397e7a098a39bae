"""The Ahoy state view (an enactment as it stands, which the player of notebook 05 redraws at every step) and the
player: the diagram holds the model's messages at every step, marks this step's as new and those in transit as on
their way, and keeps its lanes through the run."""

import pytest

from coordkit.ahoy import charts, panels
from coordkit.ahoy.model import AHOY, AhoyEnactment
from coordkit.live_chart import spec_of
from coordkit.views import view_of


def rows_of(spec: dict, *kinds: str) -> list[dict]:
    """The rows of the view's table of these kinds: "message", "event", "lifeline", "now" (the band of the step)."""
    return [row for row in spec["datasets"][spec["data"]["name"]] if row["kind"] in kinds]


def arrows_of(spec: dict) -> list[dict]:
    return rows_of(spec, "message", "event")


def lifelines_of(spec: dict) -> list[dict]:
    return rows_of(spec, "lifeline")


def test_the_ahoy_enactment_declares_the_diagram_so_far_as_its_state_view():
    assert view_of(AhoyEnactment) is charts.ahoy_enactment_now


def test_messages_are_placed_in_their_step_and_between_their_agents_lanes():
    """Worked by hand: two messages in step 1 sit at 1 and 1 + 1/3 of a step, one in step 3 at 3; an arrow to the
    right has its head just left of the recipient's lane, one to the left just right of it."""
    log = [
        {"step": 1, "protocol": "P", "enactment": "e1", "message": "ask", "sender": "a", "recipient": "c"},
        {"step": 1, "protocol": "P", "enactment": "e2", "message": "ask", "sender": "a", "recipient": "b"},
        {"step": 3, "protocol": "P", "enactment": "e1", "message": "tell", "sender": "c", "recipient": "a"},
    ]
    rows = charts.placed(log, ["a", "b", "c"])
    assert [row["y"] for row in rows] == [1, pytest.approx(1 + 1 / 3), 3]
    assert [(row["x"], row["x2"], row["mid"]) for row in rows] == [(0, 2, 1), (0, 1, 0.5), (2, 0, 1)]
    assert [row["head"] for row in rows] == [pytest.approx(1.94), pytest.approx(0.94), pytest.approx(0.06)]
    assert [row["arrow"] for row in rows] == ["triangle-right", "triangle-right", "triangle-left"]
    assert [(row["key"], row["enactment"]) for row in rows] == [("e1", "P e1"), ("e2", "P e2"), ("e1", "P e1")]
    assert charts.step_px(rows) == charts.MESSAGE_GAP_PX * 3  # the busiest step has two messages


def test_the_view_holds_the_models_messages_at_every_step_and_marks_this_steps_as_new():
    """At step k the arrows are the log's messages in order; those sent at step k are new, those still in transit
    on their way, the others received; the lifelines run from above step 0 to step k + 1."""
    model = AhoyEnactment(rng=0)
    statuses_seen = set()
    while True:
        spec = spec_of(charts.ahoy_enactment_now(model))
        rows = arrows_of(spec)
        assert [(r["step"], r["message"], r["sender"], r["recipient"]) for r in rows] == [
            (e["step"], e["message"], e["sender"], e["recipient"]) for e in model.log
        ]
        travelling = {str(delivery.instance) for delivery in model.in_transit}
        for row in rows:
            expected = (
                "sent this step"
                if row["step"] == model.steps
                else "on its way"
                if row["instance"] in travelling
                else "received"
            )
            assert row["status"] == expected
            statuses_seen.add(row["status"])
        assert {(line["x"], line["y2"]) for line in lifelines_of(spec)} == {(i, model.steps + 1) for i in range(3)}
        [band] = rows_of(spec, "now")
        assert all(band["y"] <= row["y"] < band["y2"] for row in rows if row["status"] == "sent this step")
        assert spec["title"][0].startswith(f"Purchase · step {model.steps} of at most 200 · ")
        if not model.running:
            break
        model.step()
    assert statuses_seen == set(charts.STATUSES)
    assert spec["title"] == [
        "Purchase · step 10 of at most 200 · done: every role has terminated",
        "messages sent: 6 (3 by ahoy) · on their way: 0 · refused by the adapter: 0",
    ]


def test_every_lane_is_there_from_step_0_in_the_order_of_the_roles_and_the_width_stays():
    """Purchase + Logistics: the Ahoy agent (Buyer and Merchant), then Purchase's other roles, then Logistics'; the
    lanes, the width and the colours' domain do not move as the run goes on, while the height grows a step at a
    time."""
    model = AhoyEnactment(protocols="purchase+logistics", rng=0)
    first = spec_of(charts.ahoy_enactment_now(model))
    assert charts.lifeline_order(model) == [AHOY, "seller", "shipper", "wrapper", "labeler", "packer"]
    assert charts.agent_label(model, AHOY) == (AHOY, "Buyer, Merchant")
    assert charts.agent_label(model, "seller") == ("seller", "")
    assert arrows_of(first) == [] and len(lifelines_of(first)) == 6
    model.run()
    last = spec_of(charts.ahoy_enactment_now(model))
    assert last["width"] == first["width"] <= 968
    assert last["layer"] == first["layer"]  # the marks, their scales and axes: only the data and the title change
    step = charts.step_px(rows_of(last, "message"))
    assert last["height"] == pytest.approx(step * (model.steps + 1) + charts.MESSAGE_GAP_PX - 2, abs=1)
    slots = {row["enactment"]: row["slot"] for row in rows_of(last, "message")}
    assert list(slots.values()) == ["0", "1", "2", "3", "4"]  # five enactments, coloured in the order they start


@pytest.mark.parametrize("event_step", [2, 5])
def test_the_trolley_event_is_drawn_into_the_ahoy_agents_lifeline_once_it_has_come(event_step):
    model = AhoyEnactment(event_step=event_step, rng=0)
    for _ in range(event_step):
        assert not rows_of(spec_of(charts.ahoy_enactment_now(model)), "event")
        model.step()
    events = rows_of(spec_of(charts.ahoy_enactment_now(model)), "event")
    assert [(row["y"], row["x2"], row["message"]) for row in events] == [(event_step, 0, "event")]


def test_the_player_plays_one_enactment_step_by_step_with_the_explore_panels_goal_controls():
    player = panels.player_panel()
    assert player.values == {
        "protocols": "purchase",
        "item": "pen",
        "budget": 20.0,
        "delivery": "",
        "max_delay": 2,
        "seed": 0,
    }
    assert player.model.steps == 0 and player.controls["delivery"].disabled
    assert player.step() and player.model.steps == 1
    assert player.output.children[0].spec == spec_of(charts.ahoy_enactment_now(player.model))
    player.run_to_end()
    assert player.model.finished() and player.last_error is None
    assert player.output.children[0].spec["title"][0].endswith("done: every role has terminated")
    player.controls["protocols"].value = player.params["protocols"].values.index("logistics")
    assert player.model.protocols == "logistics" and player.model.steps == 0
    assert {name for name, control in player.controls.items() if control.disabled} == {"item", "budget", "delivery"}
    assert panels.player_panel(start={"max_delay": 4}).model.max_delay == 4
