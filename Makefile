# relayd: build and test entry points. `make test` is the README's test command.
GO ?= go

.PHONY: build test test-short setup generate fuzz vet staticcheck

build:
	$(GO) build -o bin/ ./cmd/...

setup:
	scripts/setup.sh

# The end-to-end tests run the relayd binary they build, which go test's cache
# does not track: they always run (-count=1). The settlement target (100,000 packets at
# p=0.01) runs once more at full size without the race detector, which makes it too slow.
test: vet staticcheck
	$(GO) test -race -timeout 20m $$($(GO) list ./... | grep -v '/e2e\(/\|$$\)')
	$(GO) test -count=1 -run 'TestSettlementAtOnePercent' -v ./internal/ledger
	$(GO) test -race -count=1 -timeout 20m ./e2e/...

test-short:
	$(GO) test -short -timeout 10m ./...

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }

# staticcheck at a pinned version, over every package but the generated contract bindings.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
staticcheck:
	$(GO) run $(STATICCHECK) $$($(GO) list ./... | grep -v '/internal/chain/contracts$$')

# The contracts' artefacts and bindings, and docs/SETTINGS.md (from internal/settings); a test
# fails when a committed result drifts.
generate:
	scripts/gen-contracts.sh
	$(GO) generate ./internal/settings

# FUZZTIME is per target; every fuzz target of the module runs, one after another
# (FUZZING.md). FUZZPARALLEL=1 keeps each to one core.
FUZZTIME ?= 30s
fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) scripts/fuzz.sh
