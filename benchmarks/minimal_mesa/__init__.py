"""Minimal plain-Mesa models, written apart from the kit, that the kit's models are timed against (issue 48).

Each is what a Mesa user would write for one run of the same rules as a kit model (the Beer Game's, Fishbanks' and
pressure's are checked to play the kit's game before they are timed):
``beer_game`` and ``beer_game_rep`` (the Beer Game: Sterman's A2A players, REP textual), ``fishbanks`` and
``fishbanks_rep_textual`` (A2A and REP textual companies), ``movies`` and ``movies_rep_textual`` (REP numerical and
textual), ``delay`` (the delay trial's two simplified players) and ``pressure`` (a pressure-field trial). ``floor``
is Mesa's floor for a model of a given number of agents, steps and reporters whose step does nothing.
``benchmarks/bench_minimal_mesa.py`` prints the kit's time over theirs.
"""
