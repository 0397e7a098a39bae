"""Seeded network topologies shared by the families: complete, sparse (edge deletion) and small-world graphs.

One representation throughout: an **edge list**, a ``(m, 2)`` int32 array of node pairs ``(i, j)`` with
``i < j``, rows in lexicographic order, over nodes ``0 .. n - 1`` (``n`` travels beside it). Every random
choice comes from the ``numpy.random.Generator`` passed in, so one seed gives one graph. :func:`adjacency`
turns an edge list into a scipy.sparse matrix (neighbour sums for vectorised models), :func:`to_networkx`
into a graph for ``mesa.discrete_space.Network`` and for drawing.

"x% sparse" (REP paper §7, Fig. 3) has two readings here (docs/rep-readings.md). On the complete graph
(:func:`sparse`): delete a fraction x of its edges at random and redraw until the graph is connected. On the
sparse small world of Table 1 (a Watts–Strogatz ring lattice with rewiring, Watts & Strogatz 1998,
:func:`small_world`), :func:`thin` removes a fraction x of its edges, sparing a random spanning tree.
"""

import networkx as nx
import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

MAX_ATTEMPTS = 100


def pairs(n: int) -> int:
    """The number of edges of the complete graph on ``n`` nodes, n(n − 1)/2."""
    return n * (n - 1) // 2


def complete(n: int) -> np.ndarray:
    """Every pair of the ``n`` nodes."""
    _check_nodes(n)
    rows, cols = np.triu_indices(n, k=1)
    return np.column_stack([rows, cols]).astype(np.int32)


def sparse(n: int, sparsity: float, rng: np.random.Generator, *, max_attempts: int = MAX_ATTEMPTS) -> np.ndarray:
    """The complete graph with exactly ``round(sparsity · n(n − 1)/2)`` edges deleted at random, drawn again
    until it is connected (at most ``max_attempts`` draws). ``sparsity`` 0 is the complete graph (no draws).

    Works at n = 10,000 (about 35 million edges at sparsity 0.3) in a second or two: the deleted edges are
    a boolean mask over the upper triangle, and the edge list is written row by row.
    """
    _check_nodes(n)
    if not 0 <= sparsity < 1:
        raise ValueError(f"sparse(n={n}, sparsity={sparsity}): sparsity is the fraction of edges deleted, in [0, 1)")
    total = pairs(n)
    deleted = round(sparsity * total)
    if deleted == 0:
        return complete(n)
    if total - deleted < n - 1:
        raise ValueError(
            f"sparse(n={n}, sparsity={sparsity}) keeps {total - deleted} edges, fewer than the {n - 1} that connect "
            f"{n} nodes: lower the sparsity or raise n"
        )
    for _ in range(max_attempts):
        edges, degree = _upper_triangle_edges(n, ~_exact_subset(total, deleted, rng))
        if _connected(n, edges, degree):
            return edges
    raise ValueError(
        f"sparse(n={n}, sparsity={sparsity}): no connected graph in {max_attempts} random draws "
        f"(deleting {deleted} of {total} edges rarely leaves one): lower the sparsity or raise n"
    )


def small_world(n: int, degree: int, rewiring: float, rng: np.random.Generator) -> np.ndarray:
    """A connected Watts–Strogatz graph: a ring where each node links its ``degree`` nearest neighbours
    (``degree / 2`` on each side), each edge rewired with probability ``rewiring``; networkx's
    ``connected_watts_strogatz_graph`` with a seed drawn from ``rng``. A degree of at least n − 1 links every
    pair: the complete graph (no draw)."""
    _check_nodes(n)
    if degree % 2 or degree < 2:
        raise ValueError(f"small_world(n={n}, degree={degree}): the degree must be even and at least 2")
    if not 0 <= rewiring <= 1:
        raise ValueError(f"small_world(rewiring={rewiring}): the rewiring probability must be in [0, 1]")
    if degree >= n - 1:
        return complete(n)
    seed = int(rng.integers(2**32))
    graph = nx.connected_watts_strogatz_graph(n, degree, rewiring, tries=MAX_ATTEMPTS, seed=seed)
    return from_networkx(graph)


def small_world_edges(n: int, degree: int) -> int:
    """How many edges :func:`small_world` draws: n·degree/2 (rewiring moves edges, never adds or drops one)."""
    return pairs(n) if degree >= n - 1 else n * degree // 2


def thin(n: int, edges: np.ndarray, fraction: float, rng: np.random.Generator) -> np.ndarray:
    """A connected graph with ``round(fraction · edges)`` of its edges removed at random, never an edge of a
    spanning tree drawn first (the minimum spanning tree under random weights), so it stays connected without
    redrawing. The removable edges go in one random order and the first are removed, so that at one ``rng`` state
    a larger fraction removes the same edges and more: the sparser graph is a subgraph of the denser one.
    ``fraction`` 0 returns the edges unchanged (no draw)."""
    if not 0 <= fraction < 1:
        raise ValueError(f"thin(fraction={fraction}): the fraction of edges removed must be in [0, 1)")
    remove = round(fraction * len(edges))
    if remove == 0:
        return edges
    if len(edges) - remove < n - 1:
        raise ValueError(
            f"thin(n={n}, fraction={fraction}) keeps {len(edges) - remove} of {len(edges)} edges, fewer than the "
            f"{n - 1} that connect {n} nodes: lower the fraction or add edges"
        )
    weights = 1 + rng.random(len(edges))  # positive: csgraph reads a zero weight as no edge
    graph = sp.coo_array((weights, (edges[:, 0], edges[:, 1])), shape=(n, n)).tocsr()
    tree = csgraph.minimum_spanning_tree(graph).tocoo()
    if tree.nnz != n - 1:
        raise ValueError(f"thin(n={n}): the graph is not connected, so no spanning tree keeps it so")
    keys = edges[:, 0].astype(np.int64) * n + edges[:, 1]  # a pair's key, i·n + j with i < j
    tree_keys = np.minimum(tree.row, tree.col).astype(np.int64) * n + np.maximum(tree.row, tree.col)
    removable = np.flatnonzero(~np.isin(keys, tree_keys))
    removed = rng.permutation(removable)[:remove]
    keep = np.ones(len(edges), dtype=bool)
    keep[removed] = False
    return edges[keep]


