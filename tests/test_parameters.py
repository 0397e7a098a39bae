"""Declared parameters: each kind's checks and errors, text parsing, relations, and what a model gets from them."""

import inspect
import math
import re

import numpy as np
import pytest

from coordkit import papers
from coordkit.figures import check_compute, refuse_llm
from coordkit.model import Model, model_id, models, registered
from coordkit.parameters import Choice, Flag, Instance, Integer, ParameterError, Parameters, Real, check_rng


def declared(**params):
    return Parameters(*params.values())


STAGES = Integer("stages", 4, 2, 8, doc="chain length")
COST = Real("cost", 0.5, 0, 100, doc="cost", unit="$")
SPREAD = Real("spread", 0.2, 0, 1, high_open=True, doc="spread")
PROTOCOL = Choice("protocol", "a2a", ("a2a", "rep"), doc="protocol", labels={"a2a": "A2A"})
GATE = Flag("gate", False, doc="gate")
DELAY_B = Real("delay_b", None, 0, 60, doc="B's delay", unit="s", optional="the same as A's")


@pytest.mark.parametrize(
    ("param", "value", "message"),
    [
        (STAGES, 9, "stages=9 is out of range: stages takes an integer from 2 to 8"),
        (STAGES, 1, "stages=1 is out of range"),
        (STAGES, 4.0, "stages=4.0 is not an integer; pass 4: stages takes an integer from 2 to 8"),
        (STAGES, 4.5, "stages=4.5 is not an integer: stages takes"),
        (STAGES, math.inf, "stages=inf is not an integer"),
        (STAGES, "4", "stages='4' is not a number"),
        (STAGES, True, "stages=True is not a number"),
        (STAGES, None, "stages=None is not a number: stages takes an integer from 2 to 8"),
        (COST, math.nan, r"cost=nan is not a finite number: cost takes a number in \[0, 100\]"),
        (COST, -math.inf, "cost=-inf is not a finite number"),
        (COST, -0.5, "cost=-0.5 is out of range"),
        (COST, "cheap", "cost='cheap' is not a number"),
        (COST, False, "cost=False is not a number"),
        (SPREAD, 1.0, r"spread=1.0 is out of range: spread takes a number in \[0, 1\)"),
        (PROTOCOL, "rpe", "protocol='rpe' is not a choice; did you mean 'rep'[?]: protocol takes one of 'a2a', 'rep'"),
        (PROTOCOL, None, "protocol=None is not a choice"),
        (GATE, 1, "gate=1 is not True or False"),
        (GATE, "yes", "gate='yes' is not True or False"),
        (DELAY_B, -1, r"delay_b=-1 is out of range: delay_b takes a number in \[0, 60\], or None \(the same as A's\)"),
    ],
)
def test_every_kind_names_the_parameter_the_value_and_what_is_allowed(param, value, message):
    with pytest.raises(ParameterError, match=message):
        param.check(value)


def test_good_values_come_back_in_their_normal_form():
    assert STAGES.check(np.int64(5)) == 5 and type(STAGES.check(np.int64(5))) is int
    assert COST.check(2) == 2.0 and type(COST.check(2)) is float
    assert GATE.check(np.bool_(True)) is True
    assert DELAY_B.check(None) is None
    assert Choice("consensus", None, (None, "median"), doc="c").check(None) is None


@pytest.mark.parametrize("minus_zero", [-0.0, np.float64(-0.0), "-0"])
def test_minus_zero_is_zero(minus_zero):
    """numpy refuses a spread of -0.0 ("scale < 0"), and a frame would print it: a Real gives 0.0."""
    zero = COST.parse(minus_zero) if isinstance(minus_zero, str) else COST.check(minus_zero)
    assert zero == 0.0 and math.copysign(1.0, zero) == 1.0
    with pytest.raises(ParameterError, match=r"spread=-0.0 is out of range: spread takes a number in \(0, 1\)"):
        Real("spread", 0.5, 0, 1, low_open=True, high_open=True, doc="spread").check(-0.0)


@pytest.mark.parametrize("rng", [-1, 1.5, "3", True, np.bool_(False), [1, 2]])
def test_a_seed_that_is_not_one_is_refused_naming_rng_the_value_and_what_a_seed_is(rng):
    message = f"rng={rng!r} is not a seed: rng takes a non-negative integer or a numpy Generator, or None"
    with pytest.raises(ParameterError, match=re.escape(message)):
        check_rng(rng)


def test_a_seed_comes_back_as_a_plain_int_and_a_generator_as_given():
    assert check_rng(np.int64(3)) == 3 and type(check_rng(np.int64(3))) is int
    assert check_rng(0) == 0 and check_rng(None) is None
    generator, sequence = np.random.default_rng(1), np.random.SeedSequence(1)
    assert check_rng(generator) is generator and check_rng(sequence) is sequence


def test_choice_keeps_true_apart_from_one():
    levels = Choice("level", 1, (0, 1), doc="l")
    with pytest.raises(ParameterError):
        levels.check(True)


