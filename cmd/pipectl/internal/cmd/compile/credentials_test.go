package compile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An inline component's folder is the pipeline file's: compiling ships it
// without the credentials in it, and refuses a file that looks like one,
// named, without compiling.
func TestCompileShipsNoCredentials(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"pipeline.yaml": `apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: p}
steps:
  - name: train
    component:
      apiVersion: pipectl.dev/v1alpha1
      kind: Component
      metadata: {name: train}
      image: python:3.12
      command: [python, train.py]
`,
		"train.py":             "print(1)\n",
		".aws/credentials":     "[default]\naws_secret_access_key = TOPSECRETwJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPL\n",
		".ssh/id_ed25519":      "-----BEGIN OPENSSH PRIVATE KEY-----\nTOPSECRET\n-----END OPENSSH PRIVATE KEY-----\n",
		".docker/config.json":  `{"auths": {"r.example": {"auth": "VE9QU0VDUkVUOng="}}}`,
		".netrc":               "machine h login u password TOPSECRET\n",
		".env.local":           "TOKEN=TOPSECRET\n",
		"certs/server.key":     "TOPSECRET",
		".git-credentials":     "https://u:TOPSECRET@h\n",
		".kube/config":         "token: TOPSECRET\n",
		"nested/.aws/config":   "TOPSECRET",
		"nested/deploy_id_rsa": "not matched by id_rsa*, and no key inside\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	store := t.TempDir()
	pipe := filepath.Join(dir, "pipeline.yaml")
	if _, stderr, err := run(t, nil, pipe, "--artifacts", store, "--allow-non-s3"); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	packs, _ := filepath.Glob(filepath.Join(store, ".code", "*.tar"))
	if len(packs) != 1 {
		t.Fatalf("packs %v, want the inline component's folder", packs)
	}
	b, err := os.ReadFile(packs[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "train.py") || !strings.Contains(string(b), "deploy_id_rsa") {
		t.Errorf("the pack lacks the code")
	}
	for _, leak := range []string{"TOPSECRET", ".aws", ".ssh", ".docker", ".netrc", ".env", "server.key", ".git-credentials", ".kube"} {
		if strings.Contains(string(b), leak) {
			t.Errorf("the pack holds %q", leak)
		}
	}

	// A key under another name stops the compile, named; nothing is stored.
	key := filepath.Join(dir, "nested", "deploy.txt")
	if err := os.WriteFile(key, []byte("-----BEGIN RSA PRIVATE KEY-----\nTOPSECRET\n-----END RSA PRIVATE KEY-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	store2 := t.TempDir()
	_, _, err = run(t, nil, pipe, "--artifacts", store2, "--allow-non-s3")
	if err == nil || !strings.Contains(err.Error(), key+": it looks like a credential") || !strings.Contains(err.Error(), `"!nested/deploy.txt"`) || strings.Contains(err.Error(), "TOPSECRET") {
		t.Errorf("a key in the folder: %v, want it named with the way to ship it anyway", err)
	}
	if ents, _ := os.ReadDir(filepath.Join(store2, ".code")); len(ents) != 0 {
		t.Errorf("a refused folder left %d pack(s) in the store", len(ents))
	}
}
