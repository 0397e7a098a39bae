"""Pressure-field coordination on a Latin square as a Mesa model, with the paper's baselines and the published
code's variant.

**The paper's algorithm** (``mode="paper"``, §4.3), per tick:

1. *Decay*: every row's fitness and confidence shrink, f ← f·e^(−λ_f), γ ← γ·e^(−λ_γ) (eq. 4);
2. *Activation*: the rows that get attention (the strategy's, :mod:`coordkit.pressure.strategies`);
3. *Proposal*: every actor proposes a patch for every activated row, from that row's local observation only;
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
actor), random (any row), and conversation (a Coordinator, a Proposer and a Validator, Appendix B).

**The published code** (``mode="published"``): one row per tick chosen by the strategy (pressure-field: highest
pressure, ties to the lowest index), min(8, 2·#empty) proposals for that row's empty cells, the FIRST that lowers
the row's pressure applied; its "decay" switch evaporates the example bank (×0.95 a tick) and turns that acceptance
gate on — with it off, the first proposal goes in; the agent count is a label.

**The code's counting** (``counting="code"``, either mode): the published code counts a column conflict once per
pair of clashing rows (the paper's text: once per clashing cell), and its kernel judges the pressure-field
strategy's patches with the weights 1/2/2 (:data:`~coordkit.pressure.pressure.KERNEL_WEIGHTS`); the rows' and the
artifact's pressure, which the strategies select rows by and the trial reports, keep the weights 1/10/10. The kit's
patches write one value into one cell, so they fill at most one hole, and a change in duplicates or conflicts
outweighs a hole at 2 as at 10: the kernel's weights rank patches and pass the gate as 1/10/10 would (a policy's
patch that empties a cell aside). What the code's counting changes is the cost of a value that stands three or
more times in a column: the rows' pressures, hence the row a strategy picks, how much a patch lowers them, and
when escalation sees progress.
"""

import math
from dataclasses import dataclass, replace

import mesa
import numpy as np
import pandas as pd

from coordkit.llm import LLMClient
from coordkit.model import Model
from coordkit.parameters import Choice, Flag, Instance, Integer, ParameterError, Parameters, PolicyChoice, Real
from coordkit.policies import Policy, decision_round
from coordkit.policy_registry import fresh_policy
from coordkit.pressure.agents import Actor
from coordkit.pressure.llm_policies import actor_policy, coordinator_policy, proposer_policy, validator_policy
from coordkit.pressure.policies import (
    MODEL_CHAIN,
    Assignment,
    Patch,
    RowObservation,
    RuleActor,
    RuleCoordinator,
    RuleProposer,
    RuleValidator,
    StudentActor,
    escalation_skills,
    target_cells,
)
from coordkit.pressure.pressure import COUNTINGS, KERNEL_WEIGHTS, lines, row_pressure
from coordkit.pressure.puzzles import EMPTY, MAX_SIZE, MIN_SIZE, Puzzle, make_puzzle, puzzle_for
from coordkit.pressure.strategies import STRATEGIES, Roles
from coordkit.renamed import warn_renamed

MODES = ("paper", "published")
EXAMPLE_EVAPORATION = 0.95
EXAMPLE_FLOOR = 0.1
PUBLISHED_PROPOSALS = 8  # the published code asks min(8, 2·#empty) proposals a tick


def _actors_to_play_a_policy(p: dict) -> None:
    if p["policy"] is not None and p["strategy"] == "conversation":
        raise ParameterError(
            "policy: the conversation baseline has no actors for a policy to play (its Proposer and Validator are "
            "its own); choose a row strategy (pressure_field, hierarchical, sequential, random) or policy=None"
        )


def _holes_fit_the_grid(p: dict) -> None:
    if p["empty"] > p["n"] ** 2:
        raise ParameterError(
            f"empty={p['empty']}: a {p['n']}×{p['n']} grid (n={p['n']}) has at most {p['n'] ** 2} "
            "cells to empty; ask for fewer empty cells or a larger n"
        )


@dataclass
class Region:
    """A row and its auxiliary state h_i (§3.1): fitness f, confidence γ, and the tick its inhibition ends."""

    index: int
    fitness: float = 0.0
    confidence: float = 0.0
    inhibited_until: int = 0


