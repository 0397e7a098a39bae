"""Policies to put through the policy contract (test_policy_contract.py), one module per family.

Each module defines ``EXAMPLES``: a list of :class:`PolicyExample`. Every concrete Policy class of the package must
appear in some example (the contract test says which are missing), so a new family adds a module here.
"""

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from coordkit.llm import LLMClient
from coordkit.policies import Policy


@dataclass(frozen=True)
class PolicyExample:
    """A way to make a fresh policy, and observations to show it in order (a run's worth).

    ``make(rng, client)`` builds the policy: ``rng`` seeds a stochastic one, ``client`` is what an LLM policy asks
    (rule policies ignore it). For a stateful policy the observations must be ones that show its memory: some
    decision must differ from what a fresh policy would decide. ``reply`` answers an LLM policy's requests in
    the prompt's format (None: LLM policies get nonsense and must fall back).
    """

    id: str
    make: Callable[[np.random.Generator, LLMClient | None], Policy]
    observations: Callable[[], list[Any]]
    reply: Callable | None = None


def all_examples() -> list[PolicyExample]:
    examples = []
    for info in pkgutil.iter_modules(__path__):
        examples += importlib.import_module(f"{__name__}.{info.name}").EXAMPLES
    return examples
