"""Model parameters declared once, as plain data (in the spirit of Mesa's ``model_params`` and scikit-learn's
parameter constraints).

A model lists its parameters, each with its type, its allowed range or choices, its default, its unit and a
one-line meaning::

    parameters = Parameters(
        Choice("protocol", "rep_textual", PROTOCOLS, doc="how the players talk"),
        Integer("stages", 4, 2, 8, doc="chain length", unit="stages"),
        Real("holding_cost", 0.5, 0, 100, doc="cost of a case in stock for a round", unit="$"),
    )

That one declaration drives the model's signature and docstring (:class:`coordkit.model.Model`), the validation
of every value with an error that names the parameter, the value and what is allowed, a notebook panel's
controls (:func:`coordkit.ui.controls`), the grid checks of :func:`coordkit.sweeps.sweep`, and the options and
help of ``coordkit run MODEL``.
"""

import difflib
import inspect
import math
import numbers
import textwrap
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd


class ParameterError(ValueError):
    """A value a parameter cannot take; the message names the parameter, the value and what is allowed."""


@dataclass(frozen=True)
class Param(ABC):
    """One declared parameter. ``optional`` says what None means when None is allowed ("" when it is not)."""

    name: str
    default: Any
    _: KW_ONLY
    doc: str
    unit: str = ""
    optional: str = ""

    def check(self, value: Any, model: type | None = None) -> Any:
        """The value, normalised (an int for an Integer, a float for a Real), or a :class:`ParameterError`;
        ``model``, the class whose parameter it is, matters to a :class:`PolicyChoice` alone."""
        if value is None and self.optional:
            return None
        return self._check(value)

    @abstractmethod
    def _check(self, value: Any) -> Any: ...

    @abstractmethod
    def allowed(self) -> str:
        """What the parameter accepts, in words: "an integer from 2 to 8"."""

    def error(self, value: Any, problem: str = "") -> ParameterError:
        problem = f" {problem}" if problem else ""
        none = f", or None ({self.optional})" if self.optional else ""
        return ParameterError(f"{self.name}={value!r}{problem}: {self.name} takes {self.allowed()}{none}")

    def parse(self, text: str, model: type | None = None) -> Any:
        """A value given as text (on the command line); "none" is None where None is allowed. ``model`` as for
        :meth:`check` (a policy's name registered for it)."""
        if self.optional and text.strip().lower() == "none":
            return None
        return self.check(self._parse(text), model)

    def _parse(self, text: str) -> Any:
        return text

    def label(self) -> str:
        """How a control names the parameter, in words: a unit the name ends in goes into brackets ("duration_s" →
        "duration (s)"), a unit the words already say is not repeated ("rounds", not "rounds (rounds)"), acronyms
        and a one-letter word after the first (a player) are capitals ("max LLM calls", "delay A (s)")."""
        first, *rest = self.name.split("_")
        if rest and rest[-1] == self.unit and len(self.unit) <= 2:  # a unit's symbol: "_s"
            rest = rest[:-1]
        words = [
            CAPITALS.get(first, first),
            *(CAPITALS.get(word, word.upper() if len(word) == 1 else word) for word in rest),
        ]
        says_its_unit = _singular(words[-1]) == _singular(self.unit)
        return " ".join(words) if not self.unit or says_its_unit else f"{' '.join(words)} ({self.unit})"

    def type_name(self) -> str:
        return type(self).__name__.lower()


CAPITALS = {"llm": "LLM", "sd": "SD"}  # words of parameter names written in capitals in a label


def _singular(word: str) -> str:
    return word.removesuffix("s")


