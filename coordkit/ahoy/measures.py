"""The estimates that decide the Ahoy paper's claims (§5; ``data/papers/claims.csv``), from the scenarios' data
(one row per scenario and seed). With rule brains these measure the kit's adapter and protocols, and the decision
events at which an LLM agent would be called, not what an LLM decides."""

import pandas as pd

from coordkit.replication import estimates


def violations(scenarios: pd.DataFrame) -> estimates.Estimate:
    """Malformed instances, adornment violations and rejected proposals over every enactment (§5: none)."""
    return estimates.exact(int(scenarios["violations"].sum()), len(scenarios), unit="")


def terminated_share(scenarios: pd.DataFrame) -> estimates.Estimate:
    """The share of enactments that reach their termination conditions, in percent."""
    return estimates.exact(100 * scenarios["terminated"].mean(), len(scenarios), unit="%")


def in_scenario(scenario: str, column: str, unit: str):
    """``column`` of ``scenario``'s enactments, mean over seeds."""

    def measure(scenarios: pd.DataFrame) -> estimates.Estimate:
        return estimates.mean(
            scenarios.loc[scenarios["scenario"] == scenario, column], unit=unit, bounds=(0, float("inf"))
        )

    return measure


MEASURES = {
    "violations": violations,
    "terminated_share": terminated_share,
    "concurrent_messages": in_scenario("concurrent", "messages", "messages"),
    "purchase_decisions": in_scenario("freeness-purchase", "decisions", "calls"),
    "logistics_decisions": in_scenario("freeness-logistics", "decisions", "calls"),
}
