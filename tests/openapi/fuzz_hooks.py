"""Schemathesis hooks for tests/openapi/fuzz.sh (loaded with SCHEMATHESIS_HOOKS).

Both make a request what a correct client sends, where the rule spans requests and so
no OpenAPI description can state it. Neither touches a value that breaks a documented
rule on purpose (a negative test), nor one the description allows but Gable refuses (a
finding that must stay visible).

1. A fresh `Idempotency-Key` for a request that would reuse one already sent with
   another request. Schemathesis draws each header on its own, so the same value (the
   coverage phase's `00000000`, say) goes out with many requests; Gable answers the second
   `422 idempotency_key_reused` before it reads the body (docs/api.md, "Idempotency"),
   which would hide the checks of every POST body behind one 422. Only a value Gable
   accepts (8 to 200 visible ASCII characters) is replaced, by a new UUID; the same key
   with the same request is left alone (Gable replays the stored answer).

2. No `cursor` in a request meant to be valid. A cursor is `meta.next_cursor` of an
   earlier page, signed by the server: no generated value can be valid, and Gable checks
   it before the filters, so a drawn cursor would hide every other list parameter of the
   request (the coverage phase puts one in each request that sends every parameter).
   Requests meant to be invalid keep theirs.
"""

from __future__ import annotations

import json
import re
import threading
import uuid

import schemathesis

HEADER = "Idempotency-Key"
# docs/api.md, "Idempotency": 8 to 200 visible ASCII characters.
VALID_KEY = re.compile(r"[\x21-\x7e]{8,200}")

_lock = threading.Lock()
_sent: dict[str, str] = {}  # key value -> the request it was first sent with
replaced = 0


def _signature(case) -> str:
    try:
        # In the order sent: Gable compares the body byte for byte.
        body = json.dumps(case.body, default=str)
    except Exception:  # noqa: BLE001 - any body schemathesis can send has a repr
        body = repr(case.body)
    return f"{case.method.upper()} {case.formatted_path} {body}"


@schemathesis.hook
def before_call(context, case, kwargs):
    _fresh_idempotency_key(case)
    _drop_cursor(case)


def _is_positive(case) -> bool:
    meta = case.meta
    return meta is not None and meta.generation.mode.is_positive


def _drop_cursor(case) -> None:
    if case.query and "cursor" in case.query and _is_positive(case):
        del case.query["cursor"]


def _fresh_idempotency_key(case) -> None:
    global replaced
    headers = case.headers
    if not headers:
        return
    name = next((n for n in headers if isinstance(n, str) and n.lower() == HEADER.lower()), None)
    if name is None:
        return
    value = headers[name]
    if not isinstance(value, str) or not VALID_KEY.fullmatch(value):
        return
    signature = _signature(case)
    with _lock:
        first = _sent.setdefault(value, signature)
        if first != signature:
            fresh = str(uuid.uuid4())
            _sent[fresh] = signature
            headers[name] = fresh
            replaced += 1
