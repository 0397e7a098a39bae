"""Deprecated: the module that was ``coordkit.sweep`` is :mod:`coordkit.sweeps`; ``coordkit.sweep`` is the function.

``from coordkit.sweep import sweep`` still works for this release, with a DeprecationWarning naming the new import,
``from coordkit import sweep`` (or ``from coordkit.sweeps import sweep``). This module goes in the next release, and
with it ``coordkit._Package``, which keeps ``coordkit.sweep`` the function when this module is imported.
"""

import warnings

from coordkit.sweeps import *  # noqa: F403 — the old module's names, for one release

warnings.warn(
    "coordkit.sweep the module is now coordkit.sweeps: import the function as `from coordkit import sweep` "
    "(or `from coordkit.sweeps import sweep, SweepError`)",
    DeprecationWarning,
    stacklevel=2,
    skip_file_prefixes=("<frozen importlib",),
)
