"""Seeded topologies: complete, sparse (exact edge deletion, resampled until connected) and small-world graphs."""

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coordkit import networks


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def assert_edge_list(n: int, edges: np.ndarray) -> None:
    """Pairs i < j of nodes 0 .. n − 1, each once, in lexicographic order, as int32."""
    assert edges.dtype == np.int32 and edges.ndim == 2 and edges.shape[1] == 2
    assert (edges[:, 0] < edges[:, 1]).all() and edges.min(initial=0) >= 0 and edges.max(initial=0) < n
    keys = edges[:, 0].astype(np.int64) * n + edges[:, 1]
    assert (np.diff(keys) > 0).all()


def test_the_complete_graph_has_every_pair():
    edges = networks.complete(7)
    assert_edge_list(7, edges)
    assert len(edges) == 21 and networks.density(7, edges) == 1.0
    assert (networks.degrees(7, edges) == 6).all()


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 40), sparsity=st.floats(0, 0.9), seed=st.integers(0, 2**16))
def test_a_sparse_graph_is_connected_with_exactly_the_requested_deletions(n, sparsity, seed):
    total = networks.pairs(n)
    deleted = round(sparsity * total)
    try:
        edges = networks.sparse(n, sparsity, rng(seed), max_attempts=200)
    except ValueError as error:
        assert f"n={n}" in str(error) and f"sparsity={sparsity}" in str(error)
        return
    assert_edge_list(n, edges)
    assert len(edges) == total - deleted
    assert networks.is_connected(n, edges)
    assert networks.density(n, edges) == pytest.approx(1 - deleted / total)


@pytest.mark.parametrize(("n", "sparsity"), [(20, 0.3), (20, 0.6), (200, 0.3), (3000, 0.3), (3000, 0.6)])
def test_the_papers_regimes_and_larger_populations(n, sparsity):
    edges = networks.sparse(n, sparsity, rng(1))
    assert len(edges) == networks.pairs(n) - round(sparsity * networks.pairs(n))
    assert networks.is_connected(n, edges)


def test_sparsity_zero_is_the_complete_graph_and_draws_nothing():
    generator = rng(3)
    before = generator.bit_generator.state
    np.testing.assert_array_equal(networks.sparse(12, 0.0, generator), networks.complete(12))
    assert generator.bit_generator.state == before


def test_the_same_seed_gives_the_same_graph_and_another_seed_another():
    first, again, other = (networks.sparse(30, 0.5, rng(seed)) for seed in (4, 4, 5))
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
    np.testing.assert_array_equal(networks.small_world(30, 4, 0.2, rng(4)), networks.small_world(30, 4, 0.2, rng(4)))


def test_every_edge_is_as_likely_to_be_deleted():
    counts = sum(networks.adjacency(6, networks.sparse(6, 0.4, rng(seed))).toarray() for seed in range(3000))
    upper = counts[np.triu_indices(6, k=1)] / 3000
    assert upper.max() - upper.min() < 0.06, upper  # by symmetry the same for all, up to sampling noise


def test_a_graph_that_cannot_be_connected_is_refused_with_a_clear_error():
    with pytest.raises(ValueError, match=r"sparse\(n=5, sparsity=0.7\) keeps 3 edges, fewer than the 4"):
        networks.sparse(5, 0.7, rng())
    with pytest.raises(ValueError, match=r"sparse\(n=30, sparsity=0.93\): no connected graph in 2 random draws"):
        networks.sparse(30, 0.93, rng(), max_attempts=2)
    with pytest.raises(ValueError, match="sparsity is the fraction of edges deleted"):
        networks.sparse(10, 1.0, rng())
    with pytest.raises(ValueError, match="n=0"):
        networks.complete(0)


def test_a_small_world_is_a_connected_rewired_ring_lattice():
    edges = networks.small_world(50, 4, 0.1, rng(2))
    assert_edge_list(50, edges)
    assert len(edges) == 50 * 4 // 2 and networks.is_connected(50, edges)  # rewiring keeps the edge count
    lattice = networks.small_world(10, 2, 0.0, rng(2))
    assert sorted(map(tuple, lattice.tolist())) == sorted([(i, i + 1) for i in range(9)] + [(0, 9)])
    with pytest.raises(ValueError, match="the degree must be even"):
        networks.small_world(10, 3, 0.1, rng())
    np.testing.assert_array_equal(networks.small_world(5, 4, 0.1, rng()), networks.complete(5))  # degree n − 1


def test_thinning_removes_the_fraction_asked_and_never_disconnects():
    ring = networks.small_world(20, 6, 0.1, rng(3))
    for seed in range(50):
        thinned = networks.thin(20, ring, 0.6, rng(seed))
        assert_edge_list(20, thinned)
        assert len(thinned) == 60 - 36 and networks.is_connected(20, thinned)
        assert {tuple(edge) for edge in thinned.tolist()} <= {tuple(edge) for edge in ring.tolist()}
    np.testing.assert_array_equal(networks.thin(20, ring, 0.0, rng()), ring)
    np.testing.assert_array_equal(networks.thin(20, ring, 0.3, rng(7)), networks.thin(20, ring, 0.3, rng(7)))
    with pytest.raises(ValueError, match="keeps 18 of 60 edges, fewer than the 19"):
        networks.thin(20, ring, 0.7, rng())
    with pytest.raises(ValueError, match="not connected"):
        triangles = np.array([[0, 1], [0, 2], [1, 2], [3, 4], [3, 5], [4, 5]], dtype=np.int32)
        networks.thin(6, triangles, 0.1, rng())


def test_thinning_more_removes_the_same_edges_and_more():
    ring = networks.small_world(30, 6, 0.1, rng(3))
    for seed in range(20):
        denser, sparser = (networks.thin(30, ring, fraction, rng(seed)) for fraction in (0.3, 0.6))
        assert {tuple(edge) for edge in sparser.tolist()} < {tuple(edge) for edge in denser.tolist()}


def test_connectivity_adjacency_and_networkx_agree():
    edges = np.array([[0, 1], [1, 2], [3, 4]], dtype=np.int32)
    assert not networks.is_connected(5, edges)
    assert networks.is_connected(5, np.vstack([edges, [[2, 3]]]).astype(np.int32))  # not in row order: sorted
    matrix = networks.adjacency(5, edges).toarray()
    assert (matrix == matrix.T).all() and matrix.sum() == 6
    np.testing.assert_array_equal(matrix.sum(axis=0), networks.degrees(5, edges))
    graph = networks.to_networkx(5, edges)
    assert sorted(graph.nodes) == [0, 1, 2, 3, 4] and nx.number_connected_components(graph) == 2
    np.testing.assert_array_equal(networks.from_networkx(graph), edges)
    np.testing.assert_array_equal(networks.upper_triangle(5, edges).toarray(), np.triu(matrix))