def density(n: int, edges: np.ndarray) -> float:
    """Edges present over the edges of the complete graph (1 for the complete graph)."""
    return len(edges) / pairs(n) if n > 1 else 1.0


def degrees(n: int, edges: np.ndarray) -> np.ndarray:
    """Each node's number of neighbours."""
    edges = _in_row_order(edges)
    starts = _row_starts(n, edges)
    return np.diff(starts) + np.bincount(np.ascontiguousarray(edges[:, 1]), minlength=n)


def is_connected(n: int, edges: np.ndarray) -> bool:
    """Whether every node can reach every other."""
    return _connected(n, edges, degrees(n, edges))


def adjacency(n: int, edges: np.ndarray) -> sp.csr_array:
    """The symmetric adjacency matrix (float64 ones), for neighbour sums ``adjacency @ x``."""
    upper = upper_triangle(n, edges)
    return (upper + upper.T).tocsr()


def upper_triangle(n: int, edges: np.ndarray) -> sp.csr_array:
    """The upper triangle as a CSR matrix, built without sorting when the edge list is in row order."""
    edges = _in_row_order(edges)
    starts = _row_starts(n, edges)
    cols = np.ascontiguousarray(edges[:, 1], dtype=starts.dtype)
    return sp.csr_array((np.ones(len(edges)), cols, starts), shape=(n, n))


def to_networkx(n: int, edges: np.ndarray) -> nx.Graph:
    """A networkx graph with nodes 0 .. n − 1 (for ``mesa.discrete_space.Network`` and for drawing)."""
    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from(edges.tolist())
    return graph


def from_networkx(graph: nx.Graph) -> np.ndarray:
    """The edge list of a graph whose nodes are 0 .. n − 1."""
    edges = np.array([sorted(edge) for edge in graph.edges()], dtype=np.int32).reshape(-1, 2)
    return edges[np.lexsort((edges[:, 1], edges[:, 0]))]


def _check_nodes(n: int) -> None:
    if not isinstance(n, int | np.integer) or n < 1:
        raise ValueError(f"a network needs a whole number of nodes, at least 1, got n={n!r}")


def _exact_subset(total: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random subset of ``size`` of ``total`` items, as a boolean mask: each item in independently
    with probability about size/total (one random byte each), then the surplus or shortfall corrected at
    random. The items are exchangeable, so the subset is uniform among those of its size."""
    chosen = rng.integers(0, 256, total, dtype=np.uint8) < round(256 * size / total)
    surplus = int(np.count_nonzero(chosen)) - size
    if surplus:
        candidates = np.flatnonzero(chosen if surplus > 0 else ~chosen)
        chosen[rng.choice(candidates, abs(surplus), replace=False)] = surplus < 0
    return chosen


def _upper_triangle_edges(n: int, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The edge list of the pairs kept by ``keep`` (a mask over the upper triangle in row-major order), and
    every node's degree, counted on the way."""
    edges = np.empty((int(np.count_nonzero(keep)), 2), dtype=np.int32)
    degree = np.zeros(n, dtype=np.int64)
    start = position = 0
    for row in range(n - 1):
        kept = keep[start : start + n - 1 - row]
        cols = np.flatnonzero(kept)
        edges[position : position + len(cols), 0] = row
        edges[position : position + len(cols), 1] = cols + row + 1
        degree[row] += len(cols)
        degree[row + 1 :] += kept
        start += len(kept)
        position += len(cols)
    return edges, degree


def _connected(n: int, edges: np.ndarray, degree: np.ndarray) -> bool:
    """Connectivity, sparing dense graphs the search: a graph whose every degree is at least (n − 1)/2 is
    connected (two non-adjacent nodes then share a neighbour)."""
    if n == 1:
        return True
    if len(edges) < n - 1:
        return False
    if degree.min() >= (n - 1) / 2:
        return True
    components, _ = csgraph.connected_components(upper_triangle(n, edges), directed=False)
    return components == 1


def _row_starts(n: int, edges: np.ndarray) -> np.ndarray:
    """Where each node's edges to higher nodes start in the (row-ordered) edge list, and the end: CSR's indptr."""
    index = np.int32 if len(edges) < 2**31 else np.int64
    return np.searchsorted(np.ascontiguousarray(edges[:, 0]), np.arange(n + 1, dtype=np.int32)).astype(index)


def _in_row_order(edges: np.ndarray) -> np.ndarray:
    """The edge list sorted by its first node, if it is not already (this module's lists always are)."""
    if (np.diff(edges[:, 0]) < 0).any():
        return edges[np.lexsort((edges[:, 1], edges[:, 0]))]
    return edges
