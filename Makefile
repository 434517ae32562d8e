# pipectl — see README.md.
SHELL := /bin/bash
GO ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X pipectl.dev/pipectl/cmd/internal/buildinfo.Version=$(VERSION)
BIN := bin/pipectl
# POD_BIN: the pod runtime (exec only), what step and rank pods copy: stripped
POD_BIN := bin/pipectl-pod
EXAMPLE := examples/attrition/pipeline.yaml
# PLATFORMS: the GOOS/GOARCH pairs every change must build for
PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
# FUZZ_TARGETS: every fuzz target of the product module, as package:FuzzName
# (`go test -fuzz` takes one target at a time); FUZZTIME is each target's time
# in `make fuzz`, FUZZTIME_SHORT in the short pass of `make unit`
FUZZ_TARGETS := components/kfpv1:FuzzDecode components:FuzzExpand components:FuzzCheckValue components:FuzzNodeValue \
	pipeline:FuzzParse pipeline:FuzzParseCondition pipeline:FuzzLiteralParts pipeline:FuzzOverride \
	pipeline/plan:FuzzDecode pipeline/plan:FuzzBuild components/wire:FuzzArgs \
	components/untar:FuzzExtract pipeline/recordstore:FuzzReadRun
# STATIC: how make test's own go commands (vet, the fuzz pass, the unit and e2e tests) build:
# static (no cgo) and -trimpath, as the test bed builds pipectl and its pod runtime for the
# image, and without inlining (-gcflags=all=-l), as the test bed's tools build: about 28% less
# compile CPU from an empty build cache, the same programs. The unit tests, the test bed's
# binaries and the e2e suite then compile pipectl's packages and all they import once, not
# once per setting (cgo changes package net, and so nearly every package above it; -trimpath
# and -gcflags every package). GOFLAGS in the environment replaces the one of `go env -w`:
# it is carried over. make build, pod-runtime and image build with Go's defaults.
STATIC := CGO_ENABLED=0 GOFLAGS='$(strip $(shell $(GO) env GOFLAGS) -trimpath -gcflags=all=-l)'
FUZZTIME ?= 30s
FUZZTIME_SHORT ?= 4s
# FUZZMINIMIZETIME bounds the minimizing of each new input (Go's default, 60s,
# lets FuzzBuild spend a whole run shrinking its first interesting input)
FUZZMINIMIZETIME ?= 2s

.PHONY: all build pod-runtime image demo sweep test unit fuzz fuzz-short bench vet fmt clean

include test/e2e/e2e.mk

all: build

## build: the pipectl binary in bin/
build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/pipectl

## pod-runtime: the pod runtime (pipectl-pod: exec, what the step and rank pods copy from the
## pipectl image) in bin/, stripped as the image has it
pod-runtime:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w $(LDFLAGS)' -o $(POD_BIN) ./cmd/pipectl-pod

## image: build pipectl's OCI image (linux/amd64 + linux/arm64, static, non-root, /pipectl/pipectl
## and the pod runtime /pipectl/pipectl-pod)
## without Docker and push it: make image IMAGE=REGISTRY/pipectl:TAG [IMAGE_INSECURE=1 for plain HTTP]
image:
	@[ -n "$(IMAGE)" ] || { echo "make image: set IMAGE=REGISTRY/pipectl:TAG"; exit 2; }
	$(GO) run ./cmd/pipectl/internal/mkimage -image '$(IMAGE)' -version '$(VERSION)' $(if $(IMAGE_INSECURE),-insecure)

## demo: run the example pipeline (preprocess → DDP train on 2 ranks → evaluate) on this machine
demo:
	$(call demo-prepare,$(EXAMPLE))
	@./$(BIN) run $(EXAMPLE) && \
	echo && ./$(BIN) runs get latest && \
	echo && echo "Metrics (pipectl artifacts cat latest/evaluate/metrics):" && \
	./$(BIN) artifacts cat latest/evaluate/metrics && \
	echo && echo "make demo: done. From your own shell, as typed: $(BIN) run $(EXAMPLE) -p epochs=5 (see the README's Quickstart)"

## sweep: the hyper-parameter sweep example: a 2-rank DDP trial per learning rate, the best one evaluated
sweep:
	$(call demo-prepare,examples/sweep/pipeline.yaml)
	@./$(BIN) run examples/sweep/pipeline.yaml && \
	echo && ./$(BIN) runs get latest && \
	echo && echo "Trials, scored on the validation split (pipectl artifacts cat latest/pick/trials; the winner is pick's best_lr):" && \
	./$(BIN) artifacts cat latest/pick/trials && \
	echo && echo "The winner on held-out data (pipectl artifacts cat latest/evaluate/metrics):" && \
	./$(BIN) artifacts cat latest/evaluate/metrics

