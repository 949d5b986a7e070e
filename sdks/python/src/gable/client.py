"""The Gable client: one object per base address and credential, standard library only.

Every collection is an attribute (``client.leases``, ``client.purchase_orders`` for
``purchase-orders``) with ``list`` (auto-paginating), ``get``, ``create``, ``update``,
``delete`` and ``action``; every call that answers records takes ``expand`` (references
answered with their records) and ``fields`` (sparse fieldsets). Every POST carries an
``Idempotency-Key`` (one per call, reused by its retries); 429, 5xx and network errors are
retried with jittered exponential backoff, honouring ``Retry-After``.
"""

from __future__ import annotations

import json
import random
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from typing import Any, Dict, Iterator, Mapping, Optional, Sequence, Union

from .errors import GableError, error_from

#: The API version this kit is written against (sent as ``Gable-Version``).
API_VERSION = "2026-11-22"

#: Base addresses of a default local installation (``gable serve``).
LIVE = "http://127.0.0.1:8080/v1"
SANDBOX = "http://127.0.0.1:8081/v1"

JSON = Dict[str, Any]
Filter = Union[str, int, float, bool, Sequence[Any], Mapping[str, Any]]
#: The fields to answer: a list for the call's own collection (``["id", "rent"]``), or a
#: mapping of collection to fields, for expanded records too
#: (``{"leases": ["rent"], "units": ["number"]}``).
Fields = Union[Sequence[str], Mapping[str, Sequence[str]]]
#: Reference paths to expand (``["unit", "unit.property"]``); a string is one path.
Expand = Union[str, Sequence[str]]

#: The API's collections; each is an attribute of a client (``purchase-orders`` is
#: ``client.purchase_orders``).
# BEGIN GENERATED collections: `make generate` writes these from `gable collections`.
COLLECTIONS = (
    "organizations", "companies", "users", "roles", "owners", "properties", "buildings", "units",
    "rooms", "beds", "listings", "leads", "viewings", "applications", "screening", "leases",
    "signatures", "tenancies", "bookings", "guests", "charges", "invoices", "payments", "refunds",
    "accounting-entries", "workorders", "inspections", "assets", "vendors", "purchase-orders",
    "documents", "tasks", "messages", "events", "reports", "webhooks", "webhook-deliveries",
    "flow-tokens", "request-logs", "imports",
)
# END GENERATED collections


