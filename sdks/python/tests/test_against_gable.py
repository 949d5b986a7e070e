"""The kit against a real Gable (started by sdks/run.sh, which exports GABLE_SANDBOX_URL and
GABLE_TEST_KEY: a sandbox key with every scope). Standard library only."""

import http.server
import json
import os
import re
import signal
import subprocess
import tempfile
import threading
import time
import unittest
import uuid

import gable

URL = os.environ["GABLE_SANDBOX_URL"]
KEY = os.environ["GABLE_TEST_KEY"]
RUN = uuid.uuid4().hex[:8]
ADDRESS = {"line1": "1 Kit Street", "city": "Portland", "country": "US"}


def client(**kw):
    return gable.Client.sandbox(KEY, URL, **kw)


class AgainstGable(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.g = client()
        cls.property = cls.g.properties.create({"name": f"Kit Court {RUN}", "kind": "residential", "address": ADDRESS})

    def test_the_collections_are_the_served_descriptions(self):
        # Every collection has a record path, /v1/{name}/{id}; nothing else has one. The
        # kit's list is generated from the registry (`make generate`).
        paths = self.g.request("GET", "/openapi.json")["paths"]
        described = [m.group(1) for p in paths if (m := re.fullmatch(r"/v1/([a-z-]+)/\{id\}", p))]
        self.assertTrue(described)
        self.assertEqual(sorted(described), sorted(gable.COLLECTIONS), "run `make generate`")

    def test_create_list_with_auto_pagination_and_filters(self):
        own = self.g.properties.create({"name": f"Paging Court {RUN}", "kind": "residential", "address": ADDRESS})
        made = [self.g.units.create({"property_id": own["id"], "number": f"{RUN}-{i}", "bedrooms": i % 2}) for i in range(5)]
        seen = list(self.g.units.list(filters={"property_id": own["id"]}, limit=2, sort="number"))
        self.assertEqual([u["id"] for u in seen], [u["id"] for u in made], "three pages of two, in order")
        two_beds = list(self.g.units.list(filters={"property_id": own["id"], "bedrooms": 1}, fields=["id", "bedrooms"]))
        self.assertEqual(len(two_beds), 2)
        self.assertTrue(all(set(u) <= {"id", "bedrooms", "object"} for u in two_beds), two_beds)
        page = self.g.units.page(filters={"property_id": own["id"]}, limit=2)
        self.assertTrue(page["meta"]["has_more"])

    def test_actions_and_typed_errors(self):
        unit = self.g.units.create({"property_id": self.property["id"], "number": f"{RUN}-L"})
        listing = self.g.listings.create({"unit_id": unit["id"], "title": "Bright", "rent": "1450.00", "currency": "USD"})
        self.assertEqual(self.g.listings.action(listing["id"], "publish")["status"], "published")
        with self.assertRaises(gable.ConflictError) as conflict:
            self.g.listings.action(listing["id"], "publish")
        self.assertEqual((conflict.exception.status, conflict.exception.code), (409, "invalid_state_transition"))
        self.assertTrue(conflict.exception.request_id)
        with self.assertRaises(gable.NotFoundError) as missing:
            self.g.units.get(str(uuid.uuid4()))
        self.assertEqual(missing.exception.status, 404)
        with self.assertRaises(gable.InvalidRequestError) as invalid:
            self.g.units.create({"property_id": self.property["id"], "number": f"{RUN}-X", "bedrooms": -1})
        self.assertEqual(invalid.exception.param, "bedrooms")
        with self.assertRaises(gable.AuthenticationError):
            gable.Client.sandbox("gbl_test_" + "x" * 43, URL).units.page()

    def test_expand_answers_references_with_their_records(self):
        prop = self.g.properties.create({"name": f"Expand Court {RUN}", "kind": "residential", "address": ADDRESS})
        unit = self.g.units.create({"property_id": prop["id"], "number": f"{RUN}-E"})
        terms = {"unit_id": unit["id"], "rent": "100.00", "currency": "USD"}
        lease = self.g.leases.create({**terms, "start_date": "2027-01-01"}, expand=["unit"])
        self.assertIsInstance(lease["unit_id"], dict, "create answers the unit itself")
        self.assertEqual((lease["unit_id"]["object"], lease["unit_id"]["id"]), ("unit", unit["id"]))
        self.assertEqual(lease["property_id"], prop["id"], "what was not asked for stays an id")
        second = self.g.leases.create({**terms, "start_date": "2027-02-01"})
        self.assertEqual(second["unit_id"], unit["id"], "without expand, an id")

        got = self.g.leases.get(lease["id"], expand=["unit", "unit.property"])
        self.assertEqual(got["unit_id"]["object"], "unit")
        self.assertEqual(got["unit_id"]["number"], f"{RUN}-E")
        self.assertEqual(got["unit_id"]["property_id"]["object"], "property")
        self.assertEqual(got["unit_id"]["property_id"]["name"], f"Expand Court {RUN}")

        # Two pages of one: the second page must be asked with expand[] too.
        listed = list(self.g.leases.list(filters={"unit_id": unit["id"]}, sort="start_date", limit=1, expand=["unit"]))
        self.assertEqual([l["id"] for l in listed], [lease["id"], second["id"]])
        for n, each in enumerate(listed, 1):
            self.assertIsInstance(each["unit_id"], dict, f"page {n} answers the unit itself")
            self.assertEqual((each["unit_id"]["object"], each["unit_id"]["number"]), ("unit", f"{RUN}-E"), each)
        page = self.g.leases.page(filters={"unit_id": unit["id"]}, limit=1, expand="unit")
        self.assertEqual(page["data"][0]["unit_id"]["id"], unit["id"])

        # Fieldsets of the expanded collections; an update and an action answer expanded too.
        trimmed = self.g.leases.get(lease["id"], expand=["unit"], fields={"leases": ["rent"], "units": ["number"]})
        self.assertEqual(set(trimmed), {"id", "object", "rent", "unit_id"}, "the expanded reference is shown")
        self.assertEqual(set(trimmed["unit_id"]), {"id", "object", "number"})
        updated = self.g.leases.update(lease["id"], {"rent": "120.00"}, expand=["unit.property"])
        self.assertEqual(updated["rent"], 120)
        self.assertEqual(updated["unit_id"]["property_id"]["id"], prop["id"])
        invoice = self.g.invoices.create({"lease_id": lease["id"], "amount_due": "120.00", "currency": "USD", "due_date": "2027-01-01"})
        opened = self.g.invoices.action(invoice["id"], "open", expand=["lease.unit"])
        self.assertEqual(opened["status"], "open")
        self.assertEqual(opened["lease_id"]["unit_id"]["number"], f"{RUN}-E")

        with self.assertRaises(gable.InvalidRequestError) as unknown:
            self.g.leases.get(lease["id"], expand=["unit", "nope"])
        self.assertEqual((unknown.exception.status, unknown.exception.code), (400, "invalid_parameter"))
        self.assertEqual(unknown.exception.param, "expand[]")

    def test_a_retried_test_payment_pays_once(self):
        # A test invoice paid safely twice: only an open invoice takes payments.
        unit = self.g.units.create({"property_id": self.property["id"], "number": f"{RUN}-P"})
        lease = self.g.leases.create({"unit_id": unit["id"], "start_date": "2027-01-01", "rent": "100.00", "currency": "USD"})
        invoice = self.g.invoices.create(
            {"lease_id": lease["id"], "amount_due": "100.00", "currency": "USD", "due_date": "2027-01-01"}
        )
        self.assertEqual(invoice["status"], "draft")
        self.assertEqual(self.g.invoices.action(invoice["id"], "open")["status"], "open")

        before = sum(1 for _ in self.g.payments.list(limit=100))
        key = str(uuid.uuid4())
        first = self.g.payments.create_test_payment("succeeded", "100.00", "USD", idempotency_key=key, invoice_id=invoice["id"])
        again = self.g.payments.create_test_payment("succeeded", "100.00", "USD", idempotency_key=key, invoice_id=invoice["id"])
        self.assertEqual(first["id"], again["id"])
        self.assertEqual((first["status"], again["status"]), ("succeeded", "succeeded"))
        self.assertEqual(sum(1 for _ in self.g.payments.list(limit=100)), before + 1, "one payment for the retried request")
        paid = self.g.invoices.get(invoice["id"])
        self.assertEqual(paid["status"], "paid")
        self.assertEqual(paid["amount_paid"], 100, "amounts are JSON numbers")
        other = self.g.payments.create_test_payment("failed", 3, "USD")
        self.assertNotEqual(other["id"], first["id"])
        self.assertEqual(other["status"], "failed")

    def test_a_reused_idempotency_key_is_an_idempotency_error(self):
        key = str(uuid.uuid4())
        first = self.g.payments.create_test_payment("succeeded", "21.00", "USD", idempotency_key=key)
        before = sum(1 for _ in self.g.payments.list(limit=100))
        with self.assertRaises(gable.IdempotencyError) as reused:
            self.g.payments.create_test_payment("succeeded", "22.00", "USD", idempotency_key=key)
        err = reused.exception
        self.assertEqual((err.status, err.code), (422, "idempotency_key_reused"))
        self.assertIsInstance(err, gable.GableError)
        self.assertNotIsInstance(err, gable.ConflictError)
        self.assertTrue(err.request_id)
        self.assertEqual(self.g.payments.get(first["id"]), first, "the first payment is unchanged")
        self.assertEqual(sum(1 for _ in self.g.payments.list(limit=100)), before, "no second payment")

    def test_429_is_retried_after_retry_after(self):
        # The server runs with a low sandbox rate limit (sdks/run.sh); this burst exceeds it.
        impatient = client(max_retries=0)
        with self.assertRaises(gable.RateLimitError):
            for _ in range(400):  # stops at the first 429; a loaded machine passes the limit later
                impatient.units.page(limit=1)
        patient = client(max_retries=5)
        started = time.monotonic()
        for _ in range(20):
            patient.units.page(limit=1)
        self.assertGreater(time.monotonic() - started, 0.5, "the burst had to wait for Retry-After")

    def test_webhook_verification_of_a_real_delivery(self):
        received = []

        class Receiver(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                received.append((body, dict(self.headers)))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args):
                pass

        server = http.server.HTTPServer(("127.0.0.1", 0), Receiver)
        self.addCleanup(server.server_close)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            hook = self.g.webhooks.create({"url": f"http://127.0.0.1:{server.server_port}/hook", "events": ["lead.created"]})
            secret = hook["secret"]
            self.g.leads.create({"name": "Lee", "email": f"lee.{RUN}@example.com"})
            deadline = time.time() + 30
            while not received and time.time() < deadline:
                time.sleep(0.2)
            self.assertTrue(received, "Gable delivered the event")
            body, headers = received[0]
            event = gable.verify(body, headers, secret)
            self.assertEqual(event["type"], "lead.created")
            for tampered, why in [
                (body.replace(b"Lee", b"Eve"), "tampered body"),
            ]:
                with self.assertRaises(gable.SignatureVerificationError, msg=why):
                    gable.verify(tampered, headers, secret)
            with self.assertRaises(gable.SignatureVerificationError):
                gable.verify(body, headers, "whsec_wrong")
            with self.assertRaises(gable.SignatureVerificationError):
                gable.verify(body, headers, secret, now=time.time() + 3600)
            self.g.webhooks.delete(hook["id"])
        finally:
            server.shutdown()

    def test_a_gable_listen_forward_verifies_with_the_kits_verifier(self):
        # `gable listen --forward-to` signs each event as a delivery, under the secret that
        # `gable listen --print-secret` prints: what a developer configures in their app.
        binary = os.environ.get("GABLE_BIN")
        if not binary:
            self.skipTest("GABLE_BIN (the gable binary) is not set: sdks/run.sh sets it to run `gable listen`")
        received = []

        class Receiver(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                received.append((self.path, body, dict(self.headers)))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args):
                pass

        server = http.server.HTTPServer(("127.0.0.1", 0), Receiver)
        self.addCleanup(server.server_close)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.shutdown)
        home = tempfile.TemporaryDirectory(prefix="gable-cli-home-")
        self.addCleanup(home.cleanup)
        env = {**os.environ, "GABLE_API_URL": URL, "GABLE_API_KEY": KEY, "GABLE_CLI_HOME": home.name}

        printed = subprocess.run([binary, "listen", "--print-secret"], env=env, capture_output=True, text=True, timeout=20)
        self.assertEqual(printed.returncode, 0, printed.stderr)
        secret = printed.stdout.strip()
        self.assertTrue(secret.startswith("whsec_"), printed.stdout)

        listen = subprocess.Popen(
            [binary, "listen", "--forward-to", f"http://127.0.0.1:{server.server_port}/webhooks", "--events", "lead.created"],
            env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )

        out, err, ready = [], [], threading.Event()

        def drain(stream, lines):
            for line in stream:
                lines.append(line)
                if "Forwarding each event to" in line:
                    ready.set()

        readers = [threading.Thread(target=drain, args=p, daemon=True) for p in [(listen.stdout, out), (listen.stderr, err)]]

        def stop():
            # Ctrl-C (it prints its summary and exits), then a kill if it lingers.
            if listen.poll() is None:
                listen.send_signal(signal.SIGINT)
                try:
                    listen.wait(10)
                except subprocess.TimeoutExpired:
                    listen.kill()
            listen.wait()
            for reader in readers:
                reader.join(5)
            listen.stdout.close()
            listen.stderr.close()

        self.addCleanup(stop)
        for reader in readers:
            reader.start()

        def said():
            return "".join(err) + "".join(out)

        deadline = time.monotonic() + 20
        while not ready.wait(0.1) and listen.poll() is None and time.monotonic() < deadline:
            pass
        self.assertTrue(ready.is_set(), f"`gable listen` was not forwarding within 20 s (exit {listen.poll()}): {said()}")

        lead = self.g.leads.create({"name": "Lee Listen", "email": f"lee.listen.{RUN}@example.com"})
        forwarded = None
        deadline = time.monotonic() + 30
        while forwarded is None and time.monotonic() < deadline:
            for _, body, headers in list(received):
                if json.loads(body)["data"]["object"]["id"] == lead["id"]:
                    forwarded = (body, headers)
            time.sleep(0.1)
        self.assertIsNotNone(forwarded, f"`gable listen` forwarded no lead.created about {lead['id']} within 30 s: {said()}")
        body, headers = forwarded
        self.assertEqual({path for path, _, _ in received}, {"/webhooks"})

        event = gable.verify(body, headers, secret)
        self.assertEqual(event["type"], "lead.created")
        event_id = next((v for k, v in headers.items() if k.lower() == "gable-event-id"), None)
        self.assertEqual(event_id, event["id"], "Gable-Event-Id is the event's id")
        tampered = body.replace(b"Lee Listen", b"Eve Listen")
        self.assertNotEqual(tampered, body)
        with self.assertRaises(gable.SignatureVerificationError, msg="tampered body"):
            gable.verify(tampered, headers, secret)


if __name__ == "__main__":
    unittest.main()
