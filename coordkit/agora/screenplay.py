"""The demo's queries (Agora paper, App. D.2 "Task Distribution" and Figure 6): who asks which server what, in order.

D.2: each user gets a "query budget ... following a Pareto distribution with shape parameter equal to 0.5, adapted
so that each user has at least 1 query", split "between three randomly chosen types of queries using a Pareto law
with a shape parameter of 1 and a minimum of 1 query per type (unless the budget is less than 3 queries)".

"Adapted" is not explained. The kit reads it as the demo code's ``generate_screenplay.py`` does: the budgets are
not drawn but *laid out* along the Pareto density. The density ``shape / rank ** (shape + 1)`` at ranks 1…N is
scaled to the ``queries - N`` queries left once every user has its one, floored, and the remainder is spread the
same way until the budgets sum to ``queries`` exactly (:func:`pareto_split`); the ranks are then shuffled over the
users. Why not draw N budgets from a Pareto law and add 1? With shape 0.5 the law has no mean: a draw is ruled by
its largest value, so one user would send most of the queries (for 85 users, a median share of 64% over 2,000
draws, above 87% in a quarter of them) and the budgets would not sum to the queries asked for. Laid out, 85 users
and 1,000 queries get budgets of 411, 143, 78, … with 52 users under 3 (Figure 6 plots the paper's budgets on a log
scale without printing them), the same for every seed; only who gets which rank, which task types, and the order of
the queries depend on the seed.

Each user draws ``task_types`` distinct (server, task) pairs, its budget is split over them by :func:`pareto_split`
with ``split_shape`` and a minimum of 1 (over its budget's worth of them when the budget is smaller), and all the
queries of all users are shuffled together.
"""

import math

import numpy as np
import pandas as pd

from coordkit.parameters import ParameterError

BUDGET_SHAPE = 0.5  # D.2
SPLIT_SHAPE = 1.0  # D.2
TASK_TYPES = 3  # D.2: "three randomly chosen types of queries"
COLUMNS = ["query", "user", "server", "task"]


def pareto_split(total: int, parts: int, shape: float, minimum: int = 0) -> list[int]:
    """``total`` split over ``parts`` ranks along the Pareto density with ``shape``, each at least ``minimum``.

    Rank 1 gets the most. The result sums to ``total`` exactly: after flooring, the remainder is split again the
    same way (with no minimum), as the demo code's ``generate_discrete_power_law`` does.
    """
    _check_int("parts", parts, 1)
    _check_int("total", total, parts * minimum)
    _check_shape("shape", shape)
    density = shape / np.arange(1, parts + 1, dtype=float) ** (shape + 1)
    weights = density / density.sum()
    counts = np.full(parts, minimum, dtype=np.int64)
    left = total - parts * minimum
    while left > 0:
        share = weights * left
        if share.max() < 1:  # too little to floor to anything: give it to the top ranks, one each
            share = share / share.max()
        step = np.floor(share).astype(np.int64)
        counts += step
        left -= int(step.sum())
    return counts.tolist()


def query_budgets(users: int, queries: int, rng: np.random.Generator, shape: float = BUDGET_SHAPE) -> list[int]:
    """Each user's number of queries (D.2): the Pareto layout of :func:`pareto_split`, at least 1 each, shuffled."""
    _check_int("users", users, 1)
    _check_int("queries", queries, users, hint="at least one query per user (D.2)")
    budgets = np.array(pareto_split(queries, users, shape, minimum=1))
    return budgets[rng.permutation(users)].tolist()


def screenplay(
    pairs: list[tuple[str, str]],
    *,
    users: int,
    queries: int,
    rng: np.random.Generator,
    budget_shape: float = BUDGET_SHAPE,
    split_shape: float = SPLIT_SHAPE,
    task_types: int = TASK_TYPES,
) -> pd.DataFrame:
    """The queries in the order they are sent: one row each, ``query`` 1…``queries``, ``user`` 0…``users - 1``.

    ``pairs`` are the (server, task) types users can ask (``Catalogue.pairs()``). The same ``rng`` state gives the
    same screenplay.
    """
    if not isinstance(rng, np.random.Generator):
        raise ParameterError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    pairs = [tuple(pair) for pair in pairs]
    if len(set(pairs)) != len(pairs):
        raise ParameterError("pairs: each (server, task) must appear once")
    _check_shape("budget_shape", budget_shape)
    _check_shape("split_shape", split_shape)
    _check_int("task_types", task_types, 1)
    if task_types > len(pairs):
        raise ParameterError(f"task_types must be at most the {len(pairs)} (server, task) pairs, got {task_types}")
    rows = []
    for user, budget in enumerate(query_budgets(users, queries, rng, budget_shape)):
        chosen = rng.choice(len(pairs), task_types, replace=False)
        kinds = min(task_types, budget)
        for index, count in zip(chosen[:kinds], pareto_split(budget, kinds, split_shape, minimum=1)):
            rows += [(user, *pairs[index])] * count
    order = rng.permutation(len(rows))
    frame = pd.DataFrame([rows[i] for i in order], columns=COLUMNS[1:])
    frame.insert(0, "query", np.arange(1, len(frame) + 1))
    return frame


def _check_int(name: str, value, least: int, hint: str = "") -> None:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < least:
        extra = f" ({hint})" if hint else ""
        raise ParameterError(f"{name} must be an integer of at least {least}{extra}, got {value!r}")


def _check_shape(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        raise ParameterError(f"{name} must be a positive finite number (a Pareto shape), got {value!r}")
