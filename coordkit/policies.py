"""The Policy idea shared by every family (design: "Policies and LLMs").

A policy turns what an agent observes into a decision. Each policy says what kind of decider it is, in the manner
of the Axelrod library's strategy classifiers: whether it draws random numbers (``stochastic``), whether its
decisions depend on what it saw before (``stateful``, and then :meth:`Policy.reset` forgets), and whether it asks
an LLM (``calls_llm``). A contract test checks every policy's claims.

Every decision a paper gives to an LLM goes through an :class:`LLMPolicy`, which asks its client, parses the reply,
and falls back to a rule-based policy when the call fails or the reply cannot be parsed. Fallbacks are counted by
reason, never silent, and reported to the client too (a metered client's ledger shows them). A call refused by the
budget, or a replay that does not belong to the run (:class:`~coordkit.llm.base.StopRun`), is not a fallback: it
stops the run.

Every policy also has ``decide_async``, the same decision awaitable, so that :func:`decision_round` can run one
round's LLM calls concurrently.
"""

import inspect
import math
import numbers
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from coordkit.llm import aio
from coordkit.llm.base import LLMClient, LLMReply, LLMRequest, StopRun, scrub
from coordkit.llm.parsing import ReplyParseError
from coordkit.parameters import Instance, Integer


@dataclass(frozen=True)
class Classifier:
    """What kind of decider a policy is."""

    stochastic: bool = False  # draws random numbers: one observation can get different decisions
    stateful: bool = False  # remembers earlier observations: its decisions depend on them until reset()
    calls_llm: bool = False  # asks an LLM (falling back to rules when that fails)


class Policy(ABC):
    """Maps an observation to a decision; ``classifier`` says whether it is stochastic, stateful or an LLM's.

    A stochastic policy draws from its ``rng`` (a :class:`numpy.random.Generator`), which the model sets to its
    agent's own random stream (:func:`~coordkit.policy_registry.fresh_policy`), so that one seed gives one run."""

    name: str = "policy"
    classifier: ClassVar[Classifier] = Classifier()

    @abstractmethod
    def decide(self, observation: Any) -> Any:
        """Return the decision for this observation."""

    async def decide_async(self, observation: Any) -> Any:
        """The same decision, awaitable (rule-based policies answer at once)."""
        return self.decide(observation)

    def reset(self) -> None:  # noqa: B027 — a stateless policy has nothing to forget
        """Forget what earlier observations taught, as at the start of a run (stateless: nothing to forget)."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


class FunctionPolicy(Policy):
    """A plain function ``observation → decision`` as a policy (:func:`policy_from`): the function says what to
    do, the classifier what kind of decider it is (it cannot tell by itself)."""

    def __init__(self, function: Callable[..., Any], *, stochastic: bool = False, stateful: bool = False, name=None):
        if not callable(function):
            raise TypeError(f"policy_from takes a function observation → decision, not {function!r}")
        self.function = function
        self.name = name or getattr(function, "__name__", type(function).__name__)
        self._classifier = Classifier(stochastic=stochastic, stateful=stateful)
        self.rng = None  # the agent's own stream, set by the model
        self._draws = stochastic and _takes_two(function)

    @property
    def classifier(self) -> Classifier:
        return self._classifier

    def decide(self, observation: Any) -> Any:
        return self.function(observation, self.rng) if self._draws else self.function(observation)


def _takes_two(function: Callable) -> bool:
    """Whether ``function`` can be called with an observation and a random generator."""
    try:
        inspect.signature(function).bind(None, None)
    except TypeError:
        return False
    return True


def policy_from(
    fn: Callable[[Any], Any], stochastic: bool = False, stateful: bool = False, name: str | None = None
) -> Policy:
    """A :class:`Policy` that decides with ``fn(observation)``, named ``name`` (the function's name when None).

    Say ``stochastic=True`` if the function draws random numbers: it then takes a second argument, ``rng``, the
    agent's own random stream (``def generous(seen, rng): ... rng.random() < 0.1``), so that a seed gives one run;
    ``stateful=True`` if it remembers earlier observations (a stateful rule that must forget between runs is better
    written as a :class:`Policy` with a ``reset``). A model handed a function wraps it so itself;
    :func:`coordkit.check_policy` checks the claims."""
    return FunctionPolicy(fn, stochastic=stochastic, stateful=stateful, name=name)


class StudentRule(Policy):
    """A student's rule in an agent whose protocol keeps its own part (issue 45): ``student`` decides the agent's
    action, ``rule`` is the agent's own rule, which still writes what the protocol sends (a family's subclass says
    how, in ``decide``). It is the kind of decider the student's rule is, and forgets what it forgets."""

    def __init__(self, student: Policy, rule: Policy):
        self.student, self.rule = student, rule
        self.name = student.name

    @property
    def classifier(self) -> Classifier:
        return self.student.classifier

    def reset(self) -> None:
        self.student.reset()


