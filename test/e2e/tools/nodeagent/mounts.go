package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// mountPoints remembers the folders bubblewrap had to create on the host to mount a volume
// where the host had nothing (say /data), so they are removed again once no pod uses them.
type mountPoints struct {
	mu    sync.Mutex
	users map[string]map[string]bool // created top folder → pod keys
}

func newMountPoints() *mountPoints {
	return &mountPoints{users: map[string]map[string]bool{}}
}

// acquire notes that pod mounts at dst. Paths inside /run (a tmpfs in the sandbox) and
// paths that exist on the host need nothing.
func (m *mountPoints) acquire(pod, dst string) error {
	if dst == "/run" || strings.HasPrefix(dst, "/run/") {
		return nil
	}
	top := ""
	for cur := dst; cur != "/"; cur = filepath.Dir(cur) {
		if _, err := os.Lstat(cur); err == nil {
			break
		}
		top = cur
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if top == "" {
		// It exists: maybe because another pod's sandbox made it.
		for t := range m.users {
			if dst == t || strings.HasPrefix(dst, t+"/") {
				m.users[t][pod] = true
			}
		}
		return nil
	}
	if m.users[top] == nil {
		m.users[top] = map[string]bool{}
	}
	m.users[top][pod] = true
	return nil
}

// release forgets pod's mount points and removes those no pod uses any more.
func (m *mountPoints) release(pod string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for top, users := range m.users {
		delete(users, pod)
		if len(users) == 0 {
			removeEmptyTree(top)
			delete(m.users, top)
		}
	}
}

// releaseAll removes every mount point still known.
func (m *mountPoints) releaseAll() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for top := range m.users {
		removeEmptyTree(top)
		delete(m.users, top)
	}
}

// removeEmptyTree removes path if it holds nothing but empty folders and empty files
// (which is what bubblewrap leaves as mount points); anything with data stays.
func removeEmptyTree(path string) bool {
	fi, err := os.Lstat(path)
	if err != nil {
		return true
	}
	if !fi.IsDir() {
		if fi.Mode().IsRegular() && fi.Size() == 0 {
			return os.Remove(path) == nil
		}
		return false
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return false
	}
	empty := true
	for _, e := range entries {
		if !removeEmptyTree(filepath.Join(path, e.Name())) {
			empty = false
		}
	}
	return empty && os.Remove(path) == nil
}
