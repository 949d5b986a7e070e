#!/usr/bin/env python3
"""Validates Gable's served OpenAPI description, independently of the Rust code that makes it.

    validate.py FILE [--server-url URL] [--label NAME]

1. `openapi-spec-validator` (PyPI) validates FILE as an OpenAPI 3.1 document.
2. Plain-Python checks of what Gable promises (`docs/api.md`): the registry's collections
   and no others, each with exactly the operations it offers (the list below, which
   `make generate` writes from `gable collections`: committed, not asked of the server under
   test), unique operationIds, closed write schemas, resolvable `$ref`s, per-operation
   scopes, the public description endpoint, the statuses the layers in front of every
   handler answer (429, 503, 413, and 409/422 on every POST) on every operation they serve,
   and links from each create to what can be done with its record.

Prints one line per failed check and exits 1 if any failed, 2 on a usage or load error.
"""

from __future__ import annotations

import argparse
import json
import re
import sys

# Every collection (its path segment) and the operations the API offers on it: `list` and
# `get` always; `create`, `update` and `delete` unless the collection refuses that write
# outright (docs/api.md, "Records" and "Writes").
# BEGIN GENERATED collections: `make generate` writes these from `gable collections`.
COLLECTIONS = {
    "organizations": ("list", "get", "create", "update", "delete"),
    "companies": ("list", "get", "create", "update", "delete"),
    "users": ("list", "get", "create", "update", "delete"),
    "roles": ("list", "get", "create", "update", "delete"),
    "owners": ("list", "get", "create", "update", "delete"),
    "properties": ("list", "get", "create", "update", "delete"),
    "buildings": ("list", "get", "create", "update", "delete"),
    "units": ("list", "get", "create", "update", "delete"),
    "rooms": ("list", "get", "create", "update", "delete"),
    "beds": ("list", "get", "create", "update", "delete"),
    "listings": ("list", "get", "create", "update", "delete"),
    "leads": ("list", "get", "create", "update", "delete"),
    "viewings": ("list", "get", "create", "update", "delete"),
    "applications": ("list", "get", "create", "update", "delete"),
    "screening": ("list", "get", "create", "update", "delete"),
    "leases": ("list", "get", "create", "update", "delete"),
    "signatures": ("list", "get", "create", "update", "delete"),
    "tenancies": ("list", "get", "create", "update", "delete"),
    "bookings": ("list", "get", "create", "update", "delete"),
    "guests": ("list", "get", "create", "update", "delete"),
    "charges": ("list", "get", "create", "update"),
    "invoices": ("list", "get", "create", "update", "delete"),
    "payments": ("list", "get", "create", "update"),
    "refunds": ("list", "get", "create", "update"),
    "accounting-entries": ("list", "get", "create"),
    "workorders": ("list", "get", "create", "update", "delete"),
    "inspections": ("list", "get", "create", "update", "delete"),
    "assets": ("list", "get", "create", "update", "delete"),
    "vendors": ("list", "get", "create", "update", "delete"),
    "purchase-orders": ("list", "get", "create", "update", "delete"),
    "documents": ("list", "get", "create", "update", "delete"),
    "tasks": ("list", "get", "create", "update", "delete"),
    "messages": ("list", "get", "create", "update", "delete"),
    "events": ("list", "get"),
    "reports": ("list", "get", "create", "update"),
    "webhooks": ("list", "get", "create", "update", "delete"),
    "webhook-deliveries": ("list", "get"),
    "flow-tokens": ("list", "get", "create"),
    "request-logs": ("list", "get"),
    "imports": ("list", "get", "create"),
}
# END GENERATED collections
# Written by Gable only (405 on writes), so no POST is described.
READ_ONLY = {name for name, ops in COLLECTIONS.items() if "create" not in ops}
# Made by uploading a file (docs/imports.md): its create's body is the file, not JSON, and
# is not held under an Idempotency-Key.
UPLOADED = {"imports"}
# Where each operation is described: (path suffix, method).
OPERATIONS = {"list": ("", "get"), "get": ("/{id}", "get"), "create": ("", "post"),
              "update": ("/{id}", "patch"), "delete": ("/{id}", "delete")}
