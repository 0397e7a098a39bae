"""The delay dilemma's policies: tit-for-tat, grim trigger, always C or D, the simplified model and the LLM player."""

from coordkit.delay import stand_in
from coordkit.delay.game import C, D, Payoffs, Timing
from coordkit.delay.llm_policies import llm_policy
from coordkit.delay.model import DelayedDilemma
from coordkit.delay.policies import Always, GrimTrigger, Persona, SimplifiedModel, TitForTat
from coordkit.policies import policy_from

from . import PolicyExample


def mirror(seen) -> str:
    """A student's tit-for-tat, as a plain function."""
    return D if seen.opponent_effective == D else C


def observations():
    """Player A's observation before each of 40 ticks of a 3 s game whose simplified players defect now and then:
    B is seen defecting, then cooperating again (what a grim trigger remembers and a tit-for-tat forgives)."""
    game = DelayedDilemma(delay_a=3, p=0.6, alpha=0.2, rng=1)
    seen = []
    for _ in range(40):
        a, b = game.players
        seen.append(a.observe(b))
        game.step()
    return seen


EXAMPLES = [
    PolicyExample("tit_for_tat", lambda rng, client: TitForTat(), observations),
    PolicyExample("grim_trigger", lambda rng, client: GrimTrigger(), observations),
    PolicyExample("always_cooperate", lambda rng, client: Always(C), observations),
    PolicyExample("always_defect", lambda rng, client: Always(D), observations),
    PolicyExample(  # a student's rule as a plain function (coordkit.policy_from)
        "a_function",
        lambda rng, client: policy_from(lambda seen: D if seen.opponent_effective == D else C),
        observations,
    ),
    PolicyExample("simplified", lambda rng, client: SimplifiedModel(0.7, 0.2, rng), observations),
    PolicyExample("persona", lambda rng, client: Persona(0, 0, 0).rule(rng), observations),
    PolicyExample(
        "llm_player",
        lambda rng, client: llm_policy(client, Persona().rule(rng), Persona(), Payoffs(), Timing(3.0, 3.0)),
        observations,
        reply=stand_in.reply,
    ),
]
