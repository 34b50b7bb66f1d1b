#!/usr/bin/env bash
# Lints the REST API's OpenAPI document (internal/api/openapi/openapi.yaml)
# with Redocly CLI, an independent linter, pinned in e2e/browser's
# package-lock.json. Rules: internal/api/openapi/redocly.yaml. Exits non-zero
# on any problem.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

tools=e2e/browser
(cd "$tools" && npm ci --no-audit --no-fund --loglevel=error)

export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true
"$tools/node_modules/.bin/redocly" lint \
  --config internal/api/openapi/redocly.yaml \
  internal/api/openapi/openapi.yaml
