"""Pressure-field coordination on a Latin square as a Mesa model, with the paper's baselines and the published
code's variant.

**The paper's algorithm** (``mode="paper"``, §4.3), per tick:

1. *Decay*: every row's fitness and confidence shrink, f ← f·e^(−λ_f), γ ← γ·e^(−λ_γ) (eq. 4);
2. *Activation*: the rows that get attention (see below);
3. *Proposal*: every actor proposes a patch for every activated row, from that row's local view only;
4. *Validation*: each candidate is applied to its own fork of the grid and its actual pressure reduction measured;
5. *Selection*: candidates sorted by reduction; the top-κ on distinct rows are applied (with ``acceptance_gate``,
   only those that lower their row's pressure);
6. *Reinforcement*: a patched row's f and γ grow by Δ (capped at 1, eq. 5) and it is inhibited for τ_inh ticks.

**How fitness decides attention (the kit's reading of §3.3–4.3, documented because the paper leaves it open).**
A row's *attention* is its pressure discounted by its fitness, P_i·(1 − f_i), and a row whose confidence has
reached ``settle_confidence`` counts as settled. The activated rows are the ``focus`` rows of highest attention
(the paper's runs: one) among those neither inhibited nor settled, with attention above τ_act. A patch makes a
row look good (f, γ up) whether or not it truly fixed it; decay lets that impression fade, so a row that still
holds violations comes back into view (§6.3.1). With decay off, a row patched twice looks perfect forever.

**The baselines** use the same actors, forks and selection, but pick their row differently and keep no fitness:
hierarchical (the row with most empty cells, then the highest pressure), sequential (row ``tick mod n``, one
actor), random (any row), and conversation (:mod:`coordkit.pressure.conversation`).

**The published code** (``mode="published"``): one row per tick chosen by the strategy (pressure-field: highest
pressure, ties to the lowest index), min(8, 2·#empty) proposals for that row's empty cells, the FIRST that lowers
the row's pressure applied; its "decay" switch evaporates the example bank (×0.95 a tick) and turns that acceptance
gate on — with it off, the first proposal goes in; the agent count is a label.
"""

import math
from dataclasses import dataclass, replace

import mesa
import numpy as np
import pandas as pd

from coordkit.llm import LLMClient, aio
from coordkit.policies import LLMUse
from coordkit.pressure import conversation
from coordkit.pressure.actors import MODEL_CHAIN, Actor, Patch, RowView, escalation_skills, rule_policy, target_cells
from coordkit.pressure.llm_actor import llm_policy
from coordkit.pressure.pressure import conflicts, row_pressures
from coordkit.pressure.puzzles import EMPTY, check_size, puzzle_for

STRATEGIES = ("pressure_field", "hierarchical", "sequential", "random", "conversation")
MODES = ("paper", "published")
EXAMPLE_EVAPORATION = 0.95
EXAMPLE_FLOOR = 0.1


@dataclass
class Region:
    """A row and its auxiliary state h_i (§3.1): fitness f, confidence γ, and the tick its inhibition ends."""

    index: int
    fitness: float = 0.0
    confidence: float = 0.0
    inhibited_until: int = 0


