"""The Beer Game's policies: Sterman's rule, base-stock, REP ordering, the rule synthesiser and the LLM calls 1-2."""

from coordkit.policies import policy_from
from coordkit.rep.beer_game import stand_in
from coordkit.rep.beer_game.llm_policies import GameRules, a2a_policy, rep_policy, synthesis_policy
from coordkit.rep.beer_game.model import BeerGame
from coordkit.rep.beer_game.policies import (
    AnchorAndAdjust,
    BaseStock,
    REPOrdering,
    REPSituation,
    RuleSynthesis,
    StudentOrders,
)
from coordkit.rep.protocol import SynthesisRequest

from . import PolicyExample

RULES = GameRules(stages=4, rounds=20, order_delay=2, shipping_delay=2, holding_cost=0.5, backlog_cost=1.0)


def observations():
    """Every stage's observation in the first 8 rounds of a REP game (the demand step included)."""
    game = BeerGame(protocol="rep_textual", rng=0)
    seen = []
    for _ in range(8):
        game.step()
        seen += [stage.observation() for stage in game.chain]
    return seen


def situations():
    theta = {"target_inventory": 17.0, "order_adjustment": 0.26}
    return [REPSituation(seen, theta, 4.0 + seen.round % 3) for seen in observations()]


def synthesis_requests():
    game = BeerGame(protocol="rep_textual", rng=0).run()
    texts = game.frame().query("round > 0").groupby("round")["message"].apply(list)
    theta = {"target_inventory": 17.0, "order_adjustment": 0.26}
    return [
        SynthesisRequest(theta, own, (("a", left), ("b", right)))
        for own, left, right in (messages[1:4] for messages in texts)
    ]


def steady(seen) -> int:
    """A student's rule: order what was asked, and a case more while in backlog."""
    return int(seen.incoming_order) + (seen.backlog > 0)


EXAMPLES = [
    PolicyExample("anchor_and_adjust", lambda rng, client: AnchorAndAdjust(), observations),
    PolicyExample(  # a student's rule in a REP stage: it orders, the stage still sends its sensitivity
        "student_orders",
        lambda rng, client: StudentOrders(policy_from(steady), REPOrdering(AnchorAndAdjust())),
        situations,
    ),
    PolicyExample("base_stock", lambda rng, client: BaseStock(), observations),
    PolicyExample("rep_ordering", lambda rng, client: REPOrdering(AnchorAndAdjust()), situations),
    PolicyExample("rule_synthesis", lambda rng, client: RuleSynthesis(), synthesis_requests),
    PolicyExample(
        "llm_a2a_player",
        lambda rng, client: a2a_policy(client, AnchorAndAdjust(), RULES),
        observations,
        reply=stand_in.reply,
    ),
    PolicyExample(
        "llm_rep_player",
        lambda rng, client: rep_policy(client, REPOrdering(AnchorAndAdjust()), RULES),
        situations,
        reply=stand_in.reply,
    ),
    PolicyExample(
        "llm_synthesis",
        lambda rng, client: synthesis_policy(client, RuleSynthesis()),
        synthesis_requests,
        reply=stand_in.reply,
    ),
]
