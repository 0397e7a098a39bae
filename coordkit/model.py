"""The shape every coordkit model has (CONTRIBUTING.md, "the anatomy of a model family").

A model is a Mesa model whose parameters are declared once, as plain data (:mod:`coordkit.parameters`)::

    class BeerGame(Model):
        parameters = Parameters(Integer("stages", 4, 2, 8, doc="chain length"), ...)

        def __init__(self, *, rng=None, **params):
            super().__init__(rng=rng, **params)  # checks every value; self.stages is now set
            ...

From the declaration the class gets its signature (``BeerGame(*, stages=4, ..., rng=None)``, so ``help`` and
Mesa's ``batch_run`` see ordinary keyword parameters), a docstring section listing the parameters, and a place in
:func:`models`. Every model then offers the same calls: ``run()`` plays it out and returns it; ``frame()`` is the
tidy per-step DataFrame (its first column counts Mesa's ``steps``; row 0 is the initial state); ``summary()`` is
one row of headline numbers; ``policies()`` lists the policies its agents decide with, so that its LLM calls and
fallbacks are counted (``llm_calls``, ``llm_fallbacks``, ``fallback_reasons``).
"""

import inspect
import re
from collections import Counter
from collections.abc import Mapping
from typing import Any, ClassVar, Self

import mesa
import pandas as pd

from coordkit.families import import_families
from coordkit.parameters import Parameters, check_rng
from coordkit.policies import LLMPolicy, Policy
from coordkit.streams import MESA, Streams, root_sequence

_MODELS: dict[str, type["Model"]] = {}
# names a parameter cannot have: Mesa's own model attributes (and the datacollector every model keeps)
RESERVED = frozenset(dir(mesa.Model)) | {"running", "steps", "random", "rng", "agent_id_counter", "datacollector"}
RESERVED |= {"streams", "random_streams"}


class Model(mesa.Model):
    """A Mesa model with declared parameters, ``run()``, ``frame()`` and ``summary()``."""

    parameters: ClassVar[Parameters] = Parameters()
    # parameters of a small run that still plays every mechanism: what the contract tests play, where a run at the
    # defaults takes seconds (Agora's 1,000 queries); every value is checked against the declaration
    small: ClassVar[Mapping[str, Any]] = {}
    # the model's random streams (coordkit.streams), each with the parameters that govern its draws: moving any other
    # parameter leaves the stream's draws as they were (common random numbers; the contract tests check it)
    random_streams: ClassVar[Mapping[str, tuple[str, ...]]] = {}

    def __init_subclass__(cls, abstract: bool = False, **kwargs):
        """Check and register a model class; ``abstract=True`` marks a base that models of a family share, which
        declares no parameters and is not a model of its own (``class AgoraModel(Model, abstract=True)``). A
        subclass of a model inherits its parameters, random streams, state view and registered policies
        (issue 45), and is listed by :func:`models` only if it is the kit's: a student's variant stays theirs."""
        super().__init_subclass__(**kwargs)
        if abstract:
            return
        if cls.parameters is Model.parameters:
            raise TypeError(f"{cls.__name__} must declare its parameters (parameters = Parameters(...))")
        clashes = sorted(set(cls.parameters.names) & RESERVED)
        if clashes:
            raise TypeError(f"{cls.__name__}: parameters {clashes} would hide Mesa's model attributes; rename them")
        cls.parameters.resolve(dict(cls.small), owner=f"{cls.__name__}.small", model=cls)
        _check_streams(cls)
        cls.__signature__ = cls.parameters.signature()
        cls.__doc__ = f"{inspect.cleandoc(cls.__doc__ or '')}\n\n{cls.parameters.docstring()}\n"
        if "__init__" in vars(cls) and not cls.__init__.__doc__:  # else help() shows Mesa's "Overload this method"
            cls.__init__.__doc__ = Model.__init__.__doc__
        if cls.__module__.startswith("coordkit.") or not any(base in _MODELS.values() for base in cls.__mro__[1:]):
            _MODELS[model_id(cls)] = cls

    def __init__(self, *, rng=None, **params):
        """Set the model up from its declared parameters (the class docstring's Parameters): each one given is
        checked against its declaration, the defaults fill in the rest, and ``rng`` (checked too: a seed is a
        non-negative integer) seeds the run's random streams (``self.streams``, :mod:`coordkit.streams`), one of
        which seeds Mesa's ``random`` and ``rng`` (the order in which Mesa shuffles agents)."""
        cls = type(self)
        values = cls.parameters.resolve(params, owner=cls.__name__, model=cls)
        declared = {MESA: (), **cls.random_streams}
        self.streams = Streams(root_sequence(check_rng(rng)), declared, owner=cls.__name__)
        super().__init__(rng=self.streams(MESA))
        for name, value in values.items():
            setattr(self, name, value)

    @property
    def params(self) -> dict[str, Any]:
        """The value of every declared parameter."""
        return {name: getattr(self, name) for name in self.parameters.names}

    def run(self) -> Self:
        """Step until the model stops (``running`` turns False) and return it."""
        self.run_model()
        return self

    def frame(self) -> pd.DataFrame:
        """The tidy per-step DataFrame (documented by each model); row 0 is the initial state."""
        raise NotImplementedError(f"{type(self).__name__} must define frame()")

    def summary(self) -> dict[str, Any]:
        """The run's headline numbers as one row."""
        raise NotImplementedError(f"{type(self).__name__} must define summary()")

    def policies(self) -> list[Policy]:
        """Every policy the model's agents decide with (its LLM ones are counted below)."""
        return []

    @property
    def llm_calls(self) -> int:
        """Requests sent to an LLM client (those that failed or fell back included); 0 with rule-based agents."""
        return sum(p.llm_calls for p in self._llm_policies())

    @property
    def llm_fallbacks(self) -> int:
        """Decisions that fell back to the rules because the call failed or the reply was unusable."""
        return sum(p.fallback_count for p in self._llm_policies())

    @property
    def fallback_reasons(self) -> Counter[str]:
        """Why replies fell back, e.g. ``{"unparseable reply": 3, "call failed (LLMError)": 1}``."""
        return sum((p.fallbacks for p in self._llm_policies()), Counter())

    def _llm_policies(self) -> list[LLMPolicy]:
        return [p for p in self.policies() if isinstance(p, LLMPolicy)]


def _check_streams(cls: type[Model]) -> None:
    """Each declared random stream names only declared parameters as what governs it."""
    if MESA in cls.random_streams:
        raise TypeError(f"{cls.__name__}.random_streams: {MESA!r} is Mesa's own stream; name yours otherwise")
    for purpose, governing in cls.random_streams.items():
        where = f"{cls.__name__}.random_streams[{purpose!r}]"
        if not isinstance(governing, tuple):
            raise TypeError(f"{where} is {governing!r}: give a tuple of the parameters that govern its draws")
        unknown = sorted(set(governing) - set(cls.parameters.names))
        if unknown:
            raise TypeError(f"{where} names {unknown}, which {cls.__name__} does not declare as parameters")


def model_id(cls: type[Model]) -> str:
    """The name ``coordkit run`` knows a model by: its class name in kebab case (BeerGame → beer-game)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "-", cls.__name__).lower()


def models() -> dict[str, type[Model]]:
    """Every model of every family, by :func:`model_id` (the families are imported to find them)."""
    import_families()
    return registered()


def registered() -> dict[str, type[Model]]:
    """The models of the modules imported so far, by :func:`model_id`."""
    return dict(sorted(_MODELS.items()))
