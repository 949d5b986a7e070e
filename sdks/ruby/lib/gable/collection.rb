# frozen_string_literal: true

require "erb"
require "securerandom"

module Gable
  # One collection of the API (`/v1/{name}`). Records are Hashes with string keys, as the
  # API spells them (`unit["id"]`, `unit["property_id"]`).
  class Collection
    attr_reader :client, :name

    def initialize(client, name)
      @client = client
      @name = name
    end

    # Every record matching the options, page after page (follows `meta.next_cursor`), as
    # an Enumerator: pages are fetched only as far as you iterate, so `.lazy`, `.first(n)`
    # and `.take_while` stop early. With a block, iterates instead.
    #
    #   client.leases.list(filters: { status: "active", rent: { gte: 1000 }, currency: "USD" },
    #                      sort: "-start_date", fields: %w[id rent], limit: 100)
    def list(filters: nil, sort: nil, fields: nil, limit: nil, &block)
      records = Enumerator.new do |yielder|
        cursor = nil
        loop do
          page = page(filters: filters, sort: sort, fields: fields, limit: limit, cursor: cursor)
          page.fetch("data", []).each { |record| yielder << record }
          meta = page["meta"] || {}
          break unless meta["has_more"] && meta["next_cursor"]

          cursor = meta["next_cursor"]
        end
      end
      block ? records.each(&block) : records
    end

    # One page as the API answers it: `{"data" => [...], "meta" => {"has_more" => …, "next_cursor" => …}}`.
    def page(filters: nil, sort: nil, fields: nil, limit: nil, cursor: nil)
      client.request(:get, "/#{name}", query: query(filters, sort, fields, limit, cursor))
    end

    def retrieve(id)
      client.request(:get, path(id))["data"]
    end
    alias get retrieve

    def create(params, idempotency_key: nil)
      client.request(:post, "/#{name}", body: params, idempotency_key: idempotency_key)["data"]
    end

    def update(id, params)
      client.request(:patch, path(id), body: params)["data"]
    end

    def delete(id)
      client.request(:delete, path(id))["data"]
    end

    # Runs a state-machine action: `client.leases.action(id, "send")` is
    # `POST /v1/leases/{id}/send`.
    def action(id, action, params = nil, idempotency_key: nil)
      client.request(:post, "#{path(id)}/#{action}", body: params, idempotency_key: idempotency_key)["data"]
    end

    def inspect
      "#<#{self.class.name} #{name}>"
    end

    private

    def path(id)
      "/#{name}/#{ERB::Util.url_encode(id.to_s)}"
    end

    # `filter[field]=v` for a value, `filter[field][op]=v` for a Hash of op => value; lists
    # are joined by commas and booleans spelt true/false (the API's query syntax).
    def query(filters, sort, fields, limit, cursor)
      pairs = []
      (filters || {}).each do |field, value|
        if value.is_a?(Hash)
          value.each { |op, v| pairs << ["filter[#{field}][#{op}]", param(v)] }
        else
          pairs << ["filter[#{field}]", param(value)]
        end
      end
      pairs << ["sort", param(sort)] if sort
      pairs << ["fields[#{name}]", param(fields)] if fields
      pairs << ["limit", limit.to_s] if limit
      pairs << ["cursor", cursor] if cursor
      pairs
    end

    def param(value)
      value.is_a?(Array) ? value.map { |v| param(v) }.join(",") : value.to_s
    end
  end

  # Payments, with sandbox test payments.
  class Payments < Collection
    # A sandbox payment whose outcome is `scenario` ("succeeded", "failed", "reversed"),
    # always sent with an `Idempotency-Key` (pass your own to retry safely across
    # processes). `amount` is a decimal string or an integer, in major units; other
    # fields (`invoice_id:`) go into the body.
    def create_test_payment(scenario, amount, currency, idempotency_key: nil, **fields)
      params = { scenario: scenario, amount: amount, currency: currency }.merge(fields)
      create(params, idempotency_key: idempotency_key || SecureRandom.uuid)
    end
  end
end
