"""Webhook verification: ``Gable-Signature: v1=<hex> [v1=<hex>]`` is the HMAC-SHA256,
keyed with the whole secret (``whsec_…``), of ``<Gable-Timestamp>.<raw body>``. Verify the
bytes as received, before parsing them."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from typing import Any, Dict, Mapping, Optional


class SignatureVerificationError(Exception):
    """The delivery is not from Gable, was changed, or is too old to trust."""


def _header(headers: Mapping[str, str], name: str) -> Optional[str]:
    for k, v in headers.items():
        if k.lower() == name.lower():
            return v
    return None


def verify(payload: bytes, headers: Mapping[str, str], secret: str, tolerance: int = 300, now: Optional[float] = None) -> Dict[str, Any]:
    """Checks a delivery's signature (any of its ``v1=`` values, hex in either case, compared
    as bytes in constant time) and its timestamp (within ``tolerance`` seconds); returns the
    parsed event."""
    timestamp = _header(headers, "Gable-Timestamp") or ""
    signatures = [s[3:] for s in (_header(headers, "Gable-Signature") or "").split() if s.startswith("v1=")]
    if not timestamp.isdigit():
        raise SignatureVerificationError("no Gable-Timestamp")
    if not signatures:
        raise SignatureVerificationError("no v1 signature in Gable-Signature")
    if abs((time.time() if now is None else now) - int(timestamp)) > tolerance:
        raise SignatureVerificationError("the timestamp is outside the tolerance: a replay, or a clock far off")
    expected = hmac.new(secret.encode(), timestamp.encode() + b"." + payload, hashlib.sha256).digest()
    if not any(hmac.compare_digest(expected, _unhex(s)) for s in signatures):
        raise SignatureVerificationError("no signature matches this secret and body")
    return json.loads(payload)


def _unhex(signature: str) -> bytes:
    """A ``v1=`` value's bytes (hex in either case); empty, so matching nothing, when it is
    not hex."""
    try:
        return bytes.fromhex(signature)
    except ValueError:
        return b""
