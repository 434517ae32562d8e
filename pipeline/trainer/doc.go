// Package trainer reads Kubeflow Trainer v2's files (trainer.kubeflow.org/v1alpha1)
// as written: ClusterTrainingRuntime and TrainingRuntime (a named way to
// train: image, mlPolicy, the JobSet template's pod fields) and TrainJob (a
// training run naming a runtime).
//
// It maps each field onto what a pipectl distributed step holds and
// nothing more: the package is pure (no cluster, no store) and knows no
// pipeline types. Each field is one of
//   - honoured: mapped onto the step (image, framework, nodes, processes
//     per node, env, resources, nodeSelector, tolerations, affinity,
//     priorityClassName, the pod group or Kueue queue);
//   - ignored with a warning: it does not change how pipectl runs the
//     step (the sshd of an MPI runtime's nodes, a readiness probe, the
//     JobSet's network and success policy);
//   - refused: pipectl cannot honour it (initializer jobs, volumes, init
//     containers, sidecars, …). A runtime holding one still loads; a step
//     that names it fails, naming the field at its line;
//   - unknown (not in Trainer's API): an error at its line.
package trainer
