"""Unit tests that need no server: webhook signatures in either hex case, a list that ends
when a page says ``has_more`` without a ``next_cursor``, the query of ``expand`` and
``fields`` on every call, and the collection attributes.
Standard library only."""

import hashlib
import hmac
import json
import time
import unittest

import gable

SECRET = "whsec_unit_test_secret"
BODY = json.dumps({"id": "evt_1", "type": "lead.created", "data": {"object": {"id": "lead_1"}}}).encode()


def signed(body: bytes, secret: str = SECRET, timestamp: int = 0) -> tuple:
    timestamp = timestamp or int(time.time())
    signature = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return signature, str(timestamp)


class VerifyHexCase(unittest.TestCase):
    def test_a_signature_in_upper_or_mixed_case_hex_verifies(self):
        signature, timestamp = signed(BODY)
        mixed = "".join(c.upper() if i % 2 else c for i, c in enumerate(signature))
        for value in (signature, signature.upper(), mixed):
            headers = {"Gable-Timestamp": timestamp, "Gable-Signature": f"v1={value}"}
            self.assertEqual(gable.verify(BODY, headers, SECRET)["id"], "evt_1", value)

    def test_any_v1_value_may_match_whatever_its_case(self):
        signature, timestamp = signed(BODY)
        other, _ = signed(BODY, "whsec_rotated_out")
        headers = {"gable-timestamp": timestamp, "gable-signature": f"v1={other} v1={signature.upper()}"}
        self.assertEqual(gable.verify(BODY, headers, SECRET)["type"], "lead.created")

    def test_wrong_or_malformed_signatures_are_still_refused(self):
        signature, timestamp = signed(BODY)
        wrong, _ = signed(BODY, "whsec_wrong")
        for value in (wrong.upper(), signature[:-2], signature + "00", "zz" * 32, signature.upper()[:-1] + "G", "é" * 64, ""):
            headers = {"Gable-Timestamp": timestamp, "Gable-Signature": f"v1={value}"}
            with self.assertRaises(gable.SignatureVerificationError, msg=value):
                gable.verify(BODY, headers, SECRET)
        with self.assertRaises(gable.SignatureVerificationError, msg="tampered body"):
            gable.verify(BODY.replace(b"lead_1", b"lead_2"), {"Gable-Timestamp": timestamp, "Gable-Signature": f"v1={signature.upper()}"}, SECRET)


class Pages:
    """A stand-in for the client: answers GETs with the pages given, records the queries."""

    def __init__(self, *pages):
        self.pages = list(pages)
        self.queries = []

    def request(self, method, path, *, query=None, body=None, idempotency_key=None):
        self.queries.append(dict(query or []))
        if len(self.queries) > 10:
            raise AssertionError(f"list asked for page {len(self.queries)}: it does not stop")
        return self.pages[min(len(self.queries), len(self.pages)) - 1]


class ListStops(unittest.TestCase):
    def test_has_more_without_a_next_cursor_ends_the_list(self):
        client = Pages(
            {"data": [{"id": "a"}, {"id": "b"}], "meta": {"has_more": True, "next_cursor": "c2"}},
            {"data": [{"id": "c"}], "meta": {"has_more": True}},
        )
        seen = [r["id"] for r in gable.Collection(client, "units").list(limit=2)]
        self.assertEqual(seen, ["a", "b", "c"])
        self.assertEqual(len(client.queries), 2, "two pages asked for, no more")
        self.assertNotIn("cursor", client.queries[0])
        self.assertEqual(client.queries[1]["cursor"], "c2")

    def test_a_null_or_empty_next_cursor_ends_the_list_too(self):
        for cursor in (None, ""):
            client = Pages({"data": [{"id": "a"}], "meta": {"has_more": True, "next_cursor": cursor}})
            self.assertEqual([r["id"] for r in gable.Collection(client, "units").list()], ["a"], repr(cursor))
            self.assertEqual(len(client.queries), 1)

    def test_pages_are_followed_until_has_more_is_false(self):
        client = Pages(
            {"data": [{"id": "a"}], "meta": {"has_more": True, "next_cursor": "c2"}},
            {"data": [{"id": "b"}], "meta": {"has_more": True, "next_cursor": "c3"}},
            {"data": [{"id": "c"}], "meta": {"has_more": False, "next_cursor": "c4"}},
        )
        self.assertEqual([r["id"] for r in gable.Collection(client, "units").list()], ["a", "b", "c"])
        self.assertEqual([q.get("cursor") for q in client.queries], [None, "c2", "c3"])


