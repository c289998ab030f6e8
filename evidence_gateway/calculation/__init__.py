"""Pure, deterministic calculation engine and quality rules (no database imports)."""

from evidence_gateway.calculation.engine import (
    ENGINE_VERSION,
    EngineResult,
    Factor,
    FactorSet,
    RowResult,
    ShipmentInput,
    calculate,
    largest_remainder_percentages,
)
from evidence_gateway.calculation.hashing import canonical_json, rerun_hash

__all__ = [
    "ENGINE_VERSION",
    "EngineResult",
    "Factor",
    "FactorSet",
    "RowResult",
    "ShipmentInput",
    "calculate",
    "canonical_json",
    "largest_remainder_percentages",
    "rerun_hash",
]
