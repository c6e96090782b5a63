# codeport. The README's two commands: `make run` and `make test`.

GO          ?= go
LISTEN      ?= 127.0.0.1:8080
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: all build run test fuzz compat check sdkcheck schemacheck bench soak clean runtime-rebuild shell-rebuild

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

## test: checks; then the embedded modules are compiled into the
## compilation cache the tests share, outside the race detector, under
## which wazero's compiler takes minutes (once by the binary the tests run
## as workers and commands, once by a test binary: wazero files them apart,
## see internal/testkit/testcache); then every test against the real runtime, under
## the race detector where the host's concurrency is under test (not the
## shell's, nor the wasm adapter's guest-bound tests: see
## scripts/test-shards.sh), each test binary built once and
## run as several processes at once (scripts/test-shards.sh); each fuzz
## target for its budget, then a slice of CPython's own test suite (make
## compat), start once all but the wasm adapter's are done
TEST_TIMEOUT ?= 15m
# scripts/test-shards.sh runs the shell's package (SHELL_PKG) without
# -race: the bash tool's shell runs only as a wasip1 guest, which is one
# thread with no race detector, where its goroutines interleave only where
# one blocks. Its host side (wasmshell, the adapters' bash tests) runs
# under -race. Under -race its 795 differential cases and command tables
# took 12 of the suite's CPU minutes and checked nothing more.
test: check
	$(GO) build -o bin/codeport ./cmd/codeport
	env -u CODEPORT_CONFIG -u CODEPORT_COMPILE_CACHE_DIR bin/codeport compile
	$(GO) test -count=1 -run '^TestPrecompile$$' ./internal/testkit/testcache
	CODEPORT_TEST_BINARY=$(CURDIR)/bin/codeport GO=$(GO) TEST_TIMEOUT=$(TEST_TIMEOUT) \
	  scripts/test-shards.sh $(MAKE) --no-print-directory fuzz compat FUZZSCALE=1 FUZZMINIMIZE=100x \
	  COMPAT_MODULES=$(COMPAT_QUICK) COMPAT_FILES=$(COMPAT_QUICK_FILES)

