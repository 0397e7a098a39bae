"""What a call costs: dollars per million input and output tokens, per model (``data/llm_prices.csv``)."""

import csv
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from coordkit.paths import DATA

PRICE_FILE = DATA / "llm_prices.csv"


@dataclass(frozen=True)
class Price:
    input_usd_per_mtok: float
    output_usd_per_mtok: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input_usd_per_mtok + output_tokens * self.output_usd_per_mtok) / 1e6


PRICE_COLUMNS = ("input_usd_per_mtok", "output_usd_per_mtok")


def _price(value, where: str) -> float:
    """Dollars per million tokens: a finite number, 0 or more (a NaN would make every cost NaN and no budget hold)."""
    try:
        price = float(value)
    except (TypeError, ValueError):
        price = math.nan
    if isinstance(value, bool) or not 0 <= price < math.inf:
        raise ValueError(f"{where}: {value!r} is not a price; give dollars per million tokens, a number 0 or more")
    return price


class PriceTable:
    """Model id → :class:`Price`. A dated id (``claude-haiku-4-5-20251001``) finds the longest matching prefix.

    ``PriceTable()`` reads the kit's documented table; ``overrides`` (``{"model": (input, output)}``, dollars
    per million tokens) add or replace rows, e.g. for a newer price or a local model that costs nothing.
    """

    def __init__(self, overrides: Mapping[str, tuple[float, float]] | None = None, path: Path | str = PRICE_FILE):
        with open(path, newline="", encoding="utf-8") as rows:
            self.prices = {
                row["model"]: Price(
                    *(_price(row[column], f"{path}, line {line}, {column}") for column in PRICE_COLUMNS)
                )
                for line, row in enumerate(csv.DictReader(rows), start=2)
            }
        for model, (input_price, output_price) in (overrides or {}).items():
            where = f"the price override of {model!r}"
            self.prices[model] = Price(_price(input_price, where), _price(output_price, where))

    def get(self, model: str) -> Price | None:
        matches = [name for name in self.prices if model == name or model.startswith(name + "-")]
        return self.prices[max(matches, key=len)] if matches else None

    def cost(self, model: str, input_tokens: int, output_tokens: int) -> float:
        """Dollars for these tokens; a model without a price is a ``KeyError`` (never a NaN that no budget holds)."""
        price = self.get(model)
        if price is None:
            raise KeyError(f"model {model!r} has no price in {PRICE_FILE.name}")
        return price.cost(input_tokens, output_tokens)
