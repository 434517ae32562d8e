package testbed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

// What `pipectl run --on argo` needs from the test bed: the images of the catalogue that
// PipectlImages prepares and the names PrepareNamespace creates.
const (
	// PipectlImage has the pipectl binary built from the repository at /pipectl/pipectl,
	// as the real image (cmd/pipectl/Dockerfile).
	PipectlImage = "pipectl:e2e"
	// ExampleImage has the attrition example's scripts in /app and a python3 with torch
	// first on PATH, as examples/attrition/Dockerfile.
	ExampleImage = "pipectl-example-attrition:0.1"
	// SweepImage is ExampleImage with the sweep example's pick.py too, as
	// examples/sweep/Dockerfile.
	SweepImage = "pipectl-example-sweep:0.1"
	// S3Secret is the Secret with the MinIO credentials (AWS_ACCESS_KEY_ID,
	// AWS_SECRET_ACCESS_KEY) that PrepareNamespace creates.
	S3Secret = "pipectl-s3"
	// StepServiceAccount is the ServiceAccount of step pods (examples/manifests/step-rbac.yaml).
	StepServiceAccount = "pipectl-step"
)

// FindRepoRoot finds the pipectl repository (the folder whose go.mod is module
// pipectl.dev/pipectl) from the working directory upwards.
func FindRepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if isRepoRoot(dir) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod of module pipectl.dev/pipectl above the working directory")
		}
		dir = parent
	}
}

func isRepoRoot(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	return err == nil && regexp.MustCompile(`(?m)^module pipectl\.dev/pipectl\s*$`).Match(b)
}

// Prepared is what PipectlImages prepared.
type Prepared struct {
	// Catalogue has the node agent's catalogue entries PipectlImage, ExampleImage and SweepImage.
	Catalogue map[string]Image
	// Pipectl is the static pipectl binary built from the repository;
	// its pod runtime, pipectl-pod, is beside it.
	Pipectl string
	// Python is a folder whose python3 imports torch (examples/attrition/ensure-torch.sh).
	Python string
}

// PipectlImages prepares, in dir, the host files of the catalogue entries PipectlImage
// (pipectl built from repoRoot: dir/pipectl/pipectl, a static -trimpath go build cached by
// Go, and its pod runtime dir/pipectl/pipectl-pod, also stripped as the image has it) and
// ExampleImage (the attrition example's scripts copied to dir/attrition-app, the
// python3 of examples/attrition/ensure-torch.sh, which installs torch when missing, on
// PATH), and SweepImage (the same, the sweep example's scripts among them) and returns
// those entries, the binary and the python folder (what PushPipectlImages pushes).
func PipectlImages(ctx context.Context, repoRoot, dir string) (*Prepared, error) {
	if !isRepoRoot(repoRoot) {
		return nil, fmt.Errorf("repository root %s: no go.mod of module pipectl.dev/pipectl", repoRoot)
	}
	bin, pod := filepath.Join(dir, "pipectl", "pipectl"), filepath.Join(dir, "pipectl", "pipectl-pod")
	for _, b := range []struct {
		out, pkg string
		flags    []string
	}{
		// Both -trimpath, as the image builds them: the packages the pod runtime
		// imports (about half of pipectl's) then compile once for the two, not twice.
		{bin, "./cmd/pipectl", []string{"-trimpath"}},
		// The pod runtime as the image has it: stripped.
		{pod, "./cmd/pipectl-pod", []string{"-trimpath", "-ldflags", "-s -w"}},
	} {
		build := exec.CommandContext(ctx, "go", append(append([]string{"build"}, b.flags...), "-o", b.out, b.pkg)...)
		build.Dir = repoRoot
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("build %s: %v\n%s", b.pkg, err, out)
		}
	}

	app := filepath.Join(dir, "attrition-app")
	if err := os.MkdirAll(app, 0o755); err != nil {
		return nil, err
	}
	scripts, err := filepath.Glob(filepath.Join(repoRoot, "examples", "attrition", "components", "*", "*.py"))
	if err != nil || len(scripts) == 0 {
		return nil, fmt.Errorf("example scripts: none found (%v)", err)
	}
	sweep, err := filepath.Glob(filepath.Join(repoRoot, "examples", "sweep", "components", "*", "*.py"))
	if err != nil || len(sweep) == 0 {
		return nil, fmt.Errorf("sweep example scripts: none found (%v)", err)
	}
	for _, s := range append(scripts, sweep...) {
		b, err := os.ReadFile(s)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(app, filepath.Base(s)), b, 0o755); err != nil {
			return nil, err
		}
	}
	torch := exec.CommandContext(ctx, "bash", filepath.Join(repoRoot, "examples", "attrition", "ensure-torch.sh"))
	torch.Stderr = os.Stderr
	out, err := torch.Output()
	if err != nil {
		return nil, fmt.Errorf("examples/attrition/ensure-torch.sh: %w", err)
	}
	pyDir := strings.TrimSpace(string(out))
	if pyDir == "" {
		return nil, errors.New("examples/attrition/ensure-torch.sh printed no folder")
	}
	example := Image{
		Binds:      []Bind{{Host: app, Path: "/app", ReadOnly: true}},
		WorkingDir: "/app",
		Env:        []string{"PATH=" + pyDir + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
	}
	return &Prepared{
		Catalogue: map[string]Image{
			PipectlImage: {Binds: []Bind{{Host: bin, Path: "/pipectl/pipectl", ReadOnly: true}, {Host: pod, Path: "/pipectl/pipectl-pod", ReadOnly: true}}},
			ExampleImage: example,
			SweepImage:   example,
		},
		Pipectl: bin,
		Python:  pyDir,
	}, nil
}