class PressureField(LLMUse, mesa.Model):
    """One trial: a puzzle, a coordination strategy and its actors, for at most ``max_ticks`` ticks.

    Args:
        n, empty: grid size and empty cells; the puzzle has exactly one completion and comes from the seed.
        strategy: one of :data:`STRATEGIES`. mode: "paper" (the algorithm as written) or "published" (the code).
        agents: parallel actors, each proposing one patch per activated row per tick (sequential uses one).
        skill: the rule-based actors' chance of proposing an available value (stands in for model size).
        escalation: after ``escalation_patience`` ticks without a new lowest total pressure, the next model tier.
        decay, decay_rate, confidence_decay_rate: eq. 4 (λ_f = 0.1 in the paper; λ_γ is not given: 0.1).
        inhibition, inhibition_ticks: τ_inh = 4. fitness_boost, confidence_boost: Δ_f, Δ_γ of eq. 5.
        settle_confidence: a row this confident is not activated. activation: τ_act (0: any pressure > 0).
        focus: rows activated per tick (the paper's runs: 1). kappa: patches applied per tick, on distinct rows.
        acceptance_gate: apply only patches that lower their row's pressure. None: off in "paper" mode — §4.3
            selects by actual reduction with no such gate, which is what lets pressure rise without decay (Table 3);
            Appendix B says patches that increase violations are rejected, which would make that impossible —
            and in "published" mode on exactly when ``decay`` is (the code's "decay" switch turns the gate on).
        examples: remember successful fixes and show them to actors (the ablation's E).
        max_ticks: the budget (100). validator_error, max_turns: the conversation baseline's.
        llm: an LLMClient for LLM actors (and conversation roles); their unusable replies fall back to the rules.
        rng: seed (also picks the puzzle).
    """

    def __init__(
        self,
        n: int = 7,
        empty: int = 7,
        strategy: str = "pressure_field",
        mode: str = "paper",
        agents: int = 4,
        skill: float = 0.1,
        escalation: bool = True,
        escalation_patience: int = 20,
        decay: bool = True,
        decay_rate: float = 0.1,
        confidence_decay_rate: float = 0.1,
        inhibition: bool = True,
        inhibition_ticks: int = 4,
        fitness_boost: float = 0.5,
        confidence_boost: float = 0.5,
        settle_confidence: float = 0.9,
        activation: float = 0.0,
        focus: int = 1,
        kappa: int = 1,
        acceptance_gate: bool | None = None,
        examples: bool = False,
        max_ticks: int = 100,
        validator_error: float = 0.2,
        max_turns: int = 5,
        llm: LLMClient | None = None,
        rng=None,
    ):
        super().__init__(rng=rng)
        check_parameters(locals())
        seed = int(rng) if isinstance(rng, (int, np.integer)) else int(self.rng.integers(2**32))
        self.puzzle = puzzle_for(n, empty, seed)
        self.grid = self.puzzle.grid.copy()
        self.editable = self.puzzle.grid == EMPTY
        self.n, self.strategy, self.mode = n, strategy, mode
        self.decay, self.rates = decay, (decay_rate, confidence_decay_rate)
        self.inhibition, self.inhibition_ticks = inhibition, inhibition_ticks
        self.boosts, self.settle_confidence, self.activation = (fitness_boost, confidence_boost), settle_confidence, activation
        self.focus, self.kappa, self.max_ticks = focus, kappa, max_ticks
        self.gate = (mode == "published" and decay) if acceptance_gate is None else acceptance_gate
        self.examples = examples
        self.bank: list[tuple[int, int, float]] = []  # (column, value, weight)
        self.skills = escalation_skills(skill) if escalation else (skill,)
        self.tier, self.stalled, self.patience = 0, 0, escalation_patience
        self.regions = [Region(i) for i in range(n)]
        self.llm = llm
        for _ in range(1 if strategy in ("sequential", "conversation") else agents):
            policy = rule_policy(self.rng)
            Actor(self, llm_policy(llm, policy, self.rng) if llm is not None else policy)
        self.roles = conversation.Roles.make(self.rng, validator_error, llm) if strategy == "conversation" else None
        self.max_turns = max_turns
        self.tick = 0
        self.pressures = row_pressures(self.grid)
        self.initial_pressure = self.best = int(self.pressures.sum())
        self.history: list[np.ndarray] = [self.grid.copy()]
        self.focus_rows: list[int] = []
        self.applied: list[Patch] = []
        self.datacollector = mesa.DataCollector(
            model_reporters={
                "tick": "tick",
                "pressure": lambda m: int(m.pressures.sum()),
                "patches": lambda m: len(m.applied),
                "focus": lambda m: tuple(m.focus_rows),
                "model_tier": lambda m: MODEL_CHAIN[m.tier] if len(m.skills) > 1 else "fixed",
            },
        )
        self.rows_log: list[dict] = []
        self._log_rows()
        self.datacollector.collect(self)
        self.running = self.initial_pressure > 0

    # --- one tick -------------------------------------------------------------------------------------------
    def step(self) -> None:
        self.tick += 1
        self._decay()
        if self.strategy == "conversation":
            self.applied = self._converse()
        elif self.mode == "published":
            self.applied = self._published_tick()
        else:
            self.applied = self._paper_tick()
        for patch in self.applied:
            self._apply(patch)
        self.pressures = row_pressures(self.grid)
        self._escalate(int(self.pressures.sum()))
        self.history.append(self.grid.copy())
        self._log_rows()
        self.datacollector.collect(self)
        if self.solved or self.tick >= self.max_ticks:
            self.running = False

    def _decay(self) -> None:
        if self.mode == "paper" and self.decay:
            for region in self.regions:
                region.fitness *= math.exp(-self.rates[0])
                region.confidence *= math.exp(-self.rates[1])
        if self.mode == "paper" or self.decay:
            self.bank = [(c, v, w * EXAMPLE_EVAPORATION) for c, v, w in self.bank if w * EXAMPLE_EVAPORATION >= EXAMPLE_FLOOR]

    def _paper_tick(self) -> list[Patch]:
        self.focus_rows = self._choose_rows()
        views = [view for view in map(self.view, self.focus_rows) if target_cells(view)]
        if self.llm is None:
            proposals = [actor.propose(view, self.skill) for view in views for actor in self.agents]
        else:  # every actor's call at once (§3.3: proposals in parallel)
            calls = (actor.propose_async(view, self.skill) for view in views for actor in self.agents)
            proposals = aio.run(aio.gather_bounded(calls, aio.DEFAULT_CONCURRENCY))
        return self._select([p for p in proposals if p is not None])

    def _choose_rows(self) -> list[int]:
        live = [i for i in range(self.n) if self.actionable[i]]
        if not live:
            return []
        if self.strategy == "pressure_field":
            attention = {
                r.index: self.pressures[r.index] * (1 - r.fitness) for r in self.regions
                if r.index in live and r.confidence < self.settle_confidence
                and not (self.inhibition and r.inhibited_until > self.tick)
            }
            ranked = sorted((row for row, a in attention.items() if a > self.activation), key=lambda row: -attention[row])
            return ranked[: self.focus]
        if self.strategy == "hierarchical":
            empties = (self.grid == EMPTY).sum(axis=1)
            key = empties if empties.max() > 0 else self.pressures
            return [max(live, key=lambda row: (key[row], -row))]
        if self.strategy == "sequential":
            return [(self.tick - 1) % self.n]
        return [int(self.rng.integers(self.n))]  # random: any row

    def _select(self, proposals: list[Patch]) -> list[Patch]:
        """Validate every candidate on a fork; apply the best κ on distinct rows (through the gate, if on)."""
        scored = []
        for order, patch in enumerate(p for p in proposals if self.grid[p.row, p.column] != p.value):
            total_drop, row_drop = self._fork_drop(patch)
            if not self.gate or row_drop > 0:
                scored.append((-total_drop, order, patch))
        chosen, rows = [], set()
        for _, _, patch in sorted(scored, key=lambda item: item[:2]):
            if patch.row not in rows and len(chosen) < self.kappa:
                chosen.append(patch)
                rows.add(patch.row)
        return chosen

    def _fork_drop(self, patch: Patch) -> tuple[int, int]:
        """(total, row) pressure reduction of a patch, measured on a fork of the grid."""
        fork = self.grid.copy()
        fork[patch.row, patch.column] = patch.value
        after = row_pressures(fork)
        return int(self.pressures.sum() - after.sum()), int(self.pressures[patch.row] - after[patch.row])

    def _published_tick(self) -> list[Patch]:
        row = self._published_row()
        self.focus_rows = [row]
        view = self.view(row)
        empty = [c for c in range(self.n) if view.cells[c] == EMPTY and view.editable[c]]
        actors = self.agents.to_list()
        for k in range(min(8, 2 * len(empty))):
            asked = replace(view, targets=(empty[k % len(empty)],))
            patch = actors[k % len(actors)].propose(asked, self.skill)
            if patch is not None and (not self.gate or self._fork_drop(patch)[1] > 0):
                return [patch]  # the first proposal (through the gate: the first that lowers the row's pressure)
        return []

    def _published_row(self) -> int:
        if self.strategy == "pressure_field":
            return int(np.argmax(self.pressures))  # ties to the lowest index
        if self.strategy == "hierarchical":
            return int(np.argmax((self.grid == EMPTY).sum(axis=1)))
        if self.strategy == "sequential":
            return (self.tick - 1) % self.n
        return int(self.rng.integers(self.n))

    def _converse(self) -> list[Patch]:
        """Coordinator → (Proposer ⇄ Validator) × max_turns; an approved patch still passes the same gate."""
        board = conversation.Board(tuple(map(tuple, self.grid)), tuple(int(p) for p in self.pressures))
        row = self.roles.coordinator.decide(board)
        self.focus_rows = [row]
        view = self.view(row)
        history: list[str] = []
        rejected: set[tuple[int, int]] = set()
        for _ in range(self.max_turns):
            if not target_cells(view):
                return []
            patch = self.roles.proposer.decide(conversation.Turn(view, self.skill, tuple(history), frozenset(rejected)))
            if patch is None:
                return []
            history.append(f"PROPOSE position={patch.column} value={patch.value}")
            check = conversation.Check(patch, tuple(int(v) for v in self.grid[row]),
                                       tuple(int(v) for i, v in enumerate(self.grid[:, patch.column]) if i != row))
            if self.roles.validator.decide(check):
                history.append("APPROVE")
                changes = self.grid[row, patch.column] != patch.value
                return [patch] if changes and (not self.gate or self._fork_drop(patch)[1] > 0) else []
            history.append("REJECT")
            rejected.add((patch.column, patch.value))
        return []

    def _apply(self, patch: Patch) -> None:
        drop = self._fork_drop(patch)[0]
        self.grid[patch.row, patch.column] = patch.value
        region = self.regions[patch.row]
        if self.mode == "paper" and self.strategy == "pressure_field":
            region.fitness = min(region.fitness + self.boosts[0], 1.0)
            region.confidence = min(region.confidence + self.boosts[1], 1.0)
            if self.inhibition:
                region.inhibited_until = self.tick + self.inhibition_ticks
        if self.examples and drop > 0:
            self.bank.append((patch.column, patch.value, 1.0))

    def _escalate(self, pressure: int) -> None:
        """Up one model tier after ``patience`` ticks without progress (no new lowest pressure)."""
        self.stalled = 0 if pressure < self.best else self.stalled + 1
        self.best = min(self.best, pressure)
        if self.stalled >= self.patience and self.tier < len(self.skills) - 1:
            self.tier += 1
            self.stalled = 0

    # --- what actors see, and what the trial reports ----------------------------------------------------------
    def view(self, row: int) -> RowView:
        """Row ``row`` as its actors see it (§3.5): its cells, its available values, its pressure and state."""
        cells = tuple(int(v) for v in self.grid[row])
        available, conflicting = [], []
        for column in range(self.n):
            others = {v for c, v in enumerate(cells) if c != column}
            in_column = {int(v) for i, v in enumerate(self.grid[:, column]) if i != row}
            available.append(tuple(v for v in range(1, self.n + 1) if v not in others | in_column))
            conflicting.append(cells[column] != EMPTY and cells[column] in others | in_column)
        region = self.regions[row]
        return RowView(
            row=row, n=self.n, cells=cells, editable=tuple(bool(e) for e in self.editable[row]),
            available=tuple(available), conflicting=tuple(conflicting), pressure=int(self.pressures[row]),
            fitness=region.fitness, confidence=region.confidence,
            examples=tuple((c, v) for c, v, _ in self.bank) if self.examples else (),
        )

    @property
    def actionable(self) -> np.ndarray:
        """Per row: whether a patch can change something — an editable cell that is empty or in conflict."""
        return (((self.grid == EMPTY) | conflicts(self.grid)) & self.editable).any(axis=1)

    @property
    def skill(self) -> float:
        return self.skills[self.tier]

    @property
    def solved(self) -> bool:
        return int(self.pressures.sum()) == 0

    def _log_rows(self) -> None:
        for region in self.regions:
            self.rows_log.append({
                "tick": self.tick, "row": region.index, "pressure": int(self.pressures[region.index]),
                "fitness": region.fitness, "confidence": region.confidence,
                "inhibited": self.inhibition and region.inhibited_until > self.tick,
                "focus": region.index in self.focus_rows,
                "patched": any(p.row == region.index for p in self.applied),
            })

    def run(self) -> "PressureField":
        while self.running:
            self.step()
        return self

    def policies(self) -> list:
        roles = [self.roles.coordinator, self.roles.proposer, self.roles.validator] if self.roles else []
        return [*(actor.policy for actor in self.agents), *roles]

    def result(self) -> dict:
        """The trial's outcome: solved, ticks, initial and final pressure, the model tier reached, LLM use."""
        return {
            "solved": self.solved, "ticks": self.tick, "initial_pressure": self.initial_pressure,
            "final_pressure": int(self.pressures.sum()), "final_tier": MODEL_CHAIN[self.tier] if len(self.skills) > 1 else "fixed",
            "llm_calls": self.llm_calls, "llm_fallbacks": self.llm_fallbacks,
        }


