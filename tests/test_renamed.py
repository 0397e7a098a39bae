"""The names renamed so that each means one thing (issue 45) still work for one release, each warning with its new
name; CHANGELOG.md's "Renamed" lists them."""

import pytest

from coordkit.pressure import PressureField
from coordkit.pressure.policies import RowObservation
from coordkit.rep.beer_game.policies import StageObservation
from coordkit.rep.fishbanks.policies import FleetObservation


@pytest.mark.parametrize(
    "module, old, new",
    [
        ("coordkit.rep.beer_game.policies", "StageView", StageObservation),
        ("coordkit.rep.fishbanks.policies", "FleetView", FleetObservation),
        ("coordkit.pressure.policies", "RowView", RowObservation),
    ],
)
def test_an_old_observation_name_imports_and_warns_with_the_new(module, old, new):
    with pytest.warns(DeprecationWarning, match=new.__name__) as caught:
        got = getattr(__import__(module, fromlist=[old]), old)
    assert got is new and caught[0].filename == __file__


def test_an_unknown_name_is_still_an_attribute_error():
    from coordkit.rep.beer_game import policies

    with pytest.raises(AttributeError, match="no attribute 'StageVeiw'"):
        policies.StageVeiw  # noqa: B018


def test_pressure_fields_view_of_a_row_is_its_row_observation():
    model = PressureField(rng=0)
    with pytest.warns(DeprecationWarning, match=r"row_observation\(row\)") as caught:
        old = model.view(3)
    assert old == model.row_observation(3) and caught[0].filename == __file__
