"""The Agora paper's experiments as functions returning tidy DataFrames, registered for ``coordkit reproduce``.

- :func:`weather` — §5.2, Appendix C: Alice and Bob, natural language first, then a negotiated protocol; the
  cumulative cost against natural language only, and the break-even point beside the paper's.
- :func:`network` — §5.3, Appendix D: the 100-agent network against its natural-language counterfactual; Figure 5a
  (cost per query), 5b (LLM calls per query as protocols spread), D.3's cost breakdown and the totals.
- :func:`workflow` — Figure 4: which protocol documents connect which agents, from a run's transcript.

With rule-based stand-ins every cost is an estimate: the token counts of the texts a stand-in read and wrote in an
LLM's place, at Table 1's prices (:mod:`~coordkit.agora.costs`).
"""

import json
from collections import Counter
from collections.abc import Callable

import pandas as pd

from coordkit import engines
from coordkit.agora import charts, measures, stand_in
from coordkit.agora.costs import ACTIVITIES, weather_costs
from coordkit.agora.model import ARM_NAMES, PROTOCOLS, AgoraNetwork, WeatherDemo
from coordkit.figures import COMPARISON, figure
from coordkit.llm import LLMClient
from coordkit.papers import numbers
from coordkit.sweeps import sweep

PROGRESS_EVERY = 25  # queries between two reports of play_both's progress
TOTAL_NAMES = {
    "cost": "cost (USD)",
    "per_query": "USD a query",
    "in_protocol": "queries in a protocol (%)",
    "llm_turns": "LLM calls",
    "negotiations": "negotiations",
    "fallbacks": "routine fallbacks",
    "lost": "lost queries",
}


def play_both(
    model: type, seed: int, llm: LLMClient | None = None, progress: Callable[[float], None] | None = None, **params
) -> pd.DataFrame:
    """Both arms of one seed (the same queries and data): the frames, one under the other, with ``protocol``.
    ``progress(fraction)``, if given, hears how far the two runs are, every ``PROGRESS_EVERY`` queries.

    Without an LLM, and with :func:`~coordkit.engines.use_every_core`'s pool, natural language plays on another
    core while Agora plays here (the arms share nothing but their parameters); the frames are the same."""
    beside = engines.on_another_core(play_arm, model, PROTOCOLS[1], seed, **params) if llm is None else None
    arms = PROTOCOLS[:1] if beside is not None else PROTOCOLS
    frames = [
        play_arm(model, protocol, seed, llm, _arm_progress(progress, arm, len(arms)), **params)
        for arm, protocol in enumerate(arms)
    ]
    if beside is not None:
        frames.append(beside.result())
    return pd.concat(frames, ignore_index=True)


def play_arm(
    model: type,
    protocol: str,
    seed: int,
    llm: LLMClient | None = None,
    progress: Callable[[float], None] | None = None,
    **params,
) -> pd.DataFrame:
    """One arm of one seed: its frame, with ``protocol``; ``progress(fraction)`` every ``PROGRESS_EVERY`` queries."""
    played = model(protocol=protocol, llm=llm, rng=seed, **params)
    while played.running:
        played.step()
        if progress is not None and played.steps % PROGRESS_EVERY == 0:
            progress(played.steps / len(played.plan))
    return played.frame().assign(protocol=protocol)


def _arm_progress(progress: Callable[[float], None] | None, arm: int, arms: int) -> Callable[[float], None] | None:
    """``progress`` for arm ``arm`` of the ``arms`` played here one after the other: its fraction as a share of
    them all (the arm played beside them, the quicker, is not counted)."""
    if progress is None:
        return None
    return lambda fraction: progress((arm + fraction) / arms)


def break_even(frame: pd.DataFrame) -> int | None:
    """The first query from which Agora's cumulative cost stays at or below natural language's (None: never)."""
    wide = frame.pivot_table(index="query", columns="protocol", values="cumulative_cost")
    ahead = wide["agora"] <= wide["natural_language"]
    behind = ahead[~ahead]
    if behind.empty:
        return int(ahead.index[1]) if len(ahead) > 1 else None
    last = behind.index[-1]
    return None if last == ahead.index[-1] else int(last) + 1