def ticks_frame(model: PressureField) -> pd.DataFrame:
    """One row per tick: tick, pressure, patches applied, focus rows, model tier."""
    return model.datacollector.get_model_vars_dataframe().reset_index(drop=True)


def rows_frame(model: PressureField) -> pd.DataFrame:
    """One row per tick and grid row: pressure, fitness, confidence, inhibited, focus, patched."""
    return pd.DataFrame(model.rows_log)


def check_parameters(p: dict) -> None:
    """Clear errors for parameters that make no sense."""
    check_size(p["n"])
    if not 0 <= p["empty"] <= p["n"] ** 2:
        raise ValueError(f"empty={p['empty']}: a {p['n']}×{p['n']} grid has between 0 and {p['n'] ** 2} cells to empty")
    if p["strategy"] not in STRATEGIES:
        raise ValueError(f"unknown strategy {p['strategy']!r}; choose one of {', '.join(STRATEGIES)}")
    if p["mode"] not in MODES:
        raise ValueError(f"unknown mode {p['mode']!r}; choose 'paper' (the algorithm as written) or 'published' (the code)")
    for name in ("agents", "focus", "kappa", "max_ticks", "max_turns", "escalation_patience"):
        if p[name] < 1:
            raise ValueError(f"{name}={p[name]} must be at least 1")
    for name in ("decay_rate", "confidence_decay_rate", "inhibition_ticks", "fitness_boost", "confidence_boost"):
        if p[name] < 0:
            raise ValueError(f"{name}={p[name]} must not be negative")
    for name in ("skill", "validator_error", "settle_confidence"):
        if not 0 <= p[name] <= 1:
            raise ValueError(f"{name}={p[name]} must be in [0, 1]")
