# pgaccel: `make demo` runs the demo, `make test` runs the tests.
GO        ?= go
GOFLAGS   ?=
TAGS      ?=
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X main.version=$(VERSION)
PASSTHROUGH_ARGS ?=
TPCH_ARGS ?=
CDC_ARGS ?=
COVERAGE_ARGS ?=
SNAPSHOTS_ARGS ?=
DASHBOARD_ARGS ?=

.PHONY: all build test test-race demo bench lint fuzz clean docker compose compose-scaleout drivers

all: build

build:
	$(GO) build $(GOFLAGS) -tags '$(TAGS)' -ldflags '$(LDFLAGS)' -o bin/pgaccel ./cmd/pgaccel

# Integration tests start their own throwaway Postgres (see internal/pgtest).
test:
	$(GO) test $(GOFLAGS) -tags '$(TAGS)' -count=1 -timeout 20m ./...

# The race detector over the packages whose goroutines share sessions
# (the proxy's unit tests, and the integration tests of sessions, the event
# loop, the origin lane, pooling and outages). Slower than make test (the
# race detector multiplies CPU time; about 3 minutes here), so not in it;
# RACE_RUN picks other integration tests ('.' for all of them).
RACE_RUN ?= Sessions|Idle|Pool|Lane|EventLoop|Outage|Timeout|Cancel
test-race:
	$(GO) test $(GOFLAGS) -tags '$(TAGS)' -race -count=1 -timeout 30m ./proxy/... ./auth/...
	$(GO) test $(GOFLAGS) -tags '$(TAGS)' -race -count=1 -timeout 60m ./integration -run '$(RACE_RUN)'

demo: build
	./bin/pgaccel demo

# pgx's and node-postgres's own test suites, each run directly against a
# throwaway origin and through pgaccel, compared (minutes; not in make test).
# See integration/drivers.
drivers:
	integration/drivers/run-pgx-suite.sh
	integration/drivers/run-node-postgres-suite.sh

# Benchmarks print ratios against the origin measured in the same run;
# recorded results live in bench/RESULTS.md.
bench:
	$(GO) run $(GOFLAGS) -tags '$(TAGS)' ./bench/passthrough $(PASSTHROUGH_ARGS)
	$(GO) run $(GOFLAGS) -tags '$(TAGS)' ./bench/tpch $(TPCH_ARGS)
	$(GO) run $(GOFLAGS) -tags '$(TAGS)' ./bench/cdc $(CDC_ARGS)
	$(GO) run $(GOFLAGS) -tags '$(TAGS)' ./bench/coverage $(COVERAGE_ARGS)
	$(GO) run $(GOFLAGS) -tags '$(TAGS)' ./bench/snapshots $(SNAPSHOTS_ARGS)
	$(GO) run $(GOFLAGS) -tags '$(TAGS)' ./bench/dashboard $(DASHBOARD_ARGS)
	$(GO) run $(GOFLAGS) -tags '$(TAGS)' ./bench/soak $(SOAK_ARGS) # 30 minutes by default

lint:
	$(GO) vet -tags '$(TAGS)' ./...
	@out="$$(gofmt -l $$(git ls-files '*.go'))"; if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

FUZZTIME ?= 30s
fuzz:
	$(GO) test ./proxy -run '^$$' -fuzz FuzzSession -fuzztime $(FUZZTIME)
	$(GO) test ./proxy -run '^$$' -fuzz FuzzStartupPacket -fuzztime $(FUZZTIME)
	$(GO) test ./proxy/wire -run '^$$' -fuzz FuzzFrameReader -fuzztime $(FUZZTIME)
	$(GO) test ./proxy -run '^$$' -fuzz FuzzLaneScan -fuzztime $(FUZZTIME)
	$(GO) test ./proxy -run '^$$' -fuzz FuzzQuickShape -fuzztime $(FUZZTIME)
	$(GO) test ./planner -run '^$$' -fuzz FuzzPlan -fuzztime $(FUZZTIME)
	$(GO) test ./planner -run '^$$' -fuzz FuzzDescriptionShape -fuzztime $(FUZZTIME)
	$(GO) test ./planner -run '^$$' -fuzz FuzzStatementHash -fuzztime $(FUZZTIME)
	$(GO) test ./catalog -run '^$$' -fuzz FuzzParse -fuzztime $(FUZZTIME)
	$(GO) test ./proxy/encode -run '^$$' -fuzz FuzzDecodeParam -fuzztime $(FUZZTIME)
	$(GO) test ./pgdef -run '^$$' -fuzz FuzzNumericText -fuzztime $(FUZZTIME)
	$(GO) test ./pgdef -run '^$$' -fuzz FuzzArrayText -fuzztime $(FUZZTIME)

# The image and the compose setup, with the version stamped (the image's
# build context has no .git, so it gets the version only as VERSION).
docker:
	docker build --build-arg VERSION=$(VERSION) -t pgaccel:$(VERSION) .

compose:
	PGACCEL_VERSION=$(VERSION) docker compose up --build

# The scale-out example: a writer, two snapshot readers, versitygw, HAProxy.
compose-scaleout:
	PGACCEL_VERSION=$(VERSION) docker compose -f docker-compose.scaleout.yml up --build

clean:
	rm -rf bin
