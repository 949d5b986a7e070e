# frozen_string_literal: true

require "erb"
require "securerandom"

module Gable
  # One collection of the API (`/v1/{name}`). Records are Hashes with string keys, as the
  # API spells them (`unit["id"]`, `unit["property_id"]`).
  #
  # Every call that answers records takes `expand:` and `fields:`. `expand` lists references
  # to answer with their records instead of their ids: a reference field's name without
  # `_id` (`unit` for `unit_id`, `charges` for `charge_ids`), a dot to go further
  # (`%w[unit unit.property]`; at most 10 paths of 3 levels); the record takes the id's
  # place (`lease["unit_id"]["number"]`), and it is sent as one `expand[]` per path. `fields`
  # is an Array of this collection's fields, or a Hash of collection => fields, which trims
  # expanded records too (`{ leases: %w[rent], units: %w[number] }`).
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
    #                      sort: "-start_date", fields: %w[id rent], limit: 100, expand: %w[unit])
    #
    # Every page is asked with the same options, `expand` included.
    def list(filters: nil, sort: nil, fields: nil, limit: nil, expand: nil, &block)
      records = Enumerator.new do |yielder|
        cursor = nil
        loop do
          page = page(filters: filters, sort: sort, fields: fields, limit: limit, cursor: cursor, expand: expand)
          page.fetch("data", []).each { |record| yielder << record }
          meta = page["meta"] || {}
          break unless meta["has_more"] && meta["next_cursor"]

          cursor = meta["next_cursor"]
        end
      end
      block ? records.each(&block) : records
    end

    # One page as the API answers it: `{"data" => [...], "meta" => {"has_more" => …, "next_cursor" => …}}`.
    def page(filters: nil, sort: nil, fields: nil, limit: nil, cursor: nil, expand: nil)
      client.request(:get, "/#{name}", query: query(filters, sort, fields, limit, cursor, expand))
    end

    # One record: `get(id, expand: %w[unit])` answers its `unit_id` with the unit.
    def retrieve(id, expand: nil, fields: nil)
      client.request(:get, path(id), query: shape(fields, expand))["data"]
    end
    alias get retrieve

    def create(params, idempotency_key: nil, expand: nil, fields: nil)
      client.request(:post, "/#{name}", query: shape(fields, expand), body: params, idempotency_key: idempotency_key)["data"]
    end

    def update(id, params, expand: nil, fields: nil)
      client.request(:patch, path(id), query: shape(fields, expand), body: params)["data"]
    end

    def delete(id)
      client.request(:delete, path(id))["data"]
    end

    # Runs a state-machine action: `client.leases.action(id, "send")` is
    # `POST /v1/leases/{id}/send`.
    def action(id, action, params = nil, idempotency_key: nil, expand: nil, fields: nil)
      client.request(:post, "#{path(id)}/#{action}", query: shape(fields, expand), body: params,
                                                     idempotency_key: idempotency_key)["data"]
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
    def query(filters, sort, fields, limit, cursor, expand)
      pairs = []
      (filters || {}).each do |field, value|
        if value.is_a?(Hash)
          value.each { |op, v| pairs << ["filter[#{field}][#{op}]", param(v)] }
        else
          pairs << ["filter[#{field}]", param(value)]
        end
      end
      pairs << ["sort", param(sort)] if sort
      pairs.concat(shape(fields, expand))
      pairs << ["limit", limit.to_s] if limit
      pairs << ["cursor", cursor] if cursor
      pairs
    end

    # The answer's shape: `fields[collection]=a,b` per fieldset (an Array is this
    # collection's, a Hash maps collections to fields) and one `expand[]=path` per path.
    def shape(fields, expand)
      sets = fields.is_a?(Hash) ? fields : { name => fields }
      pairs = sets.filter_map { |collection, names| ["fields[#{collection}]", param(names)] if names }
      Array(expand).each { |path| pairs << ["expand[]", path.to_s] }
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
    # fields (`invoice_id:`) go into the body; `expand:` (`%w[invoice]`) shapes the payment
    # answered.
    def create_test_payment(scenario, amount, currency, idempotency_key: nil, expand: nil, **fields)
      params = { scenario: scenario, amount: amount, currency: currency }.merge(fields)
      create(params, idempotency_key: idempotency_key || SecureRandom.uuid, expand: expand)
    end
  end
end
