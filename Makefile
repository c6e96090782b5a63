# codeport. The README's two commands: `make run` and `make test`.

GO          ?= go
LISTEN      ?= 127.0.0.1:8080
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: all build run test check sdkcheck bench clean runtime-rebuild

all: build

## build: bin/codeport, with the CPython runtime embedded (nothing is fetched)
build:
	$(GO) build -o bin/codeport ./cmd/codeport

## run: build, then serve contract v1 on $(LISTEN)
run: build
	bin/codeport serve --listen $(LISTEN)

## check: formatting, vet and staticcheck
check:
	@out="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

## test: checks, then every test under the race detector against the real runtime
test: check
	$(GO) test -race -count=1 -timeout 20m ./...

## sdkcheck: only the cross-check against the official openai and anthropic
## Python SDKs (part of test too); the first run builds a cached venv with pip
sdkcheck:
	$(GO) test -count=1 -v -run TestOfficialSDKsParseTheShapes ./contract/sdkcheck

## bench: the package benchmarks, then one side-by-side run of the same workloads
## on codeport (in process, over HTTP), pydantic-monty (a cached venv) and, when
## CODEPORT_BENCH_REFERENCE_URL names one, the reference backend: prints the
## table and refreshes bench/results.md
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 1 -timeout 30m ./adapters/wasm ./contract
	$(GO) run ./bench/cmd/sidebyside -out bench/results.md

clean:
	rm -rf bin

## runtime-rebuild: rebuild the embedded CPython (python.wasm, python313.zip)
## from pinned sources and fail if a byte differs from their SHA256SUMS
runtime-rebuild:
	adapters/wasm/internal/cpython/build.sh --check