# demo-prepare builds pipectl and finds (or installs) a python3 with PyTorch,
# saying what it does, before make demo/sweep runs the pipeline $(1).
# ensure-torch.sh writes pipectl.local.yaml (ignored by git) when the python3
# on PATH is not that one: `pipectl run` of a pipeline in this checkout then
# puts the folder it names first on its steps' PATH, in the user's shell too.
define demo-prepare
	@echo "make $@: [1/3] building $(BIN) (the first build compiles pipectl and its dependencies: a few minutes on 2 cores; later ones, seconds)"
	@$(MAKE) --no-print-directory build
	@echo "make $@: [2/3] finding a python3 that can import torch (examples/attrition/ensure-torch.sh)"
	@examples/attrition/ensure-torch.sh --settings pipectl.local.yaml >/dev/null
	@echo "make $@: [3/3] running $(BIN) run $(1)"
endef

## test: every test: unit and CLI tests with real PyTorch and MinIO, then the e2e suite on a
## real control plane (test/e2e; its components are built once and cached in ~/.cache/pipectl).
## The e2e components build in the background (niced, so the unit tests come first and the
## builds take the cores they leave idle) while unit runs; their output is printed after
## unit's, and a failed build fails make test as a failed test does.
test:
	@tlog=$$(mktemp) && trap 'rm -f "$$tlog"' EXIT && \
	echo "make test: building the e2e components (make e2e-tools) in the background; their output follows unit's" && \
	{ nice -n 10 $(MAKE) --no-print-directory e2e-tools >"$$tlog" 2>&1 & } && tools=$$! && \
	{ $(MAKE) --no-print-directory unit; unit=$$?; } && \
	{ wait $$tools; built=$$?; } && \
	echo "--- make e2e-tools (built while unit ran):" && cat "$$tlog" && \
	if [ $$unit -ne 0 ]; then echo "make test: unit failed"; exit 1; fi && \
	if [ $$built -ne 0 ]; then echo "make test: make e2e-tools failed"; exit 1; fi && \
	$(MAKE) --no-print-directory e2e

## unit: the product module's tests (installs python3-torch and, for the UI's browser test, chromium when missing),
## after a short pass of each fuzz target
unit: vet fuzz-short
	examples/attrition/ensure-torch.sh >/dev/null
	cmd/pipectl/uitest/ensure-chromium.sh >/dev/null
	minio=$$(bash test/e2e/tools/build.sh minio) && PIPECTL_TEST_MINIO=$$minio $(STATIC) $(GO) test -count=1 -timeout 30m ./...

## fuzz: each fuzz target for FUZZTIME (make fuzz FUZZTIME=10m), growing the corpus that
## `go test -fuzz` keeps (go clean -fuzzcache); a failing input is written to the package's
## testdata/fuzz/FuzzName/, where it stays as a regression test once fixed
fuzz:
	$(call fuzz-each,$(FUZZTIME),$$($(GO) env GOCACHE)/fuzz/$$($(GO) list -m))

## fuzz-short: each fuzz target for FUZZTIME_SHORT from its seeds alone (part of unit)
fuzz-short:
	$(call fuzz-each,$(FUZZTIME_SHORT),$$bins/corpus)

