"""Agora networks as Mesa models: the two-agent weather demo (§5.2) and the 100-agent network (§5.3, Appendix D).

A step is one query of the screenplay: the user chooses how to ask (maybe checking for a protocol, maybe
negotiating one, :mod:`~coordkit.agora.agents`), the query travels (with the hops its server makes to the servers
it depends on), and the protocol databases count it (every ``sync_interval``-th query they share their documents,
D.1). ``protocol="natural_language"`` is the counterfactual: the same queries, natural language only. Both arms of
one seed play the same screenplay and the same task data.
"""

import dataclasses
from collections import Counter

import pandas as pd

from coordkit.agora.agents import Server, User
from coordkit.agora.costs import ACTIVITIES, CostLog
from coordkit.agora.databases import DatabaseNetwork
from coordkit.agora.protocol import ProtocolDocument
from coordkit.agora.routines import WEATHER_ROUTINES, weather_forecast_document
from coordkit.agora.sandbox import DEFAULT_MAX_LINES, MAX_LINES
from coordkit.agora.screenplay import screenplay
from coordkit.agora.services import Decisions, QueryLost, Routines, Services, Settings
from coordkit.agora.tasks import MODELS, example_input, keyed_rng, load_catalogue
from coordkit.agora.transport import Exchange, HTTPTransport, InProcessTransport
from coordkit.llm import LLMClient
from coordkit.model import Model
from coordkit.parameters import Choice, Flag, Instance, Integer, ParameterError, Parameters, Real
from coordkit.paths import DATA

PROTOCOLS = ("agora", "natural_language")
PROTOCOL_NAMES = {"agora": "Agora (protocols where they pay)", "natural_language": "natural language only"}
ARM_NAMES = {"agora": "Agora", "natural_language": "natural language only"}  # the arms, as tables and charts name them
TRANSPORTS = ("in_process", "http")
TRANSPORT_NAMES = {"in_process": "in process", "http": "HTTP on 127.0.0.1"}
MODEL_NAMES = {"gpt-4o": "GPT-4o", "llama-3-405b": "Llama 3 405B", "gemini-1.5-pro": "Gemini 1.5 Pro"}
STANDARD_TASK = ("weather", "queryWeather")  # what Appendix C's weather protocol serves
FRAME_COLUMNS = (
    "query",
    "user",
    "server",
    "task",
    "user_model",
    "server_model",
    "mode",
    "hops",
    "checked",
    "negotiated",
    "implemented",
    *(f"cost_{activity}" for activity in ACTIVITIES),
    "cost",
    "cumulative_cost",
    "llm_turns",
    "routine_calls",
    "routine_fallbacks",
    "routine_timeouts",
    "lost",
    "correct",
    "protocols",
)


def _protocol(doc: str) -> Choice:
    return Choice("protocol", "agora", PROTOCOLS, labels=PROTOCOL_NAMES, doc=doc)


def _thresholds(check: int, negotiate: int, source: str) -> tuple[Integer, Integer]:
    return (
        Integer(
            "check_after",
            check,
            1,
            100,
            doc=f"a user looks for a protocol once it sent a server this many queries of a task ({source}: {check})",
        ),
        Integer(
            "negotiate_after",
            negotiate,
            1,
            100,
            doc=f"and negotiates one once it sent this many and found none ({source}: {negotiate})",
        ),
    )


def _transport() -> Choice:
    return Choice("transport", "in_process", TRANSPORTS, labels=TRANSPORT_NAMES, doc="how messages travel")


def _routine_budget() -> Integer:
    return Integer(
        "routine_max_lines",
        DEFAULT_MAX_LINES,
        1,
        MAX_LINES,
        unit="lines",
        doc="lines of Python a routine call may run, then it fails (a count, the same on every run; "
        "wall time is only the sandbox's safety net)",
    )


def _standard() -> Flag:
    return Flag(
        "standard_protocols",
        False,
        doc="the weather server and every user implement Appendix C's weather protocol by hand (§4.1's standard "
        "case): found at a user's first look, used with no LLM call",
    )


def _llm() -> Instance:
    return Instance(
        "llm", None, LLMClient, optional="rule-based stand-ins, costs estimated", doc="the LLM every agent uses"
    )


def _check_before_negotiating(p: dict) -> None:
    if p["negotiate_after"] < p["check_after"]:
        raise ParameterError(
            f"negotiate_after={p['negotiate_after']} is below check_after={p['check_after']}: a user checks for an "
            f"existing protocol before negotiating one (D.1); raise negotiate_after to at least {p['check_after']}"
        )


