"""A player of the delayed dilemma as a Mesa agent: its delay, its policy, its choices and what it has earned."""

import mesa

from coordkit.delay.game import UNKNOWN
from coordkit.delay.policies import Observation
from coordkit.policies import Policy


class Player(mesa.Agent):
    """Player A or B. ``choices[t − 1]`` is its choice at tick t; it reaches the server ``delay_ticks`` later."""

    def __init__(self, model, name: str, delay_ticks: int, policy: Policy):
        super().__init__(model)
        self.name = name
        self.delay_ticks = delay_ticks
        self.policy = policy
        self.choices: list[str] = []
        self.payoff = 0.0

    @property
    def last_choice(self) -> str:
        return self.choices[-1] if self.choices else UNKNOWN

    def effective(self, tick: int) -> str:
        """Its action on the server at ``tick``: the choice made ``delay_ticks`` earlier (Unknown before)."""
        made = tick - self.delay_ticks  # the tick whose choice is in effect
        return self.choices[made - 1] if made >= 1 else UNKNOWN

    def observe(self, opponent: "Player") -> Observation:
        """What it knows when it makes its next choice: the server after its last tick (at time (tick − 1)·Δt),
        both scores, and the change points of the last ``memory_s`` seconds (§3.2)."""
        timing = self.model.timing
        tick = len(self.choices) + 1
        now = (tick - 1) * timing.tick_s
        return Observation(
            tick=tick,
            time_s=now,
            player=self.name,
            own_delay_s=timing.tick_s * self.delay_ticks,
            opponent_delay_s=timing.tick_s * opponent.delay_ticks,
            own_effective=self.effective(tick - 1),
            opponent_effective=opponent.effective(tick - 1),
            own_payoff=self.payoff,
            opponent_payoff=opponent.payoff,
            own_last_choice=self.last_choice,
            history=tuple(change for change in self.model.changes if change.time_s > now - timing.memory_s),
        )
