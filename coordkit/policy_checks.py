"""``check_policy(policy, Model)``: a policy checked before it plays, in the manner of scikit-learn's
``check_estimator`` (issue 45).

It plays the policy a few runs in the first seat against the model's sparring rules in the others (its
``contest``: the other side of a pair, or the rest of a population), recording what the policy saw
and decided, and checks that: it decides without an error, every decision one the model can act on (the model
refuses others with a :class:`~coordkit.policies.DecisionError`); a policy that says it is not stochastic decides
the same again for the same observations, from a fresh start; one that says it is stateless decides each observation
alone the same as in play; and one that says it is stateful decides the same again after ``reset()``.
"""

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np

from coordkit.policies import Policy, policy_from, policy_name
from coordkit.policy_registry import fresh_policy

SEEDS = (0, 1)


@dataclass(frozen=True)
class Check:
    """One check of :func:`check_policy`: its name, whether it passed, and what was seen."""

    name: str
    passed: bool
    detail: str


@dataclass(frozen=True)
class PolicyReport:
    """What :func:`check_policy` found: one :class:`Check` each; ``passed`` when all did."""

    policy: str
    model: str
    checks: tuple[Check, ...]

    @property
    def passed(self) -> bool:
        return all(check.passed for check in self.checks)

    def __str__(self) -> str:
        verdict = "passes every check" if self.passed else "fails a check"
        lines = [f"{self.policy} in {self.model}: {verdict}"]
        lines += [f"  {'✓' if c.passed else '✗'} {c.name}: {c.detail}" for c in self.checks]
        return "\n".join(lines)

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(str(self))


def check_policy(policy: Any, model: type, **params: Any) -> PolicyReport:
    """Check ``policy`` (a name, a Policy, a Policy class or a function) in ``model`` with ``params``."""
    contest = getattr(model, "contest", None)
    if contest is None:
        raise TypeError(f"{getattr(model, '__name__', model)!r} declares no contest to check a policy in")
    seats = contest.seats(params, model)
    model.parameters.resolve({**params, **contest.fielding([policy] * seats)}, owner=model.__name__, model=model)
    name = policy_name(policy)
    prototype = _instance(policy, model, contest, params)
    played, checks = [], []
    try:
        for opponent in contest.sparring:
            for seed in SEEDS:
                played.append(_play(prototype, model, contest, params, opponent, seed, seats))
    except Exception as error:  # a student's rule may raise anything: the report says what
        checks.append(Check("decides", False, f"{type(error).__name__}: {error}"))
        return PolicyReport(name, model.__name__, tuple(checks))
    decisions = sum(len(run) for run in played)
    against = ", ".join(opponent or "the agents' own rule" for opponent in contest.sparring)
    where = f"against {against}" if seats == 2 else f"as one agent of {seats}, the others playing {against}"
    checks.append(Check("decides", True, f"{decisions} decisions the model can act on, in {len(played)} runs {where}"))
    kind = prototype.classifier
    if kind.stochastic:  # its decisions may rightly differ: nothing more to replay
        return PolicyReport(name, model.__name__, tuple(checks))
    checks.append(_replayed(prototype, played, "deterministic: the same decisions again from a fresh start"))
    if checks[-1].passed:  # (a policy that draws at random, undeclared, fails the one above, not the ones below)
        checks.append(_after_reset(prototype, played) if kind.stateful else _alone(prototype, played))
    return PolicyReport(name, model.__name__, tuple(checks))


def _instance(policy: Any, model: type, contest, params: dict) -> Policy:
    """A policy object for ``policy``: a built-in rule as the model makes it (the first seat's), else a fresh one."""
    if isinstance(policy, str) and policy in model.parameters[contest.parameter].options:
        return model(**params, **{contest.parameter: policy}, rng=SEEDS[0]).policies()[0]
    return fresh_policy(policy, model)


def _play(prototype: Policy, model: type, contest, params: dict, opponent, seed: int, seats: int) -> list[tuple]:
    """One run of a fresh copy of ``prototype`` in the first seat, ``opponent`` in the others: its (observation,
    decision) pairs."""
    policy, seen = fresh_policy(prototype, model, np.random.default_rng(seed)), []  # a copy; its own draws

    def recorded(observation):
        decision = policy.decide(observation)
        seen.append((observation, decision))
        return decision

    named = policy_from(recorded, stateful=True, name=prototype.name)  # errors name the policy, not this wrapper
    model(**params, **contest.fielding([named, *[opponent] * (seats - 1)]), rng=seed).run()
    return seen


def _replayed(prototype: Policy, played: list, name: str) -> Check:
    for run in played:
        policy = copy.deepcopy(prototype)
        for step, (observation, decision) in enumerate(run):
            again = policy.decide(observation)
            if again != decision:
                return Check(name, False, f"at decision {step}, {decision!r} in play but {again!r} again")
    return Check(name, True, f"{sum(map(len, played))} decisions decided again alike")


def _alone(prototype: Policy, played: list) -> Check:
    name = "stateless: each observation alone decides as in play"
    for run in played:
        for step, (observation, decision) in reversed(list(enumerate(run))):
            again = copy.deepcopy(prototype).decide(observation)
            if again != decision:
                return Check(
                    name, False, f"decision {step}: {decision!r} in play, {again!r} alone (say stateful=True?)"
                )
    return Check(name, True, "every decision the same out of order")


def _after_reset(prototype: Policy, played: list) -> Check:
    policy = copy.deepcopy(prototype)
    for run in played:
        policy.reset()
        for step, (observation, decision) in enumerate(run):
            again = policy.decide(observation)
            if again != decision:
                return Check(
                    "stateful: reset() forgets", False, f"decision {step}: {decision!r}, {again!r} after reset"
                )
    return Check("stateful: reset() forgets", True, "each run decided again alike after reset()")
