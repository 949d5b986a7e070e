# frozen_string_literal: true

require "json"

module Gable
  # A refusal of the API (or, with status 0 and code "network_error", no answer at all),
  # carrying the HTTP status and the error body's code, message, request_id and param.
  class Error < StandardError
    attr_reader :status, :code, :message, :request_id, :param

    def initialize(message = nil, status: 0, code: "unknown_error", request_id: nil, param: nil)
      @message = message.to_s
      @status = status
      @code = code
      @request_id = request_id
      @param = param
      super(to_s)
    end

    def to_s
      text = "#{status} #{code}: #{message}"
      request_id ? "#{text} (request #{request_id})" : text
    end

    # The error for an HTTP answer: the subclass for its status, the fields from its body.
    def self.from_response(status, raw, request_id = nil)
      body = begin
        parsed = JSON.parse(raw.to_s)
        parsed.is_a?(Hash) && parsed["error"].is_a?(Hash) ? parsed["error"] : {}
      rescue JSON::ParserError
        {}
      end
      class_for(status).new(
        body.fetch("message") { raw.to_s[0, 200] },
        status: status,
        code: body.fetch("code", "unknown_error"),
        request_id: body["request_id"] || request_id,
        param: body["param"]
      )
    end

    def self.class_for(status)
      return ServerError if status >= 500

      STATUS_CLASSES.fetch(status, Error)
    end
  end

  # 400: the request is malformed or a field is invalid (`param` names it).
  class InvalidRequestError < Error; end
  # 401: no, an unknown, or the other environment's credential.
  class AuthenticationError < Error; end
  # 403: the credential lacks the scope (or property) this needs.
  class PermissionError < Error; end
  # 404.
  class NotFoundError < Error; end
  # 409: a state transition not allowed now, a conflict with other records, or an
  # Idempotency-Key whose first request is still running (idempotency_key_in_use: retry it
  # later). A key reused for a different request is an IdempotencyError (422).
  class ConflictError < Error; end
  # 422 idempotency_key_reused: the Idempotency-Key was already used for a different request
  # (another body, path or method). Use a fresh key for a new request.
  class IdempotencyError < Error; end
  # 429, after the retries ran out.
  class RateLimitError < Error; end
  # 5xx, after the retries ran out.
  class ServerError < Error; end

  Error::STATUS_CLASSES = {
    400 => InvalidRequestError,
    401 => AuthenticationError,
    403 => PermissionError,
    404 => NotFoundError,
    409 => ConflictError,
    422 => IdempotencyError,
    429 => RateLimitError
  }.freeze
end
