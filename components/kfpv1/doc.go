// Package kfpv1 reads KFP v1 component files (kfp.components'
// component.yaml) as pipectl components: a container component becomes a
// components.Component as KFP v1 would run it (convert.go), a graph
// component (implementation.graph) a nested pipeline (graphpipeline.go).
// Every problem is reported at its line and column in the KFP file's own
// terms.
//
// Decode and Load read a component file in either format pipectl takes:
// the package recognises a KFP v1 file (an implementation and no
// apiVersion) and hands any other to components.Decode. A converted
// component's inputs and outputs keep how the KFP file declares them
// (components.IO.Declared: the KFP name and type), which Compatible
// compares with KFP's own type rules.
package kfpv1
