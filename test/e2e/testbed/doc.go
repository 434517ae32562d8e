// Package testbed runs a real Kubernetes control plane on loopback for pipectl's
// end-to-end tests: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, the
// JobSet controller with its webhooks, MinIO, and a node agent whose pods run as local
// processes. Binaries are built from pinned Go modules by tools/build.sh and cached.
//
// In a test: c := testbed.StartT(t, testbed.Options{}); in TestMain: Start and Stop.
package testbed
