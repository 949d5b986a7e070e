# frozen_string_literal: true

require "test_helper"

# Gable::Webhook.verify against signatures computed here, as Gable computes them.
class WebhookTest < Minitest::Test
  SECRET = "whsec_unit_test_secret"
  BODY = '{"id":"evt_1","type":"lead.created","data":{"name":"Lee"}}'

  def sign(body, timestamp, secret = SECRET)
    OpenSSL::HMAC.hexdigest("SHA256", secret, "#{timestamp}.#{body}")
  end

  def headers(signature, timestamp = Time.now.to_i)
    { "Gable-Timestamp" => timestamp.to_s, "Gable-Signature" => signature }
  end

  def test_a_matching_signature_returns_the_event
    now = Time.now.to_i
    event = Gable::Webhook.verify(BODY, headers("v1=#{sign(BODY, now)}", now), SECRET)
    assert_equal "lead.created", event["type"]
    assert_equal "Lee", event.dig("data", "name")
  end

  def test_any_of_several_v1_values_may_match
    now = Time.now.to_i
    rotated = "v1=#{sign(BODY, now, 'whsec_old')} v1=#{'0' * 64} v1=#{sign(BODY, now)}"
    assert_equal "evt_1", Gable::Webhook.verify(BODY, headers(rotated, now), SECRET)["id"]
    assert_raises(Gable::SignatureVerificationError) do
      Gable::Webhook.verify(BODY, headers("v1=#{sign(BODY, now, 'whsec_old')} v1=#{'0' * 64}", now), SECRET)
    end
  end

  def test_header_names_in_any_case_and_the_rack_form
    now = Time.now.to_i
    signature = "v1=#{sign(BODY, now)}"
    [
      { "gable-timestamp" => now.to_s, "gable-signature" => signature },
      { "GABLE-TIMESTAMP" => now.to_s, "GABLE-SIGNATURE" => signature },
      { "HTTP_GABLE_TIMESTAMP" => now.to_s, "HTTP_GABLE_SIGNATURE" => signature },
      { "Gable-Timestamp" => [now.to_s], "Gable-Signature" => [signature] }
    ].each do |given|
      assert_equal "evt_1", Gable::Webhook.verify(BODY, given, SECRET)["id"], given.keys.inspect
    end
  end

  def test_a_tampered_body_or_a_wrong_secret_is_refused
    now = Time.now.to_i
    signed = headers("v1=#{sign(BODY, now)}", now)
    assert_raises(Gable::SignatureVerificationError) { Gable::Webhook.verify(BODY.sub("Lee", "Eve"), signed, SECRET) }
    assert_raises(Gable::SignatureVerificationError) { Gable::Webhook.verify(BODY, signed, "whsec_wrong") }
  end

  def test_the_timestamp_must_be_within_the_tolerance
    now = Time.now.to_i
    old = now - 301
    assert_raises(Gable::SignatureVerificationError) { Gable::Webhook.verify(BODY, headers("v1=#{sign(BODY, old)}", old), SECRET) }
    future = now + 301
    assert_raises(Gable::SignatureVerificationError) { Gable::Webhook.verify(BODY, headers("v1=#{sign(BODY, future)}", future), SECRET) }
    assert_equal "evt_1", Gable::Webhook.verify(BODY, headers("v1=#{sign(BODY, old)}", old), SECRET, tolerance: 600)["id"]
    assert_equal "evt_1", Gable::Webhook.verify(BODY, headers("v1=#{sign(BODY, old)}", old), SECRET, now: Time.at(old + 10))["id"]
  end

  def test_missing_or_malformed_headers_are_refused
    now = Time.now.to_i
    good = "v1=#{sign(BODY, now)}"
    [
      {},
      { "Gable-Signature" => good },
      { "Gable-Timestamp" => now.to_s },
      headers(good, "soon"),
      headers("v0=#{sign(BODY, now)}", now),
      headers(sign(BODY, now), now)
    ].each do |given|
      assert_raises(Gable::SignatureVerificationError, given.inspect) { Gable::Webhook.verify(BODY, given, SECRET) }
    end
  end
end
