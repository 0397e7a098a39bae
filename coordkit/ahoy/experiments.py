"""The Ahoy paper's four scenarios (§5) as experiments, and the figure that sets them beside the paper.

One enactment is the model itself, ``AhoyEnactment(protocols="flexible_purchase", delivery="urgent", rng=0).run()``;
each scenario below returns its enactments by name, played out:

- :func:`programming_freeness` (§5.1): the same agent set-up enacts Purchase as Buyer, then Logistics as Merchant.
- :func:`concurrent_roles` (§5.2): the Ahoy agent plays Purchase:Buyer and Logistics:Merchant at once, with the
  goal of Listing 1.6 (buy a glass vase, a ceramic plate and a wooden bat; wrap and ship them to Alice and Bob).
- :func:`branching` (§5.3): FlexiblePurchase (the corrected, live one) with an urgent, a cost-conscious and an
  ambiguous goal: express, standard, standard.
- :func:`external_event` (§5.4): a Buyer buying a pen gets "buy a trolley" in its event queue mid-enactment and
  starts a second enactment, with its own budget and address.

With ``llm``, every role of the Ahoy agent decides through the LLM access function, its rule brain as fallback;
the counterparts are rule-based. In §5.1 the paper's Buyer heard two competing Sellers; a Kiko system maps a role
to one agent, so the kit's Buyer hears one Seller.
"""

import pandas as pd

from coordkit.ahoy import charts, measures, stand_in
from coordkit.ahoy.model import CONCURRENT, AhoyEnactment
from coordkit.figures import figure
from coordkit.llm import LLMClient
from coordkit.papers import numbers
from coordkit.sweeps import sweep

BRANCHES = {"urgent": "urgent", "cheapest": "cheapest", "ambiguous": ""}


def programming_freeness(seed: int = 0, llm: LLMClient | None = None) -> dict[str, AhoyEnactment]:
    """§5.1: Purchase as Buyer (a pen, up to $20), then Logistics as Merchant (the orders of Listing 1.6)."""
    return {
        "freeness-purchase": AhoyEnactment(protocols="purchase", llm=llm, rng=seed).run(),
        "freeness-logistics": AhoyEnactment(protocols="logistics", llm=llm, rng=seed).run(),
    }


def concurrent_roles(seed: int = 0, llm: LLMClient | None = None) -> dict[str, AhoyEnactment]:
    """§5.2 and appendix B: Purchase:Buyer and Logistics:Merchant at once, for the goal of Listing 1.6."""
    return {"concurrent": AhoyEnactment(protocols="purchase+logistics", goal=CONCURRENT, llm=llm, rng=seed).run()}


def branching(seed: int = 0, llm: LLMClient | None = None) -> dict[str, AhoyEnactment]:
    """§5.3: FlexiblePurchase (corrected: the published one is not live) for a pen, with an urgent, a
    cost-conscious and an ambiguous goal."""
    return {
        f"branching-{name}": AhoyEnactment(protocols="flexible_purchase", delivery=wish, llm=llm, rng=seed).run()
        for name, wish in BRANCHES.items()
    }


def external_event(seed: int = 0, llm: LLMClient | None = None, event_step: int = 2) -> dict[str, AhoyEnactment]:
    """§5.4: a Buyer buying a pen ($20, Raleigh) receives "buy a trolley" ($29.99, another address) at
    ``event_step``."""
    return {"external-event": AhoyEnactment(event_step=event_step, llm=llm, rng=seed).run()}


def all_scenarios(seed: int = 0, llm: LLMClient | None = None) -> dict[str, AhoyEnactment]:
    return {
        **programming_freeness(seed, llm),
        **concurrent_roles(seed, llm),
        **branching(seed, llm),
        **external_event(seed, llm),
    }


def table(enactments: dict[str, AhoyEnactment], seed: int) -> pd.DataFrame:
    """One row per scenario: its name, the seed, and the enactment's ``summary()``."""
    return pd.DataFrame([{"scenario": name, "seed": seed, **model.summary()} for name, model in enactments.items()])


def scenario_rows(seed: int, llm: LLMClient | None = None) -> pd.DataFrame:
    """Every scenario at ``seed``, one row each (:func:`table`): the run :func:`scenarios` sweeps."""
    return table(all_scenarios(seed, llm), seed)


def compare_with_paper(scenarios: pd.DataFrame) -> pd.DataFrame:
    """The paper's §5 numbers beside the kit's means over seeds: columns metric, paper, kit. The paper's run times
    are seconds of LLM calls; the kit shows none (a wall time is not reproducible)."""
    columns = {
        "messages": "mean",
        "ahoy_messages": "mean",
        "Purchase": "mean",
        "Logistics": "mean",
        "decisions": "mean",
        "llm_calls": "mean",
        "violations": "sum",
        "terminated": "all",
        "delivery": lambda paths: ", ".join(sorted(set(paths))),
    }
    if "llm_fallbacks" in scenarios:
        columns["llm_fallbacks"] = "mean"
    kit = scenarios.groupby("scenario").agg(columns)
    shown = {
        "messages": lambda k: f"{k['messages']:g} in all, {k['ahoy_messages']:g} sent by the Ahoy agent",
        "purchase_messages": lambda k: f"{k['Purchase']:g} in all",
        "logistics_messages": lambda k: f"{k['Logistics']:g} in all",
        "llm_calls": lambda k: f"{k['llm_calls']:g} LLM calls{_fell_back(k)}, {k['decisions']:g} decisions",
        "seconds": lambda k: (
            "not comparable: rule brains, no LLM calls"
            if k["llm_calls"] == 0
            else f"not comparable (wall time); {k['llm_calls']:g} LLM calls"
        ),
        "violations": lambda k: f"{k['violations']:g} (all roles terminated: {bool(k['terminated'])})",
        "delivery": lambda k: k["delivery"],
    }
    paper = numbers("ahoy-scenarios")
    rows = [
        (
            f"{row.condition}: {row.metric}",
            paper.text(row.metric, row.condition),
            shown[row.metric](kit.loc[row.condition]),
        )
        for row in paper.rows.itertuples()
        if row.condition in kit.index
    ]
    return pd.DataFrame(rows, columns=["metric", "paper", "kit"])


def _fell_back(kit: pd.Series) -> str:
    return f" ({kit['llm_fallbacks']:g} fell back)" if "llm_fallbacks" in kit else ""


@figure(
    "ahoy-scenarios",
    "Ahoy §5: the four scenarios (messages, decisions, LLM calls, violations, termination)",
    chart=charts.messages_per_scenario,
    compare=compare_with_paper,
    default_seeds=5,
    llm_agents=True,
    stand_in=stand_in.reply,
    measures=measures.MEASURES,
)
def scenarios(seeds: int = 5, base_seed: int = 0, *, llm: LLMClient | None = None) -> pd.DataFrame:
    """Every scenario for ``seeds`` seeds derived from ``base_seed``: one row per scenario and seed (the columns of
    :meth:`AhoyEnactment.summary`; ``llm_fallbacks`` only with ``llm``). One sweep over the seeds, on the default
    engine (with ``llm``, in this process, as :func:`~coordkit.sweeps.sweep` keeps every LLM client)."""
    frame = sweep(scenario_rows, None, seeds, base_seed=base_seed, fixed={"llm": llm}, desc="Ahoy seeds")
    return frame if llm is not None else frame.drop(columns="llm_fallbacks")
