module pipectl.dev/pipectl/test/e2e/tools/kueue

go 1.26.8

require sigs.k8s.io/kueue v0.17.0 // indirect
