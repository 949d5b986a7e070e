# frozen_string_literal: true

require "test_helper"

# The transport against a scripted local server: what every request carries, and how
# answers become results, retries and typed errors.
class ClientTest < Minitest::Test
  UUID_V4 = /\A\h{8}-\h{4}-4\h{3}-[89ab]\h{3}-\h{12}\z/.freeze

  def serve(*replies)
    @receiver = HTTPReceiver.new { |_request, index| replies.fetch(index) { replies.last } }
  end

  def teardown
    @receiver&.close
  end

  def client(**options)
    Gable::Client.sandbox("gbl_test_unit", base_url: @receiver.url, backoff: 0, **options)
  end

  def json(status, body, headers = {})
    [status, { "Content-Type" => "application/json" }.merge(headers), JSON.generate(body)]
  end

  def test_presets_and_the_v1_suffix
    assert_equal "http://127.0.0.1:8081/v1", Gable::Client.sandbox("k").base_url
    assert_equal "http://127.0.0.1:8080/v1", Gable::Client.live("k").base_url
    assert_equal "https://gable.example/v1", Gable::Client.live("k", base_url: "https://gable.example/").base_url
    assert_equal "https://gable.example/v1", Gable::Client.new("k", base_url: "https://gable.example/v1").base_url
    refute_includes Gable::Client.live("gbl_live_secret").inspect, "gbl_live_secret"
  end

  # That the list is the served description's: AgainstGableTest.
  def test_every_collection_has_an_accessor
    c = Gable::Client.sandbox("k")
    Gable::Client::COLLECTIONS.each { |name| assert_equal name, c.public_send(name.tr("-", "_")).name }
    assert_same c.purchase_orders, c.collection("purchase-orders")
    assert_instance_of Gable::Payments, c.payments
  end

  def test_headers_query_and_a_fresh_idempotency_key_per_post
    serve(json(200, { data: [], meta: { has_more: false, next_cursor: nil } }))
    c = client
    c.units.page(filters: { property_id: "p 1", bedrooms: { gte: 2, in: [1, 2] }, furnished: false },
                 sort: %w[-created_at number], fields: %w[id number], limit: 2, cursor: "abc")
    c.units.create({ number: "1A" })
    c.units.create({ number: "1B" })
    c.leases.action("lea/1", "send")
    get, post1, post2, action = @receiver.requests
    assert_equal "/v1/units?filter%5Bproperty_id%5D=p+1&filter%5Bbedrooms%5D%5Bgte%5D=2&filter%5Bbedrooms%5D%5Bin%5D=1%2C2" \
                 "&filter%5Bfurnished%5D=false&sort=-created_at%2Cnumber&fields%5Bunits%5D=id%2Cnumber&limit=2&cursor=abc", get.path
    assert_equal "Bearer gbl_test_unit", get.header("Authorization")
    assert_equal "2026-11-22", get.header("Gable-Version")
    assert_equal "gable-ruby/0.1.0", get.header("User-Agent")
    assert_nil get.header("Idempotency-Key")
    assert_equal({ "number" => "1A" }, JSON.parse(post1.body))
    assert_equal "application/json", post1.header("Content-Type")
    assert_match UUID_V4, post1.header("Idempotency-Key")
    refute_equal post1.header("Idempotency-Key"), post2.header("Idempotency-Key")
    assert_equal ["POST", "/v1/leases/lea%2F1/send"], [action.method, action.path]
  end

  def test_retries_reuse_the_idempotency_key_and_honour_retry_after
    serve(json(503, { error: { code: "unavailable", message: "later" } }, "Retry-After" => "1"),
          json(429, { error: { code: "rate_limited", message: "slow down" } }),
          json(200, { data: { id: "pay_1" } }))
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    payment = client.payments.create_test_payment("succeeded", "12.50", "USD", idempotency_key: "order-1234")
    assert_operator Process.clock_gettime(Process::CLOCK_MONOTONIC) - started, :>=, 1.0, "waited Retry-After"
    assert_equal "pay_1", payment["id"]
    keys = @receiver.requests.map { |r| r.header("Idempotency-Key") }
    assert_equal %w[order-1234 order-1234 order-1234], keys
    assert_equal({ "scenario" => "succeeded", "amount" => "12.50", "currency" => "USD" }, JSON.parse(@receiver.requests.last.body))
  end

  def test_a_test_payment_always_carries_a_key
    serve(json(200, { data: { id: "pay_1" } }))
    client.payments.create_test_payment("failed", 3, "USD", invoice_id: "inv_1")
    request = @receiver.requests.first
    assert_match UUID_V4, request.header("Idempotency-Key")
    assert_equal({ "scenario" => "failed", "amount" => 3, "currency" => "USD", "invoice_id" => "inv_1" }, JSON.parse(request.body))
  end

  def test_errors_are_typed_by_status
    {
      400 => Gable::InvalidRequestError, 401 => Gable::AuthenticationError, 403 => Gable::PermissionError,
      404 => Gable::NotFoundError, 409 => Gable::ConflictError, 422 => Gable::IdempotencyError,
      429 => Gable::RateLimitError, 500 => Gable::ServerError, 502 => Gable::ServerError, 418 => Gable::Error
    }.each do |status, type|
      serve(json(status, { error: { code: "c#{status}", message: "m#{status}", request_id: "req_#{status}", param: "p" } }))
      error = assert_raises(type) { client(max_retries: 0).units.get("u1") }
      assert_equal type, error.class
      assert_kind_of Gable::Error, error
      assert_equal [status, "c#{status}", "m#{status}", "req_#{status}", "p"],
                   [error.status, error.code, error.message, error.request_id, error.param]
      @receiver.close
    end
    @receiver = nil
  end

  def test_an_error_without_a_json_body_keeps_the_request_id_header
    serve([502, { "Request-Id" => "req_hdr" }, "bad gateway"])
    error = assert_raises(Gable::ServerError) { client(max_retries: 1).units.get("u1") }
    assert_equal [502, "unknown_error", "bad gateway", "req_hdr"], [error.status, error.code, error.message, error.request_id]
    assert_equal 2, @receiver.requests.size, "one retry"
  end

  def test_a_4xx_is_not_retried
    serve(json(409, { error: { code: "invalid_state_transition", message: "no" } }))
    assert_raises(Gable::ConflictError) { client(max_retries: 3).listings.action("l1", "publish") }
    assert_equal 1, @receiver.requests.size
  end

  def test_an_unreachable_server_is_a_network_error_after_the_retries
    serve
    url = @receiver.url
    @receiver.close
    @receiver = nil
    error = assert_raises(Gable::Error) { Gable::Client.sandbox("k", base_url: url, max_retries: 2, backoff: 0).units.page }
    assert_equal Gable::Error, error.class
    assert_equal [0, "network_error"], [error.status, error.code]
  end

  def test_expand_is_a_repeated_parameter_on_every_call_and_every_page
    first = json(200, { data: [{ id: "a" }], meta: { has_more: true, next_cursor: "c2" } })
    last = json(200, { data: [{ id: "b" }], meta: { has_more: false, next_cursor: nil } })
    one = json(200, { data: { id: "x" } })
    @receiver = HTTPReceiver.new do |request, _index|
      next one unless request.path.start_with?("/v1/leases?")

      request.path.include?("cursor=c2") ? last : first
    end
    c = client
    expand = %w[unit unit.property]
    leases = c.leases.list(filters: { status: "active" }, fields: { units: %w[number] }, limit: 1, expand: expand).to_a
    assert_equal %w[a b], leases.map { |l| l["id"] }
    c.leases.get("l 1", expand: expand, fields: { leases: %w[rent], units: %w[number bedrooms] })
    c.leases.create({ rent: 1 }, idempotency_key: "k-123456", expand: expand)
    c.leases.update("l1", { rent: 2 }, expand: "unit", fields: %w[rent])
    c.leases.action("l1", "send", expand: expand)
    c.payments.create_test_payment("succeeded", "1.00", "USD", expand: %w[invoice], invoice_id: "i1")
    c.leases.retrieve("l1")
    e = "expand%5B%5D=unit&expand%5B%5D=unit.property"
    assert_equal ["GET /v1/leases?filter%5Bstatus%5D=active&fields%5Bunits%5D=number&#{e}&limit=1",
                  "GET /v1/leases?filter%5Bstatus%5D=active&fields%5Bunits%5D=number&#{e}&limit=1&cursor=c2",
                  "GET /v1/leases/l%201?fields%5Bleases%5D=rent&fields%5Bunits%5D=number%2Cbedrooms&#{e}",
                  "POST /v1/leases?#{e}",
                  "PATCH /v1/leases/l1?fields%5Bleases%5D=rent&expand%5B%5D=unit",
                  "POST /v1/leases/l1/send?#{e}",
                  "POST /v1/payments?expand%5B%5D=invoice",
                  "GET /v1/leases/l1"], @receiver.requests.map { |r| "#{r.method} #{r.path}" }
    assert_equal "k-123456", @receiver.requests[3].header("Idempotency-Key")
    assert_equal({ "scenario" => "succeeded", "amount" => "1.00", "currency" => "USD", "invoice_id" => "i1" },
                 JSON.parse(@receiver.requests[6].body), "expand is not a field of the body")
  end

  def test_list_follows_the_cursor_lazily
    first = json(200, { data: [{ id: "u1" }, { id: "u2" }], meta: { has_more: true, next_cursor: "c2" } })
    last = json(200, { data: [{ id: "u3" }], meta: { has_more: false, next_cursor: nil } })
    @receiver = HTTPReceiver.new { |request, _index| request.path.include?("cursor=c2") ? last : first }
    units = client.units.list(limit: 2)
    assert_kind_of Enumerator, units
    assert_empty @receiver.requests, "nothing is fetched before iterating"
    assert_equal %w[u1 u2], units.lazy.map { |u| u["id"] }.first(2)
    assert_equal 1, @receiver.requests.size, "the second page is not fetched for the first two"
    assert_equal %w[u1 u2 u3], units.map { |u| u["id"] }
    assert_equal "/v1/units?limit=2&cursor=c2", @receiver.requests.last.path
  end
end
