// Package components holds the component spec (kind: Component, and KFP v1
// component.yaml files) and the component runtime behind `pipectl exec`:
// materialise inputs, resolve placeholders into argv, run, publish outputs.
package components
