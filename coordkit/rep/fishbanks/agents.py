"""A Fishbanks company as a Mesa agent, and the two adapters that let REP or A2A wrap its deployment rule."""

import mesa

from coordkit.policies import Policy
from coordkit.rep.fishbanks.policies import CompetitiveFleet, FleetObservation, REPFleet, REPSituation
from coordkit.rep.protocol import Message, Sensitivity, Theta


class Company(mesa.Agent):
    """One fishing company: its profile, risk tolerance r and sustainability value v (Appendix A's prompt: "your
    company's risk tolerance and sustainability values"), its books for the last season (boats, catch,
    revenue, cost, profit) and in total, the boats it deployed the season before (``boats_before``), and its
    estimate of the fish density.

    The estimate is what its catch per boat says (the inverse of the catch-effect table) plus N(0,
    ``observation_noise``) noise from the model's generator, clipped to [0, 1]: each company reads the shared
    stock a little differently (REP Appendix B.1's "distributed sensor network").
    """

    def __init__(self, model, name: str, profile: str, risk_tolerance: float, sustainability: float, boats: int):
        super().__init__(model)
        self.name = name
        self.profile = profile
        self.risk_tolerance = risk_tolerance
        self.sustainability = sustainability
        self.boats = self.boats_before = boats
        self.catch = self.revenue = self.cost = self.profit = self.cumulative_profit = 0.0
        self.catch_per_boat = self.profit_per_boat = self.density_estimate = 0.0
        self.message = ""
        self.client = None  # a REPClient or A2AClient, set by the model

    def observe(self, catch_per_boat: float, noise: float) -> None:
        """Read the stock from a season's catch per boat (before the first season: the survey at the initial
        stock)."""
        fishery = self.model.fishery
        self.catch_per_boat = catch_per_boat
        self.profit_per_boat = fishery.profit_per_boat(catch_per_boat)
        self.density_estimate = min(1.0, max(0.0, fishery.density_from_catch(catch_per_boat) + noise))

    def land(self, catch: float) -> None:
        """This season's books: the catch sold at the fish price, every deployed boat paid for."""
        fishery = self.model.fishery
        self.catch = catch
        self.revenue = catch * fishery.fish_price
        self.cost = self.boats * fishery.boat_cost
        self.profit = self.revenue - self.cost
        self.cumulative_profit += self.profit

    def observation(self, neighbour_messages: list[Message] = ()) -> FleetObservation:
        """What this company knows when it deploys, its neighbours' last messages included."""
        model = self.model
        return FleetObservation(
            company=self.name,
            profile=self.profile,
            season=max(model.steps, 1),
            seasons=model.seasons,
            companies=model.companies,
            max_boats=model.max_boats,
            fishery=model.fishery,
            risk_tolerance=self.risk_tolerance,
            sustainability=self.sustainability,
            boats=self.boats,
            catch_per_boat=self.catch_per_boat,
            profit_per_boat=self.profit_per_boat,
            density_estimate=self.density_estimate,
            industry_catch=model.total_catch if model.steps > 1 else None,
            neighbour_boats=tuple((model.name_of(m.sender), m.decision) for m in neighbour_messages),
            neighbour_notes=model.notes(neighbour_messages),
        )

    def deploy(self, boats: int, message: str) -> None:
        self.boats_before, self.boats = self.boats, boats
        self.message = message


def note(name: str, message: Message) -> str:
    """A neighbour's message as a company reads it: 'Name: 4 boats - "its reasoning or sensitivity"'."""
    words = message.sensitivity.text if message.sensitivity is not None else message.reasoning
    return f'{name}: {message.decision} boats - "{words}"'


class A2ACompany:
    """The A2A baseline's company: deploys and explains in words, with no shared variables (REP paper §4, §6).

    ``policy`` decides from the company's observation: by default :class:`CompetitiveFleet`, or an LLM policy
    (:mod:`~coordkit.rep.fishbanks.llm_policies`) falling back to it.
    """

    def __init__(self, company: Company, rule: CompetitiveFleet, policy: Policy | None = None):
        self.company = company
        self.rule = rule
        self.policy = policy or rule

    def private_state(self) -> Theta:
        return {}

    def decide(self, neighbour_messages: list[Message]) -> tuple[int, str]:
        return self.policy.decide(self.company.observation(neighbour_messages))

    async def decide_async(self, neighbour_messages: list[Message]) -> tuple[int, str]:
        return await self.policy.decide_async(self.company.observation(neighbour_messages))


class REPCompany:
    """The REP company: deploys with its coordination variables θ and sends a sensitivity (REP paper §6).

    ``policy`` decides from a :class:`REPSituation`: by default :class:`REPFleet`, or an LLM policy falling back
    to it. The adapter remembers each neighbour's stated promise ("hold at h if the others average at most X"),
    so that next season it can check who kept its word: a neighbour that deployed at most h, or whose condition
    the others did not meet (Appendix B: telling opportunistic behaviour from genuine coordination).
    """

    def __init__(self, company: Company, rule: REPFleet, policy: Policy | None = None):
        self.company = company
        self.rule = rule
        self.policy = policy or rule
        self._promises: dict = {}  # sender → (hold, others_at_most) stated last season

    def initial_theta(self) -> Theta:
        return self.rule.initial_theta(self.company.observation())

    def decide(self, theta: Theta, neighbour_messages: list[Message]) -> tuple[int, Sensitivity]:
        return self.policy.decide(self._observe(theta, neighbour_messages))

    async def decide_async(self, theta: Theta, neighbour_messages: list[Message]) -> tuple[int, Sensitivity]:
        return await self.policy.decide_async(self._observe(theta, neighbour_messages))

    def _observe(self, theta: Theta, neighbour_messages: list[Message]) -> REPSituation:
        name_of = self.company.model.name_of
        total = self.company.boats + sum(m.decision for m in neighbour_messages)
        others = len(neighbour_messages)  # every company but the one judged: the neighbours but it, and this one
        kept = tuple(
            (name_of(m.sender), promise_kept(m.decision, *self._promises[m.sender], (total - m.decision) / others))
            for m in neighbour_messages
            if m.sender in self._promises and others
        )
        self._promises = {
            m.sender: (int(m.sensitivity.values["hold"]), int(m.sensitivity.values["others_at_most"]))
            for m in neighbour_messages
            if m.sensitivity is not None and "hold" in m.sensitivity.values and "others_at_most" in m.sensitivity.values
        }
        conditions = tuple((name_of(sender), *promise) for sender, promise in self._promises.items())
        return REPSituation(self.company.observation(neighbour_messages), theta, kept, conditions)


def promise_kept(boats: int, hold: int, others_at_most: int, others_mean: float) -> bool:
    """Whether a conditional promise was kept: the company held, or the others broke the condition first."""
    return boats <= hold or others_mean > others_at_most
