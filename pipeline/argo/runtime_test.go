package argo

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline"
)

// TestPodRuntimeImageVolume: with wire.PodRuntimeImageVolume, step pods
// mount the (pinned) pipectl image read-only and run the pod runtime from
// it, with no init container; the launcher pod of the distributed step
// runs the image as before; Argo's lint accepts the workflow. Copy, the
// default, keeps the init container.
func TestPodRuntimeImageVolume(t *testing.T) {
	opts := testOptions()
	opts.Images = map[string]string{"pipectl:test": "pipectl@sha256:" + strings.Repeat("ab", 32)}
	opts.PodRuntime = wire.PodRuntimeImageVolume
	wf, out := compileFile(t, "../../examples/attrition/pipeline.yaml", opts)
	lint(t, wf)
	var image *corev1.ImageVolumeSource
	for _, v := range wf.Spec.Volumes {
		if v.Name == wire.RuntimeVolumeName {
			image = v.Image
		}
	}
	if image == nil || image.Reference != opts.Images["pipectl:test"] || image.PullPolicy != corev1.PullIfNotPresent {
		t.Fatalf("workflow volumes %+v: want the image volume %s of the pinned pipectl image", wf.Spec.Volumes, wire.RuntimeVolumeName)
	}
	if !strings.Contains(string(out), "reference: "+opts.Images["pipectl:test"]) {
		t.Errorf("the compiled YAML names no image volume reference:\n%s", out)
	}
	steps, launchers := 0, 0
	for _, tm := range wf.Spec.Templates {
		if tm.Container == nil {
			continue
		}
		switch tm.Container.Command[0] {
		case wire.RuntimeBinary:
			steps++
			if len(tm.InitContainers) != 0 {
				t.Errorf("template %s: init containers %v, want none", tm.Name, tm.InitContainers)
			}
			want := []corev1.VolumeMount{{Name: wire.VolumeName, MountPath: wire.MountPath}, {Name: wire.RuntimeVolumeName, MountPath: wire.RuntimeMountPath, ReadOnly: true}}
			if len(tm.Container.VolumeMounts) != 2 || tm.Container.VolumeMounts[0] != want[0] || tm.Container.VolumeMounts[1] != want[1] {
				t.Errorf("template %s: mounts %+v, want %+v", tm.Name, tm.Container.VolumeMounts, want)
			}
		case wire.Binary:
			launchers++
		default:
			t.Errorf("template %s runs %v", tm.Name, tm.Container.Command)
		}
	}
	if steps < 2 || launchers != 1 {
		t.Errorf("%d step templates from the image volume, %d launchers; want the example's steps and its one launcher", steps, launchers)
	}

	opts.PodRuntime = ""
	wf, _ = compileFile(t, "../../examples/attrition/pipeline.yaml", opts)
	if len(wf.Spec.Volumes) != 1 {
		t.Errorf("copy: workflow volumes %+v, want the emptyDir only", wf.Spec.Volumes)
	}
	for _, tm := range wf.Spec.Templates {
		if tm.Container != nil && tm.Container.Command[1] == "exec" && (len(tm.InitContainers) != 1 || tm.InitContainers[0].Command[0] != wire.PodBinary) {
			t.Errorf("copy: template %s init containers %+v, want one copying %s", tm.Name, tm.InitContainers, wire.PodBinary)
		}
	}

	p, err := pipeline.Load("../../examples/attrition/pipeline.yaml")
	if err != nil {
		t.Fatal(err)
	}
	opts.PodRuntime = "mount"
	if _, err := Compile(p, opts); err == nil || !strings.Contains(err.Error(), `--pod-runtime "mount"`) {
		t.Errorf("--pod-runtime mount: %v, want an error naming it", err)
	}
}
