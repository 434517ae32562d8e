package local

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/minio/minio-go/v7"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/artifacts/miniotest"
	"pipectl.dev/pipectl/components/record"
	"pipectl.dev/pipectl/components/wire"
	"pipectl.dev/pipectl/pipeline"
	"pipectl.dev/pipectl/pipeline/images/modelcartest"
	"pipectl.dev/pipectl/pipeline/imports"
	"pipectl.dev/pipectl/pipeline/recordstore"
)

// TestRunKFPv2 runs KFP v2 pipeline files with real programs: a shell
// producer and consumer wired through placeholders, Concat and IfPresent,
// a sub-DAG, and a python3 program speaking KFP's executor protocol (it
// reads {{$}} and returns values through the executor output file).
func TestRunKFPv2(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		file   string
		params map[string]string
		// want are output values by STEP/OUTPUT; files artifact contents.
		want, files map[string]string
	}{{
		file: "../testdata/kfpv2/wiring.yaml",
		want: map[string]string{
			"produce/count":           "3",
			"wrapped.consume/summary": `--count=3 --ratio 1.0 {"a":[1,2.50]} --suffix ! 3`,
			"for-loop-1[0]/tagged":    "hello, x",
			"for-loop-1[1]/tagged":    "hello, y",
			"join/joined":             `["hello, x","hello, y"]`,
		},
		files: map[string]string{"produce/data": "hello\nhello\nhello\n"},
	}, {
		file: "../testdata/kfpv2/executor.yaml",
		want: map[string]string{
			"stats/Output": "30",
			"stats/tag":    `it's "quoted"|0.5|True|{"a": "x", "b": [1, 2]}|False`,
			"show/shown":   "n=30",
		},
		files: map[string]string{"stats/report": `{"lines": 3}`},
	}, {
		// ParallelFors: two tasks per iteration, a collected output, and
		// a ParallelFor in a ParallelFor over their product.
		file: "../testdata/kfpv2/loops.yaml",
		want: map[string]string{
			"for-loop-1-show[0]/shown":             "show a",
			"for-loop-1-show[1]/shown":             "show b",
			"for-loop-1-mark[1]/Output":            "m2",
			"gather/joined":                        `["m1","m2"]`,
			"for-loop-2-for-loop-3-pair[0]/Output": "1a",
			"for-loop-2-for-loop-3-pair[1]/Output": "1b",
			"for-loop-2-for-loop-3-pair[3]/Output": "2b",
			"for-loop-2-note[1]/Output":            "note 2",
			"done/Output":                          "note 0",
		},
	}, {
		// A ParallelFor whose body is a pipeline: each iteration's second
		// reads its first, inner (a sub-DAG) its second; gather gets the
		// body's collected output.
		file: "../testdata/kfpv2/loops_pipeline.yaml",
		want: map[string]string{
			"for-loop-1.first[1]/Output":      "b c",
			"for-loop-1.second[0]/Output":     "a!",
			"for-loop-1.second[1]/Output":     "b c!",
			"for-loop-1.inner.echo[0]/Output": "a!",
			"for-loop-1.inner.echo[1]/Output": "b c!",
			"gather/Output":                   `["a!","b c!"]`,
		},
	}, {
		// A ParallelFor over a pipeline input holding one over a list in
		// the file: their product, at run time.
		file: "../testdata/kfpv2/loops_product.yaml",
		want: map[string]string{
			"for-loop-1-for-loop-2-echo[0]/Output": "a-1",
			"for-loop-1-for-loop-2-echo[1]/Output": "a-2",
			"for-loop-1-for-loop-2-echo[2]/Output": "b c-1",
			"for-loop-1-for-loop-2-echo[3]/Output": "b c-2",
		},
	}, {
		// Nested ParallelFors, the inner over a field of the outer item
		// (KFP's "-subvar-" input): KFP's iterations, outer-major, none
		// for an outer item with an empty list; one over a task's output
		// holding one over a written list; one over a list of lists
		// holding one over its item.
		file: "../testdata/kfpv2/loops_nested.yaml",
		want: map[string]string{
			"for-loop-1-for-loop-2-print-op[0]/Output":   "msg: 1, msg2: hello",
			"for-loop-1-for-loop-2-print-op[1]/Output":   "msg: 2, msg2: hello",
			"for-loop-1-for-loop-2-print-op[2]/Output":   "msg: 11, msg2: halo",
			"for-loop-1-for-loop-2-print-op[3]/Output":   "msg: 22, msg2: halo",
			"for-loop-3-for-loop-4-print-op-2[0]/Output": "msg: x, msg2: 100",
			"for-loop-3-for-loop-4-print-op-2[1]/Output": "msg: x, msg2: 200",
			"for-loop-3-for-loop-4-print-op-2[3]/Output": "msg: y z, msg2: 200",
			"for-loop-5-for-loop-6-print-op-3[0]/Output": "msg: a, msg2: -",
			"for-loop-5-for-loop-6-print-op-3[2]/Output": "msg: c, msg2: -",
		},
	}, {
		// A ParallelFor holding a task and a ParallelFor reading its
		// output: every (outer, inner) pair, each reading its outer
		// iteration's lead.
		file: "../testdata/kfpv2/loops_in_body.yaml",
		want: map[string]string{
			"for-loop-1.lead[1]/Output":       "b c",
			"for-loop-1.for-loop-2[0]/Output": "a/1",
			"for-loop-1.for-loop-2[1]/Output": "a/2",
			"for-loop-1.for-loop-2[2]/Output": "b c/1",
			"for-loop-1.for-loop-2[3]/Output": "b c/2",
		},
	}, {
		// An optional sub-DAG input no task gives has no value inside.
		file: "../testdata/kfpv2/optional.yaml",
		want: map[string]string{"inner.show/Output": "--no-flag x --no-data"},
	}, {
		// A ParallelFor's artifacts collected into a List[Dataset]
		// input, read through {{$}}: one artifact per iteration.
		file:  "../testdata/kfpv2/collected_artifacts.yaml",
		want:  map[string]string{"join/Output": "3:a+b c+d"},
		files: map[string]string{"for-loop-1[1]/Output": "b c"},
	}, {
		// dsl.OneOf: use gets the output parameter and artifact of the
		// branch that ran, the other skipped.
		file:  "../testdata/kfpv2/oneof.yaml",
		want:  map[string]string{"use/Output": "from heads + data from heads"},
		files: map[string]string{"condition-branches-1.condition-2.make/data": "data from heads"},
	}, {
		file:   "../testdata/kfpv2/oneof.yaml",
		params: map[string]string{"flip": "tails"},
		want:   map[string]string{"use/Output": "from tails + data from tails"},
	}, {
		file: "../testdata/kfpv2/exit.yaml",
		want: map[string]string{"report/seen": `{"state": "Succeeded", "pipelineTaskName": "exit-handler-1", "error": {}}`},
	}, {
		// The exit task runs when the handler's task fails, and sees it.
		file:   "../testdata/kfpv2/exit.yaml",
		params: map[string]string{"fail": "true"},
		want:   map[string]string{"report/seen": `{"state": "Failed", "pipelineTaskName": "exit-handler-1", "error": {}}`},
	}} {
		t.Run(tc.file, func(t *testing.T) {
			f := newFixture(t)
			p, err := pipeline.Load(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			run, err := f.run(ctx, p, tc.params, nil)
			if err != nil && tc.params["fail"] != "true" {
				t.Fatalf("Run: %v\n%s\n%s", err, f.status, f.logs)
			}
			if tc.params["fail"] == "true" && (err == nil || run.Status != record.StatusFailed) {
				t.Fatalf("run with a failing task: status %s, err %v", run.Status, err)
			}
			rec, err := recordstore.ReadRun(ctx, f.store, run.ID)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, s := range rec.Steps {
				for _, o := range s.Outputs {
					if o.Value != nil {
						got[s.Name+"/"+o.Name] = *o.Value
					}
				}
			}
			for k, want := range tc.want {
				if got[k] != want {
					t.Errorf("%s = %q, want %q", k, got[k], want)
				}
			}
			for k, want := range tc.files {
				out, err := recordstore.Resolve(ctx, f.store, run.ID+"/"+k)
				if err != nil {
					t.Fatal(err)
				}
				var buf bytes.Buffer
				if err := artifacts.Copy(ctx, f.store, out.Key, &buf, out.Meta.SHA256); err != nil {
					t.Fatal(err)
				}
				if buf.String() != want {
					t.Errorf("%s holds %q, want %q", k, buf.String(), want)
				}
			}
		})
	}
}