@dataclass(frozen=True)
class Integer(Param):
    """A whole number from ``low`` to ``high`` (both included); ``slider`` is the panel's default span."""

    low: int
    high: int
    _: KW_ONLY
    slider: tuple[int, int] | None = None

    def _check(self, value: Any) -> int:
        if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
            raise self.error(value, "is not a number")
        if not isinstance(value, numbers.Integral):
            whole = math.isfinite(value) and float(value).is_integer()
            raise self.error(value, f"is not an integer{f'; pass {int(value)}' if whole else ''}")
        if not self.low <= value <= self.high:
            raise self.error(value, "is out of range")
        return int(value)

    def allowed(self) -> str:
        return f"an integer from {self.low} to {self.high}"

    def _parse(self, text: str) -> Any:
        try:
            return int(text)
        except ValueError:
            return _number(text)


@dataclass(frozen=True)
class Real(Param):
    """A finite number from ``low`` to ``high``, each end included unless ``low_open`` / ``high_open``.

    ``step`` is the panel slider's step and ``slider`` its default span (the range when not given).
    """

    low: float
    high: float
    _: KW_ONLY
    low_open: bool = False
    high_open: bool = False
    step: float = 0.05
    slider: tuple[float, float] | None = None

    def _check(self, value: Any) -> float:
        if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
            raise self.error(value, "is not a number")
        if not math.isfinite(value):
            raise self.error(value, "is not a finite number")
        above = value > self.low if self.low_open else value >= self.low
        below = value < self.high if self.high_open else value <= self.high
        if not (above and below):
            raise self.error(value, "is out of range")
        return float(value) or 0.0  # -0.0 is 0.0: numpy refuses a spread of -0.0 ("scale < 0")

    def allowed(self) -> str:
        return f"a number in {'(' if self.low_open else '['}{self.low:g}, {self.high:g}{')' if self.high_open else ']'}"

    def _parse(self, text: str) -> Any:
        return _number(text)


@dataclass(frozen=True)
class Flag(Param):
    """True or False."""

    def _check(self, value: Any) -> bool:
        if not isinstance(value, bool | np.bool_):
            raise self.error(value, "is not True or False")
        return bool(value)

    def allowed(self) -> str:
        return "True or False"

    def _parse(self, text: str) -> Any:
        words = {
            "true": True,
            "yes": True,
            "on": True,
            "1": True,
            "false": False,
            "no": False,
            "off": False,
            "0": False,
        }
        return words.get(text.strip().lower(), text)


@dataclass(frozen=True)
class Choice(Param):
    """One of ``options``; ``labels`` gives friendlier names for panels and charts."""

    options: tuple
    _: KW_ONLY
    labels: Mapping[Any, str] = field(default_factory=dict)

    def _check(self, value: Any) -> Any:
        if not any(_same(value, option) for option in self.options):
            close = difflib.get_close_matches(str(value), [str(o) for o in self.options], n=1)
            raise self.error(value, f"is not a choice{f'; did you mean {close[0]!r}?' if close else ''}")
        return value

    def allowed(self) -> str:
        return "one of " + ", ".join(repr(option) for option in self.options)

    def _parse(self, text: str) -> Any:
        return next((option for option in self.options if str(option) == text), text)

    def label_of(self, value: Any) -> str:
        return self.labels.get(value, str(value))


