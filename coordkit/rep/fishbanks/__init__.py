"""Fishbanks played by A2A and REP fishing companies (REP paper §6, Figure 2): a shared fish stock with Meadows'
hump-shaped regeneration (Sterman & King 2017), twelve companies, eight seasons, competitive escalation against
conditional cooperation."""

from coordkit.rep.fishbanks.model import PROTOCOLS, Fishbanks

__all__ = ["PROTOCOLS", "Fishbanks"]
