# frozen_string_literal: true

require "test_helper"
require "fileutils"
require "json"
require "open3"
require "securerandom"
require "tmpdir"

# The kit against a real Gable (started by sdks/run.sh, which exports GABLE_SANDBOX_URL and
# GABLE_TEST_KEY: a sandbox key with every scope).
class AgainstGableTest < Minitest::Test
  URL = ENV.fetch("GABLE_SANDBOX_URL")
  KEY = ENV.fetch("GABLE_TEST_KEY")
  RUN = SecureRandom.hex(4)
  ADDRESS = { line1: "1 Kit Street", city: "Portland", country: "US" }.freeze

  def client(**options)
    Gable::Client.sandbox(KEY, base_url: URL, **options)
  end

  def gable
    @gable ||= client
  end

  def new_property(name)
    gable.properties.create({ name: "#{name} #{RUN}", kind: "residential", address: ADDRESS })
  end

  def monotonic
    Process.clock_gettime(Process::CLOCK_MONOTONIC)
  end

  # Every collection has a record path, /v1/{name}/{id}; nothing else has one. The kit's
  # list is generated from the registry (`make generate`).
  def test_the_collections_are_the_served_description_s
    described = gable.request(:get, "/openapi.json")["paths"].keys.filter_map { |p| p[%r{\A/v1/([a-z-]+)/\{id\}\z}, 1] }
    refute_empty described
    assert_equal described.sort, Gable::Client::COLLECTIONS.sort, "run `make generate`"
  end

  def test_create_list_with_auto_pagination_and_filters
    own = new_property("Paging Court")
    made = Array.new(5) { |i| gable.units.create({ property_id: own["id"], number: "#{RUN}-#{i}", bedrooms: i % 2 }) }
    seen = gable.units.list(filters: { property_id: own["id"] }, limit: 2, sort: "number").to_a
    assert_equal made.map { |u| u["id"] }, seen.map { |u| u["id"] }, "three pages of two, in order"

    two_beds = gable.units.list(filters: { property_id: own["id"], bedrooms: 1 }, fields: %w[id bedrooms]).to_a
    assert_equal 2, two_beds.size
    two_beds.each { |u| assert_empty u.keys - %w[id bedrooms object], u.inspect }
    assert_equal [1, 1], two_beds.map { |u| u["bedrooms"] }

    page = gable.units.page(filters: { property_id: own["id"] }, limit: 2)
    assert_equal true, page["meta"]["has_more"]
    assert_equal 2, page["data"].size
  end

  def test_actions_and_typed_errors
    property = new_property("Kit Court")
    unit = gable.units.create({ property_id: property["id"], number: "#{RUN}-L" })
    listing = gable.listings.create({ unit_id: unit["id"], title: "Bright", rent: "1450.00", currency: "USD" })
    assert_equal "published", gable.listings.action(listing["id"], "publish")["status"]

    conflict = assert_raises(Gable::ConflictError) { gable.listings.action(listing["id"], "publish") }
    assert_equal [409, "invalid_state_transition"], [conflict.status, conflict.code]
    refute_empty conflict.request_id.to_s

    missing = assert_raises(Gable::NotFoundError) { gable.units.get(SecureRandom.uuid) }
    assert_equal 404, missing.status

    invalid = assert_raises(Gable::InvalidRequestError) do
      gable.units.create({ property_id: property["id"], number: "#{RUN}-X", bedrooms: -1 })
    end
    assert_equal [400, "bedrooms"], [invalid.status, invalid.param]

    bogus = assert_raises(Gable::AuthenticationError) { Gable::Client.sandbox("gbl_test_#{'x' * 43}", base_url: URL).units.page }
    assert_equal 401, bogus.status
  end

  def test_expand_answers_references_with_their_records
    property = new_property("Expand Court")
    unit = gable.units.create({ property_id: property["id"], number: "#{RUN}-E" })
    terms = { unit_id: unit["id"], rent: "100.00", currency: "USD" }
    lease = gable.leases.create(terms.merge(start_date: "2027-01-01"), expand: %w[unit])
    assert_kind_of Hash, lease["unit_id"], "create answers the unit itself"
    assert_equal ["unit", unit["id"]], [lease["unit_id"]["object"], lease["unit_id"]["id"]]
    assert_equal property["id"], lease["property_id"], "what was not asked for stays an id"
    second = gable.leases.create(terms.merge(start_date: "2027-02-01"))
    assert_equal unit["id"], second["unit_id"], "without expand, an id"

    got = gable.leases.get(lease["id"], expand: %w[unit unit.property])
    assert_equal "unit", got["unit_id"]["object"]
    assert_equal "#{RUN}-E", got["unit_id"]["number"]
    assert_kind_of Hash, got["unit_id"]["property_id"]
    assert_equal "property", got["unit_id"]["property_id"]["object"]
    assert_equal "Expand Court #{RUN}", got["unit_id"]["property_id"]["name"]

    # Two pages of one: the second page must be asked with expand[] too.
    listed = gable.leases.list(filters: { unit_id: unit["id"] }, sort: "start_date", limit: 1, expand: %w[unit]).to_a
    assert_equal [lease["id"], second["id"]], listed.map { |l| l["id"] }
    listed.each_with_index do |each, i|
      assert_kind_of Hash, each["unit_id"], "page #{i + 1} answers the unit itself"
      assert_equal ["unit", "#{RUN}-E"], [each["unit_id"]["object"], each["unit_id"]["number"]]
    end
    page = gable.leases.page(filters: { unit_id: unit["id"] }, limit: 1, expand: %w[unit])
    assert_equal unit["id"], page["data"].first["unit_id"]["id"]

    # Fieldsets of the expanded collections; an update and an action answer expanded too.
    trimmed = gable.leases.get(lease["id"], expand: %w[unit], fields: { leases: %w[rent], units: %w[number] })
    assert_equal %w[id object rent unit_id], trimmed.keys.sort, "the expanded reference is shown"
    assert_equal %w[id number object], trimmed["unit_id"].keys.sort
    updated = gable.leases.update(lease["id"], { rent: "120.00" }, expand: %w[unit.property])
    assert_equal 120, updated["rent"]
    assert_equal property["id"], updated.dig("unit_id", "property_id", "id")
    invoice = gable.invoices.create({ lease_id: lease["id"], amount_due: "120.00", currency: "USD", due_date: "2027-01-01" })
    opened = gable.invoices.action(invoice["id"], "open", expand: %w[lease.unit])
    assert_equal "open", opened["status"]
    assert_equal "#{RUN}-E", opened.dig("lease_id", "unit_id", "number")

    unknown = assert_raises(Gable::InvalidRequestError) { gable.leases.get(lease["id"], expand: %w[unit nope]) }
    assert_equal [400, "invalid_parameter", "expand[]"], [unknown.status, unknown.code, unknown.param]
  end

  def test_a_retried_test_payment_pays_once
    # A test invoice paid safely twice: only an open invoice takes payments.
    unit = gable.units.create({ property_id: new_property("Pay Court")["id"], number: "#{RUN}-P" })
    lease = gable.leases.create({ unit_id: unit["id"], start_date: "2027-01-01", rent: "100.00", currency: "USD" })
    invoice = gable.invoices.create({ lease_id: lease["id"], amount_due: "100.00", currency: "USD", due_date: "2027-01-01" })
    assert_equal "draft", invoice["status"]
    assert_equal "open", gable.invoices.action(invoice["id"], "open")["status"]

    before = gable.payments.list(limit: 100).count
    key = SecureRandom.uuid
    first = gable.payments.create_test_payment("succeeded", "100.00", "USD", idempotency_key: key, invoice_id: invoice["id"])
    again = gable.payments.create_test_payment("succeeded", "100.00", "USD", idempotency_key: key, invoice_id: invoice["id"])
    assert_equal first["id"], again["id"]
    assert_equal %w[succeeded succeeded], [first["status"], again["status"]]
    assert_equal before + 1, gable.payments.list(limit: 100).count, "one payment for the retried request"
    paid = gable.invoices.get(invoice["id"])
    assert_equal "paid", paid["status"]
    assert_kind_of Numeric, paid["amount_paid"], "amounts are JSON numbers"
    assert_equal 100, paid["amount_paid"]

    other = gable.payments.create_test_payment("failed", 3, "USD")
    refute_equal first["id"], other["id"]
    assert_equal "failed", other["status"]
  end

  def test_a_reused_idempotency_key_is_an_idempotency_error
    key = SecureRandom.uuid
    first = gable.payments.create_test_payment("succeeded", "21.00", "USD", idempotency_key: key)
    before = gable.payments.list(limit: 100).count
    reused = assert_raises(Gable::IdempotencyError) do
      gable.payments.create_test_payment("succeeded", "22.00", "USD", idempotency_key: key)
    end
    assert_equal [422, "idempotency_key_reused"], [reused.status, reused.code]
    assert_kind_of Gable::Error, reused
    refute_kind_of Gable::ConflictError, reused
    refute_empty reused.request_id.to_s
    assert_equal first, gable.payments.get(first["id"]), "the first payment is unchanged"
    assert_equal before, gable.payments.list(limit: 100).count, "no second payment"
  end

  def test_429_is_retried_after_retry_after
    # The server runs with a low sandbox rate limit (sdks/run.sh); this burst exceeds it.
    # Sent at once, from threads: one after another, a loaded machine's slow answers can
    # keep 40 calls within the limit (10 a second after a burst of 10).
    impatient = client(max_retries: 0)
    limited = assert_raises(Gable::RateLimitError) do
      Array.new(40) { Thread.new { Thread.current.report_on_exception = false; impatient.units.page(limit: 1) } }.each(&:join)
    end
    assert_equal 429, limited.status

    patient = client(max_retries: 5)
    started = monotonic
    20.times { patient.units.page(limit: 1) }
    assert_operator monotonic - started, :>, 0.5, "the burst had to wait for Retry-After"
  end

  def test_webhook_verification_of_a_real_delivery
    receiver = HTTPReceiver.new
    hook = gable.webhooks.create({ url: receiver.url("/hook"), events: ["lead.created"] })
    secret = hook["secret"]
    gable.leads.create({ name: "Lee", email: "lee.#{RUN}@example.com" })
    delivery = receiver.wait_for(1, timeout: 30).first
    refute_nil delivery, "Gable delivered the event"

    body = delivery.body
    headers = delivery.headers
    event = Gable::Webhook.verify(body, headers, secret)
    assert_equal "lead.created", event["type"]

    assert_raises(Gable::SignatureVerificationError, "tampered body") { Gable::Webhook.verify(body.sub("Lee", "Eve"), headers, secret) }
    assert_raises(Gable::SignatureVerificationError, "wrong secret") { Gable::Webhook.verify(body, headers, "whsec_wrong") }
    assert_raises(Gable::SignatureVerificationError, "stale") { Gable::Webhook.verify(body, headers, secret, now: Time.now + 3600) }
    gable.webhooks.delete(hook["id"])
  ensure
    receiver&.close
  end

  # `gable listen --forward-to` signs each event as a delivery, under the secret that
  # `gable listen --print-secret` prints: what a developer configures in their app.
  def test_a_gable_listen_forward_verifies_with_the_kits_verifier
    bin = ENV.fetch("GABLE_BIN", "")
    skip "GABLE_BIN (the gable binary) is not set: sdks/run.sh sets it to run `gable listen`" if bin.empty?
    receiver = HTTPReceiver.new
    home = Dir.mktmpdir("gable-cli-home-")
    env = { "GABLE_API_URL" => URL, "GABLE_API_KEY" => KEY, "GABLE_CLI_HOME" => home }

    printing = spawn_gable(bin, env, "listen", "--print-secret")
    printed = printing[:waiter].join(20)
    stop_gable(printing)
    assert printed&.value&.success?, "gable listen --print-secret: #{printing[:said].join}"
    secret = printing[:out].join.strip
    assert secret.start_with?("whsec_"), "gable listen --print-secret printed #{secret.inspect}"

    listen = spawn_gable(bin, env, "listen", "--forward-to", receiver.url("/webhooks"), "--events", "lead.created")
    deadline = monotonic + 20
    until listen[:said].any? { |line| line.include?("Forwarding each event to") }
      flunk "gable listen was not forwarding within 20 s: #{listen[:said].join}#{listen[:out].join}" if monotonic > deadline || !listen[:waiter].alive?
      sleep 0.05
    end

    lead = gable.leads.create({ name: "Lee Listen", email: "lee.listen.#{RUN}@example.com" })
    forwarded = nil
    deadline = monotonic + 30
    while forwarded.nil? && monotonic < deadline
      forwarded = receiver.requests.find { |r| JSON.parse(r.body).dig("data", "object", "id") == lead["id"] }
      sleep 0.1
    end
    refute_nil forwarded, "gable listen forwarded no lead.created about #{lead["id"]} within 30 s: #{listen[:said].join}#{listen[:out].join}"
    assert_equal "/webhooks", forwarded.path

    event = Gable::Webhook.verify(forwarded.body, forwarded.headers, secret)
    assert_equal "lead.created", event["type"]
    assert_equal event["id"], forwarded.header("Gable-Event-Id"), "Gable-Event-Id is the event's id"
    tampered = forwarded.body.sub("Lee Listen", "Eve Listen")
    refute_equal forwarded.body, tampered
    assert_raises(Gable::SignatureVerificationError, "tampered body") { Gable::Webhook.verify(tampered, forwarded.headers, secret) }
  ensure
    stop_gable(listen) if listen
    receiver&.close
    FileUtils.remove_entry(home) if home
  end

  private

  # `gable ARGS` as a child process (no shell), its standard output and error each read by a
  # thread of its own (so the pipes never fill): {out:, said: (the lines so far), waiter:}.
  def spawn_gable(bin, env, *args)
    stdin, stdout, stderr, waiter = Open3.popen3(env, bin, *args)
    stdin.close
    out = []
    said = []
    readers = [[stdout, out], [stderr, said]].map { |io, lines| Thread.new { io.each_line { |line| lines << line } } }
    { out: out, said: said, waiter: waiter, readers: readers }
  end

  # Ctrl-C (SIGINT), then SIGKILL when it is still there after 10 s.
  def stop_gable(child)
    waiter = child[:waiter]
    if waiter.alive?
      Process.kill("INT", waiter.pid)
      unless waiter.join(10)
        Process.kill("KILL", waiter.pid)
        waiter.join
      end
    end
    child[:readers].each { |reader| reader.join(5) }
  rescue Errno::ESRCH
    nil # it ended on its own in between
  end
end