@dataclass(frozen=True)
class PolicyChoice(Choice):
    """How agents decide: one of ``options`` (the family's own rules, by name), a name given to
    :func:`coordkit.register_policy` for the model, a :class:`~coordkit.policies.Policy` or Policy class, or a plain
    function observation → decision (issue 45). With ``agents`` (what its agents are called, e.g. "stage"),
    agents may differ: a list, one per agent in the model's order (None: the agent's own rule), or a mapping
    {agent's name: policy}; the model checks the count and the names (:func:`~coordkit.policy_registry.per_agent`)."""

    _: KW_ONLY
    agents: str = ""

    def check(self, value: Any, model: type | None = None) -> Any:
        if self.agents and isinstance(value, list | tuple):
            return tuple(None if one is None else self._check_one(one, model) for one in value)
        if self.agents and isinstance(value, Mapping):
            return {name: self._check_one(one, model) for name, one in value.items()}
        return self._check_one(value, model)

    def _check_one(self, value: Any, model: type | None) -> Any:
        from coordkit.policy_registry import is_policy, registered_policies  # (which imports policies, then this)

        if value is None and self.optional:
            return None
        if isinstance(value, str):
            names = [*map(str, self.options), *registered_policies(model)]
            if value in names:
                return value
            close = difflib.get_close_matches(value, names, n=1)
            raise self.error(value, f"is not a policy's name{f'; did you mean {close[0]!r}?' if close else ''}")
        if not is_policy(value):
            raise self.error(value, f"is a {type(value).__name__}")
        return value

    def allowed(self) -> str:
        own = f"{super().allowed()}, " if self.options else ""
        each = (
            f"; or one per {self.agents}: a list in order, or a mapping by {self.agents}'s name" if self.agents else ""
        )
        return own + "a name given to coordkit.register_policy, a Policy or a function" + each

    def label_of(self, value: Any) -> str:
        from coordkit.policies import policy_name

        if isinstance(value, tuple):
            return "[" + ", ".join("own" if one is None else self.label_of(one) for one in value) + "]"
        if isinstance(value, Mapping):
            return "{" + ", ".join(f"{name}: {self.label_of(one)}" for name, one in value.items()) + "}"
        if value is None:
            return self.labels.get(None, "own rule")
        return self.labels.get(value, value) if isinstance(value, str) else policy_name(value)

    def type_name(self) -> str:
        return "policy"


@dataclass(frozen=True)
class Instance(Param):
    """An object of one of ``types`` (an LLM client, a persona, a goal): set from Python, not from a panel."""

    types: type | tuple[type, ...]

    def _check(self, value: Any) -> Any:
        if not isinstance(value, self.types):
            raise self.error(value, f"is a {type(value).__name__}")
        return value

    def allowed(self) -> str:
        types = self.types if isinstance(self.types, tuple) else (self.types,)
        return "a " + " or a ".join(t.__name__ for t in types)

    def type_name(self) -> str:
        return "object"


Relation = Callable[[dict[str, Any]], None]
"""A check across parameters (``step_round`` within ``rounds``): raises a :class:`ParameterError` or returns None."""


