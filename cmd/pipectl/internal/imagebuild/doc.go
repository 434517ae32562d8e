// Package imagebuild builds pipectl's own OCI image without a container
// daemon: an index of linux/amd64 and linux/arm64 images, each the static
// binary (CGO_ENABLED=0) at /pipectl/pipectl and its pod runtime at
// /pipectl/pipectl-pod (the paths compiled workflows use), the host's CA certificates, a writable /tmp and user 65532 — what
// cmd/pipectl/Dockerfile makes — written with go-containerregistry and
// pushed to a registry. Layers are deterministic: sorted entries, fixed
// times (the Unix epoch), owners root, so the same binary gives the same
// digest.
package imagebuild
