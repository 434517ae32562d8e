package launcher_test

import (
	"testing"

	"pipectl.dev/pipectl/launcher"
	"pipectl.dev/pipectl/pipeline/argo"
)

// The rank pods copy pipectl in exactly as compiled step pods do.
func TestPathsMatchCompiledPods(t *testing.T) {
	for _, c := range []struct{ name, launcher, argo string }{
		{"Binary", launcher.Binary, argo.Binary},
		{"VolumeName", launcher.VolumeName, argo.VolumeName},
		{"MountPath", launcher.MountPath, argo.MountPath},
		{"InstallPath", launcher.InstallPath, argo.InstallPath},
		{"WorkDir", launcher.WorkDir, argo.WorkDir},
		{"DefaultGPUResource", launcher.DefaultGPUResource, argo.DefaultGPUResource},
		{"LabelPipeline", launcher.LabelPipeline, argo.LabelPipeline},
		{"LabelRun", launcher.LabelRun, argo.LabelRun},
	} {
		if c.launcher != c.argo {
			t.Errorf("%s: launcher %q, pipeline/argo %q", c.name, c.launcher, c.argo)
		}
	}
}
