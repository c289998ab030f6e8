"""Building blocks and component schemas of the OpenAPI 3.1 document (see openapi.py).

Response schemas list every field the serializers emit, all required (they are always
present; "nullable" means present and maybe null, as the contract puts it). Request
schemas mirror the resolvers' pydantic inputs: same types, bounds and enums.
"""

from __future__ import annotations

from typing import Any

from evidence_gateway.models import (
    ArtifactStatus,
    ArtifactType,
    AttachmentScope,
    DistanceSource,
    DistanceType,
    EvidenceType,
    FuelType,
    IntensityBasis,
    PackStatus,
    RunStatus,
    TransportMode,
    VerificationStatus,
    WorkspaceStatus,
)

Schema = dict[str, Any]

EXT = {"x-extension": True}


# -- primitives ---------------------------------------------------------------------------------


def string(fmt: str | None = None, **kw: Any) -> Schema:
    out: Schema = {"type": "string", **kw}
    if fmt:
        out["format"] = fmt
    return out


def uuid_(**kw: Any) -> Schema:
    return string("uuid", **kw)


def date_(**kw: Any) -> Schema:
    return string("date", **kw)


def datetime_(**kw: Any) -> Schema:
    return string("date-time", **kw)


def integer(**kw: Any) -> Schema:
    return {"type": "integer", **kw}


def number(**kw: Any) -> Schema:
    return {"type": "number", **kw}


def boolean() -> Schema:
    return {"type": "boolean"}


def enum(values: Any, **kw: Any) -> Schema:
    return {"type": "string", "enum": [getattr(v, "value", v) for v in values], **kw}


def free_object(description: str = "Free-form keys.") -> Schema:
    return {"type": "object", "description": description}


def array(items: Schema, **kw: Any) -> Schema:
    return {"type": "array", "items": items, **kw}


def ref(name: str) -> Schema:
    return {"$ref": f"#/components/schemas/{name}"}


def nullable(schema: Schema) -> Schema:
    """OpenAPI 3.1 nullability: ``type: [t, "null"]``; a $ref becomes anyOf with null."""
    if "$ref" in schema:
        return {"anyOf": [schema, {"type": "null"}]}
    out = dict(schema)
    out["type"] = [schema["type"], "null"]
    if "enum" in out:
        out["enum"] = [*out["enum"], None]
    return out


def ext(schema: Schema, description: str | None = None) -> Schema:
    """Marks a field or operation we added beyond the contract."""
    out = {**schema, **EXT}
    if description:
        out["description"] = description
    return out


