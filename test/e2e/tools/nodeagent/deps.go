//go:build tools

package main

// The JobSet controller (tools/jobset, whose MODULE names this folder) is built with
// this go.mod, so the packages it shares with the node agent (client-go, apimachinery,
// apiserver, ...) compile once. Go takes the highest version either asks for.
import _ "sigs.k8s.io/jobset"
