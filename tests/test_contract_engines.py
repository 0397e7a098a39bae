"""Every registered figure computes through ``sweep`` and gives the serial frame on every engine (issue 29).

Each figure at its ``small`` size and 2 seeds, computed inside :func:`coordkit.engines.using` (what ``coordkit
reproduce --engine`` does) on one pool of 2 worker processes and on one Dask LocalCluster of 2 workers, each kept by
the whole file (127.0.0.1 only) as ``coordkit reproduce`` keeps its engine's for all its sweeps, must give exactly
the serial frame, and must have reached the engine (its :class:`~coordkit.engines.Default` counts the sweeps that
took it).

A figure with LLM agents keeps them on the client it was given, whatever the engine: the client's ledger, budget and
recording live in this process, so a copy of it in a worker would call unseen (the figures above play their cells
serially when given an ``llm``).
"""

import signal

import pytest
from pandas.testing import assert_frame_equal

from coordkit import engines, figures
from coordkit.engines import DaskEngine, ProcessEngine
from coordkit.llm import ScriptedClient

FIGURES = {fid: f for fid, f in figures.all_figures().items() if f.compute.__module__.startswith("coordkit.")}
SEEDS = 2
DEADLINE_S = 300  # a figure's computation on one engine; a stuck worker fails the test instead of hanging the suite


@pytest.fixture(autouse=True)
def deadline():
    """Fail a test that runs longer than ``DEADLINE_S`` (an engine waiting forever on a lost worker, say)."""

    def expired(signum, frame):
        raise TimeoutError(f"the test ran over {DEADLINE_S} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(DEADLINE_S)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.fixture(scope="module")
def processes():
    with ProcessEngine(workers=2) as engine:
        yield engine


@pytest.fixture(scope="module")
def dask():
    with DaskEngine(workers=2) as engine:
        yield engine


@pytest.fixture(scope="module")
def serial() -> dict:
    """Each figure's serial frame, computed once for both engines."""
    return {}


def computed(figure: figures.Figure):
    """The figure at its small size and ``SEEDS`` seeds."""
    return figure.compute(SEEDS, 0, **figure.small)


@pytest.mark.parametrize("engine_name", ["processes", "dask"])
@pytest.mark.parametrize("figure_id", sorted(FIGURES))
def test_a_figure_gives_the_serial_frame_on_the_engine(figure_id, engine_name, serial, request):
    figure = FIGURES[figure_id]
    if figure_id not in serial:
        serial[figure_id] = computed(figure)
    engine = request.getfixturevalue(engine_name)
    with engines.using(engine) as default:
        data = computed(figure)
    assert default.sweeps > 0, f"{figure_id} did not compute through sweep(), so it ignored the {engine_name} engine"
    assert_frame_equal(data, serial[figure_id], check_exact=True)


@pytest.mark.parametrize("figure_id", sorted(f.id for f in FIGURES.values() if f.llm_agents))
def test_a_figures_llm_agents_call_the_client_given_whatever_the_engine(figure_id, dask):
    """The client's ledger, budget and recording live in this process: an engine must not play the LLM agents on a
    copy of the client in a worker (the copy's calls would be neither counted nor recorded)."""
    figure = FIGURES[figure_id]
    client = ScriptedClient(figure.stand_in)
    with engines.using(dask):
        figure.compute(1, 0, llm=client, **figure.small)
    assert client.requests, f"{figure_id} played its LLM agents on copies of the client in the engine's workers"
