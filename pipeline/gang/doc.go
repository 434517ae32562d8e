// Package gang runs the ranks of a distributed step as local processes,
// wired like torchrun and with gang failure semantics: Gang runs a whole
// step on this machine (pipectl run), ExecNode one node of a step inside a
// rank pod (pipectl exec --gang). The rank environment both share with
// rank pods is package rankenv. Gang has no Kubernetes imports: the local
// runner links it without client-go.
package gang
