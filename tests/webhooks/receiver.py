#!/usr/bin/env python3
"""A webhook receiver for Gable's tests, written from the header contract alone.

It is deliberately independent of the Rust verifier (gable::domain::webhooks::verify):
if both agree on every delivery, the contract is what the docs say, not what one
implementation happens to do.

    GABLE_WEBHOOK_SECRET=whsec_... python3 receiver.py PORT LOG_FILE

PORT 0 picks a free port. The bound port is the first line on stdout. Every POST is
verified from the raw bytes received and answered 200 (verified) or 400 (not), and
one JSON line per request is appended to LOG_FILE:
{"event_id", "type", "verified": true|false, "reason"}.

The contract: Gable-Timestamp is unix seconds; Gable-Signature holds one or more
space-separated "v1=<hex>" values (two during a secret rotation), each the lowercase
hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret string exactly as
shown (whsec_ prefix included). Timestamps more than 300 s from now are refused.
"""

import hashlib
import hmac
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOLERANCE_SECS = 300


def check(secret, body, timestamp, signature, now):
    """Returns None when the delivery verifies, else the reason it does not."""
    if timestamp is None:
        return "missing Gable-Timestamp"
    if signature is None:
        return "missing Gable-Signature"
    # int() alone would take " 17", "+17" or non-ASCII digits; the contract is plain digits.
    if not (timestamp.isascii() and timestamp.isdigit()):
        return "bad timestamp"
    if abs(now - int(timestamp)) > TOLERANCE_SECS:
        return "stale timestamp"
    # The header string is signed as sent, so the receiver never re-renders the number.
    message = timestamp.encode("ascii") + b"." + body
    expected = hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest().encode("ascii")
    given = [v[len("v1="):] for v in signature.split() if v.startswith("v1=")]
    if not given:
        return "no v1 signature"
    # Compare every value (no early exit) so timing says nothing about which one matched.
    matched = False
    for value in given:
        # latin-1 round-trips whatever bytes arrived, so odd input is a mismatch, not an error.
        matched |= hmac.compare_digest(expected, value.encode("latin-1"))
    return None if matched else "no matching signature"


class Handler(BaseHTTPRequestHandler):
    secret = ""
    log_path = ""
    lock = threading.Lock()

    def do_POST(self):
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            body, reason = b"", "missing Content-Length"
        else:
            # Exactly the bytes sent: verifying re-serialised JSON would prove nothing.
            body = self.rfile.read(int(length))
            reason = check(
                self.secret,
                body,
                self.headers.get("Gable-Timestamp"),
                self.headers.get("Gable-Signature"),
                time.time(),
            )
        try:
            kind = json.loads(body).get("type")
        except (ValueError, AttributeError):
            kind = None
        line = {
            "event_id": self.headers.get("Gable-Event-Id"),
            "type": kind,
            "verified": reason is None,
            "reason": reason,
        }
        # Logged before answering: once Gable records the response, the line is there.
        with self.lock, open(self.log_path, "a", encoding="utf-8") as log:
            log.write(json.dumps(line) + "\n")
        answer = b"verified" if reason is None else reason.encode("utf-8")
        self.send_response(200 if reason is None else 400)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format, *args):
        # The JSON lines are the record; per-request noise on stderr would bury real errors.
        pass


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: GABLE_WEBHOOK_SECRET=whsec_... receiver.py PORT LOG_FILE")
    secret = os.environ.get("GABLE_WEBHOOK_SECRET")
    if not secret:
        sys.exit("GABLE_WEBHOOK_SECRET is not set")
    Handler.secret, Handler.log_path = secret, sys.argv[2]
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
