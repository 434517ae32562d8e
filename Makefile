# pipectl — see README.md.
SHELL := /bin/bash
GO ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X pipectl.dev/pipectl/cmd/pipectl/internal/cmd/version.Version=$(VERSION)
BIN := bin/pipectl
EXAMPLE := examples/attrition/pipeline.yaml

.PHONY: all build demo test unit bench vet fmt clean

all: build

## build: the pipectl binary in bin/
build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/pipectl

## demo: run the example pipeline (preprocess → DDP train on 2 ranks → evaluate) on this machine
demo: build
	@pydir=$$(examples/attrition/ensure-torch.sh) && \
	PATH="$$pydir:$$PATH" ./$(BIN) run $(EXAMPLE) && \
	echo && ./$(BIN) runs get latest && \
	echo && echo "Metrics (pipectl artifacts cat latest/evaluate/metrics):" && \
	./$(BIN) artifacts cat latest/evaluate/metrics

## test: every test, with real PyTorch (installed when missing)
test: vet
	examples/attrition/ensure-torch.sh >/dev/null
	$(GO) test -count=1 -timeout 30m ./...

## vet: go vet and a gofmt check
vet:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed: $$out"; exit 1; fi

## bench: the benchmarks (speed goals live here, not in tests): compile size/time,
## and S3 transfers against a real MinIO next to mc (1 GiB file; 1000 × 64 KiB files)
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
	$(GO) run ./artifacts/internal/s3bench -runs 3

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin
