import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from coordkit.delay import fast as delay_fast
from coordkit.parameters import ParameterError
from coordkit.rep.movies import fast as movies_fast
from coordkit.seeds import check_seeds, derive_seeds

base_seeds = st.integers(min_value=0, max_value=2**64)


def test_matches_seed_sequence_spawn():
    children = np.random.SeedSequence(42).spawn(3)
    assert derive_seeds(42, 3) == [int(c.generate_state(1)[0]) for c in children]


def test_zero_seeds_is_empty():
    assert derive_seeds(0, 0) == []


def test_seeds_are_plain_ints():
    assert all(type(seed) is int for seed in derive_seeds(0, 5))


def test_numpy_integers_are_accepted():
    assert derive_seeds(np.int64(7), np.int32(4)) == derive_seeds(7, 4)


@given(base_seeds, st.integers(min_value=0, max_value=50))
def test_deterministic_32_bit_and_distinct(base_seed, n):
    seeds = derive_seeds(base_seed, n)
    assert seeds == derive_seeds(base_seed, n)
    assert len(seeds) == n
    assert all(0 <= seed < 2**32 for seed in seeds)
    assert len(set(seeds)) == n


@given(base_seeds, st.integers(min_value=0, max_value=20), st.integers(min_value=0, max_value=20))
def test_asking_for_more_seeds_keeps_the_first_ones(base_seed, n, extra):
    assert derive_seeds(base_seed, n + extra)[:n] == derive_seeds(base_seed, n)


@given(base_seeds, base_seeds)
def test_different_base_seeds_give_different_seeds(a, b):
    if a != b:
        assert derive_seeds(a, 5) != derive_seeds(b, 5)


@pytest.mark.parametrize("base_seed", [-1, 1.5, "1", None, True])
def test_bad_base_seed(base_seed):
    with pytest.raises(ValueError, match="base_seed must be a non-negative integer.*base_seed=0"):
        derive_seeds(base_seed, 3)


@pytest.mark.parametrize("n", [-1, 2.0, "3", None])
def test_bad_n(n):
    with pytest.raises(ValueError, match="n .* must be a non-negative integer.*n=10"):
        derive_seeds(0, n)


def test_a_list_of_seeds_comes_back_as_plain_ints():
    assert check_seeds(np.arange(3)) == [0, 1, 2] and check_seeds(range(2)) == [0, 1]
    assert all(type(seed) is int for seed in check_seeds(np.array([5, 7], dtype=np.uint32)))


@pytest.mark.parametrize(
    ("seeds", "message"),
    [
        (-1, "seeds must be a non-empty sequence of non-negative integers, got -1"),
        (5, "got 5"),
        ("3", "got '3'"),
        ([], "got []"),
        ({1, 2}, "got {1, 2}"),
        (np.zeros((2, 2), dtype=int), "got array"),
        ([0, -1], "seeds[1] must be a non-negative integer, got -1"),
        ([1.5], "seeds[0] must be a non-negative integer, got 1.5"),
        ([True], "seeds[0] must be a non-negative integer, got True"),
    ],
)
def test_bad_seeds_are_refused_naming_the_seed_and_the_fix(seeds, message):
    with pytest.raises(ValueError, match="(?s)" + re.escape(message) + ".*pass e.g. seeds=derive_seeds"):
        check_seeds(seeds)


@pytest.mark.parametrize("seed", [-1, 1.5, "3", True])
def test_the_fast_paths_refuse_a_seed_that_is_not_one(seed):
    """The vectorised games check their seeds as the models check ``rng`` (not numpy's "expected non-negative
    integer" or "SeedSequence expects int")."""
    with pytest.raises(ValueError, match=re.escape(f"seeds[0] must be a non-negative integer, got {seed!r}")):
        delay_fast.simulate([seed], 0.9, 0.1, 1.0)
    with pytest.raises(
        ValueError, match=re.escape(f"seeds must be a non-empty sequence of non-negative integers, got {seed!r}")
    ):
        delay_fast.simulate(seed, 0.9, 0.1, 1.0)
    with pytest.raises(
        ParameterError, match=re.escape(f"seed={seed!r} is not a seed: seed takes a non-negative integer")
    ):
        movies_fast.simulate(seed)