def test_instance_parameters_take_objects_of_their_type():
    rng = Instance("generator", None, np.random.Generator, optional="a new one", doc="g")
    assert rng.check(np.random.default_rng(0)) is not None
    with pytest.raises(ParameterError, match="generator=3 is a int: generator takes a Generator"):
        rng.check(3)


def test_text_from_the_command_line_is_parsed_then_checked():
    assert STAGES.parse("5") == 5 and COST.parse("1e-2") == 0.01 and GATE.parse("yes") is True
    assert DELAY_B.parse("none") is None and PROTOCOL.parse("rep") == "rep"
    with pytest.raises(ParameterError, match="stages=2.5 is not an integer"):
        STAGES.parse("2.5")
    with pytest.raises(ParameterError, match="cost='abc' is not a number"):
        COST.parse("abc")


def test_unknown_names_get_the_closest_match():
    with pytest.raises(ParameterError, match="BeerGame has no parameter 'stage'; did you mean 'stages'"):
        declared(stages=STAGES, cost=COST).resolve({"stage": 3}, owner="BeerGame")


def test_relations_check_values_against_each_other():
    def cheap_enough(values):
        if values["cost"] > values["stages"]:
            raise ParameterError(f"cost={values['cost']} exceeds stages={values['stages']}: lower the cost")

    params = Parameters(STAGES, COST, relations=(cheap_enough,))
    assert params.resolve({"cost": 3})["cost"] == 3.0
    with pytest.raises(ParameterError, match="cost=5.0 exceeds stages=4"):
        params.resolve({"cost": 5})


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ((STAGES, STAGES), "declared twice: stages"),
        ((Integer("rng", 0, 0, 1, doc="x"),), "cannot name a parameter"),
        ((Integer("n", 9, 0, 5, doc="x"),), "n=9 is out of range"),
        ((Real("x", 1, 0, 5, doc="x"),), "normal form"),
    ],
)
def test_a_bad_declaration_is_refused_when_it_is_written(params, message):
    with pytest.raises(ValueError, match=message):
        Parameters(*params)


def test_a_grid_is_checked_combination_by_combination():
    params = declared(stages=STAGES, cost=COST)
    params.check_grid([{"stages": 2}, {"stages": 8, "cost": 3}])
    with pytest.raises(ParameterError, match=r"grid combination \{'stages': 9\}: stages=9 is out of range"):
        params.check_grid([{"stages": 2}, {"stages": 9}])


def test_the_table_lists_every_parameter():
    table = declared(stages=STAGES, delay_b=DELAY_B).table()
    assert list(table.columns) == ["name", "type", "allowed", "default", "unit", "meaning"]
    assert table.iloc[1].to_dict() == {
        "name": "delay_b",
        "type": "real",
        "allowed": "a number in [0, 60], or None (the same as A's)",
        "default": "None",
        "unit": "s",
        "meaning": "B's delay",
    }


class Toy(Model):
    """A toy model: a counter that stops at ``limit``."""

    parameters = Parameters(Integer("limit", 3, 1, 10, doc="steps to take"), Real("noise", 0.0, 0, 1, doc="noise"))

    def __init__(self, *, rng=None, **params):
        super().__init__(rng=rng, **params)
        self.draws = []

    def step(self):
        self.draws.append(float(self.rng.random()))
        self.running = self.steps < self.limit

    def frame(self):
        import pandas as pd

        return pd.DataFrame({"step": range(self.steps + 1)})

    def summary(self):
        return {"draws": len(self.draws)}


def test_a_model_gets_its_signature_docstring_attributes_and_id_from_the_declaration():
    assert str(inspect.signature(Toy)) == "(*, limit=3, noise=0.0, rng=None)"
    assert "limit : an integer from 1 to 10; default 3\n    steps to take\n" in Toy.__doc__
    toy = Toy(limit=5, rng=1)
    assert (toy.limit, toy.noise, toy.params) == (5, 0.0, {"limit": 5, "noise": 0.0})
    assert toy.run() is toy and toy.steps == 5 and toy.summary() == {"draws": 5}
    assert model_id(Toy) == "toy" and toy.llm_calls == 0 and toy.policies() == []


def test_a_model_checks_its_parameters_before_mesa_sets_anything_up():
    with pytest.raises(ParameterError, match="limit=0 is out of range"):
        Toy(limit=0)


def test_a_models_seed_is_checked_and_a_numpy_integer_seeds_as_the_int_does():
    assert "rng : a non-negative integer or a numpy Generator, or None; default None" in Toy.__doc__
    assert Toy(rng=np.int64(5)).run().draws == Toy(rng=5).run().draws
    with pytest.raises(ParameterError, match="rng=-1 is not a seed"):
        Toy(rng=-1)


def test_a_model_must_declare_its_parameters_and_not_hide_mesas_attributes():
    with pytest.raises(TypeError, match="must declare its parameters"):
        type("Undeclared", (Model,), {})
    with pytest.raises(TypeError, match=r"parameters \['agents'\] would hide Mesa's model attributes"):
        type("Clashing", (Model,), {"parameters": Parameters(Integer("agents", 4, 1, 32, doc="actors"))})


