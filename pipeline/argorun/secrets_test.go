package argorun

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"pipectl.dev/pipectl/pipeline"
)

// TestCheckSecrets: before a run is submitted, every Secret and key a step
// reads must be in the namespace (a name given by a param: its value);
// what is missing is said, naming step, variable, Secret and key, and the
// Secret's keys but no value; optional ones are not checked; a Secret
// pipectl may not read is left for the pods, with a warning.
func TestCheckSecrets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.yaml")
	err := os.WriteFile(path, []byte(`apiVersion: pipectl.dev/v1alpha1
kind: Pipeline
metadata: {name: s}
params:
  db: {type: string, default: db}
steps:
  - name: a
    component: &c {apiVersion: pipectl.dev/v1alpha1, kind: Component, metadata: {name: c}, image: img:1, command: [prog]}
    secrets:
      - {env: HF_TOKEN, secret: hf, key: token}
      - {env: DB_USER, secret: "{{params.db}}", key: user}
      - {env: DB_PASS, secret: "{{params.db}}", key: pass}
      - {env: EXTRA, secret: nowhere, key: x, optional: true}
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	kube := fake.NewSimpleClientset(
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "hf", Namespace: "ns"}, Data: map[string][]byte{"token": []byte("TOPSECRET")}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns"}, Data: map[string][]byte{"user": []byte("TOPSECRET-U")}},
	)
	var warned []string
	warn := func(s string) { warned = append(warned, s) }
	var seen []error
	check := func(params map[string]string) error {
		err := CheckSecrets(context.Background(), kube, "ns", p, params, warn)
		seen = append(seen, err)
		return err
	}
	err = check(map[string]string{"db": "db"})
	if err == nil || !strings.Contains(err.Error(), "step a: secret DB_PASS: Secret db in namespace ns has no key pass (keys: user)") {
		t.Errorf("a missing key: %v", err)
	}
	if err := check(map[string]string{"db": "prod-db"}); err == nil ||
		!strings.Contains(err.Error(), "step a: secret DB_USER: no Secret prod-db in namespace ns") || !strings.Contains(err.Error(), "secret DB_PASS: no Secret prod-db") {
		t.Errorf("a missing Secret: %v", err)
	}
	if err := check(map[string]string{"db": "Bad_Name"}); err == nil || !strings.Contains(err.Error(), `-p db="Bad_Name" is not a Secret's name`) {
		t.Errorf("a param that is no Secret's name: %v", err)
	}
	for _, e := range seen {
		if e != nil && strings.Contains(e.Error(), "TOPSECRET") {
			t.Errorf("the error shows a value: %v", e)
		}
	}
	_ = kube.Tracker().Update(schema.GroupVersionResource{Version: "v1", Resource: "secrets"},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns"}, Data: map[string][]byte{"user": nil, "pass": nil}}, "ns")
	if err := CheckSecrets(context.Background(), kube, "ns", p, map[string]string{"db": "db"}, warn); err != nil || len(warned) != 0 {
		t.Errorf("every Secret there: %v (warned %q)", err, warned)
	}
	kube.PrependReactor("get", "secrets", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "hf", nil)
	})
	if err := CheckSecrets(context.Background(), kube, "ns", p, map[string]string{"db": "db"}, warn); err != nil || len(warned) != 1 || !strings.Contains(warned[0], "cannot check the steps' Secrets") {
		t.Errorf("forbidden: %v (warned %q)", err, warned)
	}
}
