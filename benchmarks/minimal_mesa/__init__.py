"""Minimal plain-Mesa models, written apart from the kit, that the kit's models are timed against (issue 48).

Each is what a Mesa user would write for one run: ``beer_game`` and ``delay`` play the same rules as the kit's
Beer Game (Sterman's A2A players) and delay trial (two simplified players); ``floor`` is Mesa's floor for a model
of a given number of agents, steps and reporters whose step does nothing, the comparison for Fishbanks and movie
scheduling, whose REP rounds a minimal model would have to copy whole. ``benchmarks/bench_minimal_mesa.py``
prints the kit's time over theirs.
"""
