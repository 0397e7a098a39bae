"""Agora's agents (§4.1–4.2, Appendix D.1): users who ask, servers who answer, and the choice each makes per query.

A :class:`Participant` asks servers. Per (server, task) it keeps a :class:`Relation`: how many queries it sent
(``exchanges``), the protocol it adopted and its routine, and the documents it has already judged. With no protocol
adopted, once ``exchanges`` reaches ``check_after`` it checks the server's ``/.wellknown`` and its reference
database for a suitable document it has not judged yet (the first check comes on query ``check_after + 1``); none
suitable and ``exchanges`` at ``negotiate_after``, it negotiates one with the server, submits it to its database, and
both sides write their routines. A server counts its natural-language answers to anyone since its last negotiation
and, at ``server_negotiate_after``, asks the user it is answering to negotiate, then starts again from 0; the user
then looks for a suitable protocol first (the server may already serve one) and negotiates if it finds none.

A query goes in the adopted protocol when the participant has a routine for it (a routine that fails falls back to
natural language, counted); otherwise in natural language, through the querier and responder policies (an LLM, or
the rule-based templates). A :class:`Server` answers from its tools, asking the servers it depends on as a
participant itself: Figure 4's multi-hop workflows.

An agent reaches its network only through its :class:`~coordkit.agora.services.Services`: D.1's settings, the
transport, the catalogue, its decisions and the routine sandbox. Every decision that stands for an LLM call
(:meth:`Participant.decide`, and :meth:`Participant.say` for a negotiation's turns) is charged to the agent that
makes it and, for a provider that fails (D.2: Gemini's API), may lose the query (:class:`QueryLost`).
"""

import json
from dataclasses import dataclass, field

import mesa

from coordkit.agora.policies import (
    SERVER,
    USER,
    Compose,
    NegotiationObservation,
    NegotiationTurn,
    ProgrammingObservation,
    Read,
    SuitabilityObservation,
)
from coordkit.agora.protocol import Envelope, ProtocolDocument, ProtocolError, Response, WellKnown, fetch
from coordkit.agora.roles import PROGRAMMER, QUERIER, RESPONDER, SUITABILITY, Role
from coordkit.agora.routines import SEND, ContractError, RoutinePair, run
from coordkit.agora.sandbox import RoutineError
from coordkit.agora.schemas import validate
from coordkit.agora.services import QueryLost, Services
from coordkit.agora.tasks import ServerSpec, Task
from coordkit.llm.parsing import ReplyParseError

ASK_TO_NEGOTIATE = "I would like to negotiate a protocol for this task with you."  # D.1: the server's request
AGREED = "agreed"
LOST = "lost: the provider did not answer"  # a failure's body when an LLM call failed and the query is lost


@dataclass
class Relation:
    """What a participant knows about one (server, task) it asks (D.1's counter, and the protocol it adopted)."""

    exchanges: int = 0
    document: ProtocolDocument | None = None
    routine: object = None  # routine source (sandboxed) or None: no routine, natural language
    judged: set[str] = field(default_factory=set)  # hashes already checked for this task


@dataclass(frozen=True)
class Served:
    """A protocol a server serves: the document, the task, its routine (source, or a human routine) and the name
    under which the routine calls the server's tool."""

    document: ProtocolDocument
    task: Task
    routine: object
    tool: str


