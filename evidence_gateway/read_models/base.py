"""The read-model base: one pydantic class per resource says what the resource looks like on the wire.

A read model's field order is the JSON key order, its annotations and ``Field`` bounds are the
OpenAPI component, and its field names are what the GraphQL type is checked against
(tests/test_read_models.py). Rendering does not validate: the resolvers hand back rows they have
just read or written, and a list page renders 20 of them per request, so ``render`` copies the
attributes into a dict (about what the old hand-written field tuples cost) and the one orjson
encoder prints it. ``model_validate(obj, from_attributes=True)`` builds the same model from any
object with the attributes, an ORM entity or a Core ``Row``; the tests use it to prove that what
``render`` emits fits the declared types.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from operator import attrgetter
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

EXTENSION: dict[str, Any] = {"x-extension": True}

# An absolute link: a string on the wire, ``format: uri`` in the OpenAPI document.
Uri = Annotated[str, WithJsonSchema({"type": "string", "format": "uri"})]


def ext(description: str, **kw: Any) -> Any:
    """A field we added beyond the published contract (``x-extension: true`` in the OpenAPI document)."""
    return Field(description=description, json_schema_extra=EXTENSION, **kw)


class ReadModel(BaseModel):
    """What every resource's read model shares: built from attributes, immutable, every field
    present on the wire (required, maybe null), and a ``render`` that copies without validating."""

    # defer_build: a model's validator and serializer (~20 KB resident each) are built on first use;
    # a server answering workspace reads never builds the pack or webhook ones (issue 29).
    model_config = ConfigDict(from_attributes=True, frozen=True, defer_build=True)

    # Fields whose values do not sit on the object under the same name (links, derived status):
    # ``derive`` supplies them, the rest are read attribute by attribute.
    derived: ClassVar[frozenset[str]] = frozenset()
    # Columns of the resource's table that stay off the wire (leases, secrets, row versions, the
    # owner's id where the caller's key implies it); the drift test wants every column either here
    # or a field, so a new column cannot be forgotten silently.
    internal: ClassVar[frozenset[str]] = frozenset()
    # Filled once per class: the wire keys in field order, and the keys and one C-level getter
    # (``attrgetter`` of several names returns a tuple) for the fields read as they are.
    _keys: ClassVar[tuple[str, ...]] = ()
    _plain_keys: ClassVar[tuple[str, ...]] = ()
    _read: ClassVar[Callable[[Any], tuple[Any, ...]]]

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        wire = [(f.serialization_alias or name, name) for name, f in cls.model_fields.items()]
        plain = [(key, name) for key, name in wire if name not in cls.derived]
        cls._keys = tuple(key for key, _ in wire)
        cls._plain_keys = tuple(key for key, _ in plain)
        names = [name for _, name in plain]
        cls._read = attrgetter(*names) if len(names) > 1 else lambda obj: tuple(getattr(obj, n) for n in names)

    @classmethod
    def render(cls, obj: Any) -> dict[str, Any]:
        """The resource as JSON-ready values, in field order (ids, dates and datetimes are left to
        the encoder, which prints every datetime with a ``Z``)."""
        if not cls.derived:
            return dict(zip(cls._plain_keys, cls._read(obj), strict=False))
        return cls.compose(obj, cls.derive(obj))

    @classmethod
    def compose(cls, obj: Any, values: Mapping[str, Any]) -> dict[str, Any]:
        """``render`` with the derived values given: for models whose links need settings or
        related rows, which their own classmethod gathers."""
        plain = dict(zip(cls._plain_keys, cls._read(obj), strict=False))
        return {key: values[key] if key in values else plain[key] for key in cls._keys}

    @classmethod
    def derive(cls, obj: Any) -> dict[str, Any]:
        """The values of ``derived`` fields that need nothing but ``obj``."""
        return {}


def render_optional(model: type[ReadModel], obj: Any) -> dict[str, Any] | None:
    """``model.render(obj)``, or null where the related resource does not exist yet."""
    return None if obj is None else model.render(obj)


class PaginationMeta(ReadModel):
    """Where a page of a paginated list sits (``pagination`` beside ``data``)."""

    page: int = Field(ge=1)
    per_page: int = Field(ge=1, le=100)
    total: int = Field(ge=0)