def totals(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per arm, means over seeds: what the run cost and how its queries went (readable column names)."""
    played = frame[frame["query"] > 0]
    per_seed = played.groupby(["protocol", "seed"]).agg(
        cost=("cost", "sum"),
        per_query=("cost", "mean"),
        in_protocol=("mode", lambda mode: 100 * (mode == "protocol").mean()),
        llm_turns=("llm_turns", "sum"),
        negotiations=("negotiated", "sum"),
        fallbacks=("routine_fallbacks", "sum"),
        lost=("lost", "sum"),
    )
    table = per_seed.groupby("protocol").mean().reindex(list(PROTOCOLS))
    table.index = [ARM_NAMES[arm] for arm in table.index]
    digits = {name: 1 for name in TOTAL_NAMES} | {"cost": 3, "per_query": 5}
    return table.round(digits).rename(columns=TOTAL_NAMES)


# --- §5.2: the weather demo -----------------------------------------------------------------------------------------


def compare_weather(frame: pd.DataFrame) -> pd.DataFrame:
    """The paper's cost analysis (§5.2) beside the kit's, averaged over seeds; the kit's costs are estimates."""
    paper = numbers("agora-weather")
    costs = pd.DataFrame([weather_costs(seed) for _, seed in frame.groupby("seed")]).mean()
    uses = costs["setup"] / (costs["natural_language"] - costs["protocol"])
    estimate = " (estimate)" if frame["estimated"].all() else ""
    rows = [
        (
            "negotiating and implementing, USD",
            paper.text("negotiation_implementation_cost"),
            f"{costs['setup']:.4f}{estimate}",
        ),
        (
            "a natural-language exchange, USD",
            paper.text("natural_language_exchange_cost"),
            f"{costs['natural_language']:.4f}{estimate}",
        ),
        ("an exchange in the protocol, USD", "(not printed)", f"{costs['protocol']:.4f}"),
        ("uses for the protocol to pay off", paper.text("break_even_uses"), f"more than {uses:.1f}"),
        ("break-even query (cumulative)", "(not printed)", _queries(frame)),
    ]
    return pd.DataFrame(rows, columns=COMPARISON)


@figure(
    "agora-weather",
    "Agora §5.2: Alice and Bob's weather forecasts, cumulative cost with a negotiated protocol vs natural language",
    chart=charts.weather,
    compare=compare_weather,
    default_seeds=1,
    llm_agents=True,
    stand_in=stand_in.reply,
    measures=measures.WEATHER,
)
def weather(seeds: int = 1, base_seed: int = 0, *, llm: LLMClient | None = None, queries: int = 10) -> pd.DataFrame:
    """Per seed and arm, one row per query of :class:`WeatherDemo` (its frame, with ``seed``, ``protocol`` and
    ``estimated``)."""
    return _arms(WeatherDemo, seeds, base_seed, llm, "weather", queries=queries)


# --- §5.3: the 100-agent network ------------------------------------------------------------------------------------


def compare_network(frame: pd.DataFrame) -> pd.DataFrame:
    """D.2 and D.3's numbers beside the kit's (means over seeds; the kit's costs are estimates without an LLM)."""
    paper = numbers("agora-network")
    played = frame[frame["query"] > 0]
    totals = played.groupby(["protocol", "seed"])["cost"].sum().groupby("protocol").mean()
    agora = played[played["protocol"] == "agora"]
    spent = {activity: agora[f"cost_{activity}"].sum() for activity in ACTIVITIES}
    names = {"checks": "suitability_checks"}
    estimate = " (estimate)" if frame["estimated"].all() else ""
    rows = [
        (f"total cost, {ARM_NAMES[arm]}, USD", paper.text("total_cost", arm), f"{totals[arm]:.2f}{estimate}")
        for arm in ("natural_language", "agora")
    ]
    rows.append(
        (
            "cost ratio, natural language / Agora",
            paper.text("cost_ratio"),
            f"{totals['natural_language'] / totals['agora']:.2f}",
        )
    )
    rows += [
        (
            f"share of Agora's cost: {charts.ACTIVITY_NAMES[activity]}, %",
            paper.text("cost_share", names.get(activity, activity)),
            f"{100 * spent[activity] / sum(spent.values()):.0f}",
        )
        for activity in ACTIVITIES
    ]
    lost = 100 * played.groupby("protocol")["lost"].mean()
    rows.append(
        (
            "queries lost to provider errors, %",
            paper.text("failure_rate"),
            ", ".join(f"{lost[arm]:.1f} ({ARM_NAMES[arm]})" for arm in PROTOCOLS),
        )
    )
    rows.append(("break-even query", "(not printed)", _queries(frame)))
    return pd.DataFrame(rows, columns=COMPARISON)


@figure(
    "agora-network",
    "Agora §5.3 Fig. 5: a 100-agent network, cost and LLM calls per query, Agora vs natural language",
    chart=charts.figure5,
    compare=compare_network,
    default_seeds=3,
    llm_agents=True,
    stand_in=stand_in.reply,
    small={"queries": AgoraNetwork.small["queries"]},
    measures=measures.NETWORK,
)
def network(seeds: int = 3, base_seed: int = 0, *, llm: LLMClient | None = None, queries: int = 1000) -> pd.DataFrame:
    """Per seed and arm, one row per query of :class:`AgoraNetwork` at the paper's settings (its frame, with
    ``seed``, ``protocol`` and ``estimated``)."""
    return _arms(AgoraNetwork, seeds, base_seed, llm, "network", queries=queries)


def adoption_floor(frame: pd.DataFrame, check_after: int) -> pd.Series:
    """D.1's adoption floor: True for each query among the first ``check_after`` of its user–server–task pair (per
    seed and arm, where ``frame`` has them; rows in query order). A user looks for a protocol only once it has sent
    that many, so these queries travel in natural language whatever protocols exist, unless a server's own request
    to negotiate moves them earlier (a handful at D.1's thresholds; more when users wait longer than servers). Query
    0, the start, is never below the floor."""
    keys = [column for column in ("seed", "protocol") if column in frame] + ["user", "server", "task"]
    return (frame["query"] > 0) & (frame.groupby(keys).cumcount() < check_after)


def floor_costs(frame: pd.DataFrame, check_after: int) -> pd.Series:
    """Both arms of a network's seeds (:func:`play_both`'s frames, with ``seed``) against D.1's floor at
    ``check_after`` (:func:`adoption_floor`), means over seeds: the user–server–task pairs, the share of queries
    below the floor, what those queries cost Agora, and so the cost ratio (natural language / Agora) that Agora
    could reach at most, were every other query free, beside the ratio measured."""
    played = frame[frame["query"] > 0]
    below = adoption_floor(played, check_after)
    cost = played.groupby(["protocol", "seed"])["cost"].sum().groupby("protocol").mean()
    agora = played["protocol"] == "agora"
    floor_cost = played[agora & below].groupby("seed")["cost"].sum().mean()
    pairs = played[agora].drop_duplicates(["seed", "user", "server", "task"]).groupby("seed").size()
    return pd.Series(
        {
            "user–server–task pairs": int(pairs.iloc[0]) if pairs.nunique() == 1 else round(pairs.mean(), 1),
            "queries below the floor (%)": round(100 * below[agora].mean(), 1),
            "their cost to Agora (USD)": round(floor_cost, 3),
            "Agora's cost (USD)": round(cost["agora"], 3),
            "cost ratio at most": round(cost["natural_language"] / floor_cost, 2),
            "cost ratio": round(cost["natural_language"] / cost["agora"], 2),
        },
        dtype=object,  # each figure as computed: a count stays a whole number beside the ratios
    )


def one_arm(seed: int, protocol: str, model: type, **params) -> pd.DataFrame:
    """One arm of one seed of ``model`` (:func:`play_arm`): a run :func:`network` and :func:`weather` sweep."""
    return play_arm(model, protocol, seed, **params)


def both_arms(seed: int, model: type, llm: LLMClient | None = None, **params) -> pd.DataFrame:
    """Both arms of one seed of ``model`` (:func:`play_both`): the run they sweep with an LLM."""
    return play_both(model, seed, llm, **params)


def _arms(model: type, seeds: int, base_seed: int, llm: LLMClient | None, name: str, **params) -> pd.DataFrame:
    """Both arms of ``model`` for ``seeds`` seeds derived from ``base_seed``, in one sweep, seed by seed, Agora
    first. Without an LLM each arm of each seed is a run of its own, so that the default engine's workers share
    them out evenly (the arms take unequal times); with an ``llm``, the seeds play in this process, as
    :func:`~coordkit.sweeps.sweep` keeps every LLM client, both arms of each in turn."""
    fixed = {"model": model, **params}
    if llm is None:
        arms = {"protocol": list(PROTOCOLS)}
        played = sweep(one_arm, arms, seeds, base_seed=base_seed, fixed=fixed, desc=f"{name} arms (seeds × 2)")
        frame = pd.concat([rows for _, rows in played.groupby("seed", sort=False)], ignore_index=True)
    else:
        frame = sweep(both_arms, None, seeds, base_seed=base_seed, fixed={"llm": llm, **fixed}, desc=f"{name} seeds")
    frame = frame.assign(estimated=llm is None)
    return frame[["seed", "protocol", *frame.columns.drop(["seed", "protocol", "estimated"]), "estimated"]]


def _queries(frame: pd.DataFrame) -> str:
    found = [break_even(seed) for _, seed in frame.groupby("seed")]
    return ", ".join("never" if query is None else str(query) for query in found)


# --- Figure 4: the workflow ---------------------------------------------------------------------------------------


def workflow(model: AgoraNetwork | WeatherDemo) -> pd.DataFrame:
    """Figure 4 from a run's transcript: one row per (sender, receiver, protocol) of the queries that travelled in
    a protocol document (negotiations left out), with the task it serves and how many times it was used."""
    bootstrap = model.negotiation_document.hash
    names = {}
    uses: Counter = Counter()
    for exchange in model.channel.transcript:
        if exchange.path != "/":
            continue
        envelope = json.loads(exchange.request)
        hash = envelope["protocolHash"]
        if hash is None or hash == bootstrap:
            continue
        uses[(exchange.sender, exchange.receiver, hash)] += 1
        names.setdefault(hash, _task_of(model, exchange.receiver, hash))
    rows = [{"sender": s, "receiver": r, "protocol": h, "task": names[h], "uses": n} for (s, r, h), n in uses.items()]
    return pd.DataFrame(rows, columns=["sender", "receiver", "protocol", "task", "uses"])


def _task_of(model, receiver: str, hash: str) -> str:
    served = model.server_agents[receiver].protocols.get(hash)
    return served.task.name if served else ""
