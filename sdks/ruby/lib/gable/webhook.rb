# frozen_string_literal: true

require "json"
require "openssl"

module Gable
  # The delivery is not from Gable, was changed, or is too old to trust.
  class SignatureVerificationError < StandardError; end

  # Webhook verification. `Gable-Signature: v1=<hex> [v1=<hex>]` (two values while a
  # secret is being rotated) is the HMAC-SHA256, keyed with the whole secret (`whsec_…`), of
  # `<Gable-Timestamp>.<raw body>`. Verify the body exactly as received, before parsing it.
  module Webhook
    DEFAULT_TOLERANCE = 300

    module_function

    # Checks a delivery's signature (any of its `v1=` values, in constant time) and its
    # timestamp (within `tolerance` seconds of `now`); returns the parsed event (a Hash).
    # `headers` is any Hash of header names to values, in any case (a Rack env's
    # `HTTP_GABLE_SIGNATURE` form too).
    def verify(payload, headers, secret, tolerance: DEFAULT_TOLERANCE, now: nil)
      timestamp = header(headers, "gable-timestamp").to_s.strip
      signatures = header(headers, "gable-signature").to_s.split.filter_map { |s| s.delete_prefix("v1=").downcase if s.start_with?("v1=") }
      raise SignatureVerificationError, "no Gable-Timestamp" unless timestamp.match?(/\A\d+\z/)
      raise SignatureVerificationError, "no v1 signature in Gable-Signature" if signatures.empty?
      if ((now || Time.now).to_f - timestamp.to_i).abs > tolerance
        raise SignatureVerificationError, "the timestamp is outside the tolerance: a replay, or a clock far off"
      end

      expected = OpenSSL::HMAC.hexdigest("SHA256", secret, "#{timestamp}.".b + payload.to_s.b)
      # secure_compare hashes both sides first, so it is constant-time whatever the lengths.
      unless signatures.any? { |s| OpenSSL.secure_compare(expected, s) }
        raise SignatureVerificationError, "no signature matches this secret and body"
      end

      JSON.parse(payload)
    end

    def header(headers, name)
      headers.each do |key, value|
        key = key.to_s.downcase.tr("_", "-").delete_prefix("http-")
        return Array(value).join(" ") if key == name
      end
      nil
    end
    private_class_method :header
  end
end
