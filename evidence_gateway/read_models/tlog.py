"""The transparency log's answers (docs/verification.md): checkpoints and proofs. Hashes are
base64, as in the C2SP checkpoint they are checked against."""

from __future__ import annotations

import uuid
from datetime import datetime

from pydantic import ConfigDict, Field

from evidence_gateway.read_models.base import EXTENSION, ReadModel

Base64 = str


class LogCheckpoint(ReadModel):
    """A signed checkpoint of the organisation's log: its size and root hash."""

    model_config = ConfigDict(json_schema_extra=EXTENSION)

    origin: str
    size: int = Field(ge=0)
    root_hash: Base64 = Field(description="Base64.")
    key_id: str
    issued_at: datetime
    note: str = Field(description="The C2SP signed note.")


class LogInclusionProof(ReadModel):
    """An event's leaf and its audit path to a checkpoint."""

    model_config = ConfigDict(json_schema_extra=EXTENSION)

    event_id: uuid.UUID
    sequence: int = Field(ge=1)
    leaf_index: int = Field(ge=0)
    tree_size: int = Field(ge=1)
    leaf_hash: Base64 = Field(description="Base64.")
    leaf: Base64 | None = Field(description="Base64; null where the key may not read the event's data.")
    audit_path: list[Base64]
    checkpoint: LogCheckpoint


class LogConsistencyProof(ReadModel):
    """That one checkpoint's tree extends another's."""

    model_config = ConfigDict(json_schema_extra=EXTENSION)

    from_size: int = Field(ge=0)
    to_size: int = Field(ge=0)
    proof: list[Base64]
    from_checkpoint: LogCheckpoint
    to_checkpoint: LogCheckpoint
