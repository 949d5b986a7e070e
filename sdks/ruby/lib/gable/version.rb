# frozen_string_literal: true

module Gable
  VERSION = "0.1.0"

  # The API version this kit is written against, sent as `Gable-Version` on every request.
  API_VERSION = "2026-11-22"
end
