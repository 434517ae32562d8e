// Package launcher starts distributed steps: the rank environment contract
// shared by local runs and Kubernetes, and the local gang of rank processes
// with torchrun's wiring and gang failure semantics.
package launcher
