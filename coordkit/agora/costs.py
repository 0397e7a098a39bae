"""What an Agora network spends on LLMs, by query and by activity (§5.3, Appendix D.3).

D.3 splits the demo's cost into four activities: natural-language exchanges, negotiations, suitability checks and
routine writing (implementation). :class:`CostLog` records every LLM call an agent makes under one of them, and
adds it to a :class:`~coordkit.llm.Ledger` priced with Table 1 (:func:`table1_prices`), so that the frame's costs
sum to the ledger's total.

- With rule-based stand-ins no call is made: each decision a stand-in takes in an LLM's place is charged as the
  call it replaces, from the token counts (:func:`~coordkit.llm.fake_server.rough_tokens`) of the prompt the LLM
  would have read and the text the stand-in wrote, at the agent's D.2 model's Table 1 price; each such record is an
  estimate (``estimated``).
- With an LLM the replies' own token counts are recorded, at the price of the model asked for, or, for one the
  price table does not know (a local server, a script), at the agent's D.2 model's. A replayed recording is
  charged what its calls cost when they were made.
"""

from dataclasses import dataclass
from functools import cache

import numpy as np
import pandas as pd

from coordkit.llm import LLMClient, LLMReply, LLMRequest
from coordkit.llm.fake_server import rough_tokens
from coordkit.llm.ledger import Ledger
from coordkit.llm.prices import PriceTable
from coordkit.papers import numbers

ACTIVITIES = ("natural_language", "negotiation", "checks", "implementation")  # D.3's four, in its order
SETUP = ("negotiation", "checks", "implementation")  # what a protocol costs before it is used
ACTIVITY_OF = {f"agora.{activity}": activity for activity in ACTIVITIES}  # an LLM request's purpose → its activity
COLUMNS = ("query", "agent", "model", "activity", "input_tokens", "output_tokens", "usd", "estimated")


@cache
def table1_prices() -> PriceTable:
    """The kit's price table with Table 1's rows (dollars per million prompt / completion tokens) on top (read once;
    a price table is never changed once made)."""
    paper = numbers("agora-network")
    models = paper.conditions("prompt_price")
    return PriceTable(
        {model: (paper.value("prompt_price", model), paper.value("completion_price", model)) for model in models}
    )


@dataclass(frozen=True)
class Charge:
    """One LLM call, real or stood in for: which query it served, who made it, for what, and what it cost."""

    query: int
    agent: str
    model: str
    activity: str
    input_tokens: int
    output_tokens: int
    usd: float
    estimated: bool


class CostLog:
    """Every call of a run, in order, and the ledger that prices them."""

    def __init__(self, ledger: Ledger | None = None):
        self.ledger = ledger if ledger is not None else Ledger(table1_prices())
        self.charges: list[Charge] = []
        self.query = 0  # the query being played; its calls are charged to it

    def estimate(self, agent: str, model: str, activity: str, prompt: str, completion: str) -> Charge:
        """Charge a stand-in's decision as the LLM call it replaces: ``prompt`` read, ``completion`` written."""
        reply = LLMReply(completion, model, rough_tokens(prompt), rough_tokens(completion), metadata={"estimate": True})
        return self._charge(agent, activity, reply, estimated=True)

    def record(self, agent: str, model: str, activity: str, reply: LLMReply) -> Charge:
        """Charge an LLM's reply to ``agent``: its token counts at the price of ``model``, the model the agent asked
        for (never a name in the reply, which a provider could make up)."""
        charged = LLMReply(reply.text, model, reply.input_tokens, reply.output_tokens, reply.latency_s)
        return self._charge(agent, activity, charged, estimated=False)

    def _charge(self, agent: str, activity: str, reply: LLMReply, *, estimated: bool) -> Charge:
        if activity not in ACTIVITIES:
            raise ValueError(f"activity: {activity!r} is not one of D.3's {ACTIVITIES}")
        usd = self.ledger.cost(reply.model, reply)
        self.ledger.add(reply, usd=usd)
        charge = Charge(
            self.query, agent, reply.model, activity, reply.input_tokens, reply.output_tokens, usd, estimated
        )
        self.charges.append(charge)
        return charge

    def frame(self) -> pd.DataFrame:
        """One row per call, in the order they were made (columns: :data:`COLUMNS`)."""
        return pd.DataFrame([vars(charge) for charge in self.charges], columns=list(COLUMNS))

    def by_query(self, queries: int) -> pd.DataFrame:
        """Dollars per query (0 … ``queries``) and activity: one column ``cost_<activity>`` each, and ``cost``."""
        table = np.zeros((queries + 1, len(ACTIVITIES)))
        rows = np.array([charge.query for charge in self.charges], dtype=int)
        columns = np.array([ACTIVITIES.index(charge.activity) for charge in self.charges], dtype=int)
        np.add.at(table, (rows, columns), [charge.usd for charge in self.charges])
        frame = pd.DataFrame(table, columns=[f"cost_{activity}" for activity in ACTIVITIES])
        frame["cost"] = table.sum(axis=1)
        return frame


class ChargedClient(LLMClient):
    """An LLM client that charges every reply to one ``agent`` (its name) under the activity its request's purpose
    names (``agora.negotiation``, ...), at the price of the model the request asked for (the client's default when
    it names none), or of ``model``, the agent's D.2 model, when the price table does not know that one (a local
    server, a script). Never at a model the reply names, which a provider could make up."""

    def __init__(self, inner: LLMClient, log: CostLog, agent: str, model: str):
        self.inner, self.log, self.agent, self.model = inner, log, agent, model
        self.default_model = inner.default_model
        self.billable = inner.billable

    def complete(self, request: LLMRequest) -> LLMReply:
        reply = self.inner.complete(request)
        asked = request.model or self.inner.default_model
        priced = asked if self.log.ledger.prices.get(asked) is not None else self.model
        self.log.record(self.agent, priced, ACTIVITY_OF.get(request.purpose, "natural_language"), reply)
        return reply

    def note_fallback(self, reason: str) -> None:
        self.inner.note_fallback(reason)


def weather_costs(frame: pd.DataFrame) -> dict:
    """Per seed's Agora arm: what setting up the protocol cost, a natural-language exchange, a protocol exchange."""
    agora = frame[(frame["protocol"] == "agora") & (frame["query"] > 0)]
    setup = sum(agora[f"cost_{activity}"].sum() for activity in SETUP)
    exchanges = agora["cost_natural_language"]
    natural = frame[(frame["protocol"] == "natural_language") & (frame["query"] > 0)]["cost"].mean()
    in_protocol = exchanges[agora["mode"] == "protocol"].mean()
    return {"setup": setup, "natural_language": natural, "protocol": in_protocol}
