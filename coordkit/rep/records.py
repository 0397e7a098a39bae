"""A REP model's per-round agent table, read from its Mesa DataCollector (the families' ``frame()``)."""

import itertools
from collections.abc import Collection

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
    records = itertools.chain.from_iterable(datacollector._agent_records.values())
    steps, _agent_ids, *values = zip(*records, strict=True)
    columns = {step: np.array(steps).astype(int)}
    reporters = zip(datacollector.agent_reporters, values, strict=True)
    columns.update((name, list(column)) for name, column in reporters if only is None or name in only)
    return pd.DataFrame(columns)
