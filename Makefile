# Gantry — one binary with the web app embedded.
#   make run    install what is missing, build, serve on http://localhost:8080
#   make test   install what is missing, run every test (Go, web unit, browser, PostgreSQL)
# Every install step is idempotent: it checks before it installs.

SHELL := /bin/bash
GO    ?= go
NPM   ?= npm
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

# The sandbox's network reaches the public internet only; where npm's
# registry sits behind a proxy at a private or documentation address, builds
# must be allowed to reach it (scripts/registry-allow). Set
# GANTRY_SANDBOX_ALLOW yourself to override.
ifeq ($(origin GANTRY_SANDBOX_ALLOW),undefined)
GANTRY_SANDBOX_ALLOW := $(shell scripts/registry-allow)
endif
export GANTRY_SANDBOX_ALLOW

APT_RUN  := git bubblewrap passt iproute2 e2fsprogs
APT_TEST := chromium postgresql libnss3-tools python3-flask
APT_BENCH := nginx wrk nghttp2-client postgresql

.PHONY: run build dev test test-go test-pg test-cluster test-web test-e2e bench deps deps-test deps-bench web clean fmt vet

run: deps build
	./bin/gantry serve

build: web
	$(GO) build -ldflags '$(LDFLAGS)' -o bin/gantry ./cmd/gantry

# The web app is rebuilt only when its sources changed.
web: web/node_modules/.installed web/dist/index.html
web/dist/index.html: $(shell find web/src web/public -type f 2>/dev/null) web/index.html web/vite.config.ts web/package.json
	cd web && $(NPM) run build
	touch web/dist/.gitkeep

web/node_modules/.installed: web/package.json web/package-lock.json
	cd web && $(NPM) ci --no-audit --no-fund
	touch $@

# deps installs what `make run` needs: Debian packages (as root), npm packages, Go modules.
deps: web/node_modules/.installed
	@scripts/apt-ensure $(APT_RUN)
	@scripts/sandbox-ensure
	$(GO) mod download

deps-test: deps
	@scripts/apt-ensure $(APT_TEST)

deps-bench: deps
	@scripts/apt-ensure $(APT_BENCH)

# dev runs the Go server and Vite's dev server (http://localhost:5173) side by side.
dev: deps
	$(GO) build -o bin/gantry ./cmd/gantry
	trap 'kill 0' EXIT; ./bin/gantry serve & (cd web && $(NPM) run dev)

test: deps-test build
	$(MAKE) test-go test-pg test-cluster test-web test-e2e
	@echo "All test suites passed."

# Then the edge loops' parsers against net/http's, and the kernel-TLS route's
# handshake reader against crypto/tls reading directly, fuzzed a while each
# (seed corpora in internal/{edge,tlsedge}/testdata/fuzz/; new finds are written there).
test-go:
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 20m ./...
	$(GO) test -run=NONE -fuzz='^FuzzLoopRequest$$' -fuzztime=20s ./internal/edge/
	$(GO) test -run=NONE -fuzz='^FuzzLoopAnswer$$' -fuzztime=20s ./internal/edge/
	$(GO) test -run=NONE -fuzz='^FuzzRecordReader$$' -fuzztime=10s ./internal/tlsedge/
	$(GO) test -run=NONE -fuzz='^FuzzKernelHandshakeReader$$' -fuzztime=20s ./internal/tlsedge/
	$(GO) test -run=NONE -fuzz='^FuzzKeyLogLine$$' -fuzztime=10s ./internal/tlsedge/

# The store, API and deployment suites again, against a throwaway PostgreSQL cluster.
test-pg:
	scripts/with-postgres $(GO) test -count=1 -timeout 10m ./internal/store/... ./internal/feed/ ./internal/auth/ ./internal/api/ ./internal/deploy/... ./internal/project/ ./internal/domains/ ./internal/ghhook/
	scripts/with-postgres $(GO) test -count=1 -run '^(TestShareLimits|TestSharedStorage|TestReplicaFeedWiring)$$' ./cmd/gantry/ ./internal/tlsedge/

# test-cluster runs two real replicas (bin/gantry) on one throwaway PostgreSQL and kills
# and pauses them (issue 26; SCALING.md §9 B): internal/clustertest.
test-cluster: build
	scripts/with-postgres $(GO) test -count=1 -timeout 5m ./internal/clustertest/

test-web:
	cd web && $(NPM) run typecheck && $(NPM) test

test-e2e: build
	cd web && GANTRY_BIN=$(CURDIR)/bin/gantry node e2e/run.mjs
	cd web && GANTRY_BIN=$(CURDIR)/bin/gantry node e2e/github-journey.mjs
	cd web && GANTRY_BIN=$(CURDIR)/bin/gantry node e2e/https-journey.mjs

bench: deps-bench build
	bench/run

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin web/dist/assets web/dist/index.html