# The webhook commands beyond the collections' own operations, written out here:
# path -> (operationId, success status, extra error statuses). All need `webhooks:write`,
# whichever collection the path names.
WEBHOOK_COMMANDS = {
    "/v1/webhooks/{id}/rotate_secret": ("rotate_webhook_secret", "200", ()),
    "/v1/webhooks/{id}/test": ("send_webhook_test", "201", ("409",)),
    "/v1/webhooks/{id}/recover": ("recover_webhook", "200", ()),
    "/v1/webhook-deliveries/{id}/replay": ("replay_webhook_delivery", "201", ()),
    "/v1/events/{id}/replay": ("replay_event", "201", ()),
}
# The sandbox clock, on no collection: path -> (method, operationId, responses).
SANDBOX_CLOCK = {
    "/v1/sandbox/clock": ("get", "get_sandbox_clock", {"200", "400", "401", "404", "413", "429", "500", "503"}),
    "/v1/sandbox/clock/advance": ("post", "advance_sandbox_clock",
                                  {"200", "400", "401", "403", "404", "409", "413", "415", "422", "429", "500", "503"}),
}
# What a receiver needs to verify a delivery (docs/api.md, "Webhooks"), in the API description.
SIGNATURE_TERMS = ("Gable-Event-Id", "Gable-Timestamp", "Gable-Signature", "v1=", "HMAC-SHA256",
                   "<Gable-Timestamp>.<raw body>", "300 s", "24 h", "created_at", "410",
                   "5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h")
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
MAX_BYTES = 2 * 1024 * 1024


class Checks:
    def __init__(self) -> None:
        self.failures: list[str] = []
        self.count = 0

    def check(self, ok: bool, message: str) -> bool:
        self.count += 1
        if not ok:
            self.failures.append(message)
        return ok


def operations(doc: dict):
    """(path, method, operation) for every operation."""
    for path, item in doc.get("paths", {}).items():
        for method in METHODS:
            if method in item:
                yield path, method, item[method]


def resolve_pointer(doc: dict, ref: str):
    if not ref.startswith("#/"):
        return None
    node = doc
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        else:
            return None
    return node


