"""Movie scheduling: agents with heterogeneous budgets and schedules on a sparse network agree on one ticket price
and start time, by A2A or REP (REP paper §7, Figure 3). A vectorised fast path (:mod:`.fast`) plays the same
rounds for populations to 10,000 agents; :mod:`.profiling` times a round of LLM agents.

The model is imported on first use (PEP 562), so that a module of the family that needs no Mesa (the stand-in,
which :mod:`.profiling`'s server process answers with) starts without it."""

__all__ = ["PROTOCOLS", "MovieScheduling"]


def __getattr__(name: str):
    if name not in __all__:
        raise AttributeError(f"module 'coordkit.rep.movies' has no attribute {name!r}")
    from coordkit.rep.movies import model

    value = globals()[name] = getattr(model, name)
    return value
