"""BSPL's information semantics for one agent (Ahoy §2.1; Singh's BSPL): local histories, knowledge per enactment,
enabled messages, and the checks that keep every emission and reception consistent.

- An **instance** of a message schema binds each of its ``in`` and ``out`` parameters (never a ``nil`` one).
- An agent's **knowledge** for an enactment (a binding of key parameters) is the union of the payloads of the
  messages in its history whose own key bindings are part of that enactment's and agree with it: the knowledge of
  order o1 and item i1 includes what RequestLabel said about order o1 (nested keys, as in Logistics).
- A message is **enabled** for its sender in an enactment when every ``in`` parameter is known there and no ``out``
  or ``nil`` parameter is — and it has not been sent or received there already. Key parameters adorned ``out`` are
  fresh: a new enactment starts.
- **Emission** checks exactly that, and that a fresh key value is not in use; **reception** refuses an instance
  whose bindings conflict with what the agent already knows. A violation raises, and nothing is sent.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from coordkit.bspl.protocol import MessageSchema, Protocol


class ProtocolViolation(ValueError):
    """A message that would break the protocol's information constraints; it is not sent (or not accepted)."""


class EmissionViolation(ProtocolViolation):
    """An instance its sender may not send: an ``in`` unknown, an ``out`` or ``nil`` known, a key reused."""


class IntegrityViolation(ProtocolViolation):
    """A received instance whose bindings contradict what the receiver already knows."""


@dataclass(frozen=True)
class Instance:
    """A message instance: its schema and its bindings (``in`` and ``out`` parameters)."""

    schema: MessageSchema
    bindings: tuple[tuple[str, Any], ...]
    keys: tuple[str, ...] = ()  # the schema's key parameters (Protocol.keys_of)

    @classmethod
    def of(cls, protocol: Protocol, schema: MessageSchema | str, **bindings) -> "Instance":
        schema = protocol.message(schema) if isinstance(schema, str) else schema
        ordered = tuple((name, bindings[name]) for name in schema.names if name in bindings)
        return cls(schema, ordered, protocol.keys_of(schema))

    @property
    def payload(self) -> dict[str, Any]:
        return dict(self.bindings)

    @property
    def key_bindings(self) -> dict[str, Any]:
        payload = self.payload
        return {k: payload[k] for k in self.keys if k in payload}

    def __str__(self) -> str:
        args = ", ".join(f"{k}={v}" for k, v in self.bindings)
        return f"{self.schema.name}({args})"


@dataclass(frozen=True)
class Form:
    """An enabled message in one enactment: the ``in`` values the agent knows and the ``out`` values it must choose."""

    schema: MessageSchema
    known: tuple[tuple[str, Any], ...]
    missing: tuple[str, ...]

    def bind(self, protocol: Protocol, **outs) -> Instance:
        """The instance that binds the missing ``out`` parameters (KeyError naming any that are left out)."""
        absent = [name for name in self.missing if name not in outs]
        if absent:
            raise KeyError(f"{self.schema.name} needs values for {absent}")
        extra = sorted(set(outs) - set(self.missing))
        if extra:
            raise KeyError(f"{self.schema.name} has no out parameters {extra}; it needs {list(self.missing)}")
        return Instance.of(protocol, self.schema, **dict(self.known), **outs)


@dataclass
class LocalState:
    """One agent's view of one protocol: the roles it plays and every instance it sent or received."""

    protocol: Protocol
    roles: tuple[str, ...]
    history: list[Instance] = field(default_factory=list)

    def knowledge(self, context: Mapping[str, Any]) -> dict[str, Any]:
        """What the agent knows in the enactment identified by the key bindings ``context``."""
        known: dict[str, Any] = {}
        for instance in self.history:
            keys = instance.key_bindings
            if keys and all(name in context and context[name] == value for name, value in keys.items()):
                known.update(instance.payload)
        return known

    def contexts(self, schema: MessageSchema) -> list[dict[str, Any]]:
        """The enactments a message of ``schema`` could continue: one per known binding of its ``in`` keys (one
        fresh enactment when all its keys are ``out``)."""
        keys = self.protocol.keys_of(schema)
        bound = [k for k in keys if schema.adornment(k) == "in"]
        if not bound:
            return [{}]
        seen, found = set(), []
        for instance in self.history:
            payload = instance.payload
            if all(k in payload for k in bound):
                context = {k: payload[k] for k in bound}
                if tuple(context.items()) not in seen:
                    seen.add(tuple(context.items()))
                    found.append(context)
        return found

    def enabled(self) -> list[Form]:
        """Every message this agent's roles may send now, in every enactment it could continue."""
        forms = []
        for schema in (m for m in self.protocol.messages if m.sender in self.roles):
            for context in self.contexts(schema):
                known = self.knowledge(context) if context else {}
                if self._blocked(schema, known) or self._already(schema, context):
                    continue
                forms.append(Form(schema, tuple((n, known[n]) for n in schema.ins), tuple(schema.outs)))
        return forms

    def _blocked(self, schema: MessageSchema, known: Mapping[str, Any]) -> bool:
        return any(n not in known for n in schema.ins) or any(n in known for n in (*schema.outs, *schema.nils))

    def _already(self, schema: MessageSchema, context: Mapping[str, Any]) -> bool:
        """Whether ``schema`` was sent or received in this enactment (a fresh ``out`` key starts a new one)."""
        if any(schema.adornment(k) == "out" for k in self.protocol.keys_of(schema)):
            return False
        return bool(context) and any(
            i.schema.name == schema.name and all(i.payload.get(k) == v for k, v in context.items())
            for i in self.history
        )

    def check_emission(self, instance: Instance) -> None:
        """Raise :class:`EmissionViolation` unless this agent may send ``instance`` now."""
        schema, payload = instance.schema, instance.payload
        if schema.sender not in self.roles:
            raise EmissionViolation(f"{schema.name} is sent by {schema.sender}, not by {', '.join(self.roles)}")
        unbound = [n for n in (*schema.ins, *schema.outs) if n not in payload]
        if unbound:
            raise EmissionViolation(f"{instance} leaves {unbound} unbound")
        if any(n in payload for n in schema.nils):
            raise EmissionViolation(f"{instance} binds a nil parameter of {schema.name}")
        keys = self.protocol.keys_of(schema)
        context = {k: payload[k] for k in keys if schema.adornment(k) == "in"}
        known = self.knowledge(context) if context else {}
        for name in schema.ins:
            if name not in known:
                raise EmissionViolation(f"{instance}: 'in {name}' is not known in this enactment yet")
            if known[name] != payload[name]:
                raise EmissionViolation(f"{instance}: {name}={payload[name]!r} but this enactment has {known[name]!r}")
        for name in (*schema.outs, *schema.nils):
            if name in known:
                raise EmissionViolation(
                    f"{instance}: '{schema.adornment(name)} {name}' is already bound "
                    f"({known[name]!r}) in this enactment"
                )
        for name in (k for k in keys if schema.adornment(k) == "out"):
            if any(i.payload.get(name) == payload[name] for i in self.history):
                raise EmissionViolation(f"{instance}: key {name}={payload[name]!r} is already used; choose a fresh one")
        if self._already(schema, context or instance.key_bindings):
            raise EmissionViolation(f"{instance}: {schema.name} was already sent in this enactment")

    def check_reception(self, instance: Instance) -> None:
        """Raise :class:`IntegrityViolation` if ``instance`` contradicts what this agent knows."""
        known = self.knowledge(instance.key_bindings)
        clashes = {n: (known[n], v) for n, v in instance.bindings if n in known and known[n] != v}
        if clashes:
            detail = ", ".join(f"{n}: knows {old!r}, received {new!r}" for n, (old, new) in clashes.items())
            raise IntegrityViolation(f"{instance} conflicts with this agent's bindings ({detail})")

    def send(self, instance: Instance) -> Instance:
        self.check_emission(instance)
        self.history.append(instance)
        return instance

    def receive(self, instance: Instance) -> None:
        self.check_reception(instance)
        self.history.append(instance)