def _a_query_per_user(p: dict) -> None:
    if p["queries"] < p["users"]:
        raise ParameterError(
            f"queries={p['queries']} is below users={p['users']}: D.2 gives every user at least one query; "
            f"raise queries or lower users"
        )


class AgoraModel(Model, abstract=True):
    """What both Agora models share: the world they build, the step, the frame and the summary. A context manager:
    ``with AgoraNetwork(...) as net:`` closes its servers and sandboxes when the block ends, however far it ran
    (a run that reaches its last query closes them itself)."""

    def _build(self, servers: list, users: list[tuple[str, str]], plan: pd.DataFrame) -> None:
        self.catalogue = load_catalogue()
        standard = weather_forecast_document()
        self.world_seed = int(self.streams("world").integers(2**31))  # the tasks' data and the provider's failures
        database_rng = self.streams("databases")  # each agent's reference database (D.1), servers first
        self.plan = list(plan.itertuples(index=False))  # (query, user, server, task) in order
        self.protocol_databases = DatabaseNetwork(size=self.databases, sync_interval=self.sync_interval)
        chain = self.protocol_databases.databases

        def pick():
            return chain[int(database_rng.integers(len(chain)))]

        self.negotiation_document = ProtocolDocument.compose(
            (DATA / "agora" / "negotiation_protocol.txt").read_text(encoding="utf-8"),
            name="negotiation",
            description="the bootstrap protocol in which agents negotiate protocol documents",
        )
        self.costs = CostLog()
        self.channel = HTTPTransport() if self.transport == "http" else InProcessTransport()
        settings = Settings(
            self.protocol, self.check_after, self.negotiate_after, self.server_negotiate_after, self.failure_rate
        )
        self.services = Services(
            settings,
            self.channel,
            self.catalogue,
            self.world_seed,
            self.negotiation_document,
            standards={standard.hash: WEATHER_ROUTINES} if self.standard_protocols else {},
            decisions=Decisions(self.costs, self.llm),
            routines=Routines(self.routine_max_lines),
        )
        self.server_agents = {spec.name: Server(self, self.services, spec, pick()) for spec in servers}
        self.user_agents = [User(self, self.services, name, model, pick()) for name, model in users]
        everyone = [*self.server_agents.values(), *self.user_agents]
        self.services.decisions.enlist(everyone)
        if self.standard_protocols:  # §4.1's standard case: Appendix C's protocol, implemented by hand
            self.server_agents["weather"].serve_standard(
                standard, self.catalogue.task(*STANDARD_TASK), WEATHER_ROUTINES
            )
        for agent in everyone:
            self.channel.register(agent)  # every agent is reachable, with its /.wellknown (B.3)
        self._rows = [self._row(None, None, 0, False)]
        self.modes: Counter[str] = Counter()  # how the queries so far went: frame's mode → queries
        self._latest_from = 0  # the requests sent before the latest query (Transport.sent)

    def close(self) -> None:
        """Stop the run's servers (over HTTP) and its routines' sandbox processes; done when the run ends."""
        self.services.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    # --- the step --------------------------------------------------------------------------------------------------

    def step(self) -> None:
        query = self.plan[self.steps - 1]
        user = self.user_agents[int(query.user)]
        task = self.catalogue.task(query.server, query.task)
        data = example_input(task, keyed_rng(self.world_seed, "input", self.steps))
        self.services.begin(self.steps)
        self._latest_from = self.channel.sent
        try:
            output = user.ask(task, data)
        except QueryLost:
            output = None
        correct = output is not None and output == self.catalogue.answer(task, data, self.world_seed)
        self.protocol_databases.query_executed()
        self._rows.append(self._row(user, task, self.steps, correct, lost=output is None))
        self.modes[self._rows[-1]["mode"]] += 1
        if self.steps == len(self.plan):
            self.running = False
            self.close()

    def _row(self, user, task, step: int, correct: bool, lost: bool = False) -> dict:
        tally = self.services.tally
        return {
            "query": step,
            "user": "" if user is None else user.name,
            "server": "" if task is None else task.server,
            "task": "" if task is None else task.name,
            "user_model": "" if user is None else user.llm_model,
            "server_model": "" if task is None else self.server_agents[task.server].llm_model,
            "mode": "" if user is None else ("lost" if lost else user.last_mode),
            **vars(tally),
            "lost": int(lost),
            "correct": int(correct),
            "protocols": self.protocol_databases.store.rows("SELECT COUNT(DISTINCT hash) FROM documents")[0][0],
        }

    @property
    def latest(self) -> dict:
        """The latest query's row of the frame, without its costs (row 0, before the first query, at step 0)."""
        return dict(self._rows[-1])

    def latest_exchanges(self) -> tuple[Exchange, ...]:
        """The messages the latest query sent, nested ones included, in the order they were sent (none at step 0)."""
        return self.channel.transcript_since(self._latest_from)

    # --- the contract ----------------------------------------------------------------------------------------------

    def frame(self) -> pd.DataFrame:
        """One row per query (row 0: before the first), in the order they were sent:

        query, user, server, task, user_model, server_model; mode (``protocol``, ``natural_language`` or ``lost``);
        hops (messages sent, nested ones included), checked (looks for a suitable protocol), negotiated, implemented
        (routines written); cost_natural_language, cost_negotiation, cost_checks, cost_implementation, cost and
        cumulative_cost (dollars, D.3's activities, every agent the query reached); llm_turns (the LLM calls
        the paper's agents make, Figure 5b: with an LLM client, the calls sent; without, the turns the stand-ins take
        in the LLMs' place, whose costs are estimated), routine_calls, routine_fallbacks (routines that failed, the
        exchange then in natural language), routine_timeouts (those of them the sandbox's wall-clock safety net
        stopped: 0 unless a routine sleeps or hangs, since a routine's own limit is a count of lines; more means the
        run's numbers depended on the machine's speed); lost (a provider failed, D.2, or a reply could not be read);
        correct (the user got the true answer); protocols (distinct documents in the databases).
        """
        columns = {name: [row[name] for row in self._rows] for name in self._rows[0]}  # (row 0 is always there)
        costs = self.costs.by_query(len(self._rows) - 1)
        columns |= {name: costs[name].to_numpy() for name in costs}
        columns["cumulative_cost"] = columns["cost"].cumsum()
        return pd.DataFrame({name: columns[name] for name in FRAME_COLUMNS})

    def summary(self) -> dict:
        """The run's totals: cost (and D.3's shares), negotiations, protocols, how queries went."""
        frame = self.frame().iloc[1:]
        total = float(frame["cost"].sum())
        shares = {f"share_{a}": float(frame[f"cost_{a}"].sum()) / total if total else 0.0 for a in ACTIVITIES}
        answered = frame[frame["lost"] == 0]
        return {
            "total_cost": total,
            "cost_per_query": total / len(frame),
            **shares,
            "negotiations": int(frame["negotiated"].sum()),
            "protocols": int(frame["protocols"].iloc[-1]),
            "protocol_share": float((frame["mode"] == "protocol").mean()),
            "lost_queries": int(frame["lost"].sum()),
            "correct_share": float(answered["correct"].mean()) if len(answered) else 0.0,
            "llm_turns": int(frame["llm_turns"].sum()),
            "llm_calls": self.llm_calls,
            "routine_fallbacks": int(frame["routine_fallbacks"].sum()),
            "routine_timeouts": int(frame["routine_timeouts"].sum()),
            "llm_fallbacks": self.llm_fallbacks,
            "estimated": self.llm is None,
        }

    def policies(self) -> list:
        return self.services.decisions.policies()

    def transcript(self) -> list[dict]:
        """Every message that travelled, in order: sender, receiver, path, request and response (JSON text)."""
        return [exchange._asdict() for exchange in self.channel.transcript]