def obj(properties: dict[str, Schema], required: list[str] | None = None, **kw: Any) -> Schema:
    """An object; ``required=None`` means every listed property is always present."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties) if required is None else required,
        **kw,
    }


# Inputs are parsed strictly (resolvers/validation.py): the format as a pattern too, so
# tools that treat `format` as a mere annotation do not count "" as a valid id or date.
INPUT_PATTERNS = {
    "uuid": "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
    "date": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
}


def as_input(schema: Schema) -> Schema:
    pattern = INPUT_PATTERNS.get(schema.get("format", ""))
    return {**schema, "pattern": pattern} if pattern else schema


def request_obj(properties: dict[str, Schema], required: list[str], not_null: frozenset[str] = frozenset()) -> Schema:
    """A request body: optional fields also accept null, which the resolvers read as absent."""
    props = {k: as_input(v) if k in required or k in not_null else nullable(as_input(v)) for k, v in properties.items()}
    return obj(props, required=required)


# -- envelopes ----------------------------------------------------------------------------------


def data_envelope(schema: Schema) -> Schema:
    return obj({"data": schema})


def page_envelope(item: Schema) -> Schema:
    return obj({"data": array(item), "pagination": ref("PaginationMeta")})


def meta_envelope(schema: Schema, meta: Schema) -> Schema:
    return obj({"data": schema, "meta": meta})


# -- input bounds shared with resolvers/validation.py --------------------------------------------

SHORT_TEXT = string(maxLength=500)
LABEL = string(maxLength=200)
NAME = string(minLength=1, maxLength=200, pattern=r"\S", description="Trimmed; 1–200 characters.")


# -- components ---------------------------------------------------------------------------------


def _workspace() -> Schema:
    return obj(
        {
            "id": uuid_(),
            "org_id": uuid_(),
            "name": string(),
            "external_reference": nullable(string()),
            "reporting_period_start": nullable(date_()),
            "reporting_period_end": nullable(date_()),
            "status": enum(WorkspaceStatus),
            "default_methodology_profile_id": nullable(uuid_()),
            "latest_calculation_run_id": nullable(uuid_()),
            "latest_report_pack_id": nullable(uuid_()),
            "archived_at": nullable(datetime_()),
            "created_at": datetime_(),
            "updated_at": datetime_(),
            "data_version": ext(integer(minimum=0), "Raised by every import; a calculation records the one it read."),
        }
    )


def _workspace_detail() -> Schema:
    return {
        "allOf": [
            ref("Workspace"),
            obj(
                {
                    "latest_calculation_run": nullable(ref("CalculationRun")),
                    "latest_pack": nullable(ref("ReportPack")),
                    "latest_quality_assessment": nullable(ref("DataQualityAssessment")),
                }
            ),
        ]
    }


def _calculation_run() -> Schema:
    return obj(
        {
            "id": uuid_(),
            "workspace_id": uuid_(),
            "org_id": uuid_(),
            "methodology_profile_id": nullable(uuid_()),
            "factor_version_id": nullable(uuid_()),
            "legacy_report_id": nullable(uuid_()),
            "status": enum(RunStatus),
            "rerun_hash": nullable(string()),
            "assumptions_snapshot_json": free_object(),
            "created_at": datetime_(),
            "completed_at": nullable(datetime_()),
            "export_template_id": ext(nullable(uuid_()), "Template bundle named when the run was started."),
            "total_co2e_kg": ext(nullable(number()), "CO2e of the included shipments on the profile's boundary, kg."),
            "total_tonne_km": ext(nullable(number()), "Tonne-kilometres of the included shipments."),
            "shipment_count": ext(integer(minimum=0), "Shipment rows the run read."),
            "totals_by_mode_json": ext(free_object(), "Totals per transport mode."),
            "error_message": ext(nullable(string()), "Why a failed run failed."),
            "data_version": ext(nullable(integer(minimum=0)), "The workspace's data version the run read."),
            "total_co2e_wtw_kg": ext(nullable(number()), "Well-to-wheel total of the included shipments, kg."),
            "total_co2e_ttw_kg": ext(nullable(number()), "Tank-to-wheel total of the included shipments, kg."),
            "excluded_co2e_kg": ext(
                nullable(number()), "Excluded rows estimated with default factors (headline boundary), kg."
            ),
            "iso14083_json": ext(
                nullable(free_object("See docs/methodology.md, ISO 14083 summary.")),
                "ISO 14083 summary: data categories, distance types, primary data share, coverage, exclusions.",
            ),
            "superseded": ext(
                boolean(), "Completed after newer data or a newer run: on record, never the workspace's latest."
            ),
        }
    )


def _calculation_run_detail() -> Schema:
    return {"allOf": [ref("CalculationRun"), obj({"quality_assessment": nullable(ref("DataQualityAssessment"))})]}


def _approval_action() -> Schema:
    return obj(
        {
            "id": uuid_(),
            "report_pack_id": uuid_(),
            "workspace_id": uuid_(),
            "action_type": string(),
            "comment": nullable(string()),
            "status_before": enum(PackStatus),
            "status_after": enum(PackStatus),
            "api_key_id": uuid_(),
            "created_at": datetime_(),
        }
    )


def _event() -> Schema:
    return obj(
        {
            "id": uuid_(),
            "sequence": integer(minimum=1),
            "type": string(description="resource.past_tense_verb (docs/events.md)."),
            "occurred_at": datetime_(),
            "actor": nullable(uuid_()),
            "request_id": nullable(string()),
            "subject_type": string(),
            "subject_id": uuid_(),
            "workspace_id": nullable(uuid_()),
            "data": free_object("The resource as REST renders it, plus status_before/status_after."),
            "cursor": string(description="Pass as `after` to continue after this event."),
        }
    )


def _event_page() -> Schema:
    return obj(
        {
            "data": array(ref("Event")),
            "pagination": obj({"next_cursor": nullable(string()), "has_more": boolean()}),
        }
    )


def _quality() -> Schema:
    return obj(
        {
            "id": uuid_(),
            "workspace_id": uuid_(),
            "calculation_run_id": uuid_(),
            "report_pack_id": nullable(uuid_()),
            "coverage_score": number(),
            "primary_data_percent": number(),
            "secondary_data_percent": number(),
            "default_data_percent": number(),
            "modelled_data_percent": number(),
            "missing_required_fields_count": integer(),
            "flagged_shipments_count": integer(),
            "rules_triggered_json": array(free_object()),
            "summary_text": nullable(string()),
            "assessed_at": datetime_(),
            "primary_data_share_percent": ext(nullable(number()), "ISO 14083 primary data share by WTW emissions."),
            "primary_data_rows_percent": ext(nullable(number()), "Primary data share by usable rows."),
            "coverage_tonne_km_percent": ext(nullable(number()), "Coverage by tonne-km (excluded rows estimated)."),
            "excluded_co2e_kg": ext(nullable(number()), "Excluded rows estimated with default factors, kg."),
        }
    )


def _import_batch() -> Schema:
    return obj(
        {
            "id": uuid_(),
            "workspace_id": uuid_(),
            "org_id": uuid_(),
            "source_filename": nullable(string()),
            "source_file_type": nullable(string()),
            "source_row_count": integer(),
            "mapping_profile_name": nullable(string()),
            "source_system": nullable(string()),
            "created_at": datetime_(),
            "shipment_count": ext(integer(minimum=0), "Shipment rows stored with this batch."),
        }
    )


ARTIFACT_URL_FIELDS = tuple(f"{t.value}_url" for t in ArtifactType)


def _report_pack() -> Schema:
    urls = {name: nullable(string()) for name in ARTIFACT_URL_FIELDS}
    return obj(
        {
            "id": uuid_(),
            "workspace_id": uuid_(),
            "org_id": uuid_(),
            "legacy_report_id": nullable(uuid_()),
            "version_number": integer(minimum=1),
            "title": string(),
            "audience_label": nullable(string()),
            "status": enum(PackStatus),
            "methodology_profile_id": nullable(uuid_()),
            "calculation_run_id": nullable(uuid_()),
            "data_quality_assessment_id": nullable(uuid_()),
            "export_template_id": nullable(uuid_()),
            "pack_hash": nullable(string()),
            "rerun_hash": nullable(string()),
            **urls,
            "created_at": datetime_(),
            "approved_at": nullable(datetime_()),
            "published_at": nullable(datetime_()),
            "superseded_pack_id": ext(nullable(uuid_()), "The version this one replaced when it was generated."),
        }
    )


def _pack_detail() -> Schema:
    return {
        "allOf": [
            ref("ReportPack"),
            obj(
                {
                    "calculation_run": nullable(ref("CalculationRun")),
                    "quality_assessment": nullable(ref("DataQualityAssessment")),
                    "artifacts": array(ref("PackArtifact")),
                }
            ),
        ]
    }


def _artifact() -> Schema:
    return obj(
        {
            "id": uuid_(),
            "report_pack_id": uuid_(),
            "workspace_id": uuid_(),
            "artifact_type": enum(ArtifactType),
            "status": enum(ArtifactStatus),
            "file_url": nullable(string()),
            "file_name": nullable(string()),
            "content_type": nullable(string()),
            "created_at": datetime_(),
            "generated_at": nullable(datetime_()),
            "signed_download_url": nullable(string("uri", description="Time-limited link; no key needed.")),
            "content_sha256": ext(nullable(string(pattern="^[0-9a-f]{64}$")), "SHA-256 of the file (pack_hash input)."),
            "size_bytes": ext(nullable(integer(minimum=0)), "File size."),
        }
    )


def _approval_result() -> Schema:
    return obj(
        {
            "reportPackId": uuid_(),
            "workspaceId": uuid_(),
            "statusBefore": enum(PackStatus),
            "statusAfter": enum(PackStatus),
        }
    )


def _evidence_item() -> Schema:
    return obj(
        {
            "id": uuid_(),
            "workspace_id": nullable(uuid_()),
            "report_pack_id": nullable(uuid_()),
            "shipment_id": nullable(uuid_()),
            "org_id": uuid_(),
            "evidence_type": enum(EvidenceType),
            "title": string(),
            "file_name": string(),
            "file_url": string(),
            "file_sha256": nullable(string()),
            "mime_type": nullable(string()),
            "issue_date": nullable(date_()),
            "valid_from": nullable(date_()),
            "valid_to": nullable(date_()),
            "source_system": nullable(string()),
            "verification_status": enum(VerificationStatus),
            "attachment_scope": enum(AttachmentScope),
            "extracted_metadata_json": free_object(),
            "notes": nullable(string()),
            "uploaded_at": datetime_(),
        }
    )


def _webhook_result() -> Schema:
    return obj(
        {
            "delivered": boolean(),
            "target_url": string("uri"),
            "event_type": string(),
            "http_status": nullable(integer(description="Status returned by the target; null if none answered.")),
            "response_excerpt": string(),
            "payload": free_object("The payload that was sent."),
            "error": ext(nullable(string()), "Why the delivery failed (connection, timeout, non-2xx)."),
            "webhook_id": ext(string(), "The `webhook-id` header sent (Standard Webhooks)."),
            "delivery_id": ext(uuid_(), "The stored delivery record."),
        }
    )


def _webhook_delivery() -> Schema:
    return ext(
        obj(
            {
                "id": uuid_(),
                "org_id": uuid_(),
                "webhook_id": string(),
                "target_url": string(),
                "event_type": string(),
                "delivered": boolean(),
                "http_status": nullable(integer()),
                "error": nullable(string()),
                "response_excerpt": string(),
                "payload": free_object("The payload that was sent."),
                "api_key_id": nullable(uuid_()),
                "created_at": datetime_(),
                "endpoint_id": nullable(uuid_(description="The registered endpoint; null for a bare test URL.")),
                "event_id": nullable(uuid_(description="The event sent (also the webhook-id header).")),
                "attempt": nullable(integer(minimum=1, description="1 for the first try of an event, 2 …")),
                "duration_ms": nullable(integer(minimum=0)),
            }
        ),
        "A recorded webhook attempt: a test, or one try of an event to a registered endpoint.",
    )


def _webhook_endpoint() -> Schema:
    return ext(
        obj(
            {
                "id": uuid_(),
                "url": string("uri"),
                "description": string(maxLength=500),
                "event_types": array(string(), description="Event types sent; empty: every type."),
                "enabled": boolean(),
                "status": enum(["healthy", "failing", "disabled"]),
                "failing_since": nullable(datetime_(description="First failed attempt since the last success.")),
                "disabled_reason": nullable(string()),
                "previous_secret_expires_at": nullable(
                    datetime_(description="Until then the secret replaced by the last rotation also signs.")
                ),
                "created_at": datetime_(),
                "updated_at": datetime_(),
            }
        ),
        "A registered receiver of the organisation's events (docs/webhooks.md). Never shows its secret.",
    )


def _webhook_endpoint_with_secret() -> Schema:
    secret = obj({"secret": string(pattern="^whsec_", description="Shown only by create and rotate.")})
    return ext({"allOf": [ref("WebhookEndpoint"), secret]}, "An endpoint with its signing secret.")


def _methodology_profile() -> Schema:
    return ext(
        obj(
            {
                "id": uuid_(),
                "code": string(),
                "name": string(),
                "description": string(),
                "boundary": enum(["WTW", "TTW"], description="Well-to-wheel or tank-to-wheel."),
                "factor_version_id": uuid_(),
                "is_default": boolean(),
                "created_at": datetime_(),
            }
        ),
        "A seeded methodology profile (DESIGN.md §6).",
    )


def _legacy_report() -> Schema:
    successor = obj(
        {
            "workspace_id": nullable(uuid_()),
            "workspace_url": nullable(string("uri")),
            "report_pack_id": nullable(uuid_()),
            "report_pack_url": nullable(string("uri")),
        },
        description="The v2 workspace/pack that used this report, where one did (links are null otherwise).",
    )
    return ext(
        obj(
            {
                "id": uuid_(),
                "org_id": uuid_(),
                "title": string(),
                "reporting_period_start": nullable(date_()),
                "reporting_period_end": nullable(date_()),
                "status": enum(["draft", "final"]),
                "total_co2e_kg": number(minimum=0),
                "shipment_count": integer(minimum=0),
                "created_at": datetime_(),
                "updated_at": datetime_(),
                "successor": successor,
            }
        ),
        "Legacy v1 report (fields: DESIGN.md §10; the contract does not show them).",
    )


def _shipment_row() -> Schema:
    return ext(
        request_obj(
            {
                "external_id": LABEL,
                "mode": enum(TransportMode),
                "distance_km": number(minimum=0, maximum=50_000),
                "mass_tonnes": number(minimum=0, maximum=1_000_000),
                "origin": LABEL,
                "destination": LABEL,
                "fuel_type": enum(FuelType, description="litres: diesel, petrol, hvo; kg: cng … jet_kerosene; kWh"),
                "fuel_amount": number(
                    exclusiveMinimum=0, maximum=1e9, description="Fuel or energy used, in the unit of fuel_type."
                ),
                "carrier_intensity_g_per_tkm": number(exclusiveMinimum=0, maximum=1e6),
                "distance_source": enum(DistanceSource, default=DistanceSource.measured.value),
                "carrier_intensity_basis": enum(
                    IntensityBasis, description="Boundary of carrier_intensity_g_per_tkm; required with it."
                ),
                "vehicle_payload_tonnes": number(
                    exclusiveMinimum=0,
                    maximum=1_000_000,
                    description="With fuel: the vehicle's total payload on the trip; share = mass / payload.",
                ),
                "fuel_allocation_share": number(
                    exclusiveMinimum=0, maximum=1, description="With fuel: the carrier's allocation share."
                ),
                "distance_type": enum(DistanceType, description="actual, sfd or gcd (GLEC distance types)."),
                "shipment_date": date_(),
            },
            required=[],
            not_null=frozenset({"distance_source"}),
        ),
        "A shipment row; absent measures are stored and counted as missing by the calculation.",
    )


def _error() -> Schema:
    details = obj(
        {
            "code": string(description="Stable machine code (bad_request, not_found, invalid_input, …)."),
            "fields": {
                "type": "object",
                "additionalProperties": string(),
                "description": "422 only: each invalid field (JSON path) and why.",
            },
            "request_id": string(description="The answer's X-Request-ID: quote it when reporting a problem."),
        },
        required=["code", "request_id"],
        description="Free-form details; always carries code and request_id.",
    )
    return obj({"error": string(description="Short message."), "details": details}, required=["error", "details"])


def _pagination() -> Schema:
    return obj({"page": integer(minimum=1), "per_page": integer(minimum=1, maximum=100), "total": integer(minimum=0)})


def component_schemas() -> dict[str, Schema]:
    return {
        "ErrorResponse": _error(),
        "PaginationMeta": _pagination(),
        "Workspace": _workspace(),
        "WorkspaceDetail": _workspace_detail(),
        "ImportBatch": _import_batch(),
        "ShipmentRow": _shipment_row(),
        "CalculationRun": _calculation_run(),
        "DataQualityAssessment": _quality(),
        "ReportPack": _report_pack(),
        "ReportPackDetail": _pack_detail(),
        "PackArtifact": _artifact(),
        "ApprovalActionResult": _approval_result(),
        "ApprovalAction": ext(_approval_action()),
        "CalculationRunDetail": ext(_calculation_run_detail()),
        "Event": ext(_event()),
        "EventPage": ext(_event_page()),
        "EvidenceItem": _evidence_item(),
        "WebhookTestResult": _webhook_result(),
        "WebhookDelivery": _webhook_delivery(),
        "WebhookEndpoint": _webhook_endpoint(),
        "WebhookEndpointWithSecret": _webhook_endpoint_with_secret(),
        "MethodologyProfile": _methodology_profile(),
        "LegacyReport": _legacy_report(),
    }


__all__ = [
    "EXT",
    "LABEL",
    "NAME",
    "SHORT_TEXT",
    "array",
    "as_input",
    "boolean",
    "component_schemas",
    "data_envelope",
    "date_",
    "enum",
    "ext",
    "free_object",
    "integer",
    "meta_envelope",
    "nullable",
    "number",
    "obj",
    "page_envelope",
    "ref",
    "request_obj",
    "string",
    "uuid_",
]