class PressureField(Model):
    """One trial: a puzzle with exactly one completion (drawn from the seed), a coordination strategy and its
    actors, for at most ``max_ticks`` ticks; it stops when the square is solved.

    With ``llm``, the actors (and the conversation's roles) ask the LLM with the paper's prompts; an unusable reply
    falls back to the rules, counted in ``llm_fallbacks``. In paper mode a tick's proposals are asked concurrently
    (§3.3: proposals in parallel); the published code asks one after another and stops at the first acceptable one.
    A cell of ``grid`` set by hand between ticks is measured at the next tick's start (its pressures, what actors
    see).
    """

    parameters = Parameters(
        Integer(
            "n",
            7,
            MIN_SIZE,
            MAX_SIZE,
            doc="grid size: an n×n Latin square (the paper: 7, and 5 for easy puzzles)",
            slider=(4, 9),
        ),
        Integer(
            "empty",
            7,
            0,
            MAX_SIZE**2,
            doc="empty cells of the puzzle, at most n²; the puzzle keeps exactly one completion (the paper: 7 or 8 on "
            "7×7, 5 on 5×5)",
            unit="cells",
            slider=(1, 30),
        ),
        Choice(
            "strategy",
            "pressure_field",
            tuple(STRATEGIES),
            labels={name: name.replace("_", "-") for name in STRATEGIES},
            doc="how rows are chosen: pressure gradients, a manager, in turn, at random, or a conversation of three "
            "roles (§6.1.2)",
        ),
        Choice(
            "mode",
            "paper",
            MODES,
            doc="the algorithm as the paper writes it (§4.3), or as the authors' published code plays it",
        ),
        Choice(
            "counting",
            "paper",
            COUNTINGS,
            doc="how pressure counts a column conflict: once per clashing cell (the paper's §6.1.1), or once per pair "
            "of clashing rows, with the kernel's 1/2/2 weights judging pressure-field's patches (the published code)",
        ),
        Integer(
            "agent_count",
            4,
            1,
            64,
            doc="parallel actors, each proposing one patch per activated row per tick (sequential uses one, the "
            "conversation none; the paper: 1 to 32)",
            slider=(1, 16),
        ),
        Real(
            "skill",
            0.1,
            0,
            1,
            doc="the rule-based actors' chance of proposing an available value (stands in for model size; 0.1 plays "
            "the 0.5B model)",
        ),
        Real(
            "failure",
            0.0,
            0,
            1,
            doc="the rule-based actors' (and Proposer's) chance that a proposal is unusable, no patch at all (the "
            "small models' unusable replies; coordkit.pressure.calibration fits it to the paper's Table 2)",
        ),
        Flag(
            "escalation",
            True,
            doc="move up the model chain (0.5B → 14B, +0.1 skill a tier) after escalation_patience ticks without a "
            "new lowest total pressure (the published code)",
        ),
        Integer(
            "escalation_patience",
            20,
            1,
            1000,
            doc="ticks without progress before the next model tier (20)",
            unit="ticks",
            slider=(1, 50),
        ),
        Flag(
            "decay",
            True,
            doc="fitness and confidence decay every tick (eq. 4); in published mode, the code's switch: the example "
            "bank evaporates and the acceptance gate is on",
        ),
        Real("decay_rate", 0.1, 0, 5, doc="λ_f of eq. 4 (the paper: 0.1)", unit="1/tick", slider=(0, 0.5)),
        Real(
            "confidence_decay_rate",
            0.1,
            0,
            5,
            doc="λ_γ of eq. 4 (not given in the paper: 0.1)",
            unit="1/tick",
            slider=(0, 0.5),
        ),
        Flag("inhibition", True, doc="a patched row is not activated again for inhibition_ticks ticks"),
        Integer(
            "inhibition_ticks", 4, 0, 1000, doc="τ_inh, counting the tick of the patch (the paper: 4)", slider=(0, 10)
        ),
        Real("fitness_boost", 0.5, 0, 1, doc="Δ_f of eq. 5: a patched row's fitness grows by it (capped at 1)"),
        Real("confidence_boost", 0.5, 0, 1, doc="Δ_γ of eq. 5: a patched row's confidence grows by it (capped at 1)"),
        Real("settle_confidence", 0.9, 0, 1, doc="a row this confident counts as settled and is not activated"),
        Real(
            "activation",
            0.0,
            0,
            1000,
            doc="τ_act: a row is activated only if its attention P_i·(1 − f_i) is above it (0: any pressure)",
            step=0.5,
            slider=(0, 20),
        ),
        Integer("focus", 1, 1, MAX_SIZE, doc="rows activated per tick (the paper's runs: 1)", unit="rows"),
        Integer(
            "kappa",
            1,
            1,
            MAX_SIZE,
            doc="κ: patches applied per tick, on distinct rows (the paper's runs: 1)",
            unit="patches",
        ),
        Flag(
            "acceptance_gate",
            None,
            optional="off in paper mode (§4.3 has no such gate), on in published mode exactly when decay is",
            doc="apply only patches that lower their row's pressure (Appendix B's rejection of patches that increase "
            "violations)",
        ),
        Flag("examples", False, doc="remember successful fixes and show them to the actors (the ablation's E)"),
        Integer("max_ticks", 100, 1, 10_000, doc="the budget of ticks (the paper: 100)", slider=(20, 200)),
        Real(
            "validator_error",
            0.2,
            0,
            1,
            doc="the conversation's rule-based Validator says the opposite of the truth with this probability",
        ),
        Integer(
            "max_turns",
            5,
            1,
            100,
            doc="the conversation's Proposer ⇄ Validator turns per tick (Appendix B: 5)",
            unit="turns",
            slider=(1, 10),
        ),
        PolicyChoice(
            "policy",
            None,
            (),
            optional="the skill-based rule actors (RuleActor), or the LLM's",
            doc="how every actor proposes a patch for the row it is given: a function of an Assignment (the row's "
            "RowObservation and the tier's skill) that returns Patch(row, column, value), a (column, value) pair or "
            "None, a Policy, or a name given to coordkit.register_policy; the strategy still picks the rows",
        ),
        Instance(
            "llm",
            None,
            LLMClient,
            optional="rule-based actors and roles, no calls",
            doc="the LLM client the actors (and the conversation's roles) ask",
        ),
        relations=(_holes_fit_the_grid, _actors_to_play_a_policy),
    )

    random_streams = {
        "puzzle": ("n", "empty"),  # the square and its holes: every strategy and setting at a seed gets this puzzle
        "actor": (),  # actor k's own, five uniforms a proposal (RuleActor): actor k keeps them as agent_count moves
        "temperature": (),  # LLM actor k's own, its sampling temperatures
        "rows": (),  # the random baseline's row, one uniform a tick
        "proposer": (),  # the conversation's Proposer, five uniforms an attempt
        "validator": (),  # the conversation's Validator, one uniform a check
    }

    def __init__(self, *, rng=None, **params):
        super().__init__(rng=rng, **params)
        self.puzzle = self._draw_puzzle(rng)
        self.grid = self.puzzle.grid.copy()
        self.editable = self.puzzle.grid == EMPTY
        self.editable_cells = [tuple(row) for row in self.editable.tolist()]  # per row, as actors see it
        self.coordination = STRATEGIES[self.strategy]
        self.gate = (self.mode == "published" and self.decay) if self.acceptance_gate is None else self.acceptance_gate
        kernel = self.counting == "code" and self.strategy == "pressure_field"
        self.judge_weights = KERNEL_WEIGHTS if kernel else None  # the weights a patch is judged by (None: 1/10/10)
        self.bank: list[tuple[int, int, float]] = []  # remembered fixes: (column, value, weight)
        self.skills = escalation_skills(self.skill) if self.escalation else (self.skill,)
        self.tier, self.stalled = 0, 0
        self.regions = [Region(i) for i in range(self.n)]
        self.actors = [Actor(self, self._actor_policy(k)) for k in range(self.coordination.actors(self.agent_count))]
        self.roles = self._conversation_roles() if self.strategy == "conversation" else None
        self.decay_factors = (math.exp(-self.decay_rate), math.exp(-self.confidence_decay_rate))  # eq. 4, per tick
        self._measure_grid()
        self.initial_pressure = self.best = self.pressure
        self.history: list[np.ndarray] = [self.grid.copy()]
        self.focus_rows: list[int] = []
        self.applied: list[Patch] = []
        self.datacollector = mesa.DataCollector(
            model_reporters={
                "tick": "steps",
                "pressure": "pressure",
                "patches": lambda m: len(m.applied),
                "focus": lambda m: tuple(m.focus_rows),
                "model_tier": lambda m: m.model_tier,
            },
        )
        self.rows_log: list[tuple] = []
        self._log_rows()
        self.datacollector.collect(self)
        self.running = self.initial_pressure > 0

    def _draw_puzzle(self, rng) -> Puzzle:
        """The trial's puzzle from its "puzzle" stream; made once per seed (:func:`puzzle_for`) when ``rng`` is one."""
        if isinstance(rng, int | np.integer):
            return puzzle_for(self.n, self.empty, int(rng))
        return make_puzzle(self.n, self.empty, self.streams("puzzle"))

    def _actor_policy(self, k: int) -> Policy:
        """Actor ``k``'s policy, drawing from its own streams: a student's (``policy``), the rule actor's, or the
        LLM's falling back to the rule."""
        rule = RuleActor(self.streams("actor", k), failure=self.failure)
        if self.policy is not None:
            return StudentActor(fresh_policy(self.policy, type(self), self.streams("actor", k)), rule)
        return rule if self.llm is None else actor_policy(self.llm, rule, self.streams("temperature", k))

    def _conversation_roles(self) -> Roles:
        rules = Roles(
            RuleCoordinator(),
            RuleProposer(self.streams("proposer"), failure=self.failure),
            RuleValidator(self.streams("validator"), self.validator_error),
        )
        if self.llm is None:
            return rules
        return Roles(
            coordinator_policy(self.llm, rules.coordinator),
            proposer_policy(self.llm, rules.proposer),
            validator_policy(self.llm, rules.validator),
        )

    # --- one tick -------------------------------------------------------------------------------------------
    def step(self) -> None:
        if self.grid.tobytes() != self.history[-1].tobytes():  # a cell set by hand since the last tick
            self._measure_grid()
        self.apply_decay()
        self.applied = self.coordination.tick(self)
        for patch in self.applied:
            self._apply(patch)
        if self.applied:
            self._measure_grid()
        self.escalate(self.pressure)
        self.history.append(self.grid.copy())
        self._log_rows()
        self.datacollector.collect(self)
        if self.solved or self.steps >= self.max_ticks:
            self.running = False

    def apply_decay(self) -> None:
        """Eq. 4 in paper mode (when ``decay`` is on); the example bank evaporates in paper mode and, in published
        mode, when the code's decay switch is on."""
        if self.mode == "paper" and self.decay:
            fitness_factor, confidence_factor = self.decay_factors
            for region in self.regions:
                region.fitness *= fitness_factor
                region.confidence *= confidence_factor
        if self.mode == "paper" or self.decay:
            self.bank = [
                (c, v, w * EXAMPLE_EVAPORATION) for c, v, w in self.bank if w * EXAMPLE_EVAPORATION >= EXAMPLE_FLOOR
            ]

    def paper_tick(self, rows: list[int]) -> list[Patch]:
        """§4.3 steps 3–5 on the activated ``rows``: every actor proposes for every row (one round of decisions,
        concurrent with LLM actors), and the best κ validated patches on distinct rows are chosen."""
        self.focus_rows = rows
        observations = [seen for seen in map(self.row_observation, rows) if target_cells(seen)]
        asked = [Assignment(seen, self.tier_skill) for seen in observations]
        assignments = [assignment for assignment in asked for _ in self.actors]
        deciders = [actor for _ in observations for actor in self.actors]
        proposals = decision_round("propose", deciders, assignments, concurrent=self.llm is not None)
        return self._select([p for p in proposals if p is not None])

    def published_tick(self, row: int) -> list[Patch]:
        """The published code's tick on ``row``: up to min(8, 2·#empty) proposals for its empty cells, asked one
        after another; the first acceptable one (through the gate, if on) is applied."""
        self.focus_rows = [row]
        seen = self.row_observation(row)
        empty = [c for c in range(self.n) if seen.cells[c] == EMPTY and seen.editable[c]]
        for k in range(min(PUBLISHED_PROPOSALS, 2 * len(empty))):
            asked = replace(seen, targets=(empty[k % len(empty)],))
            patch = self.actors[k % len(self.actors)].propose(Assignment(asked, self.tier_skill))
            if patch is not None and self.passes_gate(patch):
                return [patch]
        return []

    def _select(self, proposals: list[Patch]) -> list[Patch]:
        """Validate every candidate on a fork; apply the best κ on distinct rows (through the gate, if on). Equal
        candidates (the same value for the same cell) are measured once: they would score alike."""
        scored, measured = [], {}
        for order, patch in enumerate(p for p in proposals if self.cells[p.row][p.column] != p.value):
            cell = (patch.row, patch.column, patch.value)
            if cell not in measured:
                measured[cell] = self.fork_drop(patch)
            total_drop, row_drop = measured[cell]
            if not self.gate or row_drop > 0:
                scored.append((-total_drop, order, patch))
        chosen, rows = [], set()
        for _, _, patch in sorted(scored, key=lambda item: item[:2]):
            if patch.row not in rows and len(chosen) < self.kappa:
                chosen.append(patch)
                rows.add(patch.row)
        return chosen

    def fork_drop(self, patch: Patch) -> tuple[int, int]:
        """(total, row) pressure reduction of a patch, measured on a fork of the grid. Only the rows whose cell in
        the patch's column holds the value it replaces or the one it writes can change pressure (the patched row
        among them; another row only through that column's conflicts): those rows are measured. Pressure is counted
        as ``counting`` says and weighed by ``judge_weights`` (the code's kernel, or 1/10/10)."""
        row, column, value = patch.row, patch.column, patch.value
        held = self.columns[column]
        patched_row = [*self.cells[row][:column], value, *self.cells[row][column + 1 :]]
        fork_columns = self.columns.copy()  # the fork's columns: only the patched one differs
        fork_columns[column] = (*held[:row], value, *held[row + 1 :])
        changing = [i for i, old in enumerate(held) if old in (held[row], value)]
        after = {
            i: row_pressure(patched_row if i == row else self.cells[i], fork_columns, self.counting, self.judge_weights)
            for i in changing
        }
        before = self._judged_pressures
        return sum(before[i] - after[i] for i in changing), before[row] - after[row]

    def passes_gate(self, patch: Patch) -> bool:
        """Whether the acceptance gate lets ``patch`` in: always when off, else if it lowers its row's pressure."""
        return not self.gate or self.fork_drop(patch)[1] > 0

    def _apply(self, patch: Patch) -> None:
        remembered = self.examples and self.fork_drop(patch)[0] > 0  # a successful fix, for the example bank
        self.grid[patch.row, patch.column] = patch.value
        region = self.regions[patch.row]
        if self.mode == "paper" and self.coordination.reinforces:
            region.fitness = min(region.fitness + self.fitness_boost, 1.0)
            region.confidence = min(region.confidence + self.confidence_boost, 1.0)
            if self.inhibition:
                region.inhibited_until = self.steps + self.inhibition_ticks
        if remembered:
            self.bank.append((patch.column, patch.value, 1.0))

    def escalate(self, pressure: int) -> None:
        """Up one model tier after ``escalation_patience`` ticks without progress (no new lowest pressure)."""
        self.stalled = 0 if pressure < self.best else self.stalled + 1
        self.best = min(self.best, pressure)
        if self.stalled >= self.escalation_patience and self.tier < len(self.skills) - 1:
            self.tier += 1
            self.stalled = 0

    # --- what actors see, and what the trial reports ----------------------------------------------------------
    def row_observation(self, row: int) -> RowObservation:
        """Row ``row`` as its actors see it (§3.5): its cells, its available values, its pressure and state."""
        cells, available, conflicting = self._row_contents(row)
        region = self.regions[row]
        return RowObservation(
            row=row,
            n=self.n,
            cells=cells,
            editable=self.editable_cells[row],
            available=available,
            conflicting=conflicting,
            pressure=int(self.pressures[row]),
            fitness=region.fitness,
            confidence=region.confidence,
            examples=tuple((c, v) for c, v, _ in self.bank) if self.examples else (),
        )

    def view(self, row: int) -> RowObservation:
        """Deprecated: :meth:`row_observation`, under its old name for one release."""
        warn_renamed("PressureField.view(row)", "PressureField.row_observation(row)")
        return self.row_observation(row)

    def _row_contents(self, row: int) -> tuple[tuple[int, ...], tuple[tuple[int, ...], ...], tuple[bool, ...]]:
        """Row ``row``'s cells, each position's available values and whether its value conflicts: worked out once
        per state of the grid (ticks without a patch see the same)."""
        if row not in self._contents:
            cells = tuple(self.cells[row])
            available, conflicting = [], []
            for column, line in enumerate(self.columns):
                taken = {*cells[:column], *cells[column + 1 :], *line[:row], *line[row + 1 :]}  # in its row or column
                available.append(tuple([v for v in range(1, self.n + 1) if v not in taken]))  # a list: faster
                conflicting.append(cells[column] != EMPTY and cells[column] in taken)
            self._contents[row] = cells, tuple(available), tuple(conflicting)
        return self._contents[row]

    def _measure_grid(self) -> None:
        """What the grid's state gives until a patch changes it: the grid's rows and columns as plain ints
        (``cells``, ``columns``), each row's pressure P_i (``pressures``) and the artifact's, their sum
        (``pressure``, eq. 3), each row's pressure as a patch is judged by it (``judge_weights``), whether a patch
        can change something in a row (``actionable``: an editable cell that is empty or in conflict), and each
        row's contents as its actors see them (:meth:`_row_contents`, worked out when first asked)."""
        self.cells, self.columns = lines(self.grid)
        self._plain_pressures = [row_pressure(line, self.columns, self.counting) for line in self.cells]
        self._judged_pressures = (
            self._plain_pressures
            if self.judge_weights is None
            else [row_pressure(line, self.columns, self.counting, self.judge_weights) for line in self.cells]
        )
        self.pressures = np.array(self._plain_pressures)
        self.pressure = sum(self._plain_pressures)
        self.actionable = np.array(
            [
                pressure > 0  # a row without pressure has no hole and no conflict
                and any(
                    editable and (value == EMPTY or line.count(value) > 1 or column.count(value) > 1)
                    for value, editable, column in zip(line, editables, self.columns)
                )
                for line, editables, pressure in zip(self.cells, self.editable_cells, self._plain_pressures)
            ]
        )
        self._contents: dict[int, tuple] = {}

    @property
    def tier_skill(self) -> float:
        """The skill of the model tier in play (``skill`` until escalation moves up)."""
        return self.skills[self.tier]

    @property
    def model_tier(self) -> str:
        """The model of the escalation chain in play ("fixed" without escalation)."""
        return MODEL_CHAIN[self.tier] if len(self.skills) > 1 else "fixed"

    @property
    def solved(self) -> bool:
        return self.pressure == 0

    def _log_rows(self) -> None:
        """The rows' state at the end of the tick, kept as it stands and laid out by :meth:`rows_frame`."""
        states = [(r.fitness, r.confidence, r.inhibited_until) for r in self.regions]
        patched = {p.row for p in self.applied}
        self.rows_log.append((self.steps, self.pressures, states, tuple(self.focus_rows), patched))

    def policies(self) -> list[Policy]:
        """The actors' policies, and the conversation's roles."""
        roles = self.roles.policies() if self.roles else []
        return [*(actor.policy for actor in self.actors), *roles]

    def frame(self) -> pd.DataFrame:
        """One row per tick (tick 0 is the initial state).

        Columns: tick; pressure (the artifact's, eq. 3, after the tick); patches (applied this tick); focus (the
        rows activated, a tuple); model_tier (the model of the escalation chain in play, or "fixed").
        """
        return self.datacollector.get_model_vars_dataframe().reset_index(drop=True)

    def rows_frame(self) -> pd.DataFrame:
        """One row per tick and grid row (tick 0 is the initial state).

        Columns: tick; row; pressure (P_i after the tick); fitness and confidence (f_i, γ_i); inhibited (at the end
        of the tick); focus (activated this tick); patched (a patch was applied to it this tick).
        """
        return pd.DataFrame(
            {
                "tick": tick,
                "row": row,
                "pressure": int(pressures[row]),
                "fitness": fitness,
                "confidence": confidence,
                "inhibited": self.inhibition and inhibited_until > tick,
                "focus": row in focus,
                "patched": row in patched,
            }
            for tick, pressures, states, focus, patched in self.rows_log
            for row, (fitness, confidence, inhibited_until) in enumerate(states)
        )

    def summary(self) -> dict:
        """The trial's outcome: solved, ticks, initial and final pressure, the model tier reached, LLM use."""
        return {
            "solved": self.solved,
            "ticks": self.steps,
            "initial_pressure": self.initial_pressure,
            "final_pressure": self.pressure,
            "final_tier": self.model_tier,
            "llm_calls": self.llm_calls,
            "llm_fallbacks": self.llm_fallbacks,
        }
