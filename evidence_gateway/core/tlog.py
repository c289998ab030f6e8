"""An event's leaf in its organisation's transparency log (docs/verification.md, "Leaves").

The leaf is the event's canonical bytes: its fields in the one JSON encoding of the API
(core/jsoncodec.py), in a fixed order, with ``data`` exactly as stored. The sequence is not in
the leaf: the leaf's index in the tree is ``sequence - 1``, which the inclusion proof binds. The
write path hashes each leaf as it numbers the events, so the hash commits with the event.
"""

from __future__ import annotations

import uuid
from datetime import datetime

import orjson

from evidence_gateway.core.jsoncodec import dumps


def leaf_bytes(
    *,
    id: uuid.UUID,
    type: str,
    occurred_at: datetime,
    actor: uuid.UUID | None,
    request_id: str | None,
    subject_type: str,
    subject_id: uuid.UUID,
    workspace_id: uuid.UUID | None,
    data: str,
) -> bytes:
    """``data`` is the stored JSON text of the event's data, embedded verbatim."""
    return dumps(
        {
            "id": id,
            "type": type,
            "occurred_at": occurred_at,
            "actor": actor,
            "request_id": request_id,
            "subject_type": subject_type,
            "subject_id": subject_id,
            "workspace_id": workspace_id,
            "data": orjson.Fragment(data),
        }
    )