# fuzz-each runs every FUZZ_TARGETS entry for $(1) with its corpus under
# $(2), after checking that the list names every Fuzz function of the module
# (so a new one is not left out). Each package's test binary is built once,
# with the fuzzing instrumentation, into the temporary directory $$bins. A
# bare "context deadline exceeded" with no failing input written is Go's own
# race at the end of -fuzztime on a loaded machine, not a finding: its
# output is printed without the "--- FAIL" and "FAIL" lines, which would
# read as a failed test in the log. Progress lines stream; the rest of a
# target's output follows when it ends.
define fuzz-each
	@want=$$(grep -rHo --include='*_test.go' --exclude-dir=test '^func Fuzz[A-Za-z0-9_]*' . | \
		sed -E 's|^\./(.*)/[^/]*:func |\1:|' | sort); have=$$(tr ' ' '\n' <<<'$(FUZZ_TARGETS)' | sed '/^$$/d' | sort); \
	if [ "$$want" != "$$have" ]; then echo "FUZZ_TARGETS differs from the Fuzz functions:"; diff <(echo "$$have") <(echo "$$want"); exit 1; fi
	@bins=$$(mktemp -d) && trap 'rm -rf "$$bins"' EXIT && corpus=$(2) && \
	for t in $(FUZZ_TARGETS); do pkg=$${t%%:*} fn=$${t#*:}; bin=$$bins/$${pkg//\//_}.test; \
		[ -x "$$bin" ] || $(STATIC) $(GO) test -c -fuzz . -o "$$bin" ./$$pkg || exit 1; \
		echo "fuzz ./$$pkg $$fn for $(1)"; \
		(cd $$pkg && "$$bin" -test.run '^$$' -test.fuzz "^$$fn\$$" -test.fuzztime $(1) -test.fuzzminimizetime $(FUZZMINIMIZETIME) -test.fuzzcachedir "$$corpus/$$pkg") \
			2>&1 | tee "$$bins/out" | grep --line-buffered '^fuzz: '; rc=$${PIPESTATUS[0]}; \
		if [ $$rc -ne 0 ] && grep -qx '    context deadline exceeded' "$$bins/out" && ! grep -q 'Failing input written' "$$bins/out"; then \
			grep -v '^fuzz: ' "$$bins/out" | sed -E 's/^--- FAIL: (.*)/--- stopped: \1/; /^FAIL$$/d'; \
			echo "fuzz ./$$pkg $$fn: no finding; the failure is Go's end-of-fuzztime race (go.dev/issue/75804, fixed in Go 1.27)"; \
		else grep -v '^fuzz: ' "$$bins/out"; [ $$rc -eq 0 ] || exit 1; fi; \
	done
endef

## vet: go vet, a gofmt check, a build of every package and the cross-platform check: pipectl
## is built and linked for this machine, and type-checked from source, with every package it
## imports, for each other platform of PLATFORMS (it runs on Linux and macOS) by crosscheck.
## That finds what breaks a build there (a name a build constraint leaves undefined, an import
## one platform lacks) for about 13 CPU-seconds a platform, where a cross compile from an empty
## build cache took about 300. The test helpers and benchmark programs of ./... (the UI's
## headless-browser driver among them) are built for this machine only.
vet:
	$(STATIC) $(GO) vet ./...
	cd test/e2e && $(STATIC) $(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed: $$out"; exit 1; fi
	$(STATIC) $(GO) build ./...
	$(STATIC) $(GO) build -o /dev/null ./cmd/pipectl
	@native=$$($(GO) env GOOS)/$$($(GO) env GOARCH); others=$$(echo $(PLATFORMS) | tr ' ' '\n' | grep -vx "$$native" | paste -sd, -); \
		echo "crosscheck -platforms $$others ./cmd/pipectl ./cmd/pipectl-pod"; \
		$(GO) run ./cmd/pipectl/internal/crosscheck -platforms "$$others" ./cmd/pipectl ./cmd/pipectl-pod

## bench: the benchmarks (speed goals live here, not in tests): compile size/time,
## S3 transfers against a real MinIO next to mc (1 GiB file; 1000 × 64 KiB files), the local
## runner at scale (500/2000/10,000 trivial steps, cancel, per-step overhead), and
## the launcher in the test bed (launch → pods created; JobSet terminal → launcher exit; its CPU
## time and peak memory at 8 and 64 rank pods and 256 ranks as 64 pods × 4), and
## the example through Argo twice: first run vs cached re-run wall time (goal: re-run ≤ 25%),
## and the cost of a pod: a chain of 10 trivial steps through pipectl on Argo vs the same
## chain as a plain Argo Workflow, the ratio (goal ≤ 1.10×) and each phase of a step's pod;
## a gang's start at 8 and 64 rank pods through pipectl vs the same JobSet created directly
## (goal ≤ 1.2× at 64)
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
	$(GO) run ./artifacts/internal/s3bench -runs 3
	$(GO) run ./pipeline/local/internal/runbench
	cd test/e2e && $(GO) test -count=1 -run '^$$' -bench BenchmarkLauncherTrain -benchtime 5x -v .
	cd test/e2e && $(GO) test -count=1 -run '^$$' -bench BenchmarkLauncherScale -benchtime 1x -v .
	cd test/e2e && $(GO) test -count=1 -run '^$$' -bench BenchmarkArgoCachedRerun -benchtime 1x -v .
	cd test/e2e && $(GO) test -count=1 -run '^$$' -bench BenchmarkPodCost -benchtime 1x -v .
	cd test/e2e && $(GO) test -count=1 -run '^$$' -bench BenchmarkGangStart -benchtime 3x -v .

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin
