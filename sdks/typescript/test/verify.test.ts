/** `verify` with signatures computed here (no server needed). */

import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { describe, it } from "node:test";

import { SignatureVerificationError, verify } from "@gable/sdk";

const SECRET = "whsec_unit_test_secret";
const NOW = 1_800_000_000;
const BODY = JSON.stringify({ id: "evt_1", object: "event", type: "lead.created", data: { object: { id: "l1" } } });

const sign = (secret: string, ts: number, body: string) => createHmac("sha256", secret).update(`${ts}.${body}`).digest("hex");

describe("verify", () => {
  const good = sign(SECRET, NOW, BODY);
  const other = sign("whsec_previous", NOW, BODY);

  it("accepts any one matching v1= value among several, and returns the event", () => {
    for (const signature of [`v1=${good}`, `v1=${other} v1=${good}`, `v1=${good} v1=${other}`, `v0=${good} v1=${good}`]) {
      const event = verify(BODY, { "Gable-Timestamp": String(NOW), "Gable-Signature": signature }, SECRET, { now: NOW });
      assert.equal(event.type, "lead.created", signature);
    }
  });

  it("takes bytes or text, Headers or node's header map, any header case", () => {
    const bytes = new TextEncoder().encode(BODY);
    const sig = `v1=${good}`;
    assert.equal(verify(bytes, { "gable-timestamp": String(NOW), "GABLE-SIGNATURE": sig }, SECRET, { now: NOW }).id, "evt_1");
    assert.equal(verify(Buffer.from(BODY), { "gable-timestamp": [String(NOW)], "gable-signature": [sig] }, SECRET, { now: NOW }).id, "evt_1");
    const headers = new Headers({ "Gable-Timestamp": String(NOW), "Gable-Signature": sig });
    assert.equal(verify(BODY, headers, SECRET, { now: NOW }).id, "evt_1");
  });

  it("holds within the tolerance and refuses beyond it, either way", () => {
    const headers = { "Gable-Timestamp": String(NOW), "Gable-Signature": `v1=${good}` };
    assert.ok(verify(BODY, headers, SECRET, { now: NOW + 300 }));
    assert.ok(verify(BODY, headers, SECRET, { now: NOW - 300 }));
    assert.throws(() => verify(BODY, headers, SECRET, { now: NOW + 301 }), SignatureVerificationError);
    assert.throws(() => verify(BODY, headers, SECRET, { now: NOW - 301 }), SignatureVerificationError);
    assert.ok(verify(BODY, headers, SECRET, { now: NOW + 3000, tolerance: 3600 }));
  });

  it("refuses a tampered body, a wrong secret, a bad or missing header", () => {
    const refused: [string, Record<string, string>, string][] = [
      [BODY.replace("l1", "l2"), { "Gable-Timestamp": String(NOW), "Gable-Signature": `v1=${good}` }, "tampered body"],
      [BODY, { "Gable-Timestamp": String(NOW), "Gable-Signature": `v1=${other}` }, "another secret's signature"],
      [BODY, { "Gable-Timestamp": String(NOW + 1), "Gable-Signature": `v1=${good}` }, "another timestamp"],
      [BODY, { "Gable-Timestamp": String(NOW), "Gable-Signature": `v1=${good.toUpperCase()}x` }, "malformed hex"],
      [BODY, { "Gable-Timestamp": String(NOW), "Gable-Signature": `v2=${good}` }, "no v1 value"],
      [BODY, { "Gable-Signature": `v1=${good}` }, "no timestamp"],
      [BODY, { "Gable-Timestamp": String(NOW) }, "no signature"],
    ];
    for (const [body, headers, why] of refused) {
      assert.throws(() => verify(body, headers, SECRET, { now: NOW }), SignatureVerificationError, why);
    }
    const headers = { "Gable-Timestamp": String(NOW), "Gable-Signature": `v1=${good}` };
    assert.throws(() => verify(BODY, headers, "whsec_wrong", { now: NOW }), SignatureVerificationError, "wrong secret");
  });
});
