"""Cooperation under communication delay: the continuous prisoner's dilemma of Nishimoto, Asatani and Sakata.

Two players change between cooperating and defecting every tick; each change reaches the shared server — and the
opponent — only after the player's own delay. ``model`` is the Mesa model, ``fast`` the same simplified-model
trials vectorised over thousands of trials, ``experiments`` the paper's figures.
"""