class Participant(mesa.Agent):
    """An agent that asks servers: a user, or a server towards the servers it depends on."""

    def __init__(self, model, services: Services, name: str, llm_model: str, database):
        super().__init__(model)
        self.services = services
        self.name = name
        self.llm_model = llm_model  # D.2's model: its price, and whether its provider fails
        self.database = database  # the reference protocol database (D.1: assigned at random)
        self.relations: dict[tuple[str, str], Relation] = {}
        self.last_mode = ""  # how its latest query went: "protocol" or "natural_language"

    def decide(self, role: Role, seen):
        """This agent's ``role`` decision on ``seen``, made as one LLM call (or QueryLost, D.2)."""
        return self.services.decide(self, role, seen)

    def ask(self, task: Task, data: dict) -> dict:
        """The output of ``task`` for ``data`` from its server; QueryLost when a provider failed on the way."""
        relation = self.relations.setdefault((task.server, task.name), Relation())
        if self.services.settings.protocol == "agora" and relation.document is None:
            self._look_for_protocol(task, relation)
        relation.exchanges += 1
        if relation.routine is not None:
            output = self._in_protocol(task, data, relation)
            if output is not None:
                self.last_mode = "protocol"
                return output
        self.last_mode = "natural_language"
        output, asked = self._in_natural_language(task, data)
        if asked and self.services.settings.protocol == "agora" and relation.document is None:
            self._look_for_protocol(task, relation, asked=True)
        return output

    # --- choosing a protocol (§4.2, D.1) -----------------------------------------------------------------------

    def _look_for_protocol(self, task: Task, relation: Relation, asked: bool = False) -> None:
        """Past ``check_after`` (or when the server ``asked`` to negotiate), look for a suitable protocol; none
        found, past ``negotiate_after`` (or when asked), negotiate one."""
        settings, standards = self.services.settings, self.services.standards
        if relation.exchanges < settings.check_after and not asked:
            return
        self.services.tally.checked += 1
        candidates = [d for d in self._candidates(task) if d.hash not in relation.judged]
        standard = next((d for d in candidates if d.hash in standards), None)
        if standard is not None:  # a protocol this agent implements by hand (§4.1): no LLM needed to check or write
            relation.document, relation.routine = standard, standards[standard.hash].user
            return
        if candidates:  # the LLM reads only documents it has not judged for this task (as the demo's code)
            relation.judged.update(d.hash for d in candidates)
            chosen = self.decide(SUITABILITY, SuitabilityObservation(task, tuple(candidates)))
            if chosen is not None:
                self._adopt(task, relation, chosen)
                return
        if relation.exchanges >= settings.negotiate_after or asked:
            self._negotiate(task, relation)

    def _candidates(self, task: Task) -> list[ProtocolDocument]:
        """The server's protocols (its ``/.wellknown``), then the reference database's matches, each once."""
        found: dict[str, ProtocolDocument] = {}
        listing = self.services.channel.wellknown(task.server, sender=self.name)
        for hash, sources in listing.protocols.items():
            try:
                found[hash] = fetch(sources, hash, fetcher=_no_remote_sources)
            except ProtocolError:
                continue  # a document no source gives is not a candidate
        for entry in self.database.search(task.name):
            if entry.hash not in found:
                found[entry.hash] = self.database.get(entry.hash)
        return list(found.values())

    def _adopt(self, task: Task, relation: Relation, document: ProtocolDocument) -> None:
        relation.document = document
        relation.routine = self.decide(PROGRAMMER, ProgrammingObservation(document, USER))
        self.services.tally.implemented += 1

    def _negotiate(self, task: Task, relation: Relation) -> None:
        """Negotiate a protocol for ``task`` with its server over the bootstrap protocol, turn by turn (§4.2, App. C):
        the user proposes, the server specifies, the user agrees and sends the finalised document."""
        seen = NegotiationObservation(task)
        self.services.tally.negotiated += 1
        proposal = self.say(seen, ())
        reply = self._send_negotiation(task, {"message": proposal.text})
        if reply.status != "success":
            return
        agreement = self.say(seen, (proposal, NegotiationTurn(SERVER, reply.body)))
        document = agreement.document
        closing = {"message": agreement.text, "protocol": document.data_uri, "hash": document.hash}
        response = self._send_negotiation(task, closing)
        relation.judged.add(document.hash)
        if response.status == "success" and response.body == AGREED:
            self.database.add(document, (document.data_uri,))
            self._adopt(task, relation, document)

    def say(self, seen: NegotiationObservation, turns: tuple[NegotiationTurn, ...]) -> NegotiationTurn:
        """This agent's turn in the negotiation after ``turns`` (the last one carries the finalised document)."""
        return self.services.negotiation_turn(self, seen, turns)

    def _send_negotiation(self, task: Task, body: dict) -> Response:
        envelope = Envelope.in_protocol(self.services.negotiation_document, json.dumps({"task": task.name, **body}))
        return self._send(task.server, envelope)

    # --- one exchange ------------------------------------------------------------------------------------------

    def _in_protocol(self, task: Task, data: dict, relation: Relation) -> dict | None:
        """The output through the routine, or None when it failed (counted; the caller uses natural language)."""
        tally = self.services.tally
        rejected = []

        def send(body: str) -> str:
            response = self._send(task.server, Envelope.in_protocol(relation.document, body))
            if response.status == "success":
                return response.body
            if response.body == LOST:
                raise QueryLost(f"{task.server} lost the query")
            rejected.append(response.status == "rejected")
            raise ValueError(f"{task.server} answered {response.status}: {response.body[:200]}")

        try:
            tally.routine_calls += 1
            output = run(self.services.routines.runnable(self.name, relation.routine), data, {SEND: send})
            _check_output(task, output)
        except RoutineError as error:
            tally.routine_failed(error)
            if rejected and rejected[-1]:  # B.1: the server refuses this protocol; look again later
                relation.document, relation.routine = None, None
            return None
        return output

    def _in_natural_language(self, task: Task, data: dict) -> tuple[dict, bool]:
        """The output from a natural-language exchange, and whether the server asked to negotiate."""
        query = self.decide(QUERIER, Compose(task, data))
        response = self._send(task.server, Envelope.natural_language(query))
        if response.status != "success":
            raise QueryLost(f"{task.server} answered {response.status}: {response.body[:200]}")
        asked = response.body.rstrip().endswith(ASK_TO_NEGOTIATE)
        try:
            output = self.decide(QUERIER, Read(task, response.body))
        except ReplyParseError as error:
            raise QueryLost(f"{self.name} could not read {task.server}'s reply: {error}") from None
        return output, asked

    def _send(self, receiver: str, envelope: Envelope) -> Response:
        self.services.tally.hops += 1
        return self.services.channel.send(self.name, receiver, envelope)


class User(Participant):
    """A user (D.1): sends the screenplay's queries. Like every agent it is reachable (B.3): its ``/.wellknown``
    lists the protocols it adopted, and it answers any request with a failure, since it performs no task."""

    def wellknown(self) -> WellKnown:
        adopted = [relation.document for relation in self.relations.values() if relation.document is not None]
        return WellKnown({document.hash: (document.data_uri,) for document in adopted})

    def handle(self, envelope: Envelope) -> Response:
        return Response.failure(f"{self.name} is a user: it performs no task, so it answers no queries")


class Server(Participant):
    """A server (D.1): answers queries with its tools and, through ``ask``, the servers it depends on."""

    def __init__(self, model, services: Services, spec: ServerSpec, database):
        super().__init__(model, services, spec.name, spec.model, database)
        self.spec = spec
        self.protocols: dict[str, Served] = {}  # by hash
        self.natural_language_answers = 0  # D.1's server counter, since the last negotiation

    def wellknown(self) -> WellKnown:
        """B.3: the protocols this server serves, hash → sources."""
        return WellKnown({hash: (served.document.data_uri,) for hash, served in self.protocols.items()})

    def handle(self, envelope: Envelope) -> Response:
        """B.1: answer a request in natural language, in the bootstrap protocol, or in a protocol document."""
        try:
            if envelope.protocol_hash is None:
                return self._answer_natural_language(envelope.body)
            if envelope.protocol_hash == self.services.negotiation_document.hash:
                return self._answer_negotiation(envelope.body)
            return self._answer_in_protocol(envelope)
        except QueryLost:
            return Response.failure(LOST)

    def perform(self, task: Task, fields: dict) -> dict:
        """Run the task's tools and dependencies in order (the server's side of :meth:`Catalogue.answer`)."""
        known = dict(fields)
        for use in task.uses:
            if "." in use:
                dependency = self.services.catalogue.task(*use.split(".", 1))
                asked = {name: known[name] for name in dependency.input["properties"]}
                known.update(self.ask(dependency, asked))
            else:
                known.update(self.spec.tools[use].row(known, self.services.world_seed))
        return {name: known[name] for name in task.output["properties"]}

    def _answer_natural_language(self, text: str) -> Response:
        task = self._task_named_in(text)
        if task is None:
            return Response.failure(f"{self.name} serves the tasks {list(self.spec.tasks)}; name one of them")
        try:
            data = self.decide(RESPONDER, Read(task, text))
        except ReplyParseError as error:
            return Response.failure(f"{self.name} could not read the query: {error}")
        reply = self.decide(RESPONDER, Compose(task, self.perform(task, data)))
        self.natural_language_answers += 1
        settings = self.services.settings
        if settings.protocol == "agora" and self.natural_language_answers >= settings.server_negotiate_after:
            self.natural_language_answers = 0
            reply = f"{reply}\n\n{ASK_TO_NEGOTIATE}"
        return Response.success(reply)

    def _task_named_in(self, text: str) -> Task | None:
        """The task a natural-language query is about: the one whose name it mentions (longest name first)."""
        for name in sorted(self.spec.tasks, key=len, reverse=True):
            if name in text:
                return self.spec.tasks[name]
        return None

    def _answer_negotiation(self, body: str) -> Response:
        try:
            message = json.loads(body)
            task = self.spec.tasks[message["task"]]
        except (ValueError, KeyError, TypeError):
            return Response.failure(f"a negotiation's body is JSON naming one of the tasks {list(self.spec.tasks)}")
        if "protocol" not in message:
            specification = self.say(
                NegotiationObservation(task), (NegotiationTurn(USER, str(message.get("message", ""))),)
            )
            return Response.success(specification.text)
        self.natural_language_answers = 0  # D.1: after a negotiation the counter starts again
        try:
            document = fetch([message["protocol"]], message["hash"], fetcher=_no_remote_sources)
        except (ProtocolError, TypeError):
            return Response.success("rejected")
        return Response.success(AGREED if self._serve(document, task) else "rejected")

    def _answer_in_protocol(self, envelope: Envelope) -> Response:
        if envelope.protocol_hash not in self.protocols:
            try:
                document = fetch(envelope.protocol_sources, envelope.protocol_hash, fetcher=_no_remote_sources)
            except ProtocolError as error:
                return Response.failure(str(error))
            if not any(self._serve(document, task) for task in self.spec.tasks.values()):
                return Response.rejected()
        served = self.protocols[envelope.protocol_hash]
        tally = self.services.tally
        tally.routine_calls += 1
        routine = self.services.routines.runnable(self.name, served.routine)
        try:
            body = run(routine, envelope.body, {served.tool: self._tool(served.task)})
        except RoutineError as error:
            tally.routine_failed(error)
            return Response.failure(f"{self.name}'s routine failed: {error}")
        return Response.success(body)

    def _serve(self, document: ProtocolDocument, task: Task) -> bool:
        """Check ``document`` for ``task`` and, if suitable, write the routine and list it; False otherwise."""
        if document.hash in self.protocols:
            return True
        if self.decide(SUITABILITY, SuitabilityObservation(task, (document,))) is None:
            return False
        routine = self.decide(PROGRAMMER, ProgrammingObservation(document, SERVER, task.name))
        self.services.tally.implemented += 1
        if routine is None:
            return False
        self.protocols[document.hash] = Served(document, task, routine, task.name)
        return True

    def serve_standard(self, document: ProtocolDocument, task: Task, routines: RoutinePair) -> None:
        """Serve ``document`` for ``task`` with its human-written routine (§4.1's standard case): no LLM involved."""
        self.protocols[document.hash] = Served(document, task, routines.server, routines.tool)

    def _tool(self, task: Task):
        def tool(**fields):
            return self.perform(task, fields)

        return tool


def _check_output(task: Task, output) -> None:
    """A routine's output must be the task's output (else the agent falls back to natural language)."""
    try:
        validate(output, task.output, f"the output of {task.name}")
    except ValueError as error:
        raise ContractError("bad_reply", str(error)) from None


def _no_remote_sources(uri: str) -> str:
    """The kit's agents fetch documents from ``data:`` sources only: a run never reaches the network."""
    raise OSError(f"{uri[:80]} is not a data: URI; the kit's agents read documents only from data: sources")
