"""coordkit.rep.records builds the REP families' agent tables from Mesa's records: the same table as Mesa's own."""

import pandas as pd
import pytest

from coordkit.rep.beer_game.model import BeerGame
from coordkit.rep.fishbanks.model import Fishbanks
from coordkit.rep.movies.model import MovieScheduling
from coordkit.rep.records import agent_table

RUNS = [
    (BeerGame, "round", {"protocol": "a2a"}),
    (BeerGame, "round", {"protocol": "rep_textual", "stages": 6, "demand_noise": 2.0}),
    (Fishbanks, "season", {"protocol": "rep_numerical", "companies": 5}),
    (MovieScheduling, "round", {"protocol": "a2a", "population": 30}),
]


@pytest.mark.parametrize("seed", [0, 7])
@pytest.mark.parametrize(("model", "step", "params"), RUNS)
def test_agent_table_is_mesas_table(model, step, params, seed):
    collector = model(rng=seed, **params).run().datacollector
    mesas = collector.get_agent_vars_dataframe().reset_index().drop(columns="AgentID")
    mesas = mesas.rename(columns={"Step": step}).astype({step: int})
    pd.testing.assert_frame_equal(agent_table(collector, step), mesas, check_exact=True)