class AgoraNetwork(AgoraModel):
    """§5.3's demo: ``users`` users and the catalogue's 15 servers (D.2's models), three protocol databases, and
    ``queries`` queries from Pareto budgets. Rule-based by default: the stand-ins of
    :mod:`~coordkit.agora.policies` decide, and each decision is charged as the LLM call it replaces."""

    parameters = Parameters(
        _protocol("how agents talk: Agora, or the natural-language counterfactual (§5.3)"),
        Integer("users", 85, 1, 300, doc="user agents (the paper: 85, beside 15 servers)"),
        Integer("queries", 1000, 1, 10_000, doc="queries in the screenplay (the paper: 1,000)", slider=(100, 2000)),
        *_thresholds(3, 5, "D.1"),
        Integer(
            "server_negotiate_after",
            10,
            1,
            1000,
            doc="a server asks to negotiate after this many natural-language answers (D.1: 10)",
            slider=(1, 50),
        ),
        Real(
            "budget_shape",
            0.5,
            0,
            5,
            low_open=True,
            step=0.05,
            doc="Pareto shape of the users' query budgets (D.2: 0.5)",
        ),
        Real(
            "split_shape",
            1.0,
            0,
            5,
            low_open=True,
            step=0.05,
            doc="Pareto shape of a budget's split over task types (D.2: 1)",
        ),
        Integer("task_types", 3, 1, 5, doc="task types each user asks (D.2: 3)"),
        Integer("databases", 3, 1, 10, doc="protocol databases, peered in a chain (D.1: 3)"),
        Integer(
            "sync_interval",
            10,
            1,
            1000,
            doc="the databases share their documents every this many queries (D.1: 10)",
            slider=(1, 100),
        ),
        Real(
            "failure_rate",
            0.008,
            0,
            0.5,
            step=0.001,
            doc="chance that a Gemini agent's LLM call fails, losing the query (D.2 lost 0.8% of queries)",
            slider=(0, 0.1),
        ),
        Choice(
            "user_models",
            "uniform",
            ("uniform", "round_robin"),
            labels={"uniform": "uniform at random (D.2)", "round_robin": "in turn"},
            doc="how users get their LLM",
        ),
        _standard(),
        _transport(),
        _routine_budget(),
        _llm(),
        relations=(_check_before_negotiating, _a_query_per_user),
    )
    small = {"queries": 200}  # still negotiates, implements and syncs the databases (13 protocols at seed 3)

    random_streams = {
        "world": (),
        "databases": ("databases",),
        "plan": ("users", "queries", "budget_shape", "split_shape", "task_types"),
        "user_models": ("user_models",),
    }

    def __init__(self, *, rng=None, **params):
        super().__init__(rng=rng, **params)
        catalogue = load_catalogue()
        plan_rng, model_rng = self.streams("plan"), self.streams("user_models")
        plan = screenplay(
            catalogue.pairs(),
            users=self.users,
            queries=self.queries,
            rng=plan_rng,
            budget_shape=self.budget_shape,
            split_shape=self.split_shape,
            task_types=self.task_types,
        )
        if self.user_models == "uniform":
            models = [MODELS[int(i)] for i in model_rng.integers(len(MODELS), size=self.users)]
        else:
            models = [MODELS[i % len(MODELS)] for i in range(self.users)]
        users = [(f"user{i:03d}", model) for i, model in enumerate(models)]
        self._build(list(catalogue.servers.values()), users, plan)


