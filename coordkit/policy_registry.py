"""Policies a student adds to a model by name (issue 45): ``register_policy(DelayedDilemma, "tf2t", rule)``.

A model's policy parameters (:class:`~coordkit.parameters.PolicyChoice`) take one of the family's built-in rules by
name, a name registered here, a :class:`~coordkit.policies.Policy` (or a Policy class), or a plain function
observation → decision. A name is registered on a model class and read along its MRO, as Python reads attributes:
one registered on ``DelayedDilemma`` is offered by every subclass too, one registered on a student's subclass by that
subclass alone. Panels' dropdowns (:func:`coordkit.ui.controls`), sweeps and :func:`coordkit.tournament` offer them.
"""

import copy
import dataclasses
import keyword
from dataclasses import dataclass
from typing import Any

import numpy as np

from coordkit.policies import Policy, policy_from

_REGISTERED: dict[type, dict[str, "Registered"]] = {}


@dataclass(frozen=True)
class Registered:
    """A policy registered under ``name`` for a model: a Policy, a Policy class or a function; ``label`` is how a
    dropdown shows it."""

    name: str
    policy: Any
    label: str


def register_policy(model: type, name: str, policy: Any = None, *, label: str | None = None) -> Any:
    """Offer ``policy`` under ``name`` wherever ``model`` (and its subclasses) take a policy; returns ``policy``.

    Without ``policy``, a decorator: ``@register_policy(DelayedDilemma, "tf2t")`` above a function or a class.
    Registering a name again replaces it (a notebook cell run twice); a family's built-in names cannot be taken."""
    if policy is None:
        return lambda decorated: register_policy(model, name, decorated, label=label)
    choices = policy_parameters(model)
    if not choices:
        raise TypeError(f"{getattr(model, '__name__', model)!r} is not a model whose agents take a policy")
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
        raise ValueError(f"register_policy: name={name!r}; give a name like 'tit_for_two_tats' (letters, digits, _)")
    if any(name in param.options for param in choices):
        raise ValueError(f"register_policy: {name!r} is one of {model.__name__}'s own rules; choose another name")
    if not is_policy(policy):
        raise TypeError(f"register_policy: {policy!r} is not a Policy, a Policy class or a function")
    _REGISTERED.setdefault(model, {})[name] = Registered(name, policy, label or name.replace("_", " "))
    return policy


def registered_policies(model: type | None) -> dict[str, Registered]:
    """The names registered for ``model``, its own and its bases', a subclass's hiding its base's."""
    merged: dict[str, Registered] = {}
    for cls in reversed(getattr(model, "__mro__", ())):
        merged.update(_REGISTERED.get(cls, {}))
    return merged


def is_policy(value: Any) -> bool:
    """Whether ``value`` can decide for an agent: a Policy, a Policy class, or a function."""
    return isinstance(value, Policy) or (isinstance(value, type) and issubclass(value, Policy)) or callable(value)


def fresh_policy(value: Any, model: type | None = None, rng: np.random.Generator | None = None) -> Policy:
    """A policy of its own for one agent of one run: a registered name's policy, a copy of a Policy (so that two
    agents or two runs never share what a stateful one remembers), a Policy class's instance, or a function
    wrapped by :func:`~coordkit.policies.policy_from`. A stochastic one that keeps an ``rng`` draws from ``rng``,
    the agent's own stream."""
    if isinstance(value, str):
        value = registered_policies(model)[value].policy
    if isinstance(value, Policy):
        policy = copy.deepcopy(value)
    elif isinstance(value, type) and issubclass(value, Policy):
        policy = value()
    else:
        policy = policy_from(value)
    if rng is None or not policy.classifier.stochastic or not hasattr(policy, "rng"):
        return policy
    if dataclasses.is_dataclass(policy) and "rng" in {field.name for field in dataclasses.fields(policy)}:
        return dataclasses.replace(policy, rng=rng)  # (a frozen one, as the paper's SimplifiedModel)
    policy.rng = rng
    return policy


def policy_parameters(model: Any) -> list:
    """The parameters of ``model`` that take a policy (its :class:`~coordkit.parameters.PolicyChoice` ones)."""
    from coordkit.parameters import PolicyChoice

    declared = getattr(model, "parameters", None)
    return [param for param in declared or () if isinstance(param, PolicyChoice)]


def per_agent(parameter: str, value: Any, names: list[str]) -> list[Any]:
    """``value`` of the policy parameter ``parameter`` for each of the agents called ``names``, in order (None:
    the agent's own rule): one policy for every agent, a list of one per agent, or a mapping {name: policy} whose
    agents not named keep their own rule. A ParameterError before any work for a wrong count or an unknown name."""
    from coordkit.parameters import ParameterError

    if isinstance(value, tuple | list):
        if len(value) != len(names):
            raise ParameterError(
                f"{parameter}= has {len(value)} policies for {len(names)} agents ({', '.join(names)}): give one "
                f"per agent, in that order, or a mapping {{name: policy}} for some of them"
            )
        return list(value)
    if isinstance(value, dict):
        unknown = [name for name in value if name not in names]
        if unknown:
            raise ParameterError(
                f"{parameter}= names {', '.join(map(repr, unknown))}, not an agent of this model: its agents are "
                f"{', '.join(names)}"
            )
        return [value.get(name) for name in names]
    return [value] * len(names)