def whole_number(value: object) -> int | None:
    """``value`` as an int if it is a whole number (an int, or a float such as 4.0), else None (booleans too)."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        return None
    if isinstance(value, numbers.Integral):
        return int(value)
    return int(value) if math.isfinite(value) and float(value).is_integer() else None


def decision_pair(decision: object, kind: type) -> object:
    """A decision as ``kind``: itself, ``kind(*pair)`` for a (value, message) pair as the built-in rules return,
    else ``kind(decision)``."""
    if isinstance(decision, kind):
        return decision
    if isinstance(decision, tuple) and len(decision) == 2:
        return kind(*decision)
    return kind(decision)


class DecisionError(TypeError):
    """A policy returned what its model cannot act on; the message names the policy, the value and what the model
    expected."""


def policy_name(policy: Any) -> str:
    """How a policy is shown: a name as given, else its ``name``, else its function's or class's name."""
    if isinstance(policy, str):
        return policy
    if isinstance(policy, Policy):
        return str(policy.name)
    return getattr(policy, "__name__", None) or type(policy).__name__


class LLMPolicy(Policy):
    """An LLM-backed decision with a rule-based fallback.

    ``build_request(observation)`` writes the prompt; ``parse(text, observation)`` turns the reply into a decision
    or raises :class:`~coordkit.llm.parsing.ReplyParseError`. ``llm_calls`` counts the requests sent to the client
    (a decision may take several: a dialogue's turns, a tool round), ``llm_decisions`` the decisions its replies
    made. A failed call (any exception from the client but a
    budget stop) or an unparseable reply makes the policy return ``fallback.decide(observation)``, count why in
    ``fallbacks`` and keep the latest message in ``last_failure``. Any other exception out of ``parse`` falls back
    too, counted as a "parser error" under its type's name: a parser's bug must show, but never crash a run.
    """

    def __init__(
        self,
        client: LLMClient,
        build_request: Callable[[Any], LLMRequest],
        parse: Callable[[str, Any], Any],
        fallback: Policy,
        name: str = "llm",
    ):
        self.client = client
        self.build_request = build_request
        self.parse = parse
        self.fallback = fallback
        self.name = name
        self.llm_calls = 0
        self.llm_decisions = 0
        self.fallbacks: Counter[str] = Counter()
        self.last_failure: dict[str, str] = {}  # reason → the latest error message (and reply), to show the user

    @property
    def classifier(self) -> Classifier:
        """An LLM samples its replies; what the policy remembers is its fallback's."""
        return Classifier(stochastic=True, stateful=self.fallback.classifier.stateful, calls_llm=True)

    def decide(self, observation: Any) -> Any:
        try:
            reply = self.ask(self.build_request(observation))
        except StopRun:
            raise
        except Exception as error:  # an API that fails must never crash a run
            return self._fall_back(observation, error)
        return self._read(reply, observation)

    async def decide_async(self, observation: Any) -> Any:
        try:
            reply = await self.ask_async(self.build_request(observation))
        except StopRun:
            raise
        except Exception as error:
            return self._fall_back(observation, error)
        return self._read(reply, observation)

    def ask(self, request: LLMRequest) -> LLMReply:
        """Send ``request`` to the client, counted in ``llm_calls`` whether it succeeds or not."""
        self.llm_calls += 1
        return self.client.complete(request)

    async def ask_async(self, request: LLMRequest) -> LLMReply:
        """:meth:`ask` on the kit's event loop."""
        self.llm_calls += 1
        return await self.client.complete_async(request)

    def reset(self) -> None:
        self.fallback.reset()

    def _read(self, reply: LLMReply, observation: Any) -> Any:
        try:
            decision = self.parse(reply.text, observation)
        except Exception as error:  # a reply must never crash a run, even one a parser was not written for
            return self._fall_back(observation, error, reply.text)
        self.llm_decisions += 1
        return decision

    def _fall_back(self, observation: Any, error: Exception, reply: str | None = None) -> Any:
        if reply is None:
            reason = f"call failed ({getattr(error, 'cause', type(error).__name__)})"
        elif isinstance(error, ReplyParseError):
            reason = "unparseable reply"
        else:  # a parser that let something else out: the reply still falls back, and the bug shows by its name
            reason = f"parser error ({type(error).__name__})"
        self.fallbacks[reason] += 1
        self.last_failure[reason] = scrub(str(error) if reply is None else f"{error}: {reply[:200]!r}")
        self.client.note_fallback(reason)
        return self.fallback.decide(observation)

    @property
    def fallback_count(self) -> int:
        return sum(self.fallbacks.values())


def decision_round(
    method: str,
    deciders: Sequence,
    *arguments: Sequence,
    concurrent: bool,
    max_concurrency: int | None = None,
) -> list:
    """One round of decisions: ``decider.<method>(*args)`` for every decider (with the i-th of each ``arguments``),
    results in order.

    With LLM agents (``concurrent``), every ``decider.<method>_async(*args)`` is awaited at once on the kit's event
    loop: the agents of a round decide on the same information, so their calls are independent. The client keeps
    as many in flight as the provider allows (:mod:`coordkit.llm.throttle`); ``max_concurrency`` caps them further.
    Without, the calls run one after another, with no event loop involved.
    """
    calls = list(zip(deciders, *arguments, strict=True))
    if not concurrent:
        return [getattr(decider, method)(*args) for decider, *args in calls]
    awaitables = (getattr(decider, f"{method}_async")(*args) for decider, *args in calls)
    return aio.run(aio.gather_bounded(awaitables, max_concurrency))


def llm_parameters(optional: str, doc: str) -> tuple[Instance, Integer]:
    """The declarations every model with rounds of LLM decisions takes: ``llm``, the client (None: ``optional``,
    what plays instead; ``doc``: who asks it), and ``max_concurrency``, the cap :func:`decision_round` keeps."""
    return (
        Instance("llm", None, LLMClient, optional=optional, doc=doc),
        Integer(
            "max_concurrency",
            None,
            1,
            1024,
            optional="as many as the provider allows: the client finds its limit",
            doc="with an LLM, the most calls of one round in flight at once",
            unit="calls",
        ),
    )