class Parameters:
    """A model's declared parameters, in order, and the checks that relate them."""

    def __init__(self, *params: Param, relations: Iterable[Relation] = ()):
        names = [p.name for p in params]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise ValueError(f"parameters declared twice: {', '.join(repeated)}")
        self._params = {p.name: p for p in params}
        self.relations = tuple(relations)
        for param in params:
            if not param.name.isidentifier() or param.name == "rng":
                raise ValueError(f"{param.name!r} cannot name a parameter (an identifier other than rng)")
            normal = param.check(param.default)
            if normal != param.default or type(normal) is not type(param.default):
                raise ValueError(
                    f"the default of {param.name} must be given in its normal form: {normal!r}, not {param.default!r}"
                )
        self.resolve({})  # the defaults satisfy the relations

    def __iter__(self):
        return iter(self._params.values())

    def __getitem__(self, name: str) -> Param:
        if name not in self._params:
            raise ParameterError(self._unknown(name))
        return self._params[name]

    def __contains__(self, name: str) -> bool:
        return name in self._params

    def __len__(self) -> int:
        return len(self._params)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._params)

    def defaults(self) -> dict[str, Any]:
        return {name: param.default for name, param in self._params.items()}

    def resolve(self, given: Mapping[str, Any], owner: str = "the model", model: type | None = None) -> dict[str, Any]:
        """Every parameter's value: ``given`` (checked) where set, else the default. Raises :class:`ParameterError`
        for an unknown name, a value out of its range, or values that contradict each other. ``model`` is the class
        whose parameters these are (its registered policies are names a :class:`PolicyChoice` takes)."""
        unknown = [name for name in given if name not in self._params]
        if unknown:
            raise ParameterError(self._unknown(unknown[0], owner))
        values = {
            name: param.check(given[name], model) if name in given else param.default
            for name, param in self._params.items()
        }
        for relation in self.relations:
            relation(values)
        return values

    def _unknown(self, name: str, owner: str = "the model") -> str:
        close = difflib.get_close_matches(name, self.names, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        return f"{owner} has no parameter {name!r}{hint} Its parameters: {', '.join(self.names)}"

    def signature(self) -> inspect.Signature:
        """Keyword parameters with their defaults, then ``rng`` (Mesa's seed)."""
        keyword = inspect.Parameter.KEYWORD_ONLY
        return inspect.Signature(
            [inspect.Parameter(p.name, keyword, default=p.default) for p in self]
            + [inspect.Parameter("rng", keyword, default=None)]
        )

    def table(self) -> "pd.DataFrame":
        """One row per parameter: name, type, allowed, default, unit, meaning."""
        import pandas as pd  # here: a process that only checks parameters starts without it (round_profile's server)

        rows = [
            (
                p.name,
                p.type_name(),
                p.allowed() + (f", or None ({p.optional})" if p.optional else ""),
                repr(p.default),
                p.unit,
                p.doc,
            )
            for p in self
        ]
        return pd.DataFrame(rows, columns=["name", "type", "allowed", "default", "unit", "meaning"])

    def docstring(self) -> str:
        """The parameters as a numpy-style docstring section (appended to a model's own): for each, what it takes
        and its default, then its meaning, indented beneath."""
        header = "Parameters (declared in ``parameters``)"
        lines = [header, "-" * len(header)]
        for p in self:
            unit = f" [{p.unit}]" if p.unit else ""
            none = f"; None: {p.optional}" if p.optional else ""
            lines.append(f"{p.name} : {p.allowed()}{unit}{', or None' if p.optional else ''}; default {p.default!r}")
            lines.append(_indented(f"{p.doc}{none}"))
        lines.append(f"rng : {RNG_ALLOWED}, or None; default None")
        lines.append(_indented("the seed of Mesa's ``random`` and ``rng`` (None: a fresh seed from the system)"))
        return "\n".join(lines)

    def check_grid(
        self, combinations: Iterable[Mapping[str, Any]], owner: str = "the model", model: type | None = None
    ) -> None:
        """Check every combination of a sweep grid (each value, and the relations) before anything runs."""
        for combination in combinations:
            try:
                self.resolve(combination, owner, model)
            except ParameterError as error:
                raise ParameterError(f"grid combination {dict(combination)}: {error}") from None


RNG_ALLOWED = "a non-negative integer or a numpy Generator"
_GENERATORS = (np.random.Generator, np.random.BitGenerator, np.random.SeedSequence)


def check_rng(rng: Any, name: str = "rng") -> Any:
    """``rng`` as Mesa and ``numpy.random.default_rng`` take it: None (a fresh seed from the system), a numpy
    generator (or its bit generator or seed sequence) as given, or a seed as a plain int. Anything else, a negative
    seed, a float, a string or a bool among them, is a :class:`ParameterError` naming ``name``."""
    if rng is None or isinstance(rng, _GENERATORS):
        return rng
    if isinstance(rng, bool | np.bool_) or not isinstance(rng, numbers.Integral) or rng < 0:
        raise ParameterError(f"{name}={rng!r} is not a seed: {name} takes {RNG_ALLOWED}, or None (a fresh seed)")
    return int(rng)


def _indented(text: str) -> str:
    """A parameter's meaning as its docstring entry shows it: wrapped, and indented beneath the parameter."""
    return textwrap.fill(
        text, width=100, initial_indent="    ", subsequent_indent="    ", break_long_words=False, break_on_hyphens=False
    )


def _same(value: Any, option: Any) -> bool:
    """Equal and of a compatible kind: True is not the choice 1, nor "1" the choice 1."""
    if value is None or option is None:
        return value is option
    if isinstance(value, bool | np.bool_) != isinstance(option, bool):
        return False
    try:
        return bool(value == option)
    except (TypeError, ValueError):
        return False


def _number(text: str) -> Any:
    """``text`` as a float, or as itself when it is not a number (the check then says so)."""
    try:
        return float(text)
    except ValueError:
        return text
