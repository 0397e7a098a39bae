"""A run that does no work, importable by worker processes: what is left of its wall time is an engine's overhead."""


def nothing(seed: int) -> dict[str, int]:
    return {"value": seed}