// TestRunKFPv2Conditions runs dsl.If with a nested dsl.If/dsl.Else over an
// int output (>, and its negation <=) and a dsl.Elif (two comparisons
// joined by &&): each task runs only when its own condition and the
// enclosing ones hold; the int reaches a task inside an f-string constant.
func TestRunKFPv2Conditions(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		params map[string]string
		want   map[string]string
	}{
		{nil, map[string]string{"condition-1.num": "Succeeded", "condition-1.condition-2.big": "Succeeded", "condition-1.condition-3.small": "Skipped", "condition-4.tails": "Skipped"}},
		{map[string]string{"n": "5"}, map[string]string{"condition-1.num": "Succeeded", "condition-1.condition-2.big": "Skipped", "condition-1.condition-3.small": "Succeeded", "condition-4.tails": "Skipped"}},
		{map[string]string{"n": "-12"}, map[string]string{"condition-1.condition-2.big": "Skipped", "condition-1.condition-3.small": "Succeeded"}},
		{map[string]string{"flip": "tails"}, map[string]string{"condition-1.num": "Skipped", "condition-1.condition-2.big": "Skipped", "condition-1.condition-3.small": "Skipped", "condition-4.tails": "Succeeded"}},
		{map[string]string{"flip": "edge"}, map[string]string{"condition-1.num": "Skipped", "condition-1.condition-2.big": "Skipped", "condition-4.tails": "Skipped"}},
	} {
		f := newFixture(t)
		p, err := pipeline.Load("../testdata/kfpv2/conditions.yaml")
		if err != nil {
			t.Fatal(err)
		}
		run, err := f.run(ctx, p, tc.params, nil)
		if err != nil {
			t.Fatalf("%v: Run: %v\n%s", tc.params, err, f.status)
		}
		got := stepStatus(run)
		for step, want := range tc.want {
			if got[step] != want {
				t.Errorf("%v: %s is %s, want %s (steps: %v)", tc.params, step, got[step], want, got)
			}
		}
		if got["condition-1.condition-2.big"] == "Succeeded" {
			rec, err := recordstore.ReadRun(ctx, f.store, run.ID)
			if err != nil {
				t.Fatal(err)
			}
			n := tc.params["n"]
			if n == "" {
				n = "7" // the default, 7.0 in the file: an integer
			}
			if out := rec.Step("condition-1.condition-2.big").Outputs; len(out) != 1 || out[0].Value == nil || *out[0].Value != "big: "+n+"!" {
				t.Errorf("%v: big said %+v, want %q", tc.params, out, "big: "+n+"!")
			}
		}
	}
}

