// Package images pins container image references to digests: each
// reference as written (REGISTRY/NAME:TAG) is resolved through its registry
// to NAME@sha256:…, the manifest (or multi-platform index) it names now, so
// that a compiled workflow, its pods and its steps' cache fingerprints name
// exactly one image, and a tag moved by a rebuild cannot serve stale
// results.
//
// Resolve does the registry calls (go-containerregistry's remote, with the
// docker config's credentials through authn.DefaultKeychain); the
// compiler only maps references through what Resolve returned. A registry
// is reached over plain HTTP only when the caller names it insecure
// (Options.Insecure), or, as go-containerregistry does for a registry on
// this machine or a private network (localhost, 127.0.0.1, 10.x, 192.168.x…),
// after HTTPS failed. A reference naming no registry (pipectl:1) is a Docker
// Hub name unless the caller names a default registry
// (Options.DefaultRegistry), where it is then found.
package images
