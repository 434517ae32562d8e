package testbed

import (
	"encoding/json"
	"os"
	"path/filepath"
)

// Image is what a container of a catalogue image sees on the node agent, which does not
// pull catalogue images: its processes run the host's binaries. Options.Images maps
// references to these. Images of the test bed's registry (Cluster.Push) are pulled instead
// and run in their own root file system.
type Image struct {
	// Binds are host files or folders bound into the container (before its volume mounts).
	Binds []Bind `json:"binds,omitempty"`
	// WorkingDir is the container's working directory when the container sets none.
	WorkingDir string `json:"workingDir,omitempty"`
	// Env is the image's ENV as NAME=value; the container's own env wins.
	Env []string `json:"env,omitempty"`
}

// Bind is a host file or folder an image provides inside its containers.
type Bind struct {
	// Host is the file or folder on the host; it must exist when the test bed starts.
	Host string `json:"host"`
	// Path is the absolute path the container sees it at. Mount points missing on the
	// host are created and removed again, like those of volume mounts.
	Path string `json:"path"`
	// ReadOnly binds it read-only.
	ReadOnly bool `json:"readOnly,omitempty"`
}

// writeImages writes the node agent's --images file into dir and returns its path.
func writeImages(dir string, images map[string]Image) (string, error) {
	if images == nil {
		images = map[string]Image{}
	}
	b, err := json.MarshalIndent(images, "", "  ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "images.json")
	return path, os.WriteFile(path, b, 0o644)
}
