# frozen_string_literal: true

require_relative "lib/gable/version"

Gem::Specification.new do |spec|
  spec.name = "gable"
  spec.version = Gable::VERSION
  spec.summary = "Gable's Ruby starter kit: every collection, auto-pagination, idempotent retries, typed errors, webhook verification."
  spec.authors = ["Gable"]
  spec.license = "Apache-2.0"
  spec.files = Dir["lib/**/*.rb"] + ["README.md"]
  spec.require_paths = ["lib"]
  spec.required_ruby_version = ">= 3.0"
  spec.metadata["rubygems_mfa_required"] = "true"
end
