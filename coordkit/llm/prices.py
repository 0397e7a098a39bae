"""What a call costs: dollars per million input and output tokens, per model (``data/llm_prices.csv``)."""

import csv
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


class PriceTable:
    """Model id → :class:`Price`. A dated id (``claude-haiku-4-5-20251001``) finds the longest matching prefix.

    ``PriceTable()`` reads the kit's documented table; ``overrides`` (``{"model": (input, output)}``, dollars
    per million tokens) add or replace rows, e.g. for a newer price or a local model that costs nothing.
    """

    def __init__(self, overrides: Mapping[str, tuple[float, float]] | None = None, path: Path | str = PRICE_FILE):
        with open(path, newline="") as rows:
            self.prices = {
                row["model"]: Price(float(row["input_usd_per_mtok"]), float(row["output_usd_per_mtok"]))
                for row in csv.DictReader(rows)
            }
        for model, (input_price, output_price) in (overrides or {}).items():
            if input_price < 0 or output_price < 0:
                raise ValueError(f"the price of {model!r} must not be negative, got ({input_price}, {output_price})")
            self.prices[model] = Price(float(input_price), float(output_price))

    def get(self, model: str) -> Price | None:
        matches = [name for name in self.prices if model == name or model.startswith(name + "-")]
        return self.prices[max(matches, key=len)] if matches else None

    def cost(self, model: str, input_tokens: int, output_tokens: int) -> float:
        """Dollars for these tokens; NaN when the model has no price."""
        price = self.get(model)
        return price.cost(input_tokens, output_tokens) if price else float("nan")