class Client:
    """A client for one environment.

    ``base_url`` is the environment's API address (``.../v1`` is added when missing); use
    ``Client.sandbox(key)`` / ``Client.live(key)`` for a default local installation.
    ``api_key`` is an API key (``gbl_live_…``, ``gbl_test_…``) or an OAuth access token.
    """

    def __init__(
        self,
        api_key: str,
        base_url: str = SANDBOX,
        *,
        max_retries: int = 3,
        timeout: float = 30.0,
        backoff: float = 0.5,
        max_backoff: float = 8.0,
    ) -> None:
        if not api_key:
            raise ValueError("an API key or access token is required")
        base = base_url.rstrip("/")
        self.base_url = base if base.endswith("/v1") else base + "/v1"
        self.api_key = api_key
        self.max_retries = max_retries
        self.timeout = timeout
        self.backoff = backoff
        self.max_backoff = max_backoff

    @classmethod
    def sandbox(cls, api_key: str, base_url: str = SANDBOX, **kw: Any) -> "Client":
        return cls(api_key, base_url, **kw)

    @classmethod
    def live(cls, api_key: str, base_url: str = LIVE, **kw: Any) -> "Client":
        return cls(api_key, base_url, **kw)

    def collection(self, name: str) -> "Collection":
        """A collection by its API name (``"purchase-orders"``)."""
        return Collection(self, name)

    def __getattr__(self, attr: str) -> "Collection":
        name = attr.replace("_", "-")
        if attr.startswith("_") or name not in COLLECTIONS:
            raise AttributeError(f"Gable has no collection named {attr!r}; see gable.COLLECTIONS")
        return Collection(self, name)

    def __dir__(self) -> list:
        return sorted(set(super().__dir__()) | {name.replace("-", "_") for name in COLLECTIONS})

    @property
    def payments(self) -> "Payments":
        return Payments(self, "payments")

    # ---- transport -------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Sequence[tuple]] = None,
        body: Optional[JSON] = None,
        idempotency_key: Optional[str] = None,
    ) -> JSON:
        """Sends one request (with retries); returns the decoded JSON answer."""
        url = self.base_url + path
        if query:
            url += "?" + urllib.parse.urlencode(list(query))
        headers = {
            "Authorization": f"Bearer {self.api_key}",
            "Gable-Version": API_VERSION,
            "Accept": "application/json",
            "User-Agent": "gable-python/0.1.0",
        }
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if method == "POST":
            # One key per call: its retries reuse it, so a retried POST is made once.
            headers["Idempotency-Key"] = idempotency_key or str(uuid.uuid4())
        attempt = 0
        while True:
            req = urllib.request.Request(url, data=data, method=method, headers=headers)
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    raw = resp.read()
                    return json.loads(raw) if raw else {}
            except urllib.error.HTTPError as e:
                raw = e.read()
                retry_after = e.headers.get("Retry-After")
                err = error_from(e.code, raw, e.headers.get("Request-Id"))
                if attempt < self.max_retries and (e.code == 429 or e.code >= 500):
                    self._sleep(attempt, retry_after)
                    attempt += 1
                    continue
                raise err from None
            except (urllib.error.URLError, ConnectionError, TimeoutError) as e:
                if attempt < self.max_retries:
                    self._sleep(attempt, None)
                    attempt += 1
                    continue
                raise GableError(0, "network_error", f"could not reach Gable: {e}") from e

    def _sleep(self, attempt: int, retry_after: Optional[str]) -> None:
        if retry_after and retry_after.strip().isdigit():
            delay = float(retry_after.strip())
        else:
            # Full jitter: a random wait up to the exponential bound.
            delay = random.uniform(0, min(self.max_backoff, self.backoff * (2**attempt)))
        time.sleep(delay)


def _query(
    filters: Optional[Mapping[str, Filter]],
    sort: Optional[Union[str, Sequence[str]]],
    fields: Optional[Fields],
    limit: Optional[int],
    collection: str,
    expand: Optional[Expand] = None,
) -> list:
    q: list = []
    for field, value in (filters or {}).items():
        if isinstance(value, Mapping):
            for op, v in value.items():
                q.append((f"filter[{field}][{op}]", _value(v)))
        else:
            q.append((f"filter[{field}]", _value(value)))
    if sort:
        q.append(("sort", sort if isinstance(sort, str) else ",".join(sort)))
    q += _shape(collection, fields, expand)
    if limit:
        q.append(("limit", str(limit)))
    return q


def _shape(collection: str, fields: Optional[Fields], expand: Optional[Expand]) -> list:
    """The answer's shape as query pairs: ``fields[<collection>]=a,b`` per fieldset, and one
    ``expand[]=<path>`` per path (the API's repeated form)."""
    q: list = []
    if fields:
        sets = fields.items() if isinstance(fields, Mapping) else [(collection, fields)]
        for name, names in sets:
            q.append((f"fields[{name}]", names if isinstance(names, str) else ",".join(names)))
    for path in [expand] if isinstance(expand, str) else (expand or ()):
        q.append(("expand[]", path))
    return q


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return ",".join(_value(x) for x in v)
    return str(v)


