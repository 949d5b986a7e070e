# frozen_string_literal: true

require "minitest/autorun"
require "gable"
require_relative "support/http_receiver"