class WeatherDemo(AgoraModel):
    """§5.2's demo: Alice (a user) asks Bob (the catalogue's weather server) for forecasts, in natural language
    first; after ``check_after`` queries she looks for a protocol Bob supports, finds none and, at
    ``negotiate_after``, negotiates one (Appendix C); from then on both sides use routines."""

    parameters = Parameters(
        _protocol("how Alice and Bob talk: Agora, or natural language only"),
        Integer("queries", 10, 1, 1000, doc="forecasts Alice asks for", slider=(1, 50)),
        *_thresholds(3, 3, "§5.2 gives none; the kit's"),
        Choice("alice_model", "llama-3-405b", MODELS, labels=MODEL_NAMES, doc="Alice's LLM (§5.2: Llama 3 405B)"),
        Choice("bob_model", "gpt-4o", MODELS, labels=MODEL_NAMES, doc="Bob's LLM (§5.2: GPT-4o)"),
        _standard(),
        _transport(),
        _routine_budget(),
        _llm(),
        relations=(_check_before_negotiating,),
    )

    random_streams = {"world": (), "databases": ()}

    def __init__(self, *, rng=None, **params):
        super().__init__(rng=rng, **params)
        # the network's settings §5.2 does without: one database, no server asking, no provider failing
        self.databases, self.sync_interval, self.server_negotiate_after = 1, 10, self.queries + 1
        self.failure_rate = 0.0
        bob = dataclasses.replace(load_catalogue().servers["weather"], model=self.bob_model)
        plan = pd.DataFrame(
            {"query": range(1, self.queries + 1), "user": 0, "server": "weather", "task": "queryWeather"}
        )
        self._build([bob], [("alice", self.alice_model)], plan)