def all_refs(node, where="#"):
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield where, ref
        for k, v in node.items():
            yield from all_refs(v, f"{where}/{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from all_refs(v, f"{where}/{i}")


def deref(doc: dict, node):
    seen = 0
    while isinstance(node, dict) and "$ref" in node and seen < 20:
        node = resolve_pointer(doc, node["$ref"]) or {}
        seen += 1
    return node


def spec_validation(doc: dict, c: Checks) -> None:
    try:
        from openapi_spec_validator import OpenAPIV31SpecValidator
    except ImportError:
        c.check(False, "openapi-spec-validator is not installed in this Python "
                       "(run .ci/install-tools or tests/openapi/validate.sh)")
        return
    try:
        errors = list(OpenAPIV31SpecValidator(doc).iter_errors())
    except Exception as e:  # the validator raises instead of reporting, e.g. on a dangling $ref
        c.check(False, f"openapi-spec-validator stopped: {type(e).__name__}: {str(e).split(' within ')[0][:300]}")
        return
    for e in errors[:25]:
        path = "/".join(str(p) for p in getattr(e, "absolute_path", []) or [])
        c.check(False, f"openapi-spec-validator: {e.message} (at {path or '/'})")
    if len(errors) > 25:
        c.check(False, f"openapi-spec-validator: … and {len(errors) - 25} more errors")
    c.check(True, "")


def gable_checks(doc: dict, raw_size: int, server_url: str | None, c: Checks) -> None:
    c.check(doc.get("openapi") == "3.1.0", f"openapi is {doc.get('openapi')!r}, expected '3.1.0'")
    info = doc.get("info", {})
    c.check(info.get("title") == "Gable API", f"info.title is {info.get('title')!r}")
    c.check(bool(re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(info.get("version", "")))),
            f"info.version {info.get('version')!r} is not a dated version (YYYY-MM-DD)")
    c.check(raw_size <= MAX_BYTES, f"the document is {raw_size} bytes, more than {MAX_BYTES}")

    servers = doc.get("servers") or []
    if c.check(len(servers) >= 1, "no servers entry"):
        if server_url is not None:
            c.check(servers[0].get("url") == server_url,
                    f"servers[0].url is {servers[0].get('url')!r}, expected this listener's {server_url!r}")

    paths = doc.get("paths", {})
    schemas = doc.get("components", {}).get("schemas", {})

    # The description endpoint itself: present and public.
    desc = paths.get("/v1/openapi.json", {}).get("get")
    if c.check(desc is not None, "GET /v1/openapi.json is not described"):
        c.check(desc.get("security") == [], "GET /v1/openapi.json must be public (security: [])")

    # The collections: the registry's, no more (every collection has a record path).
    described = [m.group(1) for p in paths if (m := re.fullmatch(r"/v1/([a-z-]+)/\{id\}", p))]
    c.check(sorted(described) == sorted(COLLECTIONS),
            f"the collections differ from the list: described but not listed {sorted(set(described) - set(COLLECTIONS))}, "
            f"listed but not described {sorted(set(COLLECTIONS) - set(described))} (run `make generate` if the registry changed)")
    # Every collection: exactly the operations it offers, as docs/api.md ("Writes") says.
    for name, offered in COLLECTIONS.items():
        item = paths.get(f"/v1/{name}")
        if not c.check(item is not None and "get" in item, f"collection {name}: no GET /v1/{name}"):
            continue
        for op, (suffix, method) in OPERATIONS.items():
            where = f"{method.upper()} /v1/{name}{suffix}"
            present = method in paths.get(f"/v1/{name}{suffix}", {})
            if op in offered:
                c.check(present, f"collection {name}: {where} ({op}) is not described")
            else:
                c.check(not present, f"collection {name} refuses {op}, but {where} is described")
        list_params = [deref(doc, p) for p in item["get"].get("parameters", [])]
        names = {p.get("name") for p in list_params}
        for required in ("limit", "cursor", "sort", f"fields[{name}]"):
            c.check(required in names, f"GET /v1/{name}: no `{required}` parameter")
        limit = next((p for p in list_params if p.get("name") == "limit"), {}).get("schema", {})
        c.check((limit.get("minimum"), limit.get("maximum"), limit.get("default")) == (1, 100, 25),
                f"GET /v1/{name}: limit must be 1..100, default 25; got {limit}")
        # The filters: one `filter` object sent form/explode, its properties named as the query keys.
        flt = next((p for p in list_params if p.get("name") == "filter"), None)
        if c.check(flt is not None, f"GET /v1/{name}: no `filter` parameter"):
            c.check((flt.get("style"), flt.get("explode")) == ("form", True), f"GET /v1/{name}: `filter` must be form/explode")
            props = deref(doc, flt.get("schema", {})).get("properties", {})
            c.check("filter[id]" in props and all(k.startswith("filter[") for k in props),
                    f"GET /v1/{name}: `filter` properties must be the query keys, got {sorted(props)[:5]}")
        c.check(not any(str(n).startswith("filter[") for n in names), f"GET /v1/{name}: a filter outside the `filter` object")

    # operationIds: present and unique. Scopes: read for GET, write otherwise.
    seen: dict[str, str] = {}
    # The credentials Gable accepts: API keys as bearer tokens, and OAuth 2.1 access tokens
    # (authorization code with PKCE) holding the operation's scope.
    schemes = doc.get("components", {}).get("securitySchemes", {})
    c.check(set(schemes) == {"api_key", "oauth2"}, f"securitySchemes must be exactly api_key and oauth2, got {sorted(schemes)}")
    flow = schemes.get("oauth2", {}).get("flows", {}).get("authorizationCode", {})
    c.check(flow.get("authorizationUrl") == "/oauth/authorize" and flow.get("tokenUrl") == "/oauth/token",
            f"oauth2 must be the authorization code flow at /oauth/authorize and /oauth/token, got {flow}")
    oauth_scopes = set(flow.get("scopes", {}))
    c.check({"properties:read", "leases:read", "payments:write", "*:read", "*"} <= oauth_scopes, "oauth2 lacks scopes the description promises")
    api_key = schemes.get("api_key", {})
    c.check(api_key.get("type") == "http" and str(api_key.get("scheme", "")).lower() == "bearer",
            f"api_key must be an http bearer scheme, got {api_key}")
    for path, method, op in operations(doc):
        where = f"{method.upper()} {path}"
        # What the layers in front of every handler answer (docs/api.md, "The API
        # description"): a bad Gable-Version and a declared body over 1 MiB everywhere; a
        # credential's refusal, its rate limit and an unavailable database on every
        # authenticated operation; an Idempotency-Key in use or reused on every POST.
        responses = op.get("responses", {})
        layered = {"400", "413"}
        if path != "/v1/openapi.json":
            layered |= {"401", "429", "503"}
        upload = "text/csv" in op.get("requestBody", {}).get("content", {})
        if method == "post" and not upload:
            layered |= {"409", "422"}
        c.check(layered <= set(responses), f"{where}: lacks {sorted(layered - set(responses))}, which the layers answer")
        if "429" in responses:
            too_many = deref(doc, responses["429"])
            c.check({"Retry-After", "RateLimit", "RateLimit-Policy"} <= set(too_many.get("headers", {})),
                    f"{where}: 429 lacks Retry-After or the RateLimit fields")
        if "503" in responses:
            c.check("Retry-After" in deref(doc, responses["503"]).get("headers", {}), f"{where}: 503 lacks Retry-After")
        op_id = op.get("operationId")
        if c.check(bool(op_id), f"{where}: no operationId"):
            c.check(op_id not in seen, f"operationId {op_id!r} used by {seen.get(op_id)} and {where}")
            seen[op_id] = where
        # Collections' operations, their actions and the webhook commands.
        m = re.fullmatch(r"/v1/([a-z-]+)(/\{id\}(/[a-z_]+)?)?", path)
        if not m or m.group(1) not in COLLECTIONS:
            continue
        collection = m.group(1)
        want = f"{collection}:read" if method == "get" else f"{collection}:write"
        if path in WEBHOOK_COMMANDS:
            want = "webhooks:write"
        elif m.group(3) and method == "post" and collection in READ_ONLY:
            c.check(False, f"{where}: {collection} is written by Gable only, and this is no known command")
        security = op.get("security") or []
        c.check(security == [{"api_key": []}, {"oauth2": [want]}], f"{where}: security must be an API key or an OAuth token with {want}, got {security}")
        c.check(want in oauth_scopes, f"{where}: scope {want} is not an oauth2 scope")
        c.check(f"Needs the scope `{want}`" in op.get("description", ""), f"{where}: the description must name scope {want!r}")
        c.check("401" in op.get("responses", {}), f"{where}: no 401 response")
        for status, resp in op.get("responses", {}).items():
            resp = deref(doc, resp)
            content = resp.get("content", {}).get("application/json", {})
            if status.startswith(("4", "5")):
                c.check(content.get("schema") == {"$ref": "#/components/schemas/Error"},
                        f"{where}: {status} does not use the Error schema")
            c.check("Request-Id" in resp.get("headers", {}), f"{where}: {status} lacks the Request-Id header")
        body = op.get("requestBody")
        if body is not None and "application/json" in body.get("content", {}):
            schema = deref(doc, body.get("content", {}).get("application/json", {}).get("schema", {}))
            c.check(schema.get("additionalProperties") is False,
                    f"{where}: request body schema accepts unknown fields (additionalProperties is not false)")

    # Links: each create's 201 leads to the operations on the record it made, by its id.
    op_ids = {op.get("operationId"): path for path, _, op in operations(doc)}
    for path, method, op in operations(doc):
        if method != "post" or not re.fullmatch(r"/v1/[a-z-]+", path):
            continue
        links = op.get("responses", {}).get("201", {}).get("links", {})
        c.check(bool(links), f"POST {path}: its 201 has no links")
        for name, link in links.items():
            target = op_ids.get(link.get("operationId"))
            c.check(target is not None and target.startswith(path + "/{id}"),
                    f"POST {path}: link {name} leads to {link.get('operationId')!r}, not an operation on the record")
            c.check(link.get("parameters") == {"id": "$response.body#/data/id"}, f"POST {path}: link {name} does not pass the new id")

    # The webhook commands: each one POST with its id, its success and the statuses it can get.
    for path, (op_id, success, extra) in WEBHOOK_COMMANDS.items():
        op = paths.get(path, {}).get("post")
        if not c.check(op is not None, f"POST {path} is not described"):
            continue
        c.check(op.get("operationId") == op_id, f"POST {path}: operationId {op.get('operationId')!r}, expected {op_id!r}")
        want = {success, "400", "401", "403", "404", "409", "413", "415", "422", "429", "500", "503", *extra}
        got = set(op.get("responses", {}))
        c.check(got == want, f"POST {path}: responses {sorted(got)}, expected {sorted(want)}")
    # The sandbox clock: both operations, their statuses, the clock's schema.
    for path, (method, op_id, want) in SANDBOX_CLOCK.items():
        op = paths.get(path, {}).get(method)
        if not c.check(op is not None, f"{method.upper()} {path} is not described"):
            continue
        c.check(op.get("operationId") == op_id, f"{path}: operationId {op.get('operationId')!r}, expected {op_id!r}")
        got = set(op.get("responses", {}))
        c.check(got == want, f"{path}: responses {sorted(got)}, expected {sorted(want)}")
        c.check(op.get("security") in ([{"api_key": []}, {"oauth2": []}], [{"api_key": []}, {"oauth2": ["*"]}]),
                f"{path}: security must be an API key or an OAuth token, got {op.get('security')}")
    clock = schemas.get("SandboxClock", {})
    c.check(set(clock.get("required", [])) == {"object", "now"}, f"schema SandboxClock: required {clock.get('required')}")
    recovery = schemas.get("WebhookRecovery", {})
    c.check(set(recovery.get("required", [])) == {"object", "webhook_id", "since", "deliveries_queued"},
            f"schema WebhookRecovery: required {recovery.get('required')}")

    # Receiving webhooks: the signature scheme in the description, its headers on every webhook.
    text = info.get("description", "")
    for term in SIGNATURE_TERMS:
        c.check(term in text, f"info.description does not explain webhook delivery: no {term!r}")
    for name, hook in doc.get("webhooks", {}).items():
        post = hook.get("post", {})
        headers = {deref(doc, p).get("name") for p in post.get("parameters", []) if deref(doc, p).get("in") == "header"}
        c.check({"Gable-Event-Id", "Gable-Timestamp", "Gable-Signature"} <= headers,
                f"webhook {name}: headers {sorted(h for h in headers if h)}, expected the three Gable- headers")
        c.check("410" in post.get("responses", {}), f"webhook {name}: no 410 (disables the subscription)")

    # Write schemas: closed, and their required fields exist.
    creates = [n for n in schemas if n.endswith("Create")]
    c.check(len(creates) == len(COLLECTIONS) - len(READ_ONLY) - len(UPLOADED),
            f"expected {len(COLLECTIONS) - len(READ_ONLY) - len(UPLOADED)} *Create schemas, found {len(creates)}")
    for n in creates + [n for n in schemas if n.endswith("Update")]:
        s = schemas[n]
        c.check(s.get("additionalProperties") is False, f"schema {n}: additionalProperties must be false")
        missing = [r for r in s.get("required", []) if r not in s.get("properties", {})]
        c.check(not missing, f"schema {n}: required {missing} not among its properties")
        # "At least one of" rules: anyOf (or allOf of anyOf) of required lists of real properties.
        groups = [s["anyOf"]] if "anyOf" in s else [g.get("anyOf", []) for g in s.get("allOf", [])]
        for alternatives in groups:
            for alt in alternatives:
                names = alt.get("required", [])
                c.check(bool(names) and all(r in s.get("properties", {}) for r in names),
                        f"schema {n}: anyOf alternative {alt} must require properties of the schema")
        if n.endswith("Update"):
            c.check(not s.get("required"), f"schema {n}: update fields must all be optional")
            c.check(s.get("minProperties") == 1, f"schema {n}: minProperties must be 1")
    c.check("Error" in schemas and "error" in schemas["Error"].get("properties", {}),
            "components.schemas.Error must describe {error: {...}}")

    # Every $ref resolves.
    for where, ref in all_refs(doc):
        c.check(resolve_pointer(doc, ref) is not None, f"{where}: $ref {ref!r} does not resolve")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", help="the OpenAPI document (JSON)")
    ap.add_argument("--server-url", help="the base address servers[0].url must be")
    ap.add_argument("--label", default=None, help="name to print for this document")
    args = ap.parse_args()
    label = args.label or args.file
    try:
        with open(args.file, "rb") as f:
            raw = f.read()
        doc = json.loads(raw)
    except (OSError, ValueError) as e:
        print(f"FAIL {label}: cannot load the document: {e}", file=sys.stderr)
        return 2
    if not isinstance(doc, dict):
        print(f"FAIL {label}: the document is not a JSON object", file=sys.stderr)
        return 2

    c = Checks()
    spec_validation(doc, c)
    gable_checks(doc, len(raw), args.server_url, c)

    ops = sum(1 for _ in operations(doc))
    if c.failures:
        for f in c.failures:
            print(f"FAIL {label}: {f}", file=sys.stderr)
        print(f"{label}: {len(c.failures)} of {c.count} checks failed", file=sys.stderr)
        return 1
    print(f"ok {label}: valid OpenAPI {doc['openapi']} (openapi-spec-validator), {len(raw)} bytes, "
          f"{len(doc['paths'])} paths, {ops} operations, "
          f"{len(doc.get('components', {}).get('schemas', {}))} schemas; {c.count} checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
