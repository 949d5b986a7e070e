-- The embeddable flows (issue 11): what the rental application, booking, payment and
-- tenant-portal flows collect and need.

-- A rental application's household, employment, references and consent.
ALTER TABLE applications ADD COLUMN adults INTEGER;
ALTER TABLE applications ADD COLUMN children INTEGER;
ALTER TABLE applications ADD COLUMN pets TEXT;
ALTER TABLE applications ADD COLUMN employment_status TEXT;
ALTER TABLE applications ADD COLUMN employer TEXT;
ALTER TABLE applications ADD COLUMN job_title TEXT;
ALTER TABLE applications ADD COLUMN employed_since TEXT;
ALTER TABLE applications ADD COLUMN reference_contacts TEXT;
ALTER TABLE applications ADD COLUMN consent_signature TEXT;
ALTER TABLE applications ADD COLUMN consented_at TEXT;

-- The price of a night, for the booking flow of a listing or a unit.
ALTER TABLE listings ADD COLUMN nightly_rate INTEGER;
ALTER TABLE units ADD COLUMN nightly_rate INTEGER;

-- What the payment flow and the tenant portal show in live mode, where Gable takes no cards.
ALTER TABLE properties ADD COLUMN payment_instructions TEXT;

-- A maintenance request from the tenant portal names the resident's lease.
ALTER TABLE workorders ADD COLUMN lease_id TEXT;
CREATE INDEX workorders_lease_id ON workorders (tenant_id, livemode, lease_id);

-- A rental application or booking flow completes once: the token remembers what it made.
ALTER TABLE flow_tokens ADD COLUMN completed_at TEXT;
ALTER TABLE flow_tokens ADD COLUMN result_object TEXT;
ALTER TABLE flow_tokens ADD COLUMN result_id TEXT;