// PrepareNamespace readies namespace ns for `pipectl run --on argo`: creates it when
// missing and waits until pods can run in it, applies examples/manifests/step-rbac.yaml
// and launcher-rbac.yaml of repoRoot (their ServiceAccounts, Roles, RoleBindings), creates
// the Secret S3Secret with the MinIO credentials and the MinIO bucket. What already
// exists is kept, so it may run again.
func (c *Cluster) PrepareNamespace(ctx context.Context, ns, repoRoot, bucket string) error {
	_, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", ns, err)
	}
	if err := c.WaitNamespaceReady(ctx, ns); err != nil {
		return err
	}
	for _, m := range []string{"step-rbac.yaml", "launcher-rbac.yaml"} {
		if err := c.applyRBAC(ctx, ns, filepath.Join(repoRoot, "examples", "manifests", m)); err != nil {
			return err
		}
	}
	_, err = c.Client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: S3Secret},
		StringData: map[string]string{"AWS_ACCESS_KEY_ID": MinIOAccessKey, "AWS_SECRET_ACCESS_KEY": MinIOSecretKey},
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create secret %s/%s: %w", ns, S3Secret, err)
	}
	return c.MakeBucket(ctx, bucket)
}

// S3 is a client of the test bed's MinIO as its root user (minio-go, the library
// pipectl's S3 store uses), for tests that look at the store directly.
func (c *Cluster) S3() (*minio.Client, error) {
	return minio.New(c.MinIOEndpoint, &minio.Options{Creds: credentials.NewStaticV4(MinIOAccessKey, MinIOSecretKey, "")})
}

// MakeBucket creates a bucket in the test bed's MinIO; one that exists is kept.
func (c *Cluster) MakeBucket(ctx context.Context, bucket string) error {
	s3, err := c.S3()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := s3.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); err != nil {
		var resp minio.ErrorResponse
		if errors.As(err, &resp) && resp.Code == "BucketAlreadyOwnedByYou" {
			return nil
		}
		return fmt.Errorf("make bucket %s: %w", bucket, err)
	}
	return nil
}

// applyRBAC creates the ServiceAccounts, Roles and RoleBindings of a manifest file in ns.
func (c *Cluster) applyRBAC(ctx context.Context, ns, file string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(b), -1) {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil || meta.Kind == "" {
			continue
		}
		strict := func(into any) error {
			if err := yaml.UnmarshalStrict([]byte(doc), into); err != nil {
				return fmt.Errorf("%s: %w in:\n%s", file, err, doc)
			}
			return nil
		}
		switch meta.Kind {
		case "ServiceAccount":
			var o corev1.ServiceAccount
			if err = strict(&o); err == nil {
				_, err = c.Client.CoreV1().ServiceAccounts(ns).Create(ctx, &o, metav1.CreateOptions{})
			}
		case "Role":
			var o rbacv1.Role
			if err = strict(&o); err == nil {
				_, err = c.Client.RbacV1().Roles(ns).Create(ctx, &o, metav1.CreateOptions{})
			}
		case "RoleBinding":
			var o rbacv1.RoleBinding
			if err = strict(&o); err == nil {
				_, err = c.Client.RbacV1().RoleBindings(ns).Create(ctx, &o, metav1.CreateOptions{})
			}
		default:
			return fmt.Errorf("%s: unexpected kind %s", file, meta.Kind)
		}
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("%s: create %s in %s: %w", file, meta.Kind, ns, err)
		}
	}
	return nil
}

// SetKubeconfigNamespace makes ns the namespace of the kubeconfig's context, for commands
// run without -n (kubectl get pods, pipectl runs get refreshing a running run).
func (c *Cluster) SetKubeconfigNamespace(ns string) error {
	cfg, err := clientcmd.LoadFromFile(c.Kubeconfig)
	if err != nil {
		return err
	}
	ctx := cfg.Contexts[cfg.CurrentContext]
	if ctx == nil {
		return fmt.Errorf("%s: no current context", c.Kubeconfig)
	}
	ctx.Namespace = ns
	return clientcmd.WriteToFile(*cfg, c.Kubeconfig)
}
