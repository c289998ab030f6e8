"""Typed records and repositories: each record is its table's columns, in table order, with
the column's nullability; a misspelt field fails mypy."""

from __future__ import annotations

import types
import typing
from pathlib import Path

import pytest
from mypy import api as mypy_api
from sqlmodel import SQLModel

import evidence_gateway.models  # noqa: F401 - registers every table
from evidence_gateway.models import Workspace
from evidence_gateway.models.base import table_of
from evidence_gateway.store.record_types import TYPED, WorkspaceRecord
from evidence_gateway.store.records import record_type

ROOT = Path(__file__).resolve().parent.parent
TABLES = {table.name: table for table in SQLModel.metadata.sorted_tables}
MODELS = {model.__tablename__: model for model in SQLModel.__subclasses__() if hasattr(model, "__table__")}


@pytest.mark.parametrize("name", sorted(TYPED))
def test_a_typed_record_is_its_table_in_column_order(name: str) -> None:
    record = TYPED[name]
    table = TABLES[name]
    assert record._fields == tuple(table.c.keys()), f"{record.__name__} and table {name} differ"


@pytest.mark.parametrize("name", sorted(TYPED))
def test_a_typed_record_field_is_optional_exactly_where_its_column_is_nullable(name: str) -> None:
    hints = typing.get_type_hints(TYPED[name])
    wrong = []
    for column in TABLES[name].c:
        hint = hints[column.key]
        optional = isinstance(hint, types.UnionType) and type(None) in typing.get_args(hint)
        if optional != bool(column.nullable):
            wrong.append(f"{column.key}: column nullable={column.nullable}, field {hint}")
    assert wrong == []


@pytest.mark.parametrize("name", sorted(TYPED))
def test_a_typed_record_field_has_its_model_field_s_type(name: str) -> None:
    hints = typing.get_type_hints(TYPED[name])
    fields = MODELS[name].model_fields
    wrong = [
        f"{key}: record {hints[key]}, model {fields[key].annotation}"
        for key in hints
        if hints[key] != fields[key].annotation
    ]
    assert wrong == []


def test_records_of_every_read_path_are_the_typed_record() -> None:
    assert record_type(table_of(Workspace)) is WorkspaceRecord


@pytest.mark.slow
def test_a_misspelt_record_field_fails_type_checking(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from evidence_gateway.store.record_types import WorkspaceRecord\n"
        "def name_of(w: WorkspaceRecord) -> str:\n"
        "    return w.nmae\n"
    )
    out, _err, status = mypy_api.run(
        [
            "--strict",
            "--no-incremental",
            "--follow-imports=silent",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            str(probe),
        ]
    )
    assert status != 0 and '"WorkspaceRecord" has no attribute "nmae"' in out, out