class Wire:
    """A stand-in for the client that records each request's method, path and query pairs."""

    def __init__(self, *pages):
        self.pages = list(pages)
        self.requests = []

    def request(self, method, path, *, query=None, body=None, idempotency_key=None):
        self.requests.append((method, path, list(query or [])))
        if self.pages:
            return self.pages.pop(0)
        return {"data": {"id": "x"}}


class ExpandQuery(unittest.TestCase):
    EXPAND = [("expand[]", "unit"), ("expand[]", "unit.property")]

    def test_every_page_of_a_list_is_asked_with_the_same_expand(self):
        wire = Wire(
            {"data": [{"id": "a"}], "meta": {"has_more": True, "next_cursor": "c2"}},
            {"data": [{"id": "b"}], "meta": {"has_more": False}},
        )
        leases = gable.Collection(wire, "leases")
        seen = [r["id"] for r in leases.list(filters={"status": "active"}, expand=["unit", "unit.property"], limit=1)]
        self.assertEqual(seen, ["a", "b"])
        first, second = (q for _, _, q in wire.requests)
        self.assertEqual(first, [("filter[status]", "active"), *self.EXPAND, ("limit", "1")])
        self.assertEqual(second, first + [("cursor", "c2")])

    def test_single_record_calls_send_expand_and_fieldsets(self):
        wire = Wire()
        leases = gable.Collection(wire, "leases")
        leases.get("l 1", expand=["unit", "unit.property"], fields={"leases": ["rent"], "units": ["number", "bedrooms"]})
        leases.create({"rent": 1}, expand=["unit", "unit.property"])
        leases.update("l1", {"rent": 2}, expand="unit", fields=["rent"])
        leases.action("l1", "send", expand=["unit", "unit.property"])
        leases.get("l1")
        leases.delete("l1")
        self.assertEqual(
            wire.requests,
            [
                ("GET", "/leases/l%201", [("fields[leases]", "rent"), ("fields[units]", "number,bedrooms"), *self.EXPAND]),
                ("POST", "/leases", self.EXPAND),
                ("PATCH", "/leases/l1", [("fields[leases]", "rent"), ("expand[]", "unit")]),
                ("POST", "/leases/l1/send", self.EXPAND),
                ("GET", "/leases/l1", []),
                ("DELETE", "/leases/l1", []),
            ],
        )

    def test_a_test_payment_takes_expand(self):
        wire = Wire()
        gable.Payments(wire, "payments").create_test_payment("succeeded", "1.00", "USD", expand=["invoice"], invoice_id="i1")
        self.assertEqual(wire.requests, [("POST", "/payments", [("expand[]", "invoice")])])

    def test_the_wire_form_is_repeated_and_percent_encoded(self):
        import http.server
        import threading

        paths = []

        class Recorder(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                paths.append(self.path)
                body = b'{"data": {"id": "l1", "object": "lease"}}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        server = http.server.HTTPServer(("127.0.0.1", 0), Recorder)
        self.addCleanup(server.server_close)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.shutdown)
        client = gable.Client("gbl_test_unit", f"http://127.0.0.1:{server.server_port}")
        client.leases.get("l1", expand=["unit", "unit.property"], fields={"units": ["number"]})
        self.assertEqual(paths, ["/v1/leases/l1?fields%5Bunits%5D=number&expand%5B%5D=unit&expand%5B%5D=unit.property"])


class ErrorClasses(unittest.TestCase):
    def test_422_is_an_idempotency_error_and_not_a_conflict(self):
        body = json.dumps({"error": {"code": "idempotency_key_reused", "message": "m", "request_id": "req_1", "param": "Idempotency-Key"}}).encode()
        err = gable.errors.error_from(422, body, None)
        self.assertIs(type(err), gable.IdempotencyError)
        self.assertIsInstance(err, gable.GableError)
        self.assertNotIsInstance(err, gable.ConflictError)
        self.assertEqual((err.status, err.code, err.request_id, err.param), (422, "idempotency_key_reused", "req_1", "Idempotency-Key"))
        self.assertIs(type(gable.errors.error_from(409, b"{}", None)), gable.ConflictError)
        self.assertIs(type(gable.errors.error_from(418, b"{}", None)), gable.GableError)


if __name__ == "__main__":
    unittest.main()


class Accessors(unittest.TestCase):
    """That the list is the served description's: test_against_gable."""

    def test_every_collection_is_an_attribute_and_nothing_else_is(self):
        client = gable.Client("k")
        for name in gable.COLLECTIONS:
            self.assertEqual(getattr(client, name.replace("-", "_")).name, name)
            self.assertIn(name.replace("-", "_"), dir(client))
        self.assertIsInstance(client.payments, gable.Payments)
        self.assertEqual(client.purchase_orders.name, "purchase-orders")
        with self.assertRaises(AttributeError):
            client.purchase_order  # a typo is an error, not a collection that 404s
