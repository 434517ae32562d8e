// Package local runs a pipeline on this machine with no cluster: each step
// is a subprocess (a distributed step a gang of rank processes), independent
// steps run in parallel, and artifacts and the run record go to a store.
package local
