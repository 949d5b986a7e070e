# frozen_string_literal: true

# Gable's Ruby starter kit (standard library only). See README.md.
require_relative "gable/version"
require_relative "gable/errors"
require_relative "gable/collection"
require_relative "gable/client"
require_relative "gable/webhook"
