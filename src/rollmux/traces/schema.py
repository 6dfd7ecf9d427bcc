"""The versioned trace schema: column specifications loaded from schema.yaml."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from typing import Any

import jsonschema
import yaml

from rollmux.memo import memoised

SCHEMA_FILE = "schema.yaml"
#: Schema versions this loader reads.
SUPPORTED_VERSIONS = frozenset({1})

# Shape of schema.yaml itself, so a bad edit fails loudly rather than silently
# relaxing a rule.
_META_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["schema_version", "columns"],
    "additionalProperties": False,
    "properties": {
        "schema_version": {"type": "integer", "minimum": 1},
        "columns": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["name", "type", "unit", "description"],
                "additionalProperties": False,
                "properties": {
                    "name": {"type": "string", "pattern": "^[a-z][a-z0-9_]*$"},
                    "type": {"enum": ["str", "int", "float"]},
                    "required": {"type": "boolean"},
                    "unique": {"type": "boolean"},
                    "default": {"type": ["string", "number", "null"]},
                    "gt": {"type": "number"},
                    "ge": {"type": "number"},
                    "le": {"type": "number"},
                    "node_multiple": {"type": "boolean"},
                    "gpu_type": {"type": "boolean"},
                    "host_mem": {"type": "boolean"},
                    "unit": {"type": "string"},
                    "description": {"type": "string"},
                },
            },
        },
    },
}


@dataclass(frozen=True, slots=True)
class ColumnSpec:
    """One trace column: name, type, default and the rules its values obey.

    ``gt``/``ge`` (lower) and ``le`` (upper) bound the values: what the model needs, and
    beyond that the plausible range (schema.yaml's header).
    """

    name: str
    type: str
    unit: str
    description: str
    required: bool = False
    unique: bool = False
    default: str | int | float | None = None
    gt: float | None = None
    ge: float | None = None
    le: float | None = None
    node_multiple: bool = False
    gpu_type: bool = False
    host_mem: bool = False

    @property
    def numeric(self) -> bool:
        """True for int and float columns."""
        return self.type in ("int", "float")

    def default_text(self) -> str:
        """The default as the README shows it ('required', 'derived' or the value)."""
        if self.required:
            return "required"
        if self.default is None:
            return "empty (derived)"
        return repr(self.default) if self.type == "str" else str(self.default)


@dataclass(frozen=True, slots=True)
class TraceSchema:
    """The whole schema: a version and the ordered column specifications."""

    version: int
    columns: tuple[ColumnSpec, ...]

    @property
    def names(self) -> tuple[str, ...]:
        """Column names in canonical order."""
        return tuple(c.name for c in self.columns)

    @property
    def required(self) -> tuple[str, ...]:
        """Names of the columns every file must have."""
        return tuple(c.name for c in self.columns if c.required)

    def column(self, name: str) -> ColumnSpec:
        """The specification of column `name` (KeyError if unknown)."""
        for spec in self.columns:
            if spec.name == name:
                return spec
        raise KeyError(name)


def parse_schema(document: dict[str, Any]) -> TraceSchema:
    """Validate a schema document against the meta-schema and build a TraceSchema."""
    jsonschema.validate(document, _META_SCHEMA)
    columns = tuple(ColumnSpec(**entry) for entry in document["columns"])
    names = [c.name for c in columns]
    if len(set(names)) != len(names):
        raise ValueError(f"schema lists a column twice: {names}")
    return TraceSchema(version=int(document["schema_version"]), columns=columns)


@memoised(1)
def load_schema() -> TraceSchema:
    """The packaged trace schema (src/rollmux/traces/schema.yaml)."""
    text = resources.files("rollmux.traces").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")
    return parse_schema(yaml.safe_load(text))


def bound_text(value: float) -> str:
    """A bound as messages and the README show it: whole numbers in full (31536000),
    others in ``%g`` (0.01)."""
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else f"{value:g}"


def schema_markdown(schema: TraceSchema | None = None) -> str:
    """The schema as a Markdown table (column, type, unit, meaning, required/default)."""
    schema = schema or load_schema()
    rows = [
        "| column | type | unit | meaning | required / default | rule |",
        "|---|---|---|---|---|---|",
    ]
    for c in schema.columns:
        rules = []
        if c.gt is not None:
            rules.append(f"> {bound_text(c.gt)}")
        if c.ge is not None:
            rules.append(f">= {bound_text(c.ge)}")
        if c.le is not None:
            rules.append(f"<= {bound_text(c.le)}")
        if c.unique:
            rules.append("unique")
        if c.node_multiple:
            rules.append("whole nodes, <= pool")
        if c.gpu_type:
            rules.append("known GPU type")
        if c.host_mem:
            rules.append("<= node DRAM")
        rows.append(
            f"| `{c.name}` | {c.type} | {c.unit} | {c.description} | {c.default_text()} "
            f"| {', '.join(rules) or '-'} |"
        )
    return "\n".join(rows)
