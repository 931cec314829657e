"""The JSON Schemas of an operation's input and output, made from its declaration: the
MCP server lists them with each tool, the HTTP door's OpenAPI document with each route.
Plain data, no protocol library: the HTTP door builds its document without loading the
MCP SDK."""

from __future__ import annotations

from typing import Any, cast

from .operations import Op, Param, is_required
from .shapes import SHAPES, Schema, is_object

_JSON_TYPES: dict[str, Schema] = {
    "str": {"type": "string"},
    "int": {"type": "integer"},
    "float": {"type": "number"},
    "bool": {"type": "boolean"},
    "strs": {"type": "array", "items": {"type": "string"}},
    "json": {},
    "object": {"type": "object"},
    "objects": {"type": "array", "items": {"type": "object"}},
}


def param_schema(param: Param) -> Schema:
    """A parameter as JSON Schema: its type, its description, its choices and default.

    An optional parameter (``str?``) is simply not required: leaving it out, or
    sending null, means "not given".
    """
    schema: Schema = {**_JSON_TYPES[param.type.rstrip("?")], "description": param.help}
    if param.choices:
        schema["enum"] = list(param.choices)
    if param.minimum is not None:
        schema["minimum"] = param.minimum
    if param.default is not ... and param.default is not None:
        schema["default"] = (
            list(param.default) if isinstance(param.default, tuple) else (param.default)
        )
    return schema


def input_schema(op: Op, door: str) -> Schema:
    """The input schema of ``op`` at ``door`` (``mcp`` or ``http``)."""
    params = [p for p in op.params if door in p.doors]
    schema: Schema = {
        "type": "object",
        "properties": {p.name: param_schema(p) for p in params},
        "additionalProperties": False,
    }
    required = [p.name for p in params if is_required(p)]
    if required:
        schema["required"] = required
    return schema


def _undescribed(schema: Any) -> Any:
    """``schema`` without the descriptions of its properties and items."""
    if isinstance(schema, list):
        return [_undescribed(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    lean: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "properties":  # field names, one of which may be "description"
            lean[key] = {name: _undescribed(field) for name, field in value.items()}
        elif key != "description":
            lean[key] = _undescribed(value)
    return lean


def output_schema(op: Op) -> Schema:
    """What ``op`` returns as structured content: its shape, or ``{"result": shape}``.

    The shape's own description stays; its fields' descriptions are left out. Every
    tool's schema travels into every agent session that lists the tools, and an agent
    reads a result's field names, not their schema (the descriptions are in the HTTP
    door's OpenAPI document, made from the same shapes).
    """
    shape = SHAPES[op.result]
    if not is_object(shape):
        shape = {"type": "object", "properties": {"result": shape}, "required": ["result"]}
    lean = _undescribed(shape)
    if "description" in shape:
        lean = {"description": shape["description"], **lean}
    return cast(Schema, lean)
