"""Class tournaments (issue 45): how long notebook 08's tournaments take, one call each.

    .venv/bin/python benchmarks/bench_tournament.py

Prints the median wall time of a round robin of five delay entrants at four settings of the two delays (15 pairs ×
4 × 10 seeds = 600 runs; before the seam, five entrants at two delays took ~10 lines of sweep and 9 s), and of a
population tournament in each of the Beer Game, Fishbanks and movie scheduling (3 or 2 entrants: each as the whole
population and every two mixed, both seatings), with the rows of its matches (an entrant's score in a run).
"""

from timing import median_ms

from coordkit import BeerGame, DelayedDilemma, Fishbanks, MovieScheduling, tournament


def patient(seen):
    if seen.opponent_effective != "D":
        return "C"
    theirs = [change for change in seen.history if change.player != seen.player]
    return "D" if not theirs or seen.time_s - theirs[-1].time_s >= 2 else "C"


def order_up_to(view):
    demand = 0.36 * view.incoming_order + 0.64 * view.expected_demand
    return max(0, round(12 - view.net_stock + demand * view.lead_time - view.supply_line))


def pass_along(view):
    return max(0, round(view.incoming_order + (12 - view.net_stock) / 4))


def steady_fleet(view):
    return max(1, view.boats - 1) if view.density_estimate < 0.5 else view.boats


CASES = {
    "delay: 5 entrants, 2 × 2 delays, 10 seeds": lambda: tournament(
        DelayedDilemma,
        ["tit_for_tat", "grim_trigger", "always_defect", "simplified", patient],
        seeds=10,
        delay_a=[0.0, 10.0],
        delay_b=[0.0, 10.0],
        progress=False,
    ),
    "Beer Game: 3 entrants, 10 seeds": lambda: tournament(
        BeerGame, [order_up_to, pass_along, lambda view: 4], seeds=10, progress=False
    ),
    "Fishbanks: 3 entrants, 5 seeds": lambda: tournament(
        Fishbanks,
        {"steady_fleet": steady_fleet, "full_fleet": lambda view: view.max_boats, "one_boat": lambda view: 1},
        seeds=5,
        progress=False,
    ),
    "movies (A2A): 2 entrants, 5 seeds": lambda: tournament(
        MovieScheduling,
        {"choosy": lambda s: s.utility >= 0.5, "own taste": lambda s: s.would_join},
        seeds=5,
        protocol="a2a",
        progress=False,
    ),
}

if __name__ == "__main__":
    for name, play in CASES.items():
        rows = len(play().matches)  # (also warms the imports and caches)
        seconds = 0.001 * median_ms(lambda k, play=play: play(), 3)
        print(f"{name:<44} {seconds:6.2f} s   ({rows} rows of matches: an entrant's score in a run)")
