"""Composition: a protocol that enacts another by reference (Singh's BSPL, "protocol composition"), flattened as
the reference implementation flattens it (``bspl``'s ``Protocol.instance``).

``Sub(RoleA, RoleB, out x key, y)`` in a protocol's body binds ``Sub``'s roles, in their order, to the roles named
first, and ``Sub``'s public parameters, in their order, to the parameters named after them. Every message of
``Sub`` then belongs to the composite too, its sender and recipients played by the bound roles and its parameters
renamed to the bound ones (its private parameters keep their names); it is named ``Sub/message`` (``Sub2/...`` for
the second reference to the same protocol) and keeps its own adornments. A key of ``Sub`` stays a key: the bound
parameter is a key of the messages that come from it.
"""

from dataclasses import replace

from coordkit.bspl.protocol import MessageSchema, Parameter, Protocol, Reference


class CompositionError(ValueError):
    """A reference that cannot be enacted: ``line`` is where it is written."""

    def __init__(self, reason: str, line: int, hint: str = ""):
        self.reason, self.line, self.hint = reason, line, hint
        super().__init__(reason)


def compose(declared: dict[str, Protocol]) -> dict[str, Protocol]:
    """Every protocol of ``declared`` with the messages of the protocols it references added to its own."""
    done: dict[str, Protocol] = {}

    def composed(name: str, path: tuple[str, ...], line: int) -> Protocol:
        if name in path:
            cycle = " → ".join((*path[path.index(name) :], name))
            raise CompositionError(f"protocols refer to each other in a cycle: {cycle}", line, "a reference must end")
        if name not in done:
            protocol = declared[name]
            counts: dict[str, int] = {}
            added = []
            for reference in protocol.references:
                counts[reference.name] = counts.get(reference.name, 0) + 1
                instance = reference.name + (str(counts[reference.name]) if counts[reference.name] > 1 else "")
                sub = composed(reference.name, (*path, name), reference.line)
                added += _instantiate(protocol, sub, reference, instance)
            done[name] = replace(protocol, messages=protocol.messages + tuple(added))
        return done[name]

    return {name: composed(name, (), 0) for name in declared}


def _instantiate(parent: Protocol, sub: Protocol, reference: Reference, instance: str) -> list[MessageSchema]:
    arguments = reference.arguments
    wanted = len(sub.roles) + len(sub.parameters)
    if len(arguments) != wanted:
        raise CompositionError(
            f"'{reference.name}' takes {len(sub.roles)} roles and {len(sub.parameters)} parameters, "
            f"{wanted} arguments in all; {parent.name} gives {len(arguments)}",
            reference.line,
            f"write `{reference.name}({', '.join((*sub.roles, *sub.public_names))})` with your own names",
        )
    roles = {formal: actual.name for formal, actual in zip(sub.roles, arguments)}
    for formal, actual in roles.items():
        if actual not in parent.roles:
            raise CompositionError(
                f"'{reference.name}' gives its role {formal} to '{actual}', which {parent.name} does not declare",
                reference.line,
                f"{parent.name}'s roles are {', '.join(parent.roles)}",
            )
    bound = dict(zip(sub.parameters, arguments[len(sub.roles) :]))
    declared = {*parent.public_names, *parent.private}
    for formal, actual in bound.items():
        if actual.name not in declared:
            raise CompositionError(
                f"parameter '{actual.name}' bound to {reference.name}'s {formal.name} is not declared in {parent.name}",
                reference.line,
                "declare it in 'parameters' or 'private'",
            )
    names = {formal.name: actual.name for formal, actual in bound.items()}
    keys = {actual.name for formal, actual in bound.items() if formal.key or actual.key}
    return [
        replace(
            message,
            name=message.name if message.via else f"{instance}/{message.name}",
            sender=roles[message.sender],
            recipient=roles[message.recipient],
            recipients=tuple(roles[r] for r in message.recipients),
            parameters=tuple(_renamed(p, names, keys) for p in message.parameters),
            via=message.via or instance,
        )
        for message in sub.messages
    ]


def _renamed(parameter: Parameter, names: dict[str, str], keys: set[str]) -> Parameter:
    name = names.get(parameter.name, parameter.name)
    return Parameter(name, parameter.adornment, parameter.key or name in keys)
