"""Where the kit's data lives: `coordkit/data` in an installed wheel, `data/` beside the package in a checkout."""

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
DATA = _PACKAGE / "data" if (_PACKAGE / "data").is_dir() else _PACKAGE.parent / "data"
