"""Fishbanks' policies: competitive escalation, REP's conditional cooperation, the rule synthesiser and the LLM
calls 1-2."""

from coordkit.policies import policy_from
from coordkit.rep.fishbanks import stand_in
from coordkit.rep.fishbanks.llm_policies import a2a_policy, rep_policy, synthesis_policy
from coordkit.rep.fishbanks.model import Fishbanks
from coordkit.rep.fishbanks.policies import CompetitiveFleet, REPFleet, REPSituation, RuleSynthesis, StudentFleet
from coordkit.rep.protocol import SynthesisRequest

from . import PolicyExample


def observations(protocol: str = "a2a"):
    """Every company's observation before each of the 8 seasons of a game, its neighbours' last messages included."""
    game = Fishbanks(protocol=protocol, rng=0)
    seen = []
    while game.running:
        seen += [c.observation(game.transport.receive(c.unique_id)) for c in game.industry]
        game.step()
    return seen


def situations():
    """REP companies' observations with θ, the deeds they could check (some kept, some broken), the words they read."""
    theta = {"quota_estimate": 30.0, "population_health": 0.8, "coordination_confidence": 0.6, "resource_stress": 0.4}
    return [
        REPSituation(seen, theta, ((seen.company, k % 3 == 0),), ((seen.company, seen.boats, seen.boats + k % 3),))
        for k, seen in enumerate(observations("rep_textual"))
    ]


def synthesis_requests():
    game = Fishbanks(protocol="rep_textual", rng=0).run()
    texts = game.frame().query("season > 0").groupby("season")["message"].apply(list)
    theta = {"quota_estimate": 30.0, "population_health": 0.8, "coordination_confidence": 0.5, "resource_stress": 0.5}
    return [SynthesisRequest(theta, own, tuple(enumerate(others))) for own, *others in texts]


def cautious(seen) -> int:
    """A student's rule: fewer boats while the stock looks low, one more while it looks high."""
    return max(1, min(seen.max_boats, seen.boats + (1 if seen.density_estimate > 0.6 else -1)))


EXAMPLES = [
    PolicyExample(  # a student's rule in a REP company: it deploys, the company still sends its sensitivity
        "student_fleet",
        lambda rng, client: StudentFleet(policy_from(cautious), REPFleet(CompetitiveFleet())),
        situations,
    ),
    PolicyExample("competitive_fleet", lambda rng, client: CompetitiveFleet(), observations),
    PolicyExample("rep_fleet", lambda rng, client: REPFleet(), situations),
    PolicyExample("fishbanks_rule_synthesis", lambda rng, client: RuleSynthesis(), synthesis_requests),
    PolicyExample(
        "llm_a2a_company",
        lambda rng, client: a2a_policy(client, CompetitiveFleet()),
        observations,
        reply=stand_in.reply,
    ),
    PolicyExample(
        "llm_rep_company", lambda rng, client: rep_policy(client, REPFleet()), situations, reply=stand_in.reply
    ),
    PolicyExample(
        "fishbanks_llm_synthesis",
        lambda rng, client: synthesis_policy(client, RuleSynthesis()),
        synthesis_requests,
        reply=stand_in.reply,
    ),
]
