# pgaccel: `make demo` runs the demo, `make test` runs the tests.
GO        ?= go
GOFLAGS   ?=
TAGS      ?=
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X main.version=$(VERSION)
BENCHARGS ?=

.PHONY: all build test demo bench lint fuzz clean

all: build

build:
	$(GO) build $(GOFLAGS) -tags '$(TAGS)' -ldflags '$(LDFLAGS)' -o bin/pgaccel ./cmd/pgaccel

# Integration tests start their own throwaway Postgres (see integration/pgtest).
test:
	$(GO) test $(GOFLAGS) -tags '$(TAGS)' -count=1 -timeout 20m ./...

demo: build
	./bin/pgaccel demo

bench:
	$(GO) run $(GOFLAGS) -tags '$(TAGS)' ./bench/passthrough $(BENCHARGS)

lint:
	$(GO) vet -tags '$(TAGS)' ./...
	@out="$$(gofmt -l $$(git ls-files '*.go'))"; if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

fuzz:
	$(GO) test ./proxy -run '^$$' -fuzz FuzzSession -fuzztime 60s

clean:
	rm -rf bin
