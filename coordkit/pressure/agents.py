"""The actors of a pressure field as Mesa agents: each proposes patches for the rows it is assigned (§3.3, §3.5)."""

import mesa

from coordkit.policies import Policy
from coordkit.pressure.policies import Assignment, Patch


class Actor(mesa.Agent):
    """One of the model's parallel proposers: its policy (the rule actor, or an LLM falling back to it) maps an
    :class:`Assignment` to a patch, which the actor signs with its id."""

    def __init__(self, model, policy: Policy):
        super().__init__(model)
        self.policy = policy

    def propose(self, assignment: Assignment) -> Patch | None:
        return self._signed(self.policy.decide(assignment))

    async def propose_async(self, assignment: Assignment) -> Patch | None:
        """:meth:`propose` for a round whose LLM calls run concurrently."""
        return self._signed(await self.policy.decide_async(assignment))

    def _signed(self, patch: Patch | None) -> Patch | None:
        return None if patch is None else Patch(patch.row, patch.column, patch.value, self.unique_id)
