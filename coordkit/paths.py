"""Where the kit's data lives: `coordkit/data` in an installed wheel, `data/` beside the package in a checkout."""

from pathlib import Path

import pandas as pd

_PACKAGE = Path(__file__).resolve().parent
DATA = _PACKAGE / "data" if (_PACKAGE / "data").is_dir() else _PACKAGE.parent / "data"


def paper_numbers(name: str) -> pd.DataFrame:
    """A paper's published numbers, e.g. ``paper_numbers("rep_beer_game")`` (see data/README.md)."""
    path = DATA / "papers" / f"{name}.csv"
    if not path.exists():
        available = sorted(p.stem for p in (DATA / "papers").glob("*.csv"))
        raise FileNotFoundError(f"no published numbers named {name!r}; available: {', '.join(available)}")
    return pd.read_csv(path)
