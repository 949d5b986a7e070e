-- The embeddable flows (issue 11): what the rental application, booking, payment and
-- tenant-portal flows collect and need.

-- A rental application's household, employment, references and consent.
ALTER TABLE applications ADD COLUMN adults BIGINT;
ALTER TABLE applications ADD COLUMN children BIGINT;
ALTER TABLE applications ADD COLUMN pets TEXT COLLATE "C";
ALTER TABLE applications ADD COLUMN employment_status TEXT COLLATE "C";
ALTER TABLE applications ADD COLUMN employer TEXT COLLATE "C";
ALTER TABLE applications ADD COLUMN job_title TEXT COLLATE "C";
ALTER TABLE applications ADD COLUMN employed_since DATE;
ALTER TABLE applications ADD COLUMN reference_contacts JSONB;
ALTER TABLE applications ADD COLUMN consent_signature TEXT COLLATE "C";
ALTER TABLE applications ADD COLUMN consented_at TIMESTAMPTZ;

-- The price of a night, for the booking flow of a listing or a unit.
ALTER TABLE listings ADD COLUMN nightly_rate BIGINT;
ALTER TABLE units ADD COLUMN nightly_rate BIGINT;

-- What the payment flow and the tenant portal show in live mode, where Gable takes no cards.
ALTER TABLE properties ADD COLUMN payment_instructions TEXT COLLATE "C";

-- A maintenance request from the tenant portal names the resident's lease.
ALTER TABLE workorders ADD COLUMN lease_id UUID;
CREATE INDEX workorders_lease_id ON workorders (tenant_id, livemode, lease_id);
ALTER TABLE workorders ADD CONSTRAINT workorders_lease_id_fk FOREIGN KEY (tenant_id, livemode, lease_id) REFERENCES leases (tenant_id, livemode, id);

-- A rental application or booking flow completes once: the token remembers what it made.
ALTER TABLE flow_tokens ADD COLUMN completed_at TIMESTAMPTZ;
ALTER TABLE flow_tokens ADD COLUMN result_object TEXT COLLATE "C";
ALTER TABLE flow_tokens ADD COLUMN result_id UUID;