def test_an_abstract_base_declares_nothing_and_is_no_model_but_its_models_declare_and_register():
    base = type("SharedBase", (Model,), {}, abstract=True)
    assert "shared-base" not in registered()
    with pytest.raises(TypeError, match="must declare its parameters"):
        type("Undeclared", (base,), {})
    declared = Parameters(Integer("limit", 3, 1, 10, doc="steps to take"))
    concrete = type("Concrete", (base,), {"parameters": declared})
    assert registered()["concrete"] is concrete
    assert "agora-model" not in models() and {"agora-network", "weather-demo"} <= set(models())


def test_a_models_small_run_is_checked_against_its_declaration():
    declared = Parameters(Integer("limit", 3, 1, 10, doc="steps to take"))
    assert type("Small", (Model,), {"parameters": declared, "small": {"limit": 2}}).small == {"limit": 2}
    with pytest.raises(ParameterError, match="limit=0 is out of range"):
        type("TooSmall", (Model,), {"parameters": declared, "small": {"limit": 0}})


def test_a_figures_compute_must_take_seeds_base_seed_and_llm():
    def good(seeds, base_seed=0, *, llm=None, delays=(0, 5)):
        return None

    def bad(trials, base_seed=0):
        return None

    def unset(seeds, base_seed, *, llm=None, n):
        return None

    check_compute("good", good)
    with pytest.raises(TypeError, match=r"compute must be compute\(seeds, base_seed, \*, llm=None\)"):
        check_compute("bad", bad)
    with pytest.raises(TypeError, match=r"further parameters need defaults: \['n'\]"):
        check_compute("unset", unset)
    check_compute("small", good, {"delays": (0,)})
    with pytest.raises(TypeError, match=r"small names \['queries'\], which are not compute's further keywords"):
        check_compute("small", good, {"queries": 10})
    refuse_llm(None, "rules")
    with pytest.raises(ValueError, match=r"no LLM agents \(the simplified model plays\)"):
        refuse_llm(object(), "the simplified model plays")


def test_published_numbers_are_read_and_stated_with_their_units():
    beer = papers.numbers("rep-beer-fig1")
    assert beer.value("total_cost", "a2a") == 7300.0 and beer.text("total_cost", "a2a") == "$7,300"
    assert beer.text("cost_reduction", "rep_textual") == "41.8%"
    assert beer.value("rounds_to_stabilise", "rep_textual") == "3-4"
    assert beer.text("rounds_to_stabilise", "a2a") == "10+ rounds"
    assert beer.conditions("total_cost") == ["a2a", "rep_textual", "rep_numerical"]
    with pytest.raises(KeyError, match="no 'total_cost' for 'nobody' in rep-beer-fig1"):
        beer.value("total_cost", "nobody")
    assert beer.has("total_cost", "a2a") and not beer.has("total_cost", "nobody")
    assert papers.numbers("rep-beer-fig1") is beer  # read once: models look their prices up as they are made
    assert papers.numbers("no-such-figure").rows.empty


@pytest.mark.parametrize(
    ("param", "label"),
    [
        (Integer("rounds", 20, 1, 50, doc="horizon", unit="rounds"), "rounds"),
        (Integer("step_round", 4, 1, 50, doc="shock round", unit="round"), "step round"),
        (Real("duration_s", 60, 1, 600, doc="length", unit="s"), "duration (s)"),
        (Real("delay_b", 0, 0, 60, doc="B's delay", unit="s"), "delay B (s)"),
        (Integer("max_llm_calls", 50, 0, 500, doc="cap", unit="calls"), "max LLM calls"),
        (Real("price_sd", 3, 0, 10, doc="spread", unit="$"), "price SD ($)"),
        (Real("p", 0.9, 0, 1, doc="probability"), "p"),
        (COST, "cost ($)"),
    ],
)
def test_a_label_is_the_name_in_words_with_a_unit_it_does_not_already_say(param, label):
    assert param.label() == label


def test_every_declared_parameter_has_a_label_that_reads_as_words():
    """No "seasons (seasons)", no "duration s (s)", no "max llm calls" on any control of any model."""
    from coordkit.families import import_families
    from coordkit.model import registered

    import_families()
    odd = []
    for model in registered().values():
        for param in model.parameters:
            label = param.label()
            words, _, unit = label.partition(" (")
            unit = unit.removesuffix(")")
            said = {word.lower().removesuffix("s") for word in words.split()}
            if unit and unit.lower().removesuffix("s") in said or "_" in label or " s " in f" {words} ":
                odd.append(f"{model.__name__}.{param.name}: {label!r}")
            odd += [f"{model.__name__}.{param.name}: {label!r}" for word in ("llm", "sd") if word in words.split()]
    assert not odd, "labels that do not read as English:\n" + "\n".join(odd)
