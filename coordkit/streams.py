"""Common random numbers: one seed, a named stream of random numbers for each purpose.

A model draws each kind of randomness (its population, its network, an opening offer, noise, a policy's own coin
flips) from a stream of its own, spawned from the run's seed by name: ``self.streams("network")``, or
``self.streams("noise", stage)`` for one stream per agent. Each model declares its streams and, for each, the
parameters that govern its draws (``random_streams``). Moving any other parameter leaves that stream's draws as they
were, so two runs at one seed compare the same population, network and noise under two settings: the variance
reduction simulation texts call *common random numbers* (Law, *Simulation Modeling and Analysis*, 5th ed., §11.2).
Per-agent streams go further: adding agents leaves the first agents' draws alone.

A stream is a :class:`numpy.random.Generator` over PCG64, seeded by a child of the run's
:class:`numpy.random.SeedSequence` whose spawn key is the purpose's name (hashed) followed by the given integers,
so streams are independent of each other and of the order in which they are first asked for.
"""

import hashlib
from collections.abc import Mapping

import numpy as np

MESA = "mesa"  # the stream Mesa's own ``model.rng`` and ``model.random`` are seeded from (activation order)


def root_sequence(rng) -> np.random.SeedSequence:
    """The seed sequence a run's streams spawn from, given ``rng`` as :func:`coordkit.parameters.check_rng` passes it:
    a seed, a seed sequence, None (fresh entropy from the system), or a generator or bit generator (one draw of it)."""
    if rng is None or isinstance(rng, int):
        return np.random.SeedSequence(rng)
    if isinstance(rng, np.random.SeedSequence):
        return rng
    generator = rng if isinstance(rng, np.random.Generator) else np.random.Generator(rng)
    return np.random.SeedSequence(generator.integers(2**32, size=4).tolist())


def purpose_word(purpose: str) -> int:
    """A 32-bit number naming ``purpose`` in a spawn key, the same on every machine and Python."""
    return int.from_bytes(hashlib.blake2b(purpose.encode(), digest_size=4).digest(), "little")


class Streams:
    """The named random streams of one run: ``streams("population")``, ``streams("noise", 3)``.

    ``declared`` maps each purpose to the parameters that govern its draws; asking for a purpose not declared is a
    ``KeyError`` naming it and ``owner``. The same purpose and key give the same generator object for the whole run.
    """

    def __init__(self, root: np.random.SeedSequence, declared: Mapping[str, tuple[str, ...]], owner: str):
        self.root = root
        self.declared = declared
        self.owner = owner
        self._open: dict[tuple, np.random.Generator] = {}

    def __call__(self, purpose: str, *key: int) -> np.random.Generator:
        """The generator of ``purpose`` (for the agent or item ``key``, non-negative integers)."""
        name = (purpose, *key)
        if name not in self._open:
            self._open[name] = self._make(purpose, key, self.sequence(purpose, *key))
        return self._open[name]

    def sequence(self, purpose: str, *key: int) -> np.random.SeedSequence:
        """The seed sequence of ``purpose`` and ``key``: for code that seeds a generator of its own from it (a fast
        vectorised twin of a model, a worker process)."""
        if purpose not in self.declared:
            raise KeyError(
                f"{self.owner} draws from the random stream {purpose!r}, which its random_streams does not declare: "
                f"add {purpose!r} there with the parameters that govern its draws"
            )
        if any(isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 0 for k in key):
            raise ValueError(f"a stream's key is non-negative integers (an agent's index), got {key!r} for {purpose!r}")
        spawn_key = (*self.root.spawn_key, purpose_word(purpose), *(int(k) for k in key))
        return np.random.SeedSequence(self.root.entropy, spawn_key=spawn_key, pool_size=self.root.pool_size)

    def _make(self, purpose: str, key: tuple[int, ...], sequence: np.random.SeedSequence) -> np.random.Generator:
        """A new generator for one stream (the contract tests record its draws by overriding this)."""
        return np.random.Generator(np.random.PCG64(sequence))


def stream_sequence(seed: int, purpose: str, *key: int) -> np.random.SeedSequence:
    """The seed sequence a model seeded with ``seed`` gives ``purpose`` and ``key``, without a model: for the
    vectorised twins of models (``coordkit.delay.fast``, ``coordkit.rep.movies.fast``), which must draw as they do."""
    return Streams(root_sequence(seed), {purpose: ()}, owner="stream_sequence").sequence(purpose, *key)