// TestRunKFPv2ImporterSubDAG: a dsl.importer inside a dsl.If whose URI is
// a pipeline input passed down: read, inside the condition, gets the
// artifact that input names, with the importer's metadata (a pipeline
// input and a constant) in its executor input.
func TestRunKFPv2ImporterSubDAG(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	uri := f.madeArtifact(ctx)
	p, err := pipeline.Load("../testdata/kfpv2/importer_subdag.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if prm := p.Params["data_uri"]; prm.Type != "Dataset" {
		t.Errorf("data_uri is %s, want the importer's type, Dataset", prm.Type)
	}
	run, err := f.run(ctx, p, map[string]string{"data_uri": uri, "name": `a "b"`}, nil)
	if err != nil {
		t.Fatalf("Run: %v\n%s\n%s", err, f.status, f.logs)
	}
	out := run.Step("condition-1.read").Outputs
	if want := `rows: 3 {"name": "a \"b\"", "ratio": 0.5}`; len(out) != 1 || out[0].Value == nil || *out[0].Value != want {
		t.Errorf("read gave %+v, want %q", out, want)
	}
}

// TestRunKFPv2ImportGS: a dsl.importer of a gs:// object (read through a
// real S3 server acting as Cloud Storage's XML API) runs: the object is
// copied into the store before any step runs, and read reads that copy,
// with the importer's metadata; a second run reuses read (the copy's
// sha256 is the same). Without the configuration the run fails before any
// step runs, naming the URI and the variables.
func TestRunKFPv2ImportGS(t *testing.T) {
	ctx := context.Background()
	srv := miniotest.Start(t)
	if err := srv.MakeBucket(ctx, "gcs-bucket"); err != nil {
		t.Fatal(err)
	}
	const text = "to be $(x) `y`"
	if _, err := srv.Client().PutObject(ctx, "gcs-bucket", "data/shakespeare1.txt", strings.NewReader(text), int64(len(text)), minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.Load("../testdata/kfpv2/importer_subdag.yaml")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{wire.EnvGSEndpoint: srv.Endpoint, wire.EnvGSAccessKey: srv.AccessKey, wire.EnvGSSecretKey: srv.SecretKey}
	withEnv := func(r *Runner) { r.Import.Getenv = func(k string) string { return env[k] } }
	f := newFixture(t)
	params := map[string]string{"data_uri": "gs://gcs-bucket/data/shakespeare1.txt"}
	for i, cached := range []bool{false, true} {
		run, err := f.run(ctx, p, params, withEnv)
		if err != nil {
			t.Fatalf("Run: %v\n%s\n%s", err, f.status, f.logs)
		}
		s := run.Step("condition-1.read")
		if want := text + ` {"name": "n", "ratio": 0.5}`; len(s.Outputs) != 1 || s.Outputs[0].Value == nil || *s.Outputs[0].Value != want || s.Cached != cached {
			t.Errorf("run %d: read gave %+v (cached %v), want %q (cached %v)", i, s.Outputs, s.Cached, want, cached)
		}
		sum := sha256.Sum256([]byte(text))
		if uri := f.store.URI(imports.ImportKey(hex.EncodeToString(sum[:]))); run.Params["data_uri"] != uri {
			t.Errorf("run %d: param data_uri = %s, want the copy %s", i, run.Params["data_uri"], uri)
		}
	}
	if !strings.Contains(f.status.String(), "Imported gs://gcs-bucket/data/shakespeare1.txt (param data_uri, 14 bytes, sha256 ") {
		t.Errorf("status does not say what was imported:\n%s", f.status)
	}
	delete(env, wire.EnvGSEndpoint)
	run, err := f.run(ctx, p, params, withEnv)
	if run != nil || err == nil || !strings.Contains(err.Error(), "import gs://gcs-bucket/data/shakespeare1.txt: set PIPECTL_GS_ENDPOINT, PIPECTL_GS_ACCESS_KEY_ID, PIPECTL_GS_SECRET_ACCESS_KEY") {
		t.Errorf("without %s: run %v, %v; want an error before the run", wire.EnvGSEndpoint, run, err)
	}
}

// TestRunKFPv2ImportOCI: a dsl.importer of a ModelCar (oci://, a model
// shipped as an image, pulled from a real registry): the run copies the
// image's /models folder into the store before any step runs, and files
// reads it as its input_model; a second run reuses files.
func TestRunKFPv2ImportOCI(t *testing.T) {
	ctx := context.Background()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	ref := strings.TrimPrefix(srv.URL, "http://") + "/modelcar:test"
	if _, err := modelcartest.Push(ref, []map[string]string{{"models/config.json": `{"a": 1}`, "models/sub/w.bin": "w", "etc/x": "x"}}); err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.Load("../testdata/kfpv2/importer_oci.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	for i, cached := range []bool{false, true} {
		run, err := f.run(ctx, p, map[string]string{"model_uri": "oci://" + ref}, nil)
		if err != nil {
			t.Fatalf("Run: %v\n%s\n%s", err, f.status, f.logs)
		}
		s := run.Step("files")
		if want := `./config.json ./sub/w.bin {"a": 1}`; len(s.Outputs) != 1 || s.Outputs[0].Value == nil || *s.Outputs[0].Value != want || s.Cached != cached {
			t.Errorf("run %d: files gave %+v (cached %v), want %q (cached %v)", i, s.Outputs, s.Cached, want, cached)
		}
	}
	if !strings.Contains(f.status.String(), "Imported oci://"+ref+" (param model_uri, ") {
		t.Errorf("status does not say what was imported:\n%s", f.status)
	}
}
