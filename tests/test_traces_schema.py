"""The trace schema file agrees with RLJob and rejects malformed schema documents."""

from __future__ import annotations

import dataclasses

import jsonschema
import pytest

from rollmux.jobs import RLJob
from rollmux.traces.errors import MESSAGE_LIMIT, Problem, TraceError
from rollmux.traces.schema import load_schema, parse_schema


def test_columns_are_exactly_rljob_fields() -> None:
    """Schema columns are RLJob's fields, in order, with the same required/default split."""
    schema = load_schema()
    fields = dataclasses.fields(RLJob)
    assert schema.names == tuple(f.name for f in fields)
    for spec, field in zip(schema.columns, fields, strict=True):
        required = field.default is dataclasses.MISSING
        assert spec.required == required, spec.name
        if not required:
            assert spec.default == field.default, spec.name


def test_schema_types_match_annotations() -> None:
    """Each column's type agrees with RLJob's annotation (str, int or float)."""
    for spec, field in zip(load_schema().columns, dataclasses.fields(RLJob), strict=True):
        assert str(field.type).split(" ")[0] == spec.type, spec.name


def test_schema_version_is_one() -> None:
    """The packaged schema is version 1 (bump it together with traces/README.md)."""
    assert load_schema().version == 1


def test_bad_schema_documents_are_rejected() -> None:
    """A schema with an unknown rule key or a repeated column fails to parse."""
    column = {"name": "a", "type": "int", "unit": "-", "description": "x"}
    with pytest.raises(jsonschema.ValidationError):
        parse_schema({"schema_version": 1, "columns": [{**column, "maximum": 3}]})
    with pytest.raises(ValueError, match="twice"):
        parse_schema({"schema_version": 1, "columns": [column, column]})


def test_trace_error_message_is_capped_but_keeps_all_problems() -> None:
    """The message lists MESSAGE_LIMIT problems; .problems keeps every one."""
    problems = [Problem("f.csv", i + 2, i + 1, "slo", f"bad {i}")
                for i in range(MESSAGE_LIMIT + 5)]
    error = TraceError(problems)
    assert len(error.problems) == MESSAGE_LIMIT + 5
    lines = str(error).splitlines()
    assert len(lines) == MESSAGE_LIMIT + 1 and lines[-1] == "... and 5 more kind(s) of problem"
    assert isinstance(error, ValueError)
    assert lines[0] == "f.csv:2: row 1, column slo: bad 0"


def test_trace_error_groups_one_defect_repeated_on_many_rows() -> None:
    """One defect on many rows is one line naming the rows; other defects keep theirs."""
    problems = [Problem("f.csv", i + 3, i + 2, "*", "row has extra fields") for i in range(200)]
    problems.insert(5, Problem("f.csv", 9, 7, "slo", "0.5 must be >= 1"))
    lines = str(TraceError(problems)).splitlines()
    assert lines == ["f.csv:3: rows 2-201, column *: row has extra fields",
                     "f.csv:9: row 7, column slo: 0.5 must be >= 1"]
