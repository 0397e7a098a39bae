"""The Ripple Effect Protocol (REP paper §3) and the domains it is evaluated in (the Beer Game, §5)."""

from coordkit.rep.protocol import configure, configure_a2a

__all__ = ["configure", "configure_a2a"]
