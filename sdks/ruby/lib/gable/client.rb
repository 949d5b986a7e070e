# frozen_string_literal: true

require "json"
require "net/http"
require "openssl"
require "securerandom"
require "uri"

module Gable
  # A client for one environment: a base address and a credential (an API key
  # `gbl_test_…`/`gbl_live_…`, or an OAuth access token), sent as `Authorization: Bearer`.
  #
  #   client = Gable::Client.sandbox("gbl_test_…", base_url: "http://127.0.0.1:8081/v1")
  #   client.units.list(filters: { property_id: id }, sort: "number").each { |unit| … }
  #
  # Every POST carries an `Idempotency-Key` (one per call, reused by its retries); 429, 5xx
  # and network errors are retried with full-jitter exponential backoff, honouring
  # `Retry-After`.
  class Client
    LIVE_URL = "http://127.0.0.1:8080/v1"
    SANDBOX_URL = "http://127.0.0.1:8081/v1"

    # The API's collections; each has an accessor (`purchase-orders` is `#purchase_orders`).
    # BEGIN GENERATED collections: `make generate` writes these from `gable collections`.
    COLLECTIONS = %w[
      organizations companies users roles owners properties buildings units rooms beds
      listings leads viewings applications screening leases signatures tenancies bookings
      guests charges invoices payments refunds accounting-entries workorders inspections
      assets vendors purchase-orders documents tasks messages events reports webhooks
      webhook-deliveries flow-tokens request-logs imports
    ].freeze
    # END GENERATED collections

    NETWORK_ERRORS = [
      SystemCallError, IOError, SocketError, Timeout::Error, OpenSSL::SSL::SSLError
    ].freeze

    METHODS = {
      get: Net::HTTP::Get, post: Net::HTTP::Post, patch: Net::HTTP::Patch, delete: Net::HTTP::Delete
    }.freeze

    attr_reader :base_url, :max_retries, :timeout

    def self.sandbox(api_key, base_url: SANDBOX_URL, **options)
      new(api_key, base_url: base_url, **options)
    end

    def self.live(api_key, base_url: LIVE_URL, **options)
      new(api_key, base_url: base_url, **options)
    end

    # `max_retries: 0` disables retries; `backoff` and `max_backoff` (seconds) bound the
    # waits between them.
    def initialize(api_key, base_url: SANDBOX_URL, max_retries: 3, timeout: 30, backoff: 0.5, max_backoff: 8.0)
      raise ArgumentError, "an API key or access token is required" if api_key.to_s.empty?

      base = base_url.to_s.chomp("/")
      @base_url = base.end_with?("/v1") ? base : "#{base}/v1"
      @api_key = api_key
      @max_retries = max_retries
      @timeout = timeout
      @backoff = backoff
      @max_backoff = max_backoff
      @collections = {}
    end

    # A collection by its API name (`client.collection("purchase-orders")`).
    def collection(name)
      name = name.to_s
      @collections[name] ||= (name == "payments" ? Payments : Collection).new(self, name)
    end

    COLLECTIONS.each do |name|
      define_method(name.tr("-", "_")) { collection(name) }
    end

    # The key stays out of `inspect` (and so out of logs and consoles).
    def inspect
      "#<#{self.class.name} #{base_url}>"
    end

    # Sends one request, with retries; returns the decoded JSON answer (a Hash).
    def request(method, path, query: nil, body: nil, idempotency_key: nil)
      uri = URI("#{base_url}#{path}")
      uri.query = URI.encode_www_form(query) if query && !query.empty?
      http_request = METHODS.fetch(method.to_s.downcase.to_sym).new(uri, headers)
      if http_request.request_body_permitted?
        # Net::HTTP sends POST/PATCH with a body in any case: an empty one (Content-Length: 0)
        # is an action without parameters.
        http_request["Content-Type"] = "application/json"
        http_request.body = body.nil? ? "" : JSON.generate(body)
      end
      # One key per call: its retries reuse it, so a retried POST is made once.
      http_request["Idempotency-Key"] = idempotency_key || SecureRandom.uuid if http_request.is_a?(Net::HTTP::Post)
      response = with_retries { send_once(uri, http_request) }
      response.body.to_s.empty? ? {} : JSON.parse(response.body)
    end

    private

    def headers
      {
        "Authorization" => "Bearer #{@api_key}",
        "Gable-Version" => API_VERSION,
        "Accept" => "application/json",
        "User-Agent" => "gable-ruby/#{VERSION}"
      }
    end

    # Runs the block (one attempt) until it answers below 400, or the error is final: a
    # 4xx other than 429, or the retries are spent.
    def with_retries
      attempt = 0
      loop do
        begin
          response = yield
        rescue *NETWORK_ERRORS => e
          raise Error.new("could not reach Gable: #{e.message}", status: 0, code: "network_error") if attempt >= max_retries

          pause(attempt)
          attempt += 1
          next
        end
        status = response.code.to_i
        return response if status < 400

        retryable = status == 429 || status >= 500
        raise Error.from_response(status, response.body, response["Request-Id"]) unless retryable && attempt < max_retries

        pause(attempt, response["Retry-After"])
        attempt += 1
      end
    end

    def send_once(uri, http_request)
      Net::HTTP.start(uri.host, uri.port, use_ssl: uri.scheme == "https",
                                          open_timeout: timeout, read_timeout: timeout, write_timeout: timeout) do |http|
        http.request(http_request)
      end
    end

    def pause(attempt, retry_after = nil)
      delay = if retry_after.to_s.strip.match?(/\A\d+\z/)
                retry_after.to_i
              else
                # Full jitter: a random wait up to the exponential bound.
                rand * [@max_backoff, @backoff * (2**attempt)].min
              end
      sleep(delay)
    end
  end
end
