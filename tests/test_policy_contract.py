"""Every policy is what its classifier says it is (in the manner of the Axelrod library's strategy classifiers).

- deterministic (not ``stochastic``): the seed it is given changes nothing;
- ``stochastic``: the same seed repeats its decisions, and some other seed changes one;
- stateless (not ``stateful``): each decision depends on its observation alone (and, if stochastic, on the random
  numbers it draws), so a fresh policy decides any one observation as the policy that saw all before it;
- ``stateful``: some decision shows what came before, and ``reset()`` forgets it all;
- ``calls_llm``: it asks its client once per decision and falls back, counted, when the reply is unusable;
  the other policies hold no client at all.

The policies come from ``tests/policy_examples/`` (one module per family); every concrete Policy class of the
package must appear there.
"""

import importlib
import inspect
import pkgutil

import numpy as np
import pytest
from policy_examples import PolicyExample, all_examples

import coordkit
from coordkit.llm import LLMClient, ScriptedClient
from coordkit.policies import LLMPolicy, Policy, StudentRule

EXAMPLES = all_examples()


DEPRECATED_MODULES = {"coordkit.sweep"}  # a shim that warns when imported and defines nothing of its own


def policy_classes() -> set[type[Policy]]:
    """Every concrete Policy class defined in the package (every module imported to find them)."""
    for info in pkgutil.walk_packages(coordkit.__path__, "coordkit.", onerror=lambda name: None):
        if info.name in DEPRECATED_MODULES:
            continue
        try:
            importlib.import_module(info.name)
        except Exception:  # noqa: BLE001
            pass  # a family that does not import fails test_contract.py::test_the_family_imports
    found, todo = set(), [Policy]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if sub.__module__.startswith("coordkit.") and not inspect.isabstract(sub):
                found.add(sub)
    return found


def nonsense(request) -> str:
    return "Let me think about it... no idea."


def decide_all(example: PolicyExample, seed: int = 0, client: LLMClient | None = None) -> list:
    policy = example.make(np.random.default_rng(seed), client)
    return [policy.decide(observation) for observation in example.observations()]


def test_every_policy_class_has_an_example_and_declares_its_classifier():
    classes = policy_classes()
    covered = {type(example.make(np.random.default_rng(0), ScriptedClient(nonsense))) for example in EXAMPLES}
    missing = sorted(c.__qualname__ for c in classes - covered)
    assert not missing, f"add examples for {missing} to tests/policy_examples/"
    undeclared = sorted(
        c.__qualname__ for c in classes if not issubclass(c, LLMPolicy | StudentRule) and "classifier" not in vars(c)
    )  # an LLM's is inherited, and a student rule's is the student's
    assert not undeclared, f"these policies do not declare their classifier: {undeclared}"


def classifier(example: PolicyExample):
    return example.make(np.random.default_rng(0), ScriptedClient(nonsense)).classifier


def examples(**kind) -> list:
    """The examples whose classifier has every attribute of ``kind`` as given, as pytest parameters."""
    chosen = [e for e in EXAMPLES if all(getattr(classifier(e), name) == value for name, value in kind.items())]
    return [pytest.param(e, id=e.id) for e in chosen]


@pytest.mark.parametrize("example", examples(stochastic=False))
def test_a_deterministic_policy_ignores_its_seed(example):
    assert decide_all(example, seed=1) == decide_all(example, seed=2)


@pytest.mark.parametrize("example", examples(stochastic=True, calls_llm=False))
def test_a_stochastic_policy_repeats_with_its_seed_and_varies_across_seeds(example):
    assert decide_all(example, seed=1) == decide_all(example, seed=1)
    assert any(decide_all(example, seed=s) != decide_all(example, seed=1) for s in range(2, 12))


@pytest.mark.parametrize("example", examples(stateful=False, calls_llm=False))
def test_a_stateless_policy_decides_each_observation_on_its_own(example):
    rng = np.random.default_rng(5)
    policy = example.make(rng, None)
    states, decisions = [], []
    for observation in example.observations():
        states.append(rng.bit_generator.state)
        decisions.append(policy.decide(observation))
    for observation, state, decision in zip(example.observations(), states, decisions, strict=True):
        fresh_rng = np.random.default_rng(0)
        fresh = example.make(fresh_rng, None)
        fresh_rng.bit_generator.state = state  # the same random numbers as in the run
        assert fresh.decide(observation) == decision


@pytest.mark.parametrize("example", examples(stateful=True, calls_llm=False))
def test_a_stateful_policy_shows_its_memory_and_forgets_on_reset(example):
    rng = np.random.default_rng(5)
    policy = example.make(rng, None)
    after_make = rng.bit_generator.state
    first = [policy.decide(observation) for observation in example.observations()]
    if not classifier(example).stochastic:
        alone = [example.make(np.random.default_rng(5), None).decide(o) for o in example.observations()]
        assert alone != first, "the observations do not show what the policy remembers"
    policy.reset()
    rng.bit_generator.state = after_make
    assert [policy.decide(observation) for observation in example.observations()] == first


@pytest.mark.parametrize("example", examples(calls_llm=True))
def test_an_llm_policy_asks_once_per_decision_and_falls_back_counted(example):
    client = ScriptedClient(nonsense)
    policy = example.make(np.random.default_rng(0), client)
    observations = example.observations()
    for observation in observations:
        policy.decide(observation)
    asked = len(client.requests)
    assert asked >= len(observations) and policy.fallback_count == asked and policy.llm_decisions == 0
    if example.reply is not None:
        answered = example.make(np.random.default_rng(0), ScriptedClient(example.reply))
        for observation in observations:
            answered.decide(observation)
        assert answered.fallback_count == 0 and answered.llm_decisions >= len(observations)


@pytest.mark.parametrize("example", examples(calls_llm=False))
def test_a_rule_policy_holds_no_llm_client(example):
    policy = example.make(np.random.default_rng(0), ScriptedClient(nonsense))
    assert not any(isinstance(value, LLMClient) for value in vars(policy).values())
