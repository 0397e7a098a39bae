"""Movie scheduling's policies: REP participation (numerical and textual), the A2A satisficer, the range
synthesiser, a student's rule, and the LLM calls 1-2."""

from dataclasses import replace

from coordkit.policies import policy_from
from coordkit.rep.movies import stand_in
from coordkit.rep.movies.llm_policies import MovieNight, a2a_policy, rep_policy, synthesis_policy
from coordkit.rep.movies.model import MovieScheduling
from coordkit.rep.movies.policies import (
    RangeSynthesis,
    REPParticipation,
    Satisficer,
    StudentMoviegoer,
    ThresholdParticipation,
)
from coordkit.rep.protocol import SynthesisRequest

from . import PolicyExample

NIGHT = MovieNight(population=8, rounds=20)


def situations(reading: str = "section7"):
    """Every agent's stage-1 situation in the first 4 rounds of an 8-agent REP textual run, with its neighbours'
    last messages written out as an LLM would read them."""
    model = MovieScheduling(protocol="rep_textual", population=8, sparsity=0.3, reading=reading, rng=2)
    seen = []
    for _ in range(4):
        for goer in model.goers:
            messages = model.transport.receive(goer.node)
            seen.append(replace(goer.situation(goer.proposal, messages), neighbour_notes=model.notes(messages)))
        model.step()
    return seen


def synthesis_requests():
    """Requests for the textual updater built from a REP textual run's messages (own text and two neighbours')."""
    model = MovieScheduling(protocol="rep_textual", population=8, rounds=4, rng=2).run()
    messages = model.agents_frame().query("round > 0").groupby("round")["message"].apply(list)
    theta = {"price": 15.0, "time": 21.5}
    return [
        SynthesisRequest(theta, own, ((1, left), (2, right)))
        for texts in messages
        for own, left, right in zip(texts, texts[1:], texts[2:])
    ]


def thrifty(situation) -> bool:
    """A student's rule: join at no more than a dollar over the agent's ideal price, whatever the time."""
    return situation.price <= situation.taste.price + 1


EXAMPLES = [
    PolicyExample(  # a student's rule in a REP agent: it decides whether to join, the agent still sends its sensitivity
        "student_moviegoer",
        lambda rng, client: StudentMoviegoer(policy_from(thrifty), REPParticipation("textual")),
        situations,
    ),
    PolicyExample("rep_participation_textual", lambda rng, client: REPParticipation("textual"), situations),
    PolicyExample("rep_participation_numerical", lambda rng, client: REPParticipation("numerical"), situations),
    PolicyExample("satisficer", lambda rng, client: Satisficer(), situations),
    PolicyExample(  # the thresholds reading: a taste centred on the thresholds, the group's price and time
        "rep_threshold_participation",
        lambda rng, client: ThresholdParticipation("numerical"),
        lambda: situations("thresholds"),
    ),
    PolicyExample("range_synthesis", lambda rng, client: RangeSynthesis(), synthesis_requests),
    PolicyExample(
        "llm_rep_moviegoer",
        lambda rng, client: rep_policy(client, REPParticipation("textual"), NIGHT),
        situations,
        reply=stand_in.reply,
    ),
    PolicyExample(
        "llm_a2a_moviegoer",
        lambda rng, client: a2a_policy(client, Satisficer(), NIGHT),
        situations,
        reply=stand_in.reply,
    ),
    PolicyExample(
        "llm_movie_synthesis",
        lambda rng, client: synthesis_policy(client, RangeSynthesis()),
        synthesis_requests,
        reply=stand_in.reply,
    ),
]
