"""Movie scheduling: agents with heterogeneous budgets and schedules on a sparse network agree on one ticket price
and start time, by A2A or REP (REP paper §7, Figure 3). A vectorised fast path (:mod:`.fast`) plays the same
rounds for populations to 10,000 agents; :mod:`.profiling` times a round of LLM agents."""

from coordkit.rep.movies.model import PROTOCOLS, MovieScheduling

__all__ = ["PROTOCOLS", "MovieScheduling"]
