"""A REP model's per-round agent table, read from its Mesa DataCollector (the families' ``frame()``)."""

import itertools
from collections.abc import Collection, Sequence

import mesa
import numpy as np
import pandas as pd


def agent_table(datacollector: mesa.DataCollector, step: str, only: Collection[str] | None = None) -> pd.DataFrame:
    """One row per collected step and agent, in collection order: the step as an int, in a column named ``step``
    (the paper's round or season), then the agent reporters' values (those named in ``only``, if given: a summary
    that reads five columns need not build twenty).

    The table of ``get_agent_vars_dataframe().reset_index()`` without AgentID, built column by column from Mesa's
    records: Mesa's (Step, AgentID) index takes ten times longer to build than a model's whole small table.
    """
    steps, values = _records(datacollector, only)
    columns = {step: steps}
    columns.update((name, list(column)) for name, column in values.items())
    return pd.DataFrame(columns)


def agent_columns(
    datacollector: mesa.DataCollector, step: str, only: Collection[str] | None = None
) -> dict[str, Sequence]:
    """:func:`agent_table`'s columns without the table, for a summary that reads a few numbers a game: the steps
    (ints, in an array) under ``step``, then each reporter's values as Mesa recorded them, in collection order."""
    steps, values = _records(datacollector, only)
    return {step: steps, **values}


def _records(datacollector: mesa.DataCollector, only: Collection[str] | None) -> tuple[np.ndarray, dict[str, tuple]]:
    """Mesa's agent records column by column: the steps as ints, and the values of the reporters (named in
    ``only``, if given)."""
    records = itertools.chain.from_iterable(datacollector._agent_records.values())
    steps, _agent_ids, *values = zip(*records, strict=True)
    reporters = zip(datacollector.agent_reporters, values, strict=True)
    chosen = {name: column for name, column in reporters if only is None or name in only}
    return np.array(steps).astype(int), chosen