## fuzz: each fuzz target for FUZZSCALE times its budget (their seed corpora
## run with every go test). A budget is a count of executions, about 10 s
## of this target on a quiet 2-core machine, not a duration: a duration's
## deadline races Go's fuzzing coordinator (go.dev/issue/75804, fixed only
## in Go 1.27), which then fails a target that found nothing. An input that
## fails is written to the package's testdata/fuzz: commit it, and it stays
## a regression test.
FUZZSCALE     ?= 6
# FUZZMINIMIZE bounds the minimising of each input that found new coverage
# (and of a failing one): Go's default is 60 s. make test's brief budget
# uses 100 executions: FuzzResolve's workers sat at 0 executions a second
# for 55 to 100 s minimising long paths, more than the rest of the stage.
FUZZMINIMIZE  ?= 60s
SHELL_PKG     := ./adapters/wasm/internal/shell
FUZZ_TARGETS  := ./internal/testkit/wirefuzz:FuzzDecodeRequest:100000 ./internal/testkit/wirefuzz:FuzzHandler:2500 \
                 ./internal/testkit/wirefuzz:FuzzUpload:300 ./internal/workspace:FuzzResolve:25000 \
                 ./adapters/wasm/internal/wasmpatch:FuzzPatch:80000 ./internal/sse:FuzzDecoder:50000 \
                 $(SHELL_PKG):FuzzRegexTranslate:10000 $(SHELL_PKG):FuzzSortKey:50000 \
                 $(SHELL_PKG):FuzzBc:40000 $(SHELL_PKG):FuzzAwkRewrite:50000 $(SHELL_PKG):FuzzDiff:50000 \
                 $(SHELL_PKG):FuzzDateFormat:40000 $(SHELL_PKG):FuzzXargsParse:40000 \
                 $(SHELL_PKG):FuzzTarExtract:100 $(SHELL_PKG):FuzzUnzip:100
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; rest=$${t#*:}; name=$${rest%%:*}; n=$$(( $${rest#*:} * $(FUZZSCALE) )); \
	  echo "fuzz $$name in $$pkg for $$n executions"; \
	  $(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $${n}x -fuzzminimizetime $(FUZZMINIMIZE) $$pkg; \
	done

## compat: CPython's own test suite (Lib/test of the runtime's pinned
## source, which compat/source.sh fetches with the runtime's build script)
## in sessions of the in-process runtime, a module a session, and slices of
## numpy's and pandas' own suites (test files from their pinned wheels,
## which compat/wheels.sh fetches with pytest's) in sessions of the
## scientific profile, a file a session, against compat/expectations.txt:
## every difference that remains, with why. It fails on a difference not
## listed there (COMPAT_MODULES: a comma-separated list of modules,
## COMPAT_FILES of test files; either alone runs only that kind; default,
## the 56 modules of compat.Modules and the 44 files of compat.Slices,
## about 4 minutes on 2 cores)
COMPAT_MODULES ?=
COMPAT_FILES ?=
# make test's slice: the modules where a sandbox differs most from a
# machine (files, paths, time, sqlite, memory, missing test extensions),
# about 20 s of CPU, and numpy's and pandas' files on saving arrays,
# floating-point errors and local time
COMPAT_QUICK  := test_os,test_shutil,test_tempfile,test_glob,test_time,test_sqlite3,test_io,test_random,test_bytes,test_traceback
COMPAT_QUICK_FILES := numpy/lib/tests/test_format.py,numpy/_core/tests/test_errstate.py,pandas/tests/tools/test_to_datetime.py
compat:
	@lib=$$(compat/source.sh) && wheels=$$(compat/wheels.sh) && \
	  $(GO) run ./compat/cmd/compat -lib "$$lib" -wheels "$$wheels" -expect compat/expectations.txt \
	  $(if $(COMPAT_MODULES),-modules $(COMPAT_MODULES)) $(if $(COMPAT_FILES),-files $(COMPAT_FILES))

## sdkcheck: only the cross-check against the official openai and anthropic
## Python SDKs (part of test too); the first run builds a cached venv with pip
sdkcheck:
	$(GO) test -count=1 -v -run TestOfficialSDKsParseTheShapes ./internal/testkit/sdkcheck

## schemacheck: only the schemathesis fuzzing of a live server against
## contract/openapi.yaml (part of test too); the first run builds a cached venv
schemacheck:
	$(GO) test -count=1 -v ./internal/testkit/schemacheck

## bench: the package benchmarks, then one side-by-side run of the same workloads
## on codeport (in process, over HTTP), pydantic-monty (a cached venv), eryx
## (pyeryx in a cached venv on python3.13 or python3.12) and, when
## CODEPORT_BENCH_REFERENCE_URL names one, the reference backend: prints the
## table and refreshes bench/results.md
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 1 -timeout 30m ./adapters/wasm ./contract
	$(GO) run ./bench/cmd/sidebyside -out bench/results.md

## soak: a server under mixed, partly hostile load for SOAK_DURATION (with a
## phase of hostile programs and clients, and an MCP listener); its memory,
## goroutines, threads, files, session directories, spools and hibernate-dir
## must come back (SOAK_ISOLATION=process for worker processes)
SOAK_DURATION ?= 10m
SOAK_ISOLATION ?= in-process
soak: build
	$(GO) run ./bench/cmd/soak -binary bin/codeport -duration $(SOAK_DURATION) -isolation $(SOAK_ISOLATION)

clean:
	rm -rf bin

## shell-rebuild: rebuild the bash tool's guest (shell.wasm) from the shell's
## sources, byte for byte reproducibly; commit it with its SHA256SUMS
shell-rebuild:
	adapters/wasm/internal/shell/wasmshell/runtime/build.sh

## runtime-rebuild: rebuild the embedded CPython runtimes (python.wasm and
## python313.zip; the scientific profile's python-scientific.wasm and
## site-scientific.zip) from pinned sources and fail if a byte differs from
## their SHA256SUMS
runtime-rebuild:
	adapters/wasm/internal/cpython/runtime/build.sh --profile scientific --check