class Collection:
    """One collection of the API (``/v1/{name}``)."""

    def __init__(self, client: Client, name: str) -> None:
        self.client = client
        self.name = name

    def list(
        self,
        *,
        filters: Optional[Mapping[str, Filter]] = None,
        sort: Optional[Union[str, Sequence[str]]] = None,
        fields: Optional[Fields] = None,
        limit: Optional[int] = None,
        expand: Optional[Expand] = None,
    ) -> Iterator[JSON]:
        """Every record matching the options, page after page (follows ``next_cursor``; stops
        at a page without ``has_more``, or without a ``next_cursor`` to follow). Every page is
        asked with the same options, ``expand`` included.

        ``filters={"status": "active", "rent": {"gte": 1000}, "currency": "USD"}``;
        ``expand=["unit", "unit.property"]`` answers each lease's ``unit_id`` with the unit,
        and the unit's ``property_id`` with the property.
        """
        query = _query(filters, sort, fields, limit, self.name, expand)
        cursor: Optional[str] = None
        while True:
            page = self.client.request("GET", f"/{self.name}", query=query + ([("cursor", cursor)] if cursor else []))
            yield from page.get("data", [])
            meta = page.get("meta") or {}
            cursor = meta.get("next_cursor")
            # Without a cursor there is no next page to ask for: asking again without one
            # would start over from the first page, forever.
            if not meta.get("has_more") or not cursor:
                return

    def page(self, **options: Any) -> JSON:
        """One page as the API answers it (``data`` and ``meta``); the options of ``list``,
        plus ``cursor``."""
        cursor = options.pop("cursor", None)
        query = _query(
            options.get("filters"), options.get("sort"), options.get("fields"), options.get("limit"), self.name, options.get("expand")
        )
        return self.client.request("GET", f"/{self.name}", query=query + ([("cursor", cursor)] if cursor else []))

    def get(self, id: str, *, expand: Optional[Expand] = None, fields: Optional[Fields] = None) -> JSON:
        """One record; ``expand=["unit"]`` answers its ``unit_id`` with the unit itself."""
        return self.client.request("GET", f"/{self.name}/{_id(id)}", query=_shape(self.name, fields, expand))["data"]

    def create(
        self,
        body: JSON,
        *,
        idempotency_key: Optional[str] = None,
        expand: Optional[Expand] = None,
        fields: Optional[Fields] = None,
    ) -> JSON:
        """Creates a record; ``expand`` and ``fields`` shape the record answered."""
        query = _shape(self.name, fields, expand)
        return self.client.request("POST", f"/{self.name}", query=query, body=body, idempotency_key=idempotency_key)["data"]

    def update(self, id: str, body: JSON, *, expand: Optional[Expand] = None, fields: Optional[Fields] = None) -> JSON:
        """Changes the fields in ``body`` (PATCH); ``expand`` and ``fields`` shape the answer."""
        return self.client.request("PATCH", f"/{self.name}/{_id(id)}", query=_shape(self.name, fields, expand), body=body)["data"]

    def delete(self, id: str) -> JSON:
        return self.client.request("DELETE", f"/{self.name}/{_id(id)}")["data"]

    def action(
        self,
        id: str,
        action: str,
        body: Optional[JSON] = None,
        *,
        idempotency_key: Optional[str] = None,
        expand: Optional[Expand] = None,
        fields: Optional[Fields] = None,
    ) -> JSON:
        """Runs a state-machine action (``leases.action(id, "send")``); ``expand`` and
        ``fields`` shape the record answered."""
        query = _shape(self.name, fields, expand)
        path = f"/{self.name}/{_id(id)}/{action}"
        return self.client.request("POST", path, query=query, body=body, idempotency_key=idempotency_key)["data"]


class Payments(Collection):
    def create_test_payment(
        self,
        scenario: str,
        amount: Union[str, int],
        currency: str,
        *,
        idempotency_key: Optional[str] = None,
        expand: Optional[Expand] = None,
        **fields: Any,
    ) -> JSON:
        """A sandbox payment whose outcome is ``scenario`` (``succeeded``, ``failed``,
        ``reversed``), always with an ``Idempotency-Key`` (pass your own to retry safely
        across processes). ``amount`` is a decimal string or integer in major units; other
        keyword arguments are fields of the body (``invoice_id=…``), and ``expand``
        (``["invoice"]``) shapes the payment answered."""
        body = {"scenario": scenario, "amount": amount, "currency": currency, **fields}
        return self.create(body, idempotency_key=idempotency_key or str(uuid.uuid4()), expand=expand)


def _id(id: str) -> str:
    return urllib.parse.quote(str(id), safe="")
