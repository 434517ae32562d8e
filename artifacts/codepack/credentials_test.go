package codepack

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// names are the entries of the pack of dir.
func names(t *testing.T, dir string, lim Options) ([]string, string) {
	t.Helper()
	var buf bytes.Buffer
	if _, err := Write(context.Background(), dir, &buf, lim); err != nil {
		t.Fatal(err)
	}
	body := buf.String()
	var got []string
	tr := tar.NewReader(&buf)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, hdr.Name)
	}
	return got, body
}

const (
	fakeKey   = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAAtopsecretkeymaterial\n-----END OPENSSH PRIVATE KEY-----\n"
	fakeAWS   = "[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"
	secretBit = "wJalrXUtnFEMI"
)

// TestCredentialsAreLeftOut: the files and folders of Credentials are
// not packed, wherever they are, and do not change the digest; List names
// each with why.
func TestCredentialsAreLeftOut(t *testing.T) {
	code := map[string]string{"train.py": "print(1)\n", "lib/u.py": "x = 1\n"}
	creds := map[string]string{
		".aws/credentials": fakeAWS, ".ssh/id_rsa": fakeKey, ".docker/config.json": `{"auths": {"r": {"auth": "dXNlcjpwYXNzd29yZA=="}}}`,
		".kube/config": "token: x", ".netrc": "machine h login u password p", ".git-credentials": "https://u:p@h",
		".env": "TOKEN=x", ".env.production": "TOKEN=y", "lib/server.pem": fakeKey, "tls.key": fakeKey,
		"lib/id_ed25519": fakeKey, "id_rsa.pub": "ssh-rsa AAAA", "lib/.aws/config": "[default]",
	}
	all := map[string]string{}
	for k, v := range code {
		all[k] = v
	}
	for k, v := range creds {
		all[k] = v
	}
	dir := tree(t, all)
	if a, b := digest(t, dir), digest(t, tree(t, code)); a != b {
		t.Errorf("credentials changed the digest: %s, want %s (the code alone)", a, b)
	}
	got, body := names(t, dir, Defaults)
	if want := []string{"lib/", "lib/u.py", "train.py"}; !slices.Equal(got, want) {
		t.Errorf("packed %q, want %q", got, want)
	}
	if strings.Contains(body, "PRIVATE KEY") || strings.Contains(body, secretBit) {
		t.Error("the pack holds a credential")
	}
	l, err := List(context.Background(), dir, Defaults)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, o := range l.LeftOut {
		if !strings.HasPrefix(o.Reason, "credentials") {
			t.Errorf("%s left out for %q, want credentials", o.Path, o.Reason)
		}
		left = append(left, o.Path)
	}
	want := []string{".aws/", ".docker/", ".env", ".env.production", ".git-credentials", ".kube/", ".netrc", ".ssh/", "id_rsa.pub", "lib/.aws/", "lib/id_ed25519", "lib/server.pem", "tls.key"}
	if !slices.Equal(left, want) {
		t.Errorf("left out %q, want %q", left, want)
	}
	if l.Digest != digest(t, dir) || len(l.Entries) != 3 || l.Entries[1].Path != "lib/u.py" || l.Entries[1].Type != "file" || l.Entries[1].Size != 6 {
		t.Errorf("List = %+v", l)
	}
}

// TestCredentialContentIsRefused: a file that looks like a credential and
// that no rule leaves out is refused, naming it and how to ship it anyway,
// without a word of its content; a "!" line of the ignore file ships
// it, and a program that merely names a variable is
// no credential.
func TestCredentialContentIsRefused(t *testing.T) {
	ctx := context.Background()
	for name, content := range map[string]string{
		"deploy/creds.txt": fakeKey,
		"conf/aws.ini":     fakeAWS,
		"notes.md":         "token ghp_" + strings.Repeat("A1b2", 9) + "\n",
		"auth.json":        `{"auths": {"registry": {"auth": "dXNlcjpwYXNzd29yZA=="}}}`,
	} {
		dir := tree(t, map[string]string{"train.py": "1", name: content})
		_, err := Digest(ctx, dir, Defaults)
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, filepath.Join(dir, filepath.FromSlash(name))) || !strings.Contains(msg, `"!`+name+`"`) || !strings.Contains(msg, "looks like a credential") {
			t.Errorf("%s: %v, want the file named and the line that ships it anyway", name, err)
		}
		if strings.Contains(msg, "topsecret") || strings.Contains(msg, secretBit) || strings.Contains(msg, "dXNlcjpw") {
			t.Errorf("%s: the error shows the secret: %v", name, err)
		}
		// Shipped anyway: with a "!" line.
		os.WriteFile(filepath.Join(dir, IgnoreFile), []byte("!"+name+"\n"), 0o644)
		if got, body := names(t, dir, Defaults); !slices.Contains(got, name) || !strings.Contains(body, content) {
			t.Errorf("%s with !%s in %s: packed %q", name, name, IgnoreFile, got)
		}
	}
	ok := tree(t, map[string]string{
		"s3.py":      "import os\nkey = os.environ[\"AWS_SECRET_ACCESS_KEY\"]\naws_secret_access_key = os.environ.get('X')\n",
		"README.md":  "Put your key in ~/.ssh/id_rsa (BEGIN PRIVATE KEY blocks are never shipped).\n",
		"config.yml": "auths: none\n",
	})
	if _, err := Digest(ctx, ok, Defaults); err != nil {
		t.Errorf("code that names credentials without holding one: %v", err)
	}
}

// TestIgnoreFileShipsCredentialsBack: "!" lines undo Credentials and
// earlier lines; the last line that matches decides.
func TestIgnoreFileShipsCredentialsBack(t *testing.T) {
	dir := tree(t, map[string]string{
		"a.py": "1", ".env": "A=1", "ca.pem": "cert", "b.pem": "cert", "out/x": "1", "out/keep": "1",
		IgnoreFile: "!.env\n!ca.pem\nout\n!out\nout/x\n",
	})
	got, _ := names(t, dir, Defaults)
	if want := []string{".env", IgnoreFile, "a.py", "ca.pem", "out/", "out/keep"}; !slices.Equal(got, want) {
		t.Errorf("packed %q, want %q", got, want)
	}
}

// TestIgnoreFileMustBeAFile: an ignore file that is a FIFO or a link is
// refused rather than read (a FIFO would block the run for ever).
func TestIgnoreFileMustBeAFile(t *testing.T) {
	dir := tree(t, map[string]string{"a.py": "1"})
	if err := os.Symlink("/dev/zero", filepath.Join(dir, IgnoreFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := Digest(context.Background(), dir, Defaults); err == nil || !strings.Contains(err.Error(), IgnoreFile) {
		t.Errorf("an ignore file linked to /dev/zero: %v, want an error naming it", err)
	}
}

// TestIgnoreFileFIFO: an ignore file that is a named pipe with no writer
// is refused at once, not waited on.
func TestIgnoreFileFIFO(t *testing.T) {
	dir := tree(t, map[string]string{"a.py": "1"})
	if err := syscall.Mkfifo(filepath.Join(dir, IgnoreFile), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := Digest(context.Background(), dir, Defaults); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "named pipe") {
			t.Errorf("a FIFO ignore file: %v, want it named", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("packing a folder whose ignore file is a FIFO blocks")
	}
}
