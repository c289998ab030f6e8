"""Filters and paging of the exchange lists, as each specification defines them.

- PACT v2 ``$filter``: the OData v4 subset the spec allows: ``eq lt le gt ge`` on ``created``,
  ``updated``, ``productCategoryCpc``, ``pcf/geographyCountry``, ``pcf/referencePeriodStart``,
  ``pcf/referencePeriodEnd``; ``and``; parentheses; ``productIds/any(x:(x eq '…'))`` and the
  same on ``companyIds``. Anything else the spec does not list (``or``, ``not``, functions, other
  properties) is answered ``NotImplemented``; a statement that does not parse, ``BadRequest``.
- PACT v3 criteria: ``productId``, ``companyId``, ``geography``, ``classification`` (each may
  repeat: any value matches), ``validOn``, ``validAfter``, ``validBefore``, ``status``.
- iLEAP TAD: ``name=value`` pairs, all of which must match; a pair matches when a property
  ``name`` anywhere in the row (nested objects and lists included) equals ``value``, compared
  case-insensitively, as the spec's ``feedstock=Fossil`` example needs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from evidence_gateway.exchange.host import bad_request, not_implemented

Predicate = Callable[[Mapping[str, Any]], bool]
# The most items a page holds, whatever ``limit`` asks for (the specs let a host return fewer).
MAX_PAGE = 100

_TOKEN = re.compile(r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<punct>[():])|(?P<word>[A-Za-z_][A-Za-z0-9_/]*))")
_COMPARISONS: dict[str, Callable[[Any, Any], bool]] = {
    "eq": lambda a, b: a == b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
}
_SCALARS = {
    "created": ("created",),
    "updated": ("updated",),
    "productCategoryCpc": ("productCategoryCpc",),
    "pcf/geographyCountry": ("pcf", "geographyCountry"),
    "pcf/referencePeriodStart": ("pcf", "referencePeriodStart"),
    "pcf/referencePeriodEnd": ("pcf", "referencePeriodEnd"),
}
_COLLECTIONS = {"productIds", "companyIds"}


def _dig(item: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = item
    for part in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value


def _comparable(value: Any) -> Any:
    """Timestamps compare as instants, whatever their spelling; other values as they are."""
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return value
    return value


def _compare(op: str, left: Any, right: Any) -> bool:
    if left is None:
        return False
    a, b = _comparable(left), _comparable(right)
    if type(a) is not type(b):
        a, b = str(left), str(right)
    try:
        return _COMPARISONS[op](a, b)
    except TypeError:
        return False


class _OData:
    def __init__(self, text: str) -> None:
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        text = text.strip()
        while pos < len(text):
            found = _TOKEN.match(text, pos)
            if found is None or found.end() == pos:
                raise bad_request(f"$filter: cannot read {text[pos : pos + 20]!r}")
            kind = found.lastgroup or ""
            self.tokens.append((kind, found.group(kind)))
            pos = found.end()
        self.at = 0

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self, expected: str | None = None) -> tuple[str, str]:
        token = self.peek()
        if token is None or (expected is not None and token[1] != expected):
            raise bad_request(f"$filter: expected {expected or 'more'} at token {self.at + 1}")
        self.at += 1
        return token

    def statement(self) -> Predicate:
        made = self.conjunction()
        if self.peek() is not None:
            word = self.peek()
            if word is not None and word[1] in ("or", "not"):
                raise not_implemented(f"$filter: operator '{word[1]}' is not supported (only 'and')")
            raise bad_request(f"$filter: unexpected {word[1] if word else ''!r}")
        return made

    def conjunction(self) -> Predicate:
        parts = [self.term()]
        while (token := self.peek()) is not None and token[1] == "and":
            self.take()
            parts.append(self.term())
        return lambda item: all(p(item) for p in parts)

    def term(self) -> Predicate:
        token = self.take()
        if token[1] == "(":
            inner = self.conjunction()
            self.take(")")
            return inner
        if token[0] != "word":
            raise bad_request(f"$filter: unexpected {token[1]!r}")
        name = token[1]
        if name.endswith("/any"):
            return self.any_of(name.removesuffix("/any"))
        if name in ("or", "not") or name.split("/")[-1] in ("all", "contains", "startswith", "endswith"):
            raise not_implemented(f"$filter: '{name}' is not supported")
        op = self.take()[1]
        if op not in _COMPARISONS:
            raise not_implemented(f"$filter: operator {op!r} is not supported")
        literal = self.literal()
        if name not in _SCALARS:
            raise not_implemented(f"$filter: filtering on {name!r} is not supported")
        path = _SCALARS[name]
        return lambda item: _compare(op, _dig(item, path), literal)

    def any_of(self, collection: str) -> Predicate:
        if collection not in _COLLECTIONS:
            raise not_implemented(f"$filter: any() on {collection!r} is not supported")
        self.take("(")
        variable = self.take()[1]
        self.take(":")
        depth = 0
        while (token := self.peek()) is not None and token[1] == "(":
            self.take()
            depth += 1
        if self.take()[1] != variable:
            raise bad_request("$filter: any() must compare its variable")
        if self.take()[1] != "eq":
            raise not_implemented("$filter: any() supports 'eq' only")
        wanted = self.literal()
        for _ in range(depth):
            self.take(")")
        self.take(")")
        return lambda item: wanted in (item.get(collection) or [])

    def literal(self) -> str:
        kind, value = self.take()
        if kind != "str":
            raise bad_request("$filter: values are quoted strings, e.g. 'DE'")
        return value[1:-1].replace("''", "'")


def odata_filter(text: str) -> Predicate:
    """The v2 ``$filter`` statement as a predicate over v2 footprints."""
    if len(text) > 2000:
        raise bad_request("$filter: too long")
    return _OData(text).statement()


V3_CRITERIA = (
    "productId",
    "companyId",
    "geography",
    "classification",
    "validOn",
    "validAfter",
    "validBefore",
    "status",
)


def _instant(name: str, value: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise bad_request(f"{name}: not an ISO 8601 date-time") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _when(item: Mapping[str, Any], key: str) -> datetime | None:
    value = item.get(key)
    return _comparable(value) if isinstance(value, str) and isinstance(_comparable(value), datetime) else None


def _shares(key: str, wanted: set[str]) -> Predicate:
    return lambda item: bool(wanted & set(item.get(key) or []))


def _validity(item: Mapping[str, Any]) -> tuple[datetime | None, datetime | None]:
    """The footprint's validity period; where it states none, PACT v3's default: from the end of
    its reference period, for three years."""
    pcf = item.get("pcf") or {}
    reference_end = _when(pcf, "referencePeriodEnd")
    start = _when(item, "validityPeriodStart") or reference_end
    end = _when(item, "validityPeriodEnd")
    if end is None and reference_end is not None:
        try:
            end = reference_end.replace(year=reference_end.year + 3)
        except ValueError:  # 29 February
            end = reference_end.replace(year=reference_end.year + 3, day=28)
    return start, end


def v3_criteria(params: Mapping[str, list[str]]) -> Predicate:
    """The v3 filtering criteria present in ``params`` (name -> values), all of which must hold;
    an empty value is no criterion, and a value no footprint has (an unknown status) matches none."""
    params = {name: [v for v in values if v] for name, values in params.items()}
    checks: list[Predicate] = []
    lists = {"productId": "productIds", "companyId": "companyIds", "classification": "productClassifications"}
    for name, key in lists.items():
        if values := params.get(name):
            checks.append(_shares(key, set(values)))
    if values := params.get("geography"):
        places = {v.upper() for v in values}

        def in_geography(item: Mapping[str, Any]) -> bool:
            pcf = item.get("pcf") or {}
            fields = ("geographyCountry", "geographyRegionOrSubregion", "geographyCountrySubdivision")
            return any(str(pcf.get(f, "")).upper() in places for f in fields if pcf.get(f))

        checks.append(in_geography)
    if values := params.get("status"):
        statuses = set(values)
        checks.append(lambda item: item.get("status") in statuses)
    bounds = {n: _instant(n, params[n][-1]) for n in ("validOn", "validAfter", "validBefore") if params.get(n)}
    if bounds:

        def valid(item: Mapping[str, Any]) -> bool:
            start, end = _validity(item)
            on, after, before = bounds.get("validOn"), bounds.get("validAfter"), bounds.get("validBefore")
            ok = True
            if on is not None:
                ok &= start is not None and end is not None and start <= on <= end
            if after is not None:
                ok &= start is not None and after < start
            if before is not None:
                ok &= end is not None and before > end
            return ok

        checks.append(valid)
    return lambda item: all(check(item) for check in checks)


def _tad_matches(row: Mapping[str, Any], name: str, wanted: str) -> bool:
    for key, value in _pairs(row):
        if key == name and str(value).lower() == wanted:
            return True
    return False


def _pairs(value: Any) -> Iterable[tuple[str, Any]]:
    """Every (property name, plain value) in a row, nested ones included; a list of plain values
    gives each under its property's name."""
    if isinstance(value, Mapping):
        for key, inner in value.items():
            if isinstance(inner, Mapping):
                yield from _pairs(inner)
            elif isinstance(inner, list):
                for element in inner:
                    if isinstance(element, Mapping | list):
                        yield from _pairs(element)
                    else:
                        yield key, element
            else:
                yield key, inner


def tad_filter(pairs: list[tuple[str, str]]) -> Predicate:
    """iLEAP's filter statement: every ``name=value`` pair matches (values case-insensitive)."""
    wanted = [(name, value.lower()) for name, value in pairs]
    return lambda row: all(_tad_matches(row, name, value) for name, value in wanted)


def limit_of(raw: str | None) -> int:
    """``limit``: a positive integer when given (BadRequest otherwise); capped at MAX_PAGE."""
    if raw is None:
        return MAX_PAGE
    if not raw.isdigit() or int(raw) < 1 or len(raw) > 9:
        raise bad_request("limit must be a positive integer")
    return min(int(raw), MAX_PAGE)


def offset_of(raw: str | None) -> int:
    if raw is None:
        return 0
    if not raw.isdigit() or len(raw) > 9:
        raise bad_request("offset must be a non-negative integer (take it from a Link header)")
    return int(raw)
