"""Typed errors: every refusal of the API becomes a ``GableError`` subclass carrying the
HTTP status and the error body's ``code``, ``message``, ``request_id`` and ``param``."""

from __future__ import annotations

import json
from typing import Optional


class GableError(Exception):
    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        request_id: Optional[str] = None,
        param: Optional[str] = None,
    ) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.request_id = request_id
        self.param = param


class InvalidRequestError(GableError):
    """400: the request is malformed or a field is invalid (``param`` names it)."""


class AuthenticationError(GableError):
    """401: no, an unknown, or the other environment's credential."""


class PermissionError(GableError):  # noqa: A001 - the API's own name for 403
    """403: the credential lacks the scope (or property) this needs."""


class NotFoundError(GableError):
    """404."""


class ConflictError(GableError):
    """409: a state transition not allowed now, a conflict with other records, or an
    ``Idempotency-Key`` whose first request is still running (``idempotency_key_in_use``:
    retry it later). A key reused for a different request is ``IdempotencyError`` (422)."""


class IdempotencyError(GableError):
    """422 ``idempotency_key_reused``: the ``Idempotency-Key`` was already used for a
    different request (another body, path or method). Use a fresh key for a new request."""


class RateLimitError(GableError):
    """429, after the retries ran out."""


class ServerError(GableError):
    """5xx, after the retries ran out."""


def error_from(status: int, raw: bytes, request_id: Optional[str]) -> GableError:
    try:
        body = json.loads(raw).get("error", {})
    except (ValueError, AttributeError):
        body = {}
    cls = {
        400: InvalidRequestError,
        401: AuthenticationError,
        403: PermissionError,
        404: NotFoundError,
        409: ConflictError,
        422: IdempotencyError,
        429: RateLimitError,
    }.get(status, ServerError if status >= 500 else GableError)
    return cls(
        status,
        body.get("code", "unknown_error"),
        body.get("message", raw.decode(errors="replace")[:200]),
        body.get("request_id", request_id),
        body.get("param"),
    )
