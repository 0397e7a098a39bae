"""Common random numbers, for every model and every parameter (``coordkit.streams``).

Each model declares its random streams and the parameters that govern each (``random_streams``). Here every model
is played briefly at one seed, at its defaults and with one parameter moved, every draw of every stream recorded:
a stream the moved parameter does not govern must draw the same numbers in both runs (the shorter run's draws a
prefix of the longer's, where a setting plays more or fewer steps). So a slider changes only what it governs: the
movie night's population and opening offer stay when the sparsity moves, Fishbanks' companies stay across
protocols. Streams keyed by agent (``streams("noise", stage)``) are compared key by key, so a family whose streams
are per agent keeps its first agents when more are added.
"""

import math

import numpy as np
import pytest

from coordkit.model import models
from coordkit.parameters import Choice, Flag, Instance, Integer, ParameterError, Real
from coordkit.streams import MESA, Streams

MODELS = {name: m for name, m in models().items() if m.__module__.startswith("coordkit.")}
STEPS = 3
SEED = 7


class RecordingGenerator(np.random.Generator):
    """A generator that writes every number it draws into ``draws`` (a list shared with its stream's record)."""

    def __init__(self, bit_generator, draws: list):
        super().__init__(bit_generator)
        self.draws = draws

    def __getattribute__(self, name):
        attribute = super().__getattribute__(name)
        if name.startswith("_") or name in ("draws", "bit_generator", "spawn") or not callable(attribute):
            return attribute

        def recorded(*args, **kwargs):
            result = attribute(*args, **kwargs)
            drawn = args[0] if result is None and args else result  # shuffle works in place
            self.draws.extend(np.asarray(drawn, dtype=object).ravel().tolist())
            return result

        return recorded


@pytest.fixture
def recorded_streams(monkeypatch):
    """Every stream made while the fixture is on records its draws in ``streams.draws[(purpose, *key)]``."""

    def make(streams, purpose, key, sequence):
        draws = streams.__dict__.setdefault("draws", {}).setdefault((purpose, *key), [])
        return RecordingGenerator(np.random.PCG64(sequence), draws)

    monkeypatch.setattr(Streams, "_make", make)


def moved_values(param) -> list:
    """Values other than the default to move ``param`` to: every other option, the other flag, and a number on
    each side of the default within its slider's span (or its range)."""
    match param:
        case Choice():
            return [option for option in param.options if option != param.default]
        case Flag():
            return [not param.default]
        case Integer() | Real() if param.default is None:
            # None means none (no cap, no event): the top of its slider (or its range), and its lowest value
            return [(param.slider or (param.low, param.high))[1], param.low]
        case Integer():
            low, high = param.slider or (param.low, param.high)
            near = {param.default - 1, param.default + 1, high} - {param.default}
            return sorted(v for v in near if low <= v <= high)
        case Real():
            low, high = param.slider or (param.low, param.high)
            return [v for v in (_between(param.default, high), _between(low, param.default)) if v != param.default]
        case Instance():
            return []  # an LLM client or a persona: what it governs is the LLM policies' own affair
    raise AssertionError(f"no moved values known for {type(param).__name__}")


def _between(a: float, b: float) -> float:
    return a + (b - a) / 2 if math.isfinite(b - a) else a


def _draws(model, **params) -> dict[tuple, list]:
    played = model(**{**model.small, **params}, rng=SEED)
    for _ in range(STEPS):
        if played.running:
            played.step()
    if hasattr(played, "close"):
        played.close()
    return played.streams.__dict__.get("draws", {})


def _differ(a: list, b: list) -> int | None:
    """The first position where the shorter list stops being a prefix of the longer one, or None."""
    for position, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return position
    return None


def switches(model) -> list[dict]:
    """Settings to start from besides the defaults: each choice and flag moved, and each number whose default is 0
    moved off it, since those switch mechanisms on that the defaults never play (A2A's attention, demand noise)."""
    return [
        {param.name: moved_values(param)[0]}
        for param in model.parameters
        if moved_values(param) and (isinstance(param, Choice | Flag) or param.default == 0)
    ]


def _governed_moves(model, start: dict, values_of) -> tuple[set[str], list[str]]:
    """Play ``start`` and each parameter moved from it to each of ``values_of(param)``: the parameters that could be
    moved, and each stream a move changed that the parameter does not govern."""
    base = _draws(model, **start)
    playable, failures = set(), []
    for param in model.parameters:
        if param.name in start:
            continue
        for value in values_of(param):
            try:
                other = _draws(model, **{**start, param.name: value})
            except ParameterError:
                continue  # a value the other settings do not allow (an LLM player without a client, say)
            playable.add(param.name)
            for key in sorted(base.keys() & other.keys()):
                where = _differ(base[key], other[key])
                if param.name not in model.random_streams.get(key[0], ()) and where is not None:
                    failures.append(f"from {start or 'the defaults'}, {param.name}={value!r} changed {key} at {where}")
    return playable, failures


@pytest.mark.usefixtures("recorded_streams")
@pytest.mark.parametrize("name", sorted(MODELS))
def test_a_parameter_moves_only_the_random_streams_it_governs(name):
    """From the defaults every parameter moves to each of its moved values; from each switch, to its first one."""
    model = MODELS[name]
    playable, failures = _governed_moves(model, {}, moved_values)
    for start in switches(model):
        try:
            model(**{**model.small, **start})
        except ParameterError:
            continue
        more, failed = _governed_moves(model, start, lambda param: moved_values(param)[:1])
        playable |= more
        failures += failed
    unplayed = [p.name for p in model.parameters if moved_values(p) and p.name not in playable]
    assert not unplayed, f"{name}: no move of {unplayed} could be played"
    assert not failures, "\n".join(failures)


@pytest.mark.usefixtures("recorded_streams")
@pytest.mark.parametrize("name", sorted(MODELS))
def test_a_model_draws_only_from_its_own_streams(name):
    """Mesa's ``model.rng`` gives one number, the seed of ``model.random`` (the order Mesa shuffles agents in):
    a model that drew from it directly would tie its draws to every parameter."""
    draws = _draws(MODELS[name])
    assert len(draws[(MESA,)]) == 1, f"{name} drew {len(draws[(MESA,)]) - 1} numbers from model.rng itself"


def test_streams_are_independent_of_the_order_they_are_opened_in():
    first = Streams(np.random.SeedSequence(5), {"a": (), "b": ()}, owner="test")
    second = Streams(np.random.SeedSequence(5), {"a": (), "b": ()}, owner="test")
    a_then_b = (first("a").random(3), first("b", 2).random(3))
    b_then_a = (second("b", 2).random(3), second("a").random(3))
    np.testing.assert_array_equal(a_then_b[0], b_then_a[1])
    np.testing.assert_array_equal(a_then_b[1], b_then_a[0])
    assert not np.array_equal(first("b", 1).random(3), second("b", 3).random(3))


def test_an_undeclared_stream_is_refused_by_name():
    streams = Streams(np.random.SeedSequence(5), {"network": ("sparsity",)}, owner="MovieScheduling")
    with pytest.raises(KeyError, match="MovieScheduling draws from the random stream 'noise'.*add 'noise'"):
        streams("noise")
    with pytest.raises(ValueError, match="non-negative integers"):
        streams("network", -1)
