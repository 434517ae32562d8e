# The Kubernetes test bed (test/e2e). Included from the top Makefile; paths are relative
# to the repository root, where make runs.
#
#   make e2e        build the pinned components (cached in ~/.cache/pipectl) and run the e2e suite
#   make e2e-up     start the test bed in the background and print the KUBECONFIG export line
#   make e2e-down   stop it
#   make e2e-tools  only build the components

E2E_DIR   ?= test/e2e
E2E_TOOLS ?= minio kube argo-workflow-controller etcd jobset argoexec kueue nodeagent
E2E_FLAGS ?= -count=1 -p 1 -timeout 60m

.PHONY: e2e e2e-up e2e-down e2e-tools

# The node agent's tests compile as build.sh builds it (-trimpath, no inlining), so they
# reuse the packages its build compiled instead of compiling them again.
e2e:
	cd $(E2E_DIR)/tools/nodeagent && GOFLAGS=-mod=mod go test -trimpath -gcflags=all=-l ./...
	cd $(E2E_DIR) && $(STATIC) go test $(E2E_FLAGS) -v .

e2e-up:
	cd $(E2E_DIR) && go run ./cmd/testbed up

e2e-down:
	cd $(E2E_DIR) && go run ./cmd/testbed down

e2e-tools:
	bash $(E2E_DIR)/tools/build.sh $(E2E_TOOLS)
