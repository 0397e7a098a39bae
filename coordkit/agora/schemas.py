"""The kit's subset of JSON Schema, for Agora's tasks (:mod:`~coordkit.agora.tasks`) and protocol documents
(:mod:`~coordkit.agora.routines`): ``type``, ``properties``, ``required``, ``enum``, ``items``, ``minimum`` and
``maximum``, with ``title`` and ``description`` as annotations.

:func:`check_schema` says whether a schema is in the subset; :func:`validate` whether a value fits a schema. The
rule-based programmer copies :func:`validate` into every routine it writes, so it uses built-ins only and raises a
plain ``ValueError`` whose message starts with where the value is (``$.menu[1].price is '3', not of type number``).
"""

import json
import math
from typing import Any

TYPES = ("object", "array", "string", "number", "integer", "boolean", "null")
KEYWORDS = ("type", "properties", "required", "enum", "items", "minimum", "maximum", "title", "description")


class SchemaError(ValueError):
    """A schema outside the subset, or a protocol document whose schema block is missing or malformed."""


def check_schema(schema: Any, where: str) -> None:
    """SchemaError unless ``schema`` is in the kit's subset of JSON Schema (``KEYWORDS``)."""
    if not isinstance(schema, dict):
        raise SchemaError(f"{where} is {preview(schema)}, not a JSON Schema (an object)")
    unknown = sorted(set(schema) - set(KEYWORDS))
    if unknown:
        raise SchemaError(f"{where}: {unknown} are not in the kit's subset of JSON Schema, {list(KEYWORDS)}")
    if "type" in schema and schema["type"] not in TYPES:
        raise SchemaError(f"{where}.type is {preview(schema['type'])}, not one of {list(TYPES)}")
    properties = schema.get("properties", {})
    if not isinstance(properties, dict):
        raise SchemaError(f"{where}.properties is {preview(properties)}, not an object of field schemas")
    for name, field_schema in properties.items():
        check_schema(field_schema, f"{where}.properties.{name}")
    required = schema.get("required", [])
    if not (isinstance(required, list) and all(name in properties for name in required)):
        raise SchemaError(f"{where}.required is {preview(required)}, not a list of names among its properties")
    if "enum" in schema and not (isinstance(schema["enum"], list) and schema["enum"]):
        raise SchemaError(f"{where}.enum is {preview(schema['enum'])}, not a non-empty list of values")
    if "items" in schema:
        check_schema(schema["items"], f"{where}.items")
    for bound in ("minimum", "maximum"):
        value = schema.get(bound, 0)
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise SchemaError(f"{where}.{bound} is {preview(value)}, not a finite number")
    for annotation in ("title", "description"):
        if not isinstance(schema.get(annotation, ""), str):
            raise SchemaError(f"{where}.{annotation} is {preview(schema[annotation])}, not text")


def validate(value, schema, where="$"):
    """Raise ValueError unless ``value`` fits ``schema``, in the kit's subset of JSON Schema.

    The SchemaProgrammer copies this function into every routine it writes, so it uses built-ins only.
    """
    kind = schema.get("type")
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    fits = {
        None: True,
        "object": isinstance(value, dict),
        "array": isinstance(value, list),
        "string": isinstance(value, str),
        "number": is_number,
        "integer": is_number and (isinstance(value, int) or value.is_integer()),
        "boolean": isinstance(value, bool),
        "null": value is None,
    }[kind]
    shown = repr(value)[:60]
    if not fits:
        raise ValueError(f"{where} is {shown}, not of type {kind}")
    enum = schema.get("enum")
    if enum is not None and not any(value == o and isinstance(value, bool) == isinstance(o, bool) for o in enum):
        raise ValueError(f"{where} is {shown}, not one of {enum}")
    if is_number and "minimum" in schema and not value >= schema["minimum"]:
        raise ValueError(f"{where} is {shown}, below its minimum {schema['minimum']}")
    if is_number and "maximum" in schema and not value <= schema["maximum"]:
        raise ValueError(f"{where} is {shown}, above its maximum {schema['maximum']}")
    if isinstance(value, dict):
        for name in schema.get("required", []):
            if name not in value:
                raise ValueError(f"{where} has no {name!r}")
        for name, field_schema in schema.get("properties", {}).items():
            if name in value:
                validate(value[name], field_schema, f"{where}.{name}")
    if isinstance(value, list) and "items" in schema:
        for index, item in enumerate(value):
            validate(item, schema["items"], f"{where}[{index}]")


def preview(value: Any) -> str:
    """A short repr of any JSON value, for messages."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return repr(text if len(text) <= 80 else text[:77] + "...")
