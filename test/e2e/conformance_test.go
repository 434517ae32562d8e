package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"maps"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"pipectl.dev/pipectl/artifacts/miniotest"
	"pipectl.dev/pipectl/pipeline/images/modelcartest"
	"pipectl.dev/pipectl/test/e2e/testbed"
)

// The conformance suite: one table of pipelines, each run on both backends —
// `pipectl run FILE` (local, artifacts in the test bed's MinIO) and
// `pipectl run FILE --on argo` — asserting the same normalised run record and
// the same argv and env seen by the program, and both equal to the table.
//
// A case is a pipeline file conformance/NAME/pipeline.yaml whose steps run
// the probe (conformance/probe: image conformanceImage, program
// conformance-probe) and a row of conformanceCases. See test/e2e/README.md.

// conformanceImage is the catalogue image of the probe: conformance-probe on
// PATH, CONFORMANCE_STATE set (catalogue in images_test.go).
const conformanceImage = "conformance-probe"

// conformanceCases is the table. Every pipeline feature joins it.
// groupA and groupD are items of the loops case's groups param, as its
// default writes them in JSON.
const (
	groupA = `{"g":"a","xs":[{"q":1},{"q":2.50}]}`
	groupD = `{"g":"d","xs":"[{\"q\": \"$(e)\"}]"}`
	// kfpGroupA is the first item of the kfpv2 case's groups input.
	kfpGroupA = `{"g":"a","xs":[{"q":"1"},{"q":"2 $(x)"}]}`
)

var conformanceCases = []confCase{
	{
		name:   "dag",
		status: "Succeeded",
		rerun:  true,
		steps: []confStep{
			ok("split", seen(), file("text", "Dataset", "left\n"),
				dir("parts", "Dataset", map[string]string{"a.txt": "a\n", "sub/b.txt": "b\n"}),
				param("label", "string", "from split")),
			ok("left", seen(), file("out", "Artifact", "from split")).after("split"),
			ok("right", seen(), file("out", "Artifact", "none")).after("split"),
			ok("join", seen()).after("left", "right"),
			ok("gated", seen()),
			skipped("extra"),
		},
		probes: map[string]probeRecord{
			"split": {Argv: []string{"@seen", "$WORK/outputs/seen", "@write", "$WORK/outputs/text", "left\n",
				"@dir", "$WORK/outputs/parts", "@write", "$WORK/outputs/label", "from split"}, Env: stepEnv("split")},
			"left": {Argv: []string{"@seen", "$WORK/outputs/seen", "@read", "$WORK/inputs/data", "@write", "$WORK/outputs/out", "from split"},
				Env: stepEnv("left"), Read: []string{`$WORK/inputs/data: . = "left\n"`}},
			"right": {Argv: []string{"@seen", "$WORK/outputs/seen", "@read", "$WORK/inputs/data", "@write", "$WORK/outputs/out", "none"},
				Env: stepEnv("right"), Read: []string{`$WORK/inputs/data: a.txt = "a\n"`, `$WORK/inputs/data: sub/b.txt = "b\n"`}},
			"join": {Argv: []string{"@seen", "$WORK/outputs/seen", "@read", "$WORK/inputs/a", "@read", "$WORK/inputs/b"},
				Env: stepEnv("join"), Read: []string{`$WORK/inputs/a: . = "from split"`, `$WORK/inputs/b: . = "none"`}},
			"gated": {Argv: []string{"@seen", "$WORK/outputs/seen"}, Env: stepEnv("gated")},
		},
	},
	{
		name:   "code",
		status: "Succeeded",
		steps:  []confStep{ok("reader", seen()), ok("other", seen())},
		probes: map[string]probeRecord{
			"reader": {Argv: []string{"@seen", "$WORK/outputs/seen", "@read", "lib/settings.txt"}, Env: stepEnv("reader"),
				Read: []string{`lib/settings.txt: . = "one\n"`}},
			"other": {Argv: []string{"@seen", "$WORK/outputs/seen"}, Env: stepEnv("other")},
		},
		edit: map[string]string{"reader/lib/settings.txt": "two\n"},
		edited: map[string]probeRecord{
			"reader": {Argv: []string{"@seen", "$WORK/outputs/seen", "@read", "lib/settings.txt"}, Env: stepEnv("reader"),
				Read: []string{`lib/settings.txt: . = "two\n"`}},
		},
	},
	{
		name:   "failure",
		status: "Failed",
		steps: []confStep{
			withAttempts(ok("flaky", seen(), file("out", "Artifact", "flaky\n")), 2),
			ok("after-flaky", seen()).after("flaky"),
			failed("boom", 5),
			skipped("doomed").after("boom"),
			skipped("doomed-too").after("doomed"),
		},
		probes: map[string]probeRecord{
			"flaky": {Argv: []string{"@fail-once", "@seen", "$WORK/outputs/seen", "@write", "$WORK/outputs/out", "flaky\n"}, Env: stepEnv("flaky")},
			"after-flaky": {Argv: []string{"@seen", "$WORK/outputs/seen", "@read", "$WORK/inputs/data"},
				Env: stepEnv("after-flaky"), Read: []string{`$WORK/inputs/data: . = "flaky\n"`}},
			"boom": {Argv: []string{"@seen", "$WORK/outputs/seen", "@write", "$WORK/outputs/out", "boom\n", "@exit", "5"}, Env: stepEnv("boom")},
		},
	},
	{
		// trigger: completed: cleanup runs after make failed and doomed was
		// skipped, with its inputs' defaults; the run fails. The next run
		// (make succeeds) gives cleanup make's outputs.
		name:   "completed",
		status: "Failed",
		steps: []confStep{
			failed("make", 3),
			skipped("doomed").after("make"),
			ok("cleanup", seen(), param("note", "string", "default $(d) `e`")).after("doomed", "make"),
			ok("report", seen()).after("cleanup"),
		},
		probes: map[string]probeRecord{
			"make": {Argv: []string{"@seen", "$WORK/outputs/seen", "@write", "$WORK/outputs/msg", "made $(x) `y`",
				"@write", "$WORK/outputs/data", "data\n", "@exit", "3"}, Env: stepEnv("make")},
			"cleanup": {Argv: []string{"@seen", "$WORK/outputs/seen", "--message", "default $(d) `e`", "--no-data",
				"@write", "$WORK/outputs/note", "default $(d) `e`"}, Env: stepEnv("cleanup")},
			"report": {Argv: []string{"@seen", "$WORK/outputs/seen", "--note", "default $(d) `e`"}, Env: stepEnv("report")},
		},
		next: &confCase{
			name: "completed", file: "pipeline.yaml", status: "Succeeded",
			params: []string{"code=0"},
			steps: []confStep{
				ok("make", seen(), param("msg", "string", "made $(x) `y`"), file("data", "Dataset", "data\n")),
				ok("doomed", seen()).after("make"),
				ok("cleanup", seen(), param("note", "string", "made $(x) `y`")).after("doomed", "make"),
				ok("report", seen()).after("cleanup"),
			},
			probes: map[string]probeRecord{
				"make": {Argv: []string{"@seen", "$WORK/outputs/seen", "@write", "$WORK/outputs/msg", "made $(x) `y`",
					"@write", "$WORK/outputs/data", "data\n", "@exit", "0"}, Env: stepEnv("make")},
				"doomed": {Argv: []string{"@seen", "$WORK/outputs/seen", "@read", "$WORK/inputs/data"}, Env: stepEnv("doomed"),
					Read: []string{`$WORK/inputs/data: . = "data\n"`}},
				"cleanup": {Argv: []string{"@seen", "$WORK/outputs/seen", "--message", "made $(x) `y`", "@read", "$WORK/inputs/data",
					"@write", "$WORK/outputs/note", "made $(x) `y`"}, Env: stepEnv("cleanup"), Read: []string{`$WORK/inputs/data: . = "data\n"`}},
				"report": {Argv: []string{"@seen", "$WORK/outputs/seen", "--note", "made $(x) `y`"}, Env: stepEnv("report")},
			},
		},
	},
	{
		name:   "resume",
		status: "Failed",
		steps: []confStep{
			ok("first", seen(), file("out", "Artifact", "first\n")),
			failed("boom", 5).after("first"),
			skipped("after").after("boom"),
		},
		probes: map[string]probeRecord{
			"first": {Argv: []string{"@seen", "$WORK/outputs/seen", "@write", "$WORK/outputs/out", "first\n"}, Env: stepEnv("first")},
			"boom": {Argv: []string{"@seen", "$WORK/outputs/seen", "@read", "$WORK/inputs/data", "@exit", "5"}, Env: stepEnv("boom"),
				Read: []string{`$WORK/inputs/data: . = "first\n"`}},
		},
		resumed: &confCase{
			name: "resume", params: []string{"code=0"}, status: "Succeeded",
			steps: []confStep{
				reused(ok("first", seen(), file("out", "Artifact", "first\n"))),
				ok("boom", seen()).after("first"),
				ok("after", seen()).after("boom"),
			},
			probes: map[string]probeRecord{
				"boom": {Argv: []string{"@seen", "$WORK/outputs/seen", "@read", "$WORK/inputs/data", "@exit", "0"}, Env: stepEnv("boom"),
					Read: []string{`$WORK/inputs/data: . = "first\n"`}},
				"after": {Argv: []string{"@seen", "$WORK/outputs/seen"}, Env: stepEnv("after")},
			},
		},
	},
	{
		name:   "distributed",
		status: "Succeeded",
		steps: []confStep{
			ok("train", seen(), file("model", "Model", "rank 0 of 2\n")),
			ok("evaluate", seen()).after("train"),
		},
		probes: map[string]probeRecord{
			"train rank 0": {Argv: []string{"@seen", "$WORK/outputs/seen", "@rank", "$WORK/outputs/model", "--epochs", "2"},
				Env: env(rankEnv(2, 1, 0, 0), []string{"CASE_MODE=ddp"}, stepEnv("train"))},
			"train rank 1": {Argv: []string{"@seen", "$WORK/ranks/1/seen", "@rank", "$WORK/ranks/1/model", "--epochs", "2"},
				Env: env(rankEnv(2, 1, 1, 0), []string{"CASE_MODE=ddp"}, stepEnv("train"))},
			"evaluate": {Argv: []string{"@seen", "$WORK/outputs/seen", "@read", "$WORK/inputs/model"},
				Env: stepEnv("evaluate"), Read: []string{`$WORK/inputs/model: . = "rank 0 of 2\n"`}},
		},
	},
	{
		// Rank 1 goes silent in the gang's first attempt, rank 0 waits
		// for it: stalled after stallTimeout, restarted, succeeds.
		name:   "stall",
		status: "Succeeded",
		steps: []confStep{
			withAttempts(ok("train", seen(), file("model", "Model", "rank 0 of 2\n")), 2).gang(confGang{
				Attempt: 1, Reason: "stalled", Restarted: true,
				Ranks: []confRank{
					{Rank: 0, Progress: true, LastLine: "probe-stall-once: rank 0 waits for rank 1"},
					{Rank: 1, Progress: true, LastLine: "probe-stall-once: rank 1 goes silent"},
				},
			}),
		},
		probes: map[string]probeRecord{
			"train rank 0": {Argv: []string{"@stall-once", "@seen", "$WORK/outputs/seen", "@rank", "$WORK/outputs/model"},
				Env: env(rankEnv(2, 1, 0, 0), stepEnv("train"))},
			"train rank 1": {Argv: []string{"@stall-once", "@seen", "$WORK/ranks/1/seen", "@rank", "$WORK/ranks/1/model"},
				Env: env(rankEnv(2, 1, 1, 0), stepEnv("train"))},
		},
	},
	{
		name:   "frameworks",
		status: "Succeeded",
		steps:  []confStep{ok("xgb", seen()), ok("jax", seen()), ok("mpi", seen())},
		probes: map[string]probeRecord{
			"xgb rank 0": {Argv: []string{"@seen", "$WORK/outputs/seen"}, Env: env(rankEnv(2, 1, 0, 0), xgboostEnv(2, 0), stepEnv("xgb"))},
			"xgb rank 1": {Argv: []string{"@seen", "$WORK/ranks/1/seen"}, Env: env(rankEnv(2, 1, 1, 0), xgboostEnv(2, 1), stepEnv("xgb"))},
			"jax rank 0": {Argv: []string{"@seen", "$WORK/outputs/seen"}, Env: env(nodeEnv(2, 1, 0), jaxEnv(2, 0), stepEnv("jax"))},
			"jax rank 1": {Argv: []string{"@seen", "$WORK/ranks/1/seen"}, Env: env(nodeEnv(2, 1, 1), jaxEnv(2, 1), stepEnv("jax"))},
			// The launcher, once, on node 0 (normMPI).
			"mpi": {Argv: []string{"@seen", "$WORK/outputs/seen", "@read", "$HOSTFILE"}, Env: env(nodeEnv(2, 2, 0), mpiEnv(), stepEnv("mpi")),
				Read: []string{"$HOSTFILE: 4 slots on 2 node(s)"}},
		},
	},
	{
		// A step naming a Kubeflow Trainer runtime, and a TrainJob file as
		// a step's component: the runtime's image, framework and env, the
		// step's (the TrainJob's) nodes and env winning.
		name:   "runtimes",
		status: "Succeeded",
		steps:  []confStep{ok("rt", seen()), ok("tj.fit").after("rt")},
		probes: map[string]probeRecord{
			"rt rank 0":     {Argv: []string{"@seen", "$WORK/outputs/seen"}, Env: env(rankEnv(2, 1, 0, 0), runtimeEnv("the step's"), stepEnv("rt"))},
			"rt rank 1":     {Argv: []string{"@seen", "$WORK/ranks/1/seen"}, Env: env(rankEnv(2, 1, 1, 0), runtimeEnv("the step's"), stepEnv("rt"))},
			"tj.fit rank 0": {Argv: []string{"from the TrainJob $(x)"}, Env: env(rankEnv(2, 1, 0, 0), runtimeEnv("the TrainJob's"), stepEnv("tj.fit"))},
			"tj.fit rank 1": {Argv: []string{"from the TrainJob $(x)"}, Env: env(rankEnv(2, 1, 1, 0), runtimeEnv("the TrainJob's"), stepEnv("tj.fit"))},
		},
	},
	{
		name:   "values",
		params: []string{"tag=v1 {{x}}"},
		status: "Succeeded",
		steps: []confStep{
			ok("emit", seen(), param("s", "string", valuesText), param("n", "int", "42"), param("f", "float", "1.0"),
				param("b", "bool", "True"), param("j", "json", valuesJSON)),
			ok("consume", seen()).after("emit"),
			ok("check", seen()),
		},
		probes: map[string]probeRecord{
			"emit": {Argv: []string{"@seen", "$WORK/outputs/seen",
				"--text", valuesText, "--count", "42", "--ratio", "1.0", "--flag", "True", "--config", valuesJSON,
				"--note", "run-v1 {{x}}", "--scale", "3.0e0", "--fallback", "2.50",
				"@write", "$WORK/outputs/s", valuesText, "@write", "$WORK/outputs/n", "42", "@write", "$WORK/outputs/f", "1.0",
				"@write", "$WORK/outputs/b", "True", "@write", "$WORK/outputs/j", valuesJSON},
				Env: env([]string{"CASE_TAG=tag=v1 {{x}}"}, stepEnv("emit"))},
			"consume": {Argv: []string{"@seen", "$WORK/outputs/seen", valuesText, "42", "1.0", "True", valuesJSON}, Env: stepEnv("consume")},
			"check":   {Argv: []string{"@seen", "$WORK/outputs/seen"}, Env: stepEnv("check")},
		},
	},
	{
		name:   "secrets",
		status: "Succeeded",
		secret: &confSecret{env: "CASE_TOKEN", name: "conf-token", key: "token", value: secretValue},
		steps: []confStep{ok("with", seen()), ok("without", seen()), ok("gang", seen()),
			ok("namer", seen(), param("name", "string", "conf-token")), ok("by-output", seen()).after("namer")},
		probes: map[string]probeRecord{
			"with":    {Argv: []string{"@seen", "$WORK/outputs/seen"}, Env: env([]string{"CASE_TOKEN=" + secretValue}, stepEnv("with"))},
			"without": {Argv: []string{"@seen", "$WORK/outputs/seen"}, Env: stepEnv("without")},
			"gang rank 0": {Argv: []string{"@seen", "$WORK/outputs/seen"},
				Env: env(rankEnv(2, 1, 0, 0), []string{"CASE_TOKEN=" + secretValue}, stepEnv("gang"))},
			"gang rank 1": {Argv: []string{"@seen", "$WORK/ranks/1/seen"},
				Env: env(rankEnv(2, 1, 1, 0), []string{"CASE_TOKEN=" + secretValue}, stepEnv("gang"))},
			"namer":     {Argv: []string{"@seen", "$WORK/outputs/seen", "@write", "$WORK/outputs/name", "conf-token"}, Env: stepEnv("namer")},
			"by-output": {Argv: []string{"@seen", "$WORK/outputs/seen"}, Env: env([]string{"CASE_TOKEN=" + secretValue}, stepEnv("by-output"))},
		},
	},
	{
		name:   "resources",
		status: "Succeeded",
		steps: []confStep{
			ok("sizer", seen(), param("mem", "string", "96Mi")),
			ok("sized", seen()).after("sizer"),
		},
		probes: map[string]probeRecord{
			"sizer": {Argv: []string{"@seen", "$WORK/outputs/seen", "@write", "$WORK/outputs/mem", "96Mi"}, Env: stepEnv("sizer")},
			"sized": {Argv: []string{"@seen", "$WORK/outputs/seen"}, Env: stepEnv("sized")},
		},
		pods: map[string]confPod{"sized": {
			resources:   corev1.ResourceList{"cpu": resource.MustParse("250m"), "memory": resource.MustParse("96Mi"), "nvidia.com/gpu": resource.MustParse("1")},
			tolerations: []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: "Exists", Effect: "NoSchedule"}},
		}},
	},
	{
		name:   "kfppodmeta",
		status: "Succeeded",
		steps:  []confStep{ok("labelled", seen()), ok("plain", seen())},
		probes: map[string]probeRecord{
			"labelled": {Argv: []string{"@seen", "$WORK/outputs/seen"},
				Env: env([]string{"CASE_TEAM=ml-a_b.c", "CASE_NOTE=it's $(x) `y` \"z\"", "CASE_ABSENT="}, stepEnv("labelled"))},
			"plain": {Argv: []string{"@seen", "$WORK/outputs/seen"}, Env: stepEnv("plain")},
		},
		pods: map[string]confPod{"labelled": {
			labels:      map[string]string{"team": "ml-a_b.c"},
			annotations: map[string]string{"example.com/note": "it's $(x) `y` \"z\""},
		}},
	},
	{
		name:   "names",
		status: "Failed",
		steps: []confStep{
			ok("1a", seen(), file("out", "Artifact", "1a\n")),
			failed("step-1a", 4),
			ok("step-1a-2", seen(), file("out", "Artifact", "step-1a-2\n")).after("1a"),
		},
		probes: map[string]probeRecord{
			"1a":      {Argv: []string{"@seen", "$WORK/outputs/seen", "@write", "$WORK/outputs/out", "1a\n"}, Env: stepEnv("1a")},
			"step-1a": {Argv: []string{"@seen", "$WORK/outputs/seen", "@exit", "4"}, Env: stepEnv("step-1a")},
			"step-1a-2": {Argv: []string{"@seen", "$WORK/outputs/seen", "@read", "$WORK/inputs/data", "@write", "$WORK/outputs/out", "step-1a-2\n"},
				Env: stepEnv("step-1a-2"), Read: []string{`$WORK/inputs/data: . = "1a\n"`}},
		},
	},
	{
		name:   "kfp",
		status: "Succeeded",
		rerun:  true,
		steps: []confStep{
			ok("given", seen(), param("echo", "string", kfpText)),
			ok("absent", seen(), param("echo", "string", kfpText)).after("given"),
			ok("add", param("sum", "float", "1.75")),
		},
		probes: map[string]probeRecord{
			"given": {Argv: []string{"@seen", "$WORK/outputs/seen", "--text", kfpText, "--count", "7",
				"--note", "note: 1.0", "@read", "$WORK/inputs/config", "--run=$RUN", "@write", "$WORK/outputs/echo", kfpText},
				Env: stepEnv("given"), Read: []string{`$WORK/inputs/config: . = "{\"lr\": 1.0, \"big\": 12345678901234567890}"`}},
			"absent": {Argv: []string{"@seen", "$WORK/outputs/seen", "--text", kfpText, "--count", "3",
				"--no-note", "@read", "$WORK/inputs/config", "--run=$RUN", "@write", "$WORK/outputs/echo", kfpText},
				Env: stepEnv("absent"), Read: []string{`$WORK/inputs/config: . = "{}"`}},
		},
	},
	{
		name:   "kfpv2",
		status: "Succeeded",
		rerun:  true,
		secret: &confSecret{env: "CASE_TOKEN", name: "conf-kfp-token", key: "token", value: secretValue},
		steps: []confStep{
			ok("make", param("label", "string", "n=2"), param("flip", "string", "heads"), seen(), file("data", "Dataset", kfpText)),
			ok("use", seen()).after("make"),
			ok("condition-1.gated", seen()).after("make"),
			skipped("condition-2.never").after("make"),
			loopStep("for-loop-3"),
			ok("for-loop-3[0]", seen()).item(`"a b"`),
			ok("for-loop-3[1]", seen()).item("\"$(c) `d`\""),
			loopStep("for-loop-4.first"),
			ok("for-loop-4.first[0]", param("out", "string", "p"), seen()).item(`"p"`),
			ok("for-loop-4.first[1]", param("out", "string", "q r"), seen()).item(`"q r"`),
			loopStep("for-loop-4.condition-5.second").after("for-loop-4.first"),
			skipped("for-loop-4.condition-5.second[0]").after("for-loop-4.first").item(`"p"`),
			ok("for-loop-4.condition-5.second[1]", seen()).after("for-loop-4.first").item(`"q r"`),
			// A ParallelFor in a ParallelFor, its body a pipeline: the product.
			loopStep("for-loop-6-for-loop-7.pair"),
			ok("for-loop-6-for-loop-7.pair[0]", param("out", "string", "u-1"), seen()).item(`{"l0":"u","l1":"1"}`),
			ok("for-loop-6-for-loop-7.pair[1]", param("out", "string", "u-2"), seen()).item(`{"l0":"u","l1":"2"}`),
			ok("for-loop-6-for-loop-7.pair[2]", param("out", "string", "v $(w)-1"), seen()).item(`{"l0":"v $(w)","l1":"1"}`),
			ok("for-loop-6-for-loop-7.pair[3]", param("out", "string", "v $(w)-2"), seen()).item(`{"l0":"v $(w)","l1":"2"}`),
			loopStep("for-loop-6-for-loop-7.show").after("for-loop-6-for-loop-7.pair"),
			ok("for-loop-6-for-loop-7.show[0]", seen()).after("for-loop-6-for-loop-7.pair").item(`{"l0":"u","l1":"1"}`),
			ok("for-loop-6-for-loop-7.show[1]", seen()).after("for-loop-6-for-loop-7.pair").item(`{"l0":"u","l1":"2"}`),
			ok("for-loop-6-for-loop-7.show[2]", seen()).after("for-loop-6-for-loop-7.pair").item(`{"l0":"v $(w)","l1":"1"}`),
			ok("for-loop-6-for-loop-7.show[3]", seen()).after("for-loop-6-for-loop-7.pair").item(`{"l0":"v $(w)","l1":"2"}`),
			ok("spec", seen()).after("make"),
			ok("gather", seen()).after("for-loop-6-for-loop-7.pair", "for-loop-6-for-loop-7.show"),
			loopStep("for-loop-8-for-loop-9-pair"),
			ok("for-loop-8-for-loop-9-pair[0]", seen()).item(`{"l0":` + kfpGroupA + `,"l1":{"q":"1"}}`),
			ok("for-loop-8-for-loop-9-pair[1]", seen()).item(`{"l0":` + kfpGroupA + `,"l1":{"q":"2 $(x)"}}`),
			ok("for-loop-8-for-loop-9-pair[2]", seen()).item(`{"l0":{"g":"c","xs":[{"q":"3"}]},"l1":{"q":"3"}}`),
			// A ParallelFor holding a task and a ParallelFor reading its output:
			// the inner loops over the product, reading its outer item's lead.
			loopStep("for-loop-10.lead"),
			ok("for-loop-10.lead[0]", param("out", "string", "m"), seen()).item(`"m"`),
			ok("for-loop-10.lead[1]", param("out", "string", "n $(o)"), seen()).item(`"n $(o)"`),
			loopStep("for-loop-10.for-loop-11").after("for-loop-10.lead"),
			ok("for-loop-10.for-loop-11[0]", seen()).after("for-loop-10.lead").item(`{"outer":"m","inner":"1"}`),
			ok("for-loop-10.for-loop-11[1]", seen()).after("for-loop-10.lead").item(`{"outer":"m","inner":"2"}`),
			ok("for-loop-10.for-loop-11[2]", seen()).after("for-loop-10.lead").item(`{"outer":"n $(o)","inner":"1"}`),
			ok("for-loop-10.for-loop-11[3]", seen()).after("for-loop-10.lead").item(`{"outer":"n $(o)","inner":"2"}`),
		},
		probes: map[string]probeRecord{
			"make": {Argv: []string{"@seen", "$WORK/outputs/seen", "--text", kfpText, "--n", "2", "@write", "$WORK/outputs/data", kfpText,
				"@write", "$WORK/outputs/label", "n=2", "@write", "$WORK/outputs/flip", "heads"}, Env: stepEnv("make")},
			"use": {Argv: []string{"@seen", "$WORK/outputs/seen", "@read", "$WORK/inputs/data", "--label", "n=2", "--note", "it's $(y) `z` \"q\""},
				Env: env([]string{"CASE_TOKEN=" + secretValue}, stepEnv("use")), Read: []string{"$WORK/inputs/data: . = " + strconv.Quote(kfpText)}},
			"condition-1.gated":   {Argv: []string{"@seen", "$WORK/outputs/seen", "--what", "heads"}, Env: stepEnv("condition-1.gated")},
			"for-loop-3[0]":       {Argv: []string{"@seen", "$WORK/outputs/seen", "--what", "a b"}, Env: stepEnv("for-loop-3[0]")},
			"for-loop-3[1]":       {Argv: []string{"@seen", "$WORK/outputs/seen", "--what", "$(c) `d`"}, Env: stepEnv("for-loop-3[1]")},
			"for-loop-4.first[0]": {Argv: []string{"@seen", "$WORK/outputs/seen", "@write", "$WORK/outputs/out", "p"}, Env: stepEnv("for-loop-4.first[0]")},
			"for-loop-4.first[1]": {Argv: []string{"@seen", "$WORK/outputs/seen", "@write", "$WORK/outputs/out", "q r"}, Env: stepEnv("for-loop-4.first[1]")},
			"for-loop-4.condition-5.second[1]": {Argv: []string{"@seen", "$WORK/outputs/seen", "--what", "q r"},
				Env: stepEnv("for-loop-4.condition-5.second[1]")},
			"for-loop-6-for-loop-7.pair[0]": {Argv: []string{"@seen", "$WORK/outputs/seen", "@write", "$WORK/outputs/out", "u-1"}, Env: stepEnv("for-loop-6-for-loop-7.pair[0]")},
			"for-loop-6-for-loop-7.pair[1]": {Argv: []string{"@seen", "$WORK/outputs/seen", "@write", "$WORK/outputs/out", "u-2"}, Env: stepEnv("for-loop-6-for-loop-7.pair[1]")},
			"for-loop-6-for-loop-7.pair[2]": {Argv: []string{"@seen", "$WORK/outputs/seen", "@write", "$WORK/outputs/out", "v $(w)-1"}, Env: stepEnv("for-loop-6-for-loop-7.pair[2]")},
			"for-loop-6-for-loop-7.pair[3]": {Argv: []string{"@seen", "$WORK/outputs/seen", "@write", "$WORK/outputs/out", "v $(w)-2"}, Env: stepEnv("for-loop-6-for-loop-7.pair[3]")},
			"for-loop-6-for-loop-7.show[0]": {Argv: []string{"@seen", "$WORK/outputs/seen", "--what", "u-1"}, Env: stepEnv("for-loop-6-for-loop-7.show[0]")},
			"for-loop-6-for-loop-7.show[1]": {Argv: []string{"@seen", "$WORK/outputs/seen", "--what", "u-2"}, Env: stepEnv("for-loop-6-for-loop-7.show[1]")},
			"for-loop-6-for-loop-7.show[2]": {Argv: []string{"@seen", "$WORK/outputs/seen", "--what", "v $(w)-1"}, Env: stepEnv("for-loop-6-for-loop-7.show[2]")},
			"for-loop-6-for-loop-7.show[3]": {Argv: []string{"@seen", "$WORK/outputs/seen", "--what", "v $(w)-2"}, Env: stepEnv("for-loop-6-for-loop-7.show[3]")},
			// A struct constant: the channels' values in its JSON text.
			"spec": {Argv: []string{"@seen", "$WORK/outputs/seen", "--spec", `{"machine":{"count":"2","label":"is n=2"},"kind":[1.0,"a $(b)"]}`}, Env: stepEnv("spec")},
			// Collected outer iteration first, one list (KFP's driver).
			"gather":                        {Argv: []string{"@seen", "$WORK/outputs/seen", "--what", `["u-1","u-2","v $(w)-1","v $(w)-2"]`}, Env: stepEnv("gather")},
			"for-loop-8-for-loop-9-pair[0]": {Argv: []string{"@seen", "$WORK/outputs/seen", "--what", "1"}, Env: stepEnv("for-loop-8-for-loop-9-pair[0]")},
			"for-loop-8-for-loop-9-pair[1]": {Argv: []string{"@seen", "$WORK/outputs/seen", "--what", "2 $(x)"}, Env: stepEnv("for-loop-8-for-loop-9-pair[1]")},
			"for-loop-8-for-loop-9-pair[2]": {Argv: []string{"@seen", "$WORK/outputs/seen", "--what", "3"}, Env: stepEnv("for-loop-8-for-loop-9-pair[2]")},
			"for-loop-10.lead[0]":           {Argv: []string{"@seen", "$WORK/outputs/seen", "@write", "$WORK/outputs/out", "m"}, Env: stepEnv("for-loop-10.lead[0]")},
			"for-loop-10.lead[1]":           {Argv: []string{"@seen", "$WORK/outputs/seen", "@write", "$WORK/outputs/out", "n $(o)"}, Env: stepEnv("for-loop-10.lead[1]")},
			"for-loop-10.for-loop-11[0]":    {Argv: []string{"@seen", "$WORK/outputs/seen", "--what", "m:1"}, Env: stepEnv("for-loop-10.for-loop-11[0]")},
			"for-loop-10.for-loop-11[1]":    {Argv: []string{"@seen", "$WORK/outputs/seen", "--what", "m:2"}, Env: stepEnv("for-loop-10.for-loop-11[1]")},
			"for-loop-10.for-loop-11[2]":    {Argv: []string{"@seen", "$WORK/outputs/seen", "--what", "n $(o):1"}, Env: stepEnv("for-loop-10.for-loop-11[2]")},
			"for-loop-10.for-loop-11[3]":    {Argv: []string{"@seen", "$WORK/outputs/seen", "--what", "n $(o):2"}, Env: stepEnv("for-loop-10.for-loop-11[3]")},
		},
	},
	{
		name:   "texts",
		status: "Succeeded",
		steps: []confStep{
			ok("count", seen(), param("n", "int", "12")),
			ok("show", seen()).after("count"),
			ok("big", seen()).after("count"),
			skipped("small").after("count"),
			ok("notify.first", seen(), param("state", "string", "Succeeded")),
			ok("notify.second", seen()).after("notify.first"),
		},
		probes: map[string]probeRecord{
			"count": {Argv: []string{"@seen", "$WORK/outputs/seen", "@write", "$WORK/outputs/n", "12"}, Env: stepEnv("count")},
			"show":  {Argv: []string{"@seen", "$WORK/outputs/seen", "--what", "n=12 tag=a $(b) `c` run=$RUN!"}, Env: stepEnv("show")},
			"big":   {Argv: []string{"@seen", "$WORK/outputs/seen", "--what", "big"}, Env: stepEnv("big")},
			"notify.first": {Argv: []string{"@seen", "$WORK/outputs/seen", "--status", "Succeeded", "@write", "$WORK/outputs/state", "Succeeded"},
				Env: stepEnv("notify.first")},
			"notify.second": {Argv: []string{"@seen", "$WORK/outputs/seen", "--state", "state Succeeded"}, Env: stepEnv("notify.second")},
		},
	},
	{
		name:   "artparam",
		status: "Succeeded",
		steps:  []confStep{ok("make", seen(), file("data", "Dataset", "made a $(b) `c`\n"))},
		probes: map[string]probeRecord{
			"make": {Argv: []string{"@seen", "$WORK/outputs/seen", "@write", "$WORK/outputs/data", "made a $(b) `c`\n"}, Env: stepEnv("make")},
		},
		// The next run reads make's artifact as an artifact param whose
		// metadata embeds a param and label's output.
		next: &confCase{
			name: "artparam", file: "use.pipeline.yaml", status: "Succeeded",
			params: []string{"data=$ROOT/$FIRST/make/data"},
			steps:  []confStep{ok("read", seen()).after("label"), ok("label", seen(), param("text", "string", "l $(y) 'z'"))},
			probes: map[string]probeRecord{
				"read": {Argv: []string{"@seen", "$WORK/outputs/seen", "@read", "$WORK/inputs/data",
					`{"inputs":{"artifacts":{"data":{"artifacts":[{"name":"data","type":{"schemaTitle":"system.Dataset"},"uri":"$WORK/inputs/data","metadata":{"by":"l $(y) 'z' / n $(z)","l $(y) 'z'":0.50}}]}},"parameterValues":{}},` +
						`"outputs":{"artifacts":{"seen":{"artifacts":[{"name":"seen","type":{"schemaTitle":"system.Artifact"},"uri":"$WORK/outputs/seen","metadata":{}}]}},"outputFile":"$WORK/outputs/.executor_output.json","parameters":{}}}`},
					Env: stepEnv("read"), Read: []string{"$WORK/inputs/data: . = " + strconv.Quote("made a $(b) `c`\n")}},
				"label": {Argv: []string{"@seen", "$WORK/outputs/seen", "@write", "$WORK/outputs/text", "l $(y) 'z'"}, Env: stepEnv("label")},
			},
		},
	},
	{
		name:   "kfpimport",
		status: "Succeeded",
		steps:  []confStep{ok("make", seen(), file("data", "Dataset", "imported $(b) `c`\n"))},
		probes: map[string]probeRecord{
			"make": {Argv: []string{"@seen", "$WORK/outputs/seen", "@write", "$WORK/outputs/data", "imported $(b) `c`\n"}, Env: stepEnv("make")},
		},
		// A KFP v2 pipeline whose dsl.importer imports make's artifact by
		// its URI, the pipeline input data_uri.
		next: &confCase{
			name: "kfpimport", file: "import.yaml", status: "Succeeded",
			params: []string{"data_uri=$ROOT/$FIRST/make/data"},
			steps:  []confStep{ok("read", seen())},
			probes: map[string]probeRecord{
				"read": {Argv: []string{"@seen", "$WORK/outputs/seen", "@read", "$WORK/inputs/data", "--note", "n=1"}, Env: stepEnv("read"),
					Read: []string{"$WORK/inputs/data: . = " + strconv.Quote("imported $(b) `c`\n")}},
			},
		},
	},
	{
		// KFP dsl.importers of gs:// objects (a directory at the root, a
		// file in a dsl.If, its URI a pipeline input passed down): the run
		// imports them into its store first; read gets the importer's
		// metadata in {{$}}, read-model the model's, given by namer's
		// output (a key and a value: read-model waits for namer); the
		// re-run reuses every step.
		name:   "kfpimportgs",
		status: "Succeeded",
		rerun:  true,
		gs: &confGS{bucket: "conf-gcs", objects: map[string]string{
			"kfpimportgs/data.txt": "to be $(x) `y`\n", "kfpimportgs/model/a.txt": "a\n", "kfpimportgs/model/sub/b.txt": "b\n",
		}},
		steps: []confStep{ok("condition-1.read", seen()), ok("namer", param("Output", "string", `m $(x) "q"`), seen()),
			ok("read-model", seen()).after("namer")},
		probes: map[string]probeRecord{
			"condition-1.read": {Argv: []string{"@seen", "$WORK/outputs/seen", "@read", "$WORK/inputs/data",
				`{"inputs":{"artifacts":{"data":{"artifacts":[{"name":"data","type":{"schemaTitle":"system.Dataset"},"uri":"$WORK/inputs/data","metadata":{"name":"n=1 \"q\"","ratio":0.50}}]}},"parameterValues":{}},` +
					`"outputs":{"artifacts":{"seen":{"artifacts":[{"name":"seen","type":{"schemaTitle":"system.Artifact"},"uri":"$WORK/outputs/seen","metadata":{}}]}},"outputFile":"$WORK/outputs/.executor_output.json","parameters":{}}}`},
				Env: stepEnv("condition-1.read"), Read: []string{"$WORK/inputs/data: . = " + strconv.Quote("to be $(x) `y`\n")}},
			"namer": {Argv: []string{"@seen", "$WORK/outputs/seen", "@write", "$WORK/outputs/Output", `m $(x) "q"`}, Env: stepEnv("namer")},
			"read-model": {Argv: []string{"@seen", "$WORK/outputs/seen", "@read", "$WORK/inputs/model",
				`{"inputs":{"artifacts":{"model":{"artifacts":[{"name":"model","type":{"schemaTitle":"system.Model"},"uri":"$WORK/inputs/model","metadata":{"by":"made by m $(x) \"q\"","key":"value","m $(x) \"q\"":1.0}}]}},"parameterValues":{}},` +
					`"outputs":{"artifacts":{"seen":{"artifacts":[{"name":"seen","type":{"schemaTitle":"system.Artifact"},"uri":"$WORK/outputs/seen","metadata":{}}]}},"outputFile":"$WORK/outputs/.executor_output.json","parameters":{}}}`},
				Env: stepEnv("read-model"), Read: []string{`$WORK/inputs/model: a.txt = "a\n"`, `$WORK/inputs/model: sub/b.txt = "b\n"`}},
		},
	},
	{
		// A KFP dsl.importer of a ModelCar (oci://, a model shipped as an
		// image): the run imports the image's /models into its store
		// first; files reads it; the re-run reuses files.
		name:     "kfpimportoci",
		status:   "Succeeded",
		rerun:    true,
		params:   []string{"model_uri=oci://$REGISTRY/modelcar:test"},
		modelCar: map[string]string{"models/config.json": `{"a": 1}`, "models/sub/w.bin": "w $(x)\n", "etc/other": "not the model"},
		steps:    []confStep{ok("files", seen())},
		probes: map[string]probeRecord{
			"files": {Argv: []string{"@seen", "$WORK/outputs/seen", "@read", "$WORK/inputs/input_model"}, Env: stepEnv("files"),
				Read: []string{`$WORK/inputs/input_model: config.json = "{\"a\": 1}"`, `$WORK/inputs/input_model: sub/w.bin = "w $(x)\n"`}},
		},
	},
	{
		name:   "kfponeof",
		status: "Succeeded",
		rerun:  true,
		steps: []confStep{
			ok("condition-branches-1.condition-2.make", param("out", "string", "from heads"), file("data", "Dataset", "from heads $(x) `y`"), seen()),
			skipped("condition-branches-1.condition-3.make-2"),
			ok("use", seen()).after("condition-branches-1.condition-2.make", "condition-branches-1.condition-3.make-2"),
		},
		probes: map[string]probeRecord{
			"condition-branches-1.condition-2.make": {Argv: []string{"@seen", "$WORK/outputs/seen", "--text", "from heads",
				"@write", "$WORK/outputs/out", "from heads", "@write", "$WORK/outputs/data", "from heads $(x) `y`"},
				Env: stepEnv("condition-branches-1.condition-2.make")},
			"use": {Argv: []string{"@seen", "$WORK/outputs/seen", "--text", "from heads", "@read", "$WORK/inputs/data"},
				Env: stepEnv("use"), Read: []string{"$WORK/inputs/data: . = " + strconv.Quote("from heads $(x) `y`")}},
		},
		// The other branch: dsl.OneOf gives use its outputs.
		next: &confCase{
			name: "kfponeof", file: "pipeline.yaml", status: "Succeeded",
			params: []string{"flip=tails"},
			steps: []confStep{
				skipped("condition-branches-1.condition-2.make"),
				ok("condition-branches-1.condition-3.make-2", param("out", "string", "from tails"), file("data", "Dataset", "from tails $(x) `y`"), seen()),
				ok("use", seen()).after("condition-branches-1.condition-2.make", "condition-branches-1.condition-3.make-2"),
			},
			probes: map[string]probeRecord{
				"condition-branches-1.condition-3.make-2": {Argv: []string{"@seen", "$WORK/outputs/seen", "--text", "from tails",
					"@write", "$WORK/outputs/out", "from tails", "@write", "$WORK/outputs/data", "from tails $(x) `y`"},
					Env: stepEnv("condition-branches-1.condition-3.make-2")},
				"use": {Argv: []string{"@seen", "$WORK/outputs/seen", "--text", "from tails", "@read", "$WORK/inputs/data"},
					Env: stepEnv("use"), Read: []string{"$WORK/inputs/data: . = " + strconv.Quote("from tails $(x) `y`")}},
			},
		},
	},
	{
		name:   "loops",
		status: "Succeeded",
		steps: []confStep{
			ok("gen", seen(), param("items", "json", `["x", "y $(z)"]`)),
			loopStep("train"),
			ok("train[0]", seen(), file("model", "Model", "model a b"), param("score", "float", "1")).item(`{"n":1,"tag":"a b"}`),
			ok("train[1]", seen(), file("model", "Model", "model c `d`"), param("score", "float", "1.0")).item(`{"n":1.0,"tag":"c ` + "`d`" + `"}`),
			loopStep("again").after("gen"),
			ok("again[0]", seen()).after("gen").item(`"x"`),
			ok("again[1]", seen()).after("gen").item(`"y $(z)"`),
			ok("join", seen()).after("train"),
			loopStep("grid"),
			ok("grid[0]", seen()).item(`{"size":"s","seed":1}`),
			ok("grid[1]", seen()).item(`{"size":"s","seed":2.50}`),
			ok("grid[2]", seen()).item(`{"size":"m $(l)","seed":1}`),
			ok("grid[3]", seen()).item(`{"size":"m $(l)","seed":2.50}`),
			loopStep("nest").after("gen"),
			ok("nest[0]", seen()).after("gen").item(`{"w":"x","g":` + groupA + `,"x":{"q":1}}`),
			ok("nest[1]", seen()).after("gen").item(`{"w":"x","g":` + groupA + `,"x":{"q":2.50}}`),
			ok("nest[2]", seen()).after("gen").item(`{"w":"x","g":` + groupD + `,"x":{"q":"$(e)"}}`),
			ok("nest[3]", seen()).after("gen").item(`{"w":"y $(z)","g":` + groupA + `,"x":{"q":1}}`),
			ok("nest[4]", seen()).after("gen").item(`{"w":"y $(z)","g":` + groupA + `,"x":{"q":2.50}}`),
			ok("nest[5]", seen()).after("gen").item(`{"w":"y $(z)","g":` + groupD + `,"x":{"q":"$(e)"}}`),
			ok("report", seen()),
		},
		probes: map[string]probeRecord{
			"gen": {Argv: []string{"@seen", "$WORK/outputs/seen", "@write", "$WORK/outputs/items", `["x", "y $(z)"]`}, Env: stepEnv("gen")},
			"train[0]": {Argv: []string{"@seen", "$WORK/outputs/seen", "--tag", "t-a b", "@write", "$WORK/outputs/model", "model a b",
				"@write", "$WORK/outputs/score", "1"}, Env: stepEnv("train[0]")},
			"train[1]": {Argv: []string{"@seen", "$WORK/outputs/seen", "--tag", "t-c `d`", "@write", "$WORK/outputs/model", "model c `d`",
				"@write", "$WORK/outputs/score", "1.0"}, Env: stepEnv("train[1]")},
			"again[0]": {Argv: []string{"@seen", "$WORK/outputs/seen", "--what", "x"}, Env: stepEnv("again[0]")},
			"again[1]": {Argv: []string{"@seen", "$WORK/outputs/seen", "--what", "y $(z)"}, Env: stepEnv("again[1]")},
			"join": {Argv: []string{"@seen", "$WORK/outputs/seen", "--scores", "[1,1.0]", "@read", "$WORK/inputs/models"}, Env: stepEnv("join"),
				Read: []string{`$WORK/inputs/models: 0 = "model a b"`, "$WORK/inputs/models: 1 = \"model c `d`\""}},
			"report":  {Argv: []string{"@seen", "$WORK/outputs/seen", "--status", "Succeeded", "--failed", "[]"}, Env: stepEnv("report")},
			"grid[0]": {Argv: []string{"@seen", "$WORK/outputs/seen", "--size", "s", "--seed", "1"}, Env: stepEnv("grid[0]")},
			"grid[1]": {Argv: []string{"@seen", "$WORK/outputs/seen", "--size", "s", "--seed", "2.50"}, Env: stepEnv("grid[1]")},
			"grid[2]": {Argv: []string{"@seen", "$WORK/outputs/seen", "--size", "m $(l)", "--seed", "1"}, Env: stepEnv("grid[2]")},
			"grid[3]": {Argv: []string{"@seen", "$WORK/outputs/seen", "--size", "m $(l)", "--seed", "2.50"}, Env: stepEnv("grid[3]")},
			"nest[0]": {Argv: []string{"@seen", "$WORK/outputs/seen", "--w", "x", "--g", "a", "--q", "1"}, Env: stepEnv("nest[0]")},
			"nest[1]": {Argv: []string{"@seen", "$WORK/outputs/seen", "--w", "x", "--g", "a", "--q", "2.50"}, Env: stepEnv("nest[1]")},
			"nest[2]": {Argv: []string{"@seen", "$WORK/outputs/seen", "--w", "x", "--g", "d", "--q", "$(e)"}, Env: stepEnv("nest[2]")},
			"nest[3]": {Argv: []string{"@seen", "$WORK/outputs/seen", "--w", "y $(z)", "--g", "a", "--q", "1"}, Env: stepEnv("nest[3]")},
			"nest[4]": {Argv: []string{"@seen", "$WORK/outputs/seen", "--w", "y $(z)", "--g", "a", "--q", "2.50"}, Env: stepEnv("nest[4]")},
			"nest[5]": {Argv: []string{"@seen", "$WORK/outputs/seen", "--w", "y $(z)", "--g", "d", "--q", "$(e)"}, Env: stepEnv("nest[5]")},
		},
	},
	{
		name:   "loopbody",
		status: "Succeeded",
		steps: []confStep{
			ok("gen", seen(), param("items", "json", `["a", "b c", "$(d)"]`)),
			loopStep("each.make").after("gen"),
			ok("each.make[0]", seen(), file("text", "Dataset", "made a"), param("label", "string", "L-a")).after("gen").item(`"a"`),
			ok("each.make[1]", seen(), file("text", "Dataset", "made b c"), param("label", "string", "L-b c")).after("gen").item(`"b c"`),
			ok("each.make[2]", seen(), file("text", "Dataset", "made $(d)"), param("label", "string", "L-$(d)")).after("gen").item(`"$(d)"`),
			loopStep("each.use").after("each.make", "gen"),
			ok("each.use[0]", seen(), file("copy", "Dataset", "copy of L-a")).after("each.make", "gen").item(`"a"`),
			ok("each.use[1]", seen(), file("copy", "Dataset", "copy of L-b c")).after("each.make", "gen").item(`"b c"`),
			ok("each.use[2]", seen(), file("copy", "Dataset", "copy of L-$(d)")).after("each.make", "gen").item(`"$(d)"`),
			loopStep("each.gate").after("each.make", "gen"),
			ok("each.gate[0]", seen(), param("g", "string", "g-L-a")).after("each.make", "gen").item(`"a"`),
			skipped("each.gate[1]").after("each.make", "gen").item(`"b c"`),
			ok("each.gate[2]", seen(), param("g", "string", "g-L-$(d)")).after("each.make", "gen").item(`"$(d)"`),
			loopStep("each.after").after("each.gate", "gen"),
			ok("each.after[0]", seen()).after("each.gate", "gen").item(`"a"`),
			skipped("each.after[1]").after("each.gate", "gen").item(`"b c"`),
			ok("each.after[2]", seen()).after("each.gate", "gen").item(`"$(d)"`),
			loopStep("each.pick").after("each.make", "gen"),
			ok("each.pick[0]", seen()).after("each.make", "gen").item(`"a"`),
			skipped("each.pick[1]").after("each.make", "gen").item(`"b c"`),
			skipped("each.pick[2]").after("each.make", "gen").item(`"$(d)"`),
			loopStep("fan.sq"),
			ok("fan.sq[0]", seen(), param("v", "string", "v1")).item(`1`),
			ok("fan.sq[1]", seen(), param("v", "string", "v2 3")).item(`"2 3"`),
			ok("join", seen()).after("each.gate", "each.make", "each.use", "fan.sq"),
		},
		probes: map[string]probeRecord{
			"gen": {Argv: []string{"@seen", "$WORK/outputs/seen", "@write", "$WORK/outputs/items", `["a", "b c", "$(d)"]`}, Env: stepEnv("gen")},
			"each.make[0]": {Argv: []string{"@seen", "$WORK/outputs/seen", "@write", "$WORK/outputs/text", "made a",
				"@write", "$WORK/outputs/label", "L-a"}, Env: stepEnv("each.make[0]")},
			"each.make[1]": {Argv: []string{"@seen", "$WORK/outputs/seen", "@write", "$WORK/outputs/text", "made b c",
				"@write", "$WORK/outputs/label", "L-b c"}, Env: stepEnv("each.make[1]")},
			"each.make[2]": {Argv: []string{"@seen", "$WORK/outputs/seen", "@write", "$WORK/outputs/text", "made $(d)",
				"@write", "$WORK/outputs/label", "L-$(d)"}, Env: stepEnv("each.make[2]")},
			"each.use[0]": {Argv: []string{"@seen", "$WORK/outputs/seen", "@read", "$WORK/inputs/data", "--label", "L-a", "--tag", "L-a/7",
				"@write", "$WORK/outputs/copy", "copy of L-a"}, Env: stepEnv("each.use[0]"), Read: []string{`$WORK/inputs/data: . = "made a"`}},
			"each.use[1]": {Argv: []string{"@seen", "$WORK/outputs/seen", "@read", "$WORK/inputs/data", "--label", "L-b c", "--tag", "L-b c/7",
				"@write", "$WORK/outputs/copy", "copy of L-b c"}, Env: stepEnv("each.use[1]"), Read: []string{`$WORK/inputs/data: . = "made b c"`}},
			"each.use[2]": {Argv: []string{"@seen", "$WORK/outputs/seen", "@read", "$WORK/inputs/data", "--label", "L-$(d)", "--tag", "L-$(d)/7",
				"@write", "$WORK/outputs/copy", "copy of L-$(d)"}, Env: stepEnv("each.use[2]"), Read: []string{`$WORK/inputs/data: . = "made $(d)"`}},
			"each.gate[0]":  {Argv: []string{"@seen", "$WORK/outputs/seen", "@write", "$WORK/outputs/g", "g-L-a"}, Env: stepEnv("each.gate[0]")},
			"each.gate[2]":  {Argv: []string{"@seen", "$WORK/outputs/seen", "@write", "$WORK/outputs/g", "g-L-$(d)"}, Env: stepEnv("each.gate[2]")},
			"each.after[0]": {Argv: []string{"@seen", "$WORK/outputs/seen", "--g", "g-L-a"}, Env: stepEnv("each.after[0]")},
			"each.after[2]": {Argv: []string{"@seen", "$WORK/outputs/seen", "--g", "g-L-$(d)"}, Env: stepEnv("each.after[2]")},
			"each.pick[0]":  {Argv: []string{"@seen", "$WORK/outputs/seen"}, Env: stepEnv("each.pick[0]")},
			"fan.sq[0]":     {Argv: []string{"@seen", "$WORK/outputs/seen", "@write", "$WORK/outputs/v", "v1"}, Env: stepEnv("fan.sq[0]")},
			"fan.sq[1]":     {Argv: []string{"@seen", "$WORK/outputs/seen", "@write", "$WORK/outputs/v", "v2 3"}, Env: stepEnv("fan.sq[1]")},
			"join": {Argv: []string{"@seen", "$WORK/outputs/seen", "--labels", `["L-a","L-b c","L-$(d)"]`, "@read", "$WORK/inputs/copies",
				"--fanned", `["v1","v2 3"]`, "--gated", `["g-L-a","g-L-$(d)"]`}, Env: stepEnv("join"),
				Read: []string{`$WORK/inputs/copies: 0 = "copy of L-a"`, `$WORK/inputs/copies: 1 = "copy of L-b c"`, `$WORK/inputs/copies: 2 = "copy of L-$(d)"`}},
		},
	},
	{
		name:   "loopnest",
		status: "Succeeded",
		steps: []confStep{
			ok("gen", seen(), param("tags", "json", `["p", "q $(r)"]`)),
			// Over each group's own list: none for the empty one.
			loopStep("byfield.pair"),
			ok("byfield.pair[0]", seen()).item(`{"outer":{"g":"a","xs":[1,"2 x"]},"inner":1}`),
			ok("byfield.pair[1]", seen()).item(`{"outer":{"g":"a","xs":[1,"2 x"]},"inner":"2 x"}`),
			ok("byfield.pair[2]", seen()).item(`{"outer":{"g":"c $(d)","xs":[3]},"inner":3}`),
			// Over the tags gen gave, for each group.
			loopStep("byfield.tag").after("gen"),
			ok("byfield.tag[0]", seen()).after("gen").item(`{"outer":{"g":"a","xs":[1,"2 x"]},"inner":"p"}`),
			ok("byfield.tag[1]", seen()).after("gen").item(`{"outer":{"g":"a","xs":[1,"2 x"]},"inner":"q $(r)"}`),
			ok("byfield.tag[2]", seen()).after("gen").item(`{"outer":{"g":"b","xs":[]},"inner":"p"}`),
			ok("byfield.tag[3]", seen()).after("gen").item(`{"outer":{"g":"b","xs":[]},"inner":"q $(r)"}`),
			ok("byfield.tag[4]", seen()).after("gen").item(`{"outer":{"g":"c $(d)","xs":[3]},"inner":"p"}`),
			ok("byfield.tag[5]", seen()).after("gen").item(`{"outer":{"g":"c $(d)","xs":[3]},"inner":"q $(r)"}`),
			loopStep("each.make"),
			ok("each.make[0]", seen(), param("label", "string", "L-a")).item(`"a"`),
			ok("each.make[1]", seen(), param("label", "string", "L-b $(c)")).item(`"b $(c)"`),
			// One of big and small runs for each word.
			loopStep("each.pick.big"),
			ok("each.pick.big[0]", seen(), param("v", "string", "picked a")).item(`"a"`),
			skipped("each.pick.big[1]").item(`"b $(c)"`),
			loopStep("each.pick.small"),
			skipped("each.pick.small[0]").item(`"a"`),
			ok("each.pick.small[1]", seen(), param("v", "string", "picked b $(c)")).item(`"b $(c)"`),
			loopStep("each.show").after("each.pick.big", "each.pick.small"),
			ok("each.show[0]", seen()).after("each.pick.big", "each.pick.small").item(`"a"`),
			ok("each.show[1]", seen()).after("each.pick.big", "each.pick.small").item(`"b $(c)"`),
			// The product of the words and rep's own items, the word outermost.
			loopStep("each.rep").after("each.make", "each.pick.big", "each.pick.small"),
			ok("each.rep[0]", seen(), param("r", "string", "L-a#1/a")).after("each.make", "each.pick.big", "each.pick.small").item(`{"outer":"a","inner":1}`),
			skipped("each.rep[1]").after("each.make", "each.pick.big", "each.pick.small").item(`{"outer":"a","inner":"2"}`),
			ok("each.rep[2]", seen(), param("r", "string", "L-a#3/a")).after("each.make", "each.pick.big", "each.pick.small").item(`{"outer":"a","inner":3}`),
			ok("each.rep[3]", seen(), param("r", "string", "L-b $(c)#1/b $(c)")).after("each.make", "each.pick.big", "each.pick.small").item(`{"outer":"b $(c)","inner":1}`),
			skipped("each.rep[4]").after("each.make", "each.pick.big", "each.pick.small").item(`{"outer":"b $(c)","inner":"2"}`),
			ok("each.rep[5]", seen(), param("r", "string", "L-b $(c)#3/b $(c)")).after("each.make", "each.pick.big", "each.pick.small").item(`{"outer":"b $(c)","inner":3}`),
			loopStep("each.gate").after("each.make"),
			ok("each.gate[0]", seen()).after("each.make").item(`{"outer":"a","inner":"x"}`),
			skipped("each.gate[1]").after("each.make").item(`{"outer":"b $(c)","inner":"x"}`),
			// rep's outputs of its own word.
			loopStep("each.sum").after("each.rep"),
			ok("each.sum[0]", seen()).after("each.rep").item(`"a"`),
			ok("each.sum[1]", seen()).after("each.rep").item(`"b $(c)"`),
			ok("join", seen()).after("each.rep"),
		},
		probes: map[string]probeRecord{
			"gen":                {Argv: []string{"@seen", "$WORK/outputs/seen", "@write", "$WORK/outputs/tags", `["p", "q $(r)"]`}, Env: stepEnv("gen")},
			"byfield.pair[0]":    {Argv: []string{"@seen", "$WORK/outputs/seen", "--what", "a/1"}, Env: stepEnv("byfield.pair[0]")},
			"byfield.pair[1]":    {Argv: []string{"@seen", "$WORK/outputs/seen", "--what", "a/2 x"}, Env: stepEnv("byfield.pair[1]")},
			"byfield.pair[2]":    {Argv: []string{"@seen", "$WORK/outputs/seen", "--what", "c $(d)/3"}, Env: stepEnv("byfield.pair[2]")},
			"byfield.tag[0]":     {Argv: []string{"@seen", "$WORK/outputs/seen", "--what", "a#p"}, Env: stepEnv("byfield.tag[0]")},
			"byfield.tag[1]":     {Argv: []string{"@seen", "$WORK/outputs/seen", "--what", "a#q $(r)"}, Env: stepEnv("byfield.tag[1]")},
			"byfield.tag[2]":     {Argv: []string{"@seen", "$WORK/outputs/seen", "--what", "b#p"}, Env: stepEnv("byfield.tag[2]")},
			"byfield.tag[3]":     {Argv: []string{"@seen", "$WORK/outputs/seen", "--what", "b#q $(r)"}, Env: stepEnv("byfield.tag[3]")},
			"byfield.tag[4]":     {Argv: []string{"@seen", "$WORK/outputs/seen", "--what", "c $(d)#p"}, Env: stepEnv("byfield.tag[4]")},
			"byfield.tag[5]":     {Argv: []string{"@seen", "$WORK/outputs/seen", "--what", "c $(d)#q $(r)"}, Env: stepEnv("byfield.tag[5]")},
			"each.make[0]":       {Argv: []string{"@seen", "$WORK/outputs/seen", "@write", "$WORK/outputs/label", "L-a"}, Env: stepEnv("each.make[0]")},
			"each.make[1]":       {Argv: []string{"@seen", "$WORK/outputs/seen", "@write", "$WORK/outputs/label", "L-b $(c)"}, Env: stepEnv("each.make[1]")},
			"each.pick.big[0]":   {Argv: []string{"@seen", "$WORK/outputs/seen", "@write", "$WORK/outputs/v", "picked a"}, Env: stepEnv("each.pick.big[0]")},
			"each.pick.small[1]": {Argv: []string{"@seen", "$WORK/outputs/seen", "@write", "$WORK/outputs/v", "picked b $(c)"}, Env: stepEnv("each.pick.small[1]")},
			"each.show[0]":       {Argv: []string{"@seen", "$WORK/outputs/seen", "--v", "picked a"}, Env: stepEnv("each.show[0]")},
			"each.show[1]":       {Argv: []string{"@seen", "$WORK/outputs/seen", "--v", "picked b $(c)"}, Env: stepEnv("each.show[1]")},
			"each.rep[0]":        {Argv: []string{"@seen", "$WORK/outputs/seen", "--picked", "picked a", "@write", "$WORK/outputs/r", "L-a#1/a"}, Env: stepEnv("each.rep[0]")},
			"each.rep[2]":        {Argv: []string{"@seen", "$WORK/outputs/seen", "--picked", "picked a", "@write", "$WORK/outputs/r", "L-a#3/a"}, Env: stepEnv("each.rep[2]")},
			"each.rep[3]":        {Argv: []string{"@seen", "$WORK/outputs/seen", "--picked", "picked b $(c)", "@write", "$WORK/outputs/r", "L-b $(c)#1/b $(c)"}, Env: stepEnv("each.rep[3]")},
			"each.rep[5]":        {Argv: []string{"@seen", "$WORK/outputs/seen", "--picked", "picked b $(c)", "@write", "$WORK/outputs/r", "L-b $(c)#3/b $(c)"}, Env: stepEnv("each.rep[5]")},
			"each.gate[0]":       {Argv: []string{"@seen", "$WORK/outputs/seen", "--what", "x a"}, Env: stepEnv("each.gate[0]")},
			"each.sum[0]":        {Argv: []string{"@seen", "$WORK/outputs/seen", "--reps", `["L-a#1/a","L-a#3/a"]`}, Env: stepEnv("each.sum[0]")},
			"each.sum[1]":        {Argv: []string{"@seen", "$WORK/outputs/seen", "--reps", `["L-b $(c)#1/b $(c)","L-b $(c)#3/b $(c)"]`}, Env: stepEnv("each.sum[1]")},
			"join":               {Argv: []string{"@seen", "$WORK/outputs/seen", "--reps", `["L-a#1/a","L-a#3/a","L-b $(c)#1/b $(c)","L-b $(c)#3/b $(c)"]`}, Env: stepEnv("join")},
		},
	},
	{
		name:   "nested",
		status: "Succeeded",
		rerun:  true,
		steps: []confStep{
			ok("one.hello", seen(), file("text", "Dataset", "hello a b $(c)"), param("label", "string", "n=1.0")),
			ok("one.deep.copy", seen(), file("copy", "Dataset", "leaf a b $(c)/1.0")).after("one.hello"),
			ok("two.hello", seen(), file("text", "Dataset", "hello b $(c)"), param("label", "string", "n=2.50")),
			ok("two.deep.copy", seen(), file("copy", "Dataset", "leaf b $(c)/2.50")).after("two.hello"),
			skipped("three.hello"),
			skipped("three.deep.copy").after("three.hello"),
			// The graph's tasks in its file's order.
			ok("kgraph.second-echo", seen(), param("echo", "string", "n=2.50!?")).after("kgraph.first-echo"),
			ok("kgraph.first-echo", seen(), param("echo", "string", "n=2.50!")).after("two.hello"),
			ok("use", seen()).after("kgraph.second-echo", "one.deep.copy", "two.deep.copy", "two.hello"),
		},
		probes: map[string]probeRecord{
			"one.hello": {Argv: []string{"@seen", "$WORK/outputs/seen", "--n", "1.0",
				"@write", "$WORK/outputs/text", "hello a b $(c)", "@write", "$WORK/outputs/label", "n=1.0"}, Env: stepEnv("one.hello")},
			"one.deep.copy": {Argv: []string{"@seen", "$WORK/outputs/seen", "@read", "$WORK/inputs/data", "--tag", "leaf a b $(c)/1.0",
				"@write", "$WORK/outputs/copy", "leaf a b $(c)/1.0"}, Env: stepEnv("one.deep.copy"), Read: []string{`$WORK/inputs/data: . = "hello a b $(c)"`}},
			"two.hello": {Argv: []string{"@seen", "$WORK/outputs/seen", "--n", "2.50",
				"@write", "$WORK/outputs/text", "hello b $(c)", "@write", "$WORK/outputs/label", "n=2.50"}, Env: stepEnv("two.hello")},
			"two.deep.copy": {Argv: []string{"@seen", "$WORK/outputs/seen", "@read", "$WORK/inputs/data", "--tag", "leaf b $(c)/2.50",
				"@write", "$WORK/outputs/copy", "leaf b $(c)/2.50"}, Env: stepEnv("two.deep.copy"), Read: []string{`$WORK/inputs/data: . = "hello b $(c)"`}},
			"kgraph.first-echo": {Argv: []string{"@seen", "$WORK/outputs/seen", "@write", "$WORK/outputs/echo", "n=2.50!"},
				Env: stepEnv("kgraph.first-echo")},
			"kgraph.second-echo": {Argv: []string{"@seen", "$WORK/outputs/seen", "@write", "$WORK/outputs/echo", "n=2.50!?"},
				Env: stepEnv("kgraph.second-echo")},
			"use": {Argv: []string{"@seen", "$WORK/outputs/seen", "@read", "$WORK/inputs/a", "@read", "$WORK/inputs/b", "--label", "n=2.50", "--result", "n=2.50!?"},
				Env: stepEnv("use"), Read: []string{`$WORK/inputs/a: . = "leaf a b $(c)/1.0"`, `$WORK/inputs/b: . = "leaf b $(c)/2.50"`}},
		},
	},
	{
		name:   "distloop",
		status: "Succeeded",
		steps: []confStep{
			loopStep("train"),
			ok("train[0]", seen(), file("model", "Model", "rank 0 of 2\n")).item(`{"lr":0.5,"tag":"a b"}`),
			ok("train[1]", seen(), file("model", "Model", "rank 0 of 2\n")).item(`{"lr":1e-3,"tag":"$(c) ` + "`d`" + `"}`),
			ok("join", seen()).after("train"),
			ok("report", seen()),
		},
		probes: map[string]probeRecord{
			"train[0] rank 0": {Argv: []string{"@seen", "$WORK/outputs/seen", "@rank", "$WORK/outputs/model", "--lr", "0.5", "--tag", "a b"},
				Env: env(rankEnv(2, 1, 0, 0), []string{"CASE_LR=0.5"}, stepEnv("train[0]"))},
			"train[0] rank 1": {Argv: []string{"@seen", "$WORK/ranks/1/seen", "@rank", "$WORK/ranks/1/model", "--lr", "0.5", "--tag", "a b"},
				Env: env(rankEnv(2, 1, 1, 0), []string{"CASE_LR=0.5"}, stepEnv("train[0]"))},
			"train[1] rank 0": {Argv: []string{"@seen", "$WORK/outputs/seen", "@rank", "$WORK/outputs/model", "--lr", "1e-3", "--tag", "$(c) `d`"},
				Env: env(rankEnv(2, 1, 0, 0), []string{"CASE_LR=1e-3"}, stepEnv("train[1]"))},
			"train[1] rank 1": {Argv: []string{"@seen", "$WORK/ranks/1/seen", "@rank", "$WORK/ranks/1/model", "--lr", "1e-3", "--tag", "$(c) `d`"},
				Env: env(rankEnv(2, 1, 1, 0), []string{"CASE_LR=1e-3"}, stepEnv("train[1]"))},
			"join": {Argv: []string{"@seen", "$WORK/outputs/seen", "@read", "$WORK/inputs/models"}, Env: stepEnv("join"),
				Read: []string{`$WORK/inputs/models: 0 = "rank 0 of 2\n"`, `$WORK/inputs/models: 1 = "rank 0 of 2\n"`}},
			"report rank 0": {Argv: []string{"@seen", "$WORK/outputs/seen", "--status", "Succeeded", "--failed", "[]"},
				Env: env(rankEnv(2, 1, 0, 0), stepEnv("report"))},
			"report rank 1": {Argv: []string{"@seen", "$WORK/ranks/1/seen", "--status", "Succeeded", "--failed", "[]"},
				Env: env(rankEnv(2, 1, 1, 0), stepEnv("report"))},
		},
	},
}

// The values of case "values", as conformance/values/pipeline.yaml writes them.
const (
	valuesText = "a {{b}} $(c) `d` 'e' \"f\" \\ $HOME\nline two"
	valuesJSON = `{"replicas": 2, "x": 1.0, "big": 12345678901234567890, "a": [3, 1]}`
	// secretValue is the value of case "secrets"' secret.
	secretValue = "s3cr3t $(x) {{y}}"
	// kfpText is the text input of case "kfp", and the default of case
	// "kfpv2"'s pipeline input text.
	kfpText = "it's $(y) `z` \\ \"q\""
)

// confCase is one row: the pipeline conformance/NAME/pipeline.yaml run with
// params, the run record (normalised) and the probe records wanted.
type confCase struct {
	name   string
	params []string // -p NAME=VALUE
	status string   // the run's status; the exit code follows (0 Succeeded, 1 Failed)
	steps  []confStep
	// probes are the records the probe printed, by step ("STEP") or rank
	// of a distributed step ("STEP rank N"), normalised (see normProbe).
	probes map[string]probeRecord
	// rerun: run the case a second time on each backend, with the cache:
	// every step that succeeded is reused from the first run (rerunCase).
	rerun bool
	// edit, when set, makes the case run from a copy of its folder, and
	// run a second time on each backend, with the cache, once these files
	// of the copy (by path in the folder) have the new content: the steps
	// of edited run again and see what it says, the others are reused
	// (editCase).
	edit   map[string]string
	edited map[string]probeRecord
	// next, when set, runs the pipeline file next.file of the case's folder
	// after the first run on each backend, with next.params as -p in which
	// $ROOT is that backend's store and $FIRST the first run's id (a
	// pipeline given an artifact of the first run by its URI).
	next *confCase
	// file is the pipeline file of a next run, in the case's folder.
	file string
	// resumed, when set, is a run of `pipectl run --rerun RUN` after the
	// first run on each backend, with resumed.params as -p: the recorded
	// pipeline runs again, its succeeded steps reused (reused).
	resumed *confCase
	// secret, when set, is given to the case's steps that name it: as the
	// Kubernetes Secret name (key: value) on Argo, as the variable env of
	// pipectl's environment locally (and only there).
	secret *confSecret
	// pods are what the pod of a step of the Argo run was given, by step
	// (read from the API server).
	pods map[string]confPod
	// gs, when set, are objects (text by key) of a bucket of a real S3
	// server that pipectl reads gs://BUCKET/KEY URIs through (PIPECTL_GS_*
	// in its environment on both backends: `pipectl run` imports them).
	gs *confGS
	// modelCar, when set, is the files (text by path) of a ModelCar image
	// pushed as modelcar:test to a registry (go-containerregistry's, on
	// loopback) whose HOST:PORT replaces $REGISTRY in params: `pipectl
	// run` imports its /models on both backends.
	modelCar map[string]string
}

// pushModelCar starts a registry for t, pushes files as modelcar:test to
// it and returns params with $REGISTRY replaced by its HOST:PORT.
func pushModelCar(t *testing.T, files map[string]string, params []string) []string {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	if _, err := modelcartest.Push(host+"/modelcar:test", []map[string]string{files}); err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(params))
	for i, p := range params {
		out[i] = strings.ReplaceAll(p, "$REGISTRY", host)
	}
	return out
}

// confPod is what a step's pod was given: its main container's resources
// (requests, and limits equal to them), its tolerations, and labels and
// annotations (each among the pod's).
type confPod struct {
	resources   corev1.ResourceList
	tolerations []corev1.Toleration
	labels      map[string]string
	annotations map[string]string
}

// confSecret is the secret of a case (see confCase.secret).
type confSecret struct{ env, name, key, value string }

// confGS are the objects of a case's gs:// bucket (see confCase.gs).
type confGS struct {
	bucket  string
	objects map[string]string
}

// putGS stores g's objects in the S3 server at endpoint (a URL) and
// returns the environment that makes pipectl read gs:// through it.
func putGS(ctx context.Context, endpoint, accessKey, secretKey string, g *confGS) ([]string, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, err
	}
	c, err := minio.New(u.Host, &minio.Options{Creds: credentials.NewStaticV4(accessKey, secretKey, "")})
	if err != nil {
		return nil, err
	}
	if err := c.MakeBucket(ctx, g.bucket, minio.MakeBucketOptions{}); err != nil && minio.ToErrorResponse(err).Code != "BucketAlreadyOwnedByYou" {
		return nil, fmt.Errorf("make bucket %s: %w", g.bucket, err)
	}
	for key, text := range g.objects {
		if _, err := c.PutObject(ctx, g.bucket, key, strings.NewReader(text), int64(len(text)), minio.PutObjectOptions{}); err != nil {
			return nil, fmt.Errorf("put %s/%s: %w", g.bucket, key, err)
		}
	}
	return []string{"PIPECTL_GS_ENDPOINT=" + endpoint, "PIPECTL_GS_ACCESS_KEY_ID=" + accessKey, "PIPECTL_GS_SECRET_ACCESS_KEY=" + secretKey}, nil
}

// nextParams are the -p of tc.next for the backend whose environment is
// env (its store in PIPECTL_ARTIFACTS) after the first run first.
func nextParams(tc confCase, env []string, first string) []string {
	var root string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PIPECTL_ARTIFACTS="); ok {
			root = v
		}
	}
	var out []string
	for _, p := range tc.next.params {
		out = append(out, strings.NewReplacer("$ROOT", strings.TrimSuffix(root, "/"), "$FIRST", first).Replace(p))
	}
	return out
}

// editCase is what the run of tc after its edit wants: its edited steps
// run as in the first run, seeing what tc.edited says; every other step
// that succeeded is reused, as in a re-run.
func editCase(tc confCase) confCase {
	re := rerunCase(tc)
	re.probes = tc.edited
	first := wantRecord(tc)
	for i, s := range first {
		if _, ok := tc.edited[s.Name]; ok {
			re.steps[i] = s
		}
	}
	return re
}

// caseFile is the pipeline file of tc: in the repository, or for a case
// with edits, in a copy of its folder.
func caseFile(t *testing.T, tc confCase) string {
	src := filepath.Join("conformance", tc.name)
	if tc.edit == nil {
		return filepath.Join(src, "pipeline.yaml")
	}
	dst := filepath.Join(t.TempDir(), tc.name)
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dst, "pipeline.yaml")
}

// applyEdit writes tc's edits into the folder of its copied pipeline file.
func applyEdit(t *testing.T, tc confCase, file string) {
	for name, content := range tc.edit {
		if err := os.WriteFile(filepath.Join(filepath.Dir(file), filepath.FromSlash(name)), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// rerunCase is what a re-run of tc wants: the same record, every step that
// succeeded cached from the first run ($FIRST) with its outputs, no
// attempt and no program run (a loop step's iterations, not its own record).
func rerunCase(tc confCase) confCase {
	re := confCase{name: tc.name, params: tc.params, status: tc.status, probes: map[string]probeRecord{}}
	for _, s := range wantRecord(tc) {
		// A loop step's own record (it runs no program: no exit code)
		// stays: its iterations are what is reused.
		if s.Status == "Succeeded" && s.ExitCode != nil {
			s = reused(s)
		}
		re.steps = append(re.steps, s)
	}
	return re
}

// reused is step s as a later run of the case records it when it reused
// the first run's: cached from $FIRST, its outputs there, no attempt.
func reused(s confStep) confStep {
	s.Cached, s.CachedFrom, s.Attempts = true, "$FIRST", 0
	s.Outputs = slices.Clone(s.Outputs)
	for j, o := range s.Outputs {
		if o.Value == nil && o.URI == "" {
			o.URI = "$ROOT/$RUN/" + s.Name + "/" + o.Name
		}
		s.Outputs[j].URI = strings.Replace(o.URI, "$RUN", "$FIRST", 1)
	}
	return s
}

// confStep is a step of the normalised run record (runs get -o json).
type confStep struct {
	Name      string
	DependsOn []string
	Status    string
	ExitCode  *int
	Attempts  int
	Cached    bool
	// Item is an iteration's item, as JSON ("" for other steps).
	Item string
	// CachedFrom is the run a cached step reused ($FIRST, normalised).
	CachedFrom string
	Outputs    []confOutput
	// Gang are a distributed step's gang attempts that did not succeed
	// (nil for none), normalised: their message and each rank's times
	// differ by run.
	Gang []confGang
}

// confGang is a gang attempt of the normalised run record.
type confGang struct {
	Attempt   int
	Reason    string
	Restarted bool
	// Ranks are each rank's state when a stalled attempt was stopped:
	// whether it made progress, and its last line.
	Ranks []confRank
}

type confRank struct {
	Rank     int
	Progress bool
	LastLine string
}

// confOutput is an output of the normalised run record: URI with the store
// root and run id replaced by $ROOT and $RUN; a probe record (an output named
// "seen") has Size 0 and SHA256 "probe record": its bytes differ by backend
// (paths, run id) and are compared normalised, as probes.
type confOutput struct {
	Name   string
	Type   string
	URI    string
	Size   int64
	SHA256 string
	Value  *string
}

// probeRecord is what conformance-probe records (see conformance/probe).
type probeRecord struct {
	Argv []string `json:"argv"`
	Env  []string `json:"env"`
	Read []string `json:"read,omitempty"`
}

func ok(name string, outs ...confOutput) confStep {
	return confStep{Name: name, Status: "Succeeded", ExitCode: ptr(0), Attempts: 1, Outputs: append([]confOutput{}, outs...)}
}

func withAttempts(s confStep, n int) confStep { s.Attempts = n; return s }

// gang sets the gang attempts of a distributed step that did not succeed.
func (s confStep) gang(attempts ...confGang) confStep { s.Gang = attempts; return s }

// loopStep is a loop step's own record: its iterations follow it. It ran
// no program: no exit code, no attempt.
func loopStep(name string) confStep {
	return confStep{Name: name, Status: "Succeeded", Outputs: []confOutput{}}
}

// item sets an iteration's item (compact JSON, numbers as written).
func (s confStep) item(js string) confStep { s.Item = js; return s }

// after sets the steps s depends on.
func (s confStep) after(steps ...string) confStep { s.DependsOn = steps; return s }

func failed(name string, code int) confStep {
	return confStep{Name: name, Status: "Failed", ExitCode: ptr(code), Attempts: 1, Outputs: []confOutput{}}
}

func skipped(name string) confStep {
	return confStep{Name: name, Status: "Skipped", Outputs: []confOutput{}}
}

const probeSum = "probe record"

// seen is the probe's record, output "seen".
func seen() confOutput { return confOutput{Name: "seen", Type: "Artifact", SHA256: probeSum} }

func file(name, typ, text string) confOutput {
	sum := sha256.Sum256([]byte(text))
	return confOutput{Name: name, Type: typ, Size: int64(len(text)), SHA256: hex.EncodeToString(sum[:])}
}

// dir is a directory output; its sha256 is that of its manifest (one
// "<sha256>  <path>\n" line per file, sorted by path: artifacts.Metadata).
func dir(name, typ string, files map[string]string) confOutput {
	var manifest bytes.Buffer
	var size int64
	for _, p := range slices.Sorted(maps.Keys(files)) {
		sum := sha256.Sum256([]byte(files[p]))
		fmt.Fprintf(&manifest, "%s  %s\n", hex.EncodeToString(sum[:]), p)
		size += int64(len(files[p]))
	}
	sum := sha256.Sum256(manifest.Bytes())
	return confOutput{Name: name, Type: typ, Size: size, SHA256: hex.EncodeToString(sum[:])}
}

func param(name, typ, value string) confOutput {
	return confOutput{Name: name, Type: typ, Value: &value}
}

// stepEnv is the env every step's program gets from pipectl.
func stepEnv(step string) []string {
	return []string{"PIPECTL_ARTIFACTS=$ROOT", "PIPECTL_RUN_ID=$RUN", "PIPECTL_STEP=" + step}
}

// runtimeEnv is the env conformance/runtimes/runtime.yaml gives, CASE_OVER
// overridden with over.
func runtimeEnv(over string) []string {
	return []string{"CASE_RT=from the runtime", "CASE_OVER=" + over}
}

// env is a probe record's env: the variables of parts, sorted.
func env(parts ...[]string) []string { return slices.Sorted(slices.Values(slices.Concat(parts...))) }

// wireEnvMetrics is a rank's metrics file variable (wire.EnvMetrics).
const wireEnvMetrics = "PIPECTL_METRICS"

// wireEnvCheckpointDir is a rank's checkpoint directory variable
// (wire.EnvCheckpointDir).
const wireEnvCheckpointDir = "PIPECTL_CHECKPOINT_DIR"

// rankEnv is the rank env of a rank (normalised: $MASTER_ADDR, $MASTER_PORT)
// and its metrics file.
func rankEnv(nodes, procs, node, local int) []string {
	return []string{
		fmt.Sprintf("LOCAL_RANK=%d", local), fmt.Sprintf("LOCAL_WORLD_SIZE=%d", procs),
		"MASTER_ADDR=$MASTER_ADDR", "MASTER_PORT=$MASTER_PORT",
		fmt.Sprintf("NNODES=%d", nodes), fmt.Sprintf("NODE_RANK=%d", node),
		"PET_MASTER_ADDR=$MASTER_ADDR", "PET_MASTER_PORT=$MASTER_PORT",
		fmt.Sprintf("PET_NNODES=%d", nodes), fmt.Sprintf("PET_NODE_RANK=%d", node), fmt.Sprintf("PET_NPROC_PER_NODE=%d", procs),
		fmt.Sprintf("RANK=%d", node*procs+local), fmt.Sprintf("WORLD_SIZE=%d", nodes*procs),
		fmt.Sprintf("PIPECTL_METRICS=$WORK/metrics/rank-%d.jsonl", node*procs+local),
		"PIPECTL_CHECKPOINT_DIR=$WORK/checkpoint",
	}
}

// nodeEnv is the rank env of a node's one process (torchrun, jax): no RANK,
// no LOCAL_RANK.
func nodeEnv(nodes, procs, node int) []string {
	return slices.DeleteFunc(rankEnv(nodes, procs, node, 0), func(kv string) bool {
		return strings.HasPrefix(kv, "RANK=") || strings.HasPrefix(kv, "LOCAL_RANK=")
	})
}

// xgboostEnv is Kubeflow Trainer's XGBoost env of a worker (normalised).
func xgboostEnv(workers, rank int) []string {
	return []string{"PIPECTL_FRAMEWORK=xgboost", "DMLC_TRACKER_URI=$MASTER_ADDR", "DMLC_TRACKER_PORT=$MASTER_PORT",
		fmt.Sprintf("DMLC_TASK_ID=%d", rank), fmt.Sprintf("DMLC_NUM_WORKER=%d", workers)}
}

// mpiEnv is Kubeflow Trainer's MPI env of the launcher (normalised: normMPI).
func mpiEnv() []string {
	return []string{"PIPECTL_FRAMEWORK=mpi", "OMPI_MCA_orte_default_hostfile=$HOSTFILE", "OMPI_MCA_orte_keep_fqdn_hostnames=true",
		"OMPI_MCA_orte_set_default_slots=$SLOTS_PER_HOST", "OMPI_MCA_plm_rsh_args=-o ConnectionAttempts=10"}
}

// jaxEnv is Kubeflow Trainer's JAX env of a node's process (normalised).
func jaxEnv(nodes, node int) []string {
	return []string{"PIPECTL_FRAMEWORK=jax", "JAX_COORDINATOR_ADDRESS=$MASTER_ADDR:$MASTER_PORT",
		fmt.Sprintf("JAX_NUM_PROCESSES=%d", nodes), fmt.Sprintf("JAX_PROCESS_ID=%d", node)}
}

// TestConformance runs every case of conformanceCases locally and on Argo,
// all at once, and compares what they did.
func TestConformance(t *testing.T) {
	a, ctx := newArgoLab(t)
	if images.conformanceErr != nil {
		t.Fatalf("conformance probe: %v", images.conformanceErr)
	}
	root := "s3://" + a.bucket + "/" + runsPrefix
	// The same environment for both backends' pipectl: the probe on PATH for
	// local runs (pods get it from the image), no PIPECTL_* or CASE_* of ours.
	var base []string
	for _, kv := range a.env {
		if !strings.HasPrefix(kv, "PIPECTL_") && !strings.HasPrefix(kv, "CASE_") {
			base = append(base, kv)
		}
	}
	base = append(base, "PATH="+images.conformance.bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"CONFORMANCE_STATE="+images.conformance.state)
	// Each case on each backend has its own store (folder of the bucket),
	// so that a re-run reuses what its own first run recorded: a store's
	// cache entries serve every pipeline, and both backends when the image
	// is the same (`pipectl help caching`).
	withStore := func(name, backend string) []string {
		return append(slices.Clone(base), "PIPECTL_ARTIFACTS="+root+name+"-"+backend)
	}
	began := time.Now()
	t.Cleanup(func() {
		t.Logf("%d cases on both backends took %s", len(conformanceCases), time.Since(began).Round(100*time.Millisecond))
	})
	for _, tc := range conformanceCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ll, la := *a, *a
			ll.t, la.t = t, t
			ll.env, la.env = withStore(tc.name, "local"), withStore(tc.name, "argo")
			if s := tc.secret; s != nil {
				ll.env = append(ll.env, s.env+"="+s.value)
				if _, err := a.c.Client.CoreV1().Secrets(a.ns).Create(ctx, &corev1.Secret{
					ObjectMeta: metav1.ObjectMeta{Name: s.name}, StringData: map[string]string{s.key: s.value},
				}, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			if tc.gs != nil {
				genv, err := putGS(ctx, "http://"+a.c.MinIOEndpoint, testbed.MinIOAccessKey, testbed.MinIOSecretKey, tc.gs)
				if err != nil {
					t.Fatal(err)
				}
				ll.env, la.env = append(ll.env, genv...), append(la.env, genv...)
			}
			if tc.modelCar != nil {
				tc.params = pushModelCar(t, tc.modelCar, tc.params)
			}
			file := caseFile(t, tc)
			var local, argo confResult
			var wg sync.WaitGroup
			wg.Go(func() { local = ll.confRun(ctx, "local", file, tc.params, "") })
			wg.Go(func() { argo = la.confRun(ctx, "argo", file, tc.params, "") })
			wg.Wait()
			for _, r := range []confResult{local, argo} {
				if r.err != nil {
					t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", r.backend, r.err, r.stdout, r.stderr)
				}
			}
			confCompare(t, tc, local, argo)
			if err := la.confPods(ctx, tc, argo.run); err != nil {
				t.Error(err)
			}
			if tc.next != nil && !t.Failed() {
				var local2, argo2 confResult
				next := filepath.Join(filepath.Dir(file), tc.next.file)
				wg.Go(func() { local2 = ll.confRun(ctx, "local", next, nextParams(tc, ll.env, local.run), local.run) })
				wg.Go(func() { argo2 = la.confRun(ctx, "argo", next, nextParams(tc, la.env, argo.run), argo.run) })
				wg.Wait()
				for _, r := range []confResult{local2, argo2} {
					if r.err != nil {
						t.Fatalf("%s next run: %v\nstdout:\n%s\nstderr:\n%s", r.backend, r.err, r.stdout, r.stderr)
					}
				}
				confCompare(t, *tc.next, local2, argo2)
			}
			if tc.edit != nil && !t.Failed() {
				applyEdit(t, tc, file)
				var local2, argo2 confResult
				wg.Go(func() { local2 = ll.confRun(ctx, "local", file, tc.params, local.run) })
				wg.Go(func() { argo2 = la.confRun(ctx, "argo", file, tc.params, argo.run) })
				wg.Wait()
				for _, r := range []confResult{local2, argo2} {
					if r.err != nil {
						t.Fatalf("%s run after the edit: %v\nstdout:\n%s\nstderr:\n%s", r.backend, r.err, r.stdout, r.stderr)
					}
				}
				confCompare(t, editCase(tc), local2, argo2)
				for _, d := range []struct {
					lab           argoLab
					before, after string
				}{{ll, local.run, local2.run}, {la, argo.run, argo2.run}} {
					if err := d.lab.confDiff(ctx, tc, d.before, d.after); err != nil {
						t.Error(err)
					}
				}
			}
			if tc.resumed != nil && !t.Failed() {
				var local2, argo2 confResult
				wg.Go(func() { local2 = ll.confRun(ctx, "local", "--rerun="+local.run, tc.resumed.params, local.run, "--yes") })
				wg.Go(func() { argo2 = la.confRun(ctx, "argo", "--rerun="+argo.run, tc.resumed.params, argo.run, "--yes") })
				wg.Wait()
				for _, r := range []confResult{local2, argo2} {
					if r.err != nil {
						t.Fatalf("%s rerun: %v\nstdout:\n%s\nstderr:\n%s", r.backend, r.err, r.stdout, r.stderr)
					}
				}
				confCompare(t, *tc.resumed, local2, argo2)
				for _, d := range []struct {
					lab         argoLab
					first, then string
				}{{ll, local.run, local2.run}, {la, argo.run, argo2.run}} {
					if err := d.lab.confLineage(ctx, d.first, d.then); err != nil {
						t.Error(err)
					}
				}
				// --from boom re-runs boom and after of the resumed run;
				// first is still reused from the first run.
				var local3, argo3 confResult
				wg.Go(func() {
					local3 = ll.confRun(ctx, "local", "--rerun="+local2.run, nil, local.run, "--from=boom", "--yes")
				})
				wg.Go(func() { argo3 = la.confRun(ctx, "argo", "--rerun="+argo2.run, nil, argo.run, "--from=boom", "--yes") })
				wg.Wait()
				for _, r := range []confResult{local3, argo3} {
					if r.err != nil {
						t.Fatalf("%s rerun --from: %v\nstdout:\n%s\nstderr:\n%s", r.backend, r.err, r.stdout, r.stderr)
					}
				}
				confCompare(t, *tc.resumed, local3, argo3)
			}
			if !tc.rerun || t.Failed() {
				return
			}
			var local2, argo2 confResult
			wg.Go(func() { local2 = ll.confRun(ctx, "local", file, tc.params, local.run) })
			wg.Go(func() { argo2 = la.confRun(ctx, "argo", file, tc.params, argo.run) })
			wg.Wait()
			for _, r := range []confResult{local2, argo2} {
				if r.err != nil {
					t.Fatalf("%s re-run: %v\nstdout:\n%s\nstderr:\n%s", r.backend, r.err, r.stdout, r.stderr)
				}
			}
			confCompare(t, rerunCase(tc), local2, argo2)
		})
	}
}

// TestConformanceLocal runs every case of conformanceCases locally only,
// against a file:// store: the table checked without a cluster (also with
// -short, which skips the test bed).
func TestConformanceLocal(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	if images.pipectl == "" {
		bin := filepath.Join(t.TempDir(), "pipectl")
		build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/pipectl")
		build.Dir = filepath.Join("..", "..")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("build pipectl: %v\n%s", err, out)
		}
		images.pipectl = bin
	}
	if images.conformance.bin == "" {
		if _, err := probeImage(ctx, t.TempDir()); err != nil {
			t.Fatal(err)
		}
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PIPECTL_") && !strings.HasPrefix(kv, "CASE_") {
			env = append(env, kv)
		}
	}
	a := &argoLab{t: t, env: append(env, "PATH="+images.conformance.bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"CONFORMANCE_STATE="+images.conformance.state)}
	for _, tc := range conformanceCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := *a
			l.t = t
			// A store per case, as in TestConformance.
			l.env = append(slices.Clone(a.env), "PIPECTL_ARTIFACTS=file://"+t.TempDir())
			if s := tc.secret; s != nil {
				l.env = append(l.env, s.env+"="+s.value)
			}
			if tc.gs != nil {
				srv := miniotest.Start(t)
				genv, err := putGS(ctx, srv.Endpoint, srv.AccessKey, srv.SecretKey, tc.gs)
				if err != nil {
					t.Fatal(err)
				}
				l.env = append(l.env, genv...)
			}
			if tc.modelCar != nil {
				tc.params = pushModelCar(t, tc.modelCar, tc.params)
			}
			file := caseFile(t, tc)
			r := l.confRun(ctx, "local", file, tc.params, "")
			if r.err != nil {
				t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", r.err, r.stdout, r.stderr)
			}
			confCompare(t, tc, r)
			if tc.next != nil && !t.Failed() {
				r2 := l.confRun(ctx, "local", filepath.Join(filepath.Dir(file), tc.next.file), nextParams(tc, l.env, r.run), r.run)
				if r2.err != nil {
					t.Fatalf("next run: %v\nstdout:\n%s\nstderr:\n%s", r2.err, r2.stdout, r2.stderr)
				}
				confCompare(t, *tc.next, r2)
			}
			if tc.edit != nil && !t.Failed() {
				applyEdit(t, tc, file)
				r2 := l.confRun(ctx, "local", file, tc.params, r.run)
				if r2.err != nil {
					t.Fatalf("run after the edit: %v\nstdout:\n%s\nstderr:\n%s", r2.err, r2.stdout, r2.stderr)
				}
				confCompare(t, editCase(tc), r2)
				if err := l.confDiff(ctx, tc, r.run, r2.run); err != nil {
					t.Error(err)
				}
			}
			if tc.resumed != nil && !t.Failed() {
				r2 := l.confRun(ctx, "local", "--rerun="+r.run, tc.resumed.params, r.run, "--yes")
				if r2.err != nil {
					t.Fatalf("rerun: %v\nstdout:\n%s\nstderr:\n%s", r2.err, r2.stdout, r2.stderr)
				}
				confCompare(t, *tc.resumed, r2)
				if err := l.confLineage(ctx, r.run, r2.run); err != nil {
					t.Error(err)
				}
				r3 := l.confRun(ctx, "local", "--rerun="+r2.run, nil, r.run, "--from=boom", "--yes")
				if r3.err != nil {
					t.Fatalf("rerun --from: %v\nstdout:\n%s\nstderr:\n%s", r3.err, r3.stdout, r3.stderr)
				}
				confCompare(t, *tc.resumed, r3)
			}
			if !tc.rerun || t.Failed() {
				return
			}
			r = l.confRun(ctx, "local", file, tc.params, r.run)
			if r.err != nil {
				t.Fatalf("re-run: %v\nstdout:\n%s\nstderr:\n%s", r.err, r.stdout, r.stderr)
			}
			confCompare(t, rerunCase(tc), r)
		})
	}
}

// confPods checks what the pods of the steps of tc.pods were given in Argo
// run run, read from the API server: the main container's requests and
// limits, and the pod's tolerations.
func (a *argoLab) confPods(ctx context.Context, tc confCase, run string) error {
	if len(tc.pods) == 0 {
		return nil
	}
	list, err := a.c.Client.CoreV1().Pods(a.ns).List(ctx, metav1.ListOptions{LabelSelector: "pipectl.dev/run=" + run})
	if err != nil {
		return err
	}
	var errs []string
	for step, want := range tc.pods {
		found := false
		for _, pod := range list.Items {
			if pod.Annotations["workflows.argoproj.io/node-name"] != run+"."+step {
				continue
			}
			found = true
			for _, c := range pod.Spec.Containers {
				if c.Name != "main" {
					continue
				}
				if want.resources == nil {
					continue
				}
				if diff := cmp.Diff(want.resources, c.Resources.Requests); diff != "" {
					errs = append(errs, fmt.Sprintf("pod %s of step %s: requests (-want +got):\n%s", pod.Name, step, diff))
				}
				if diff := cmp.Diff(want.resources, c.Resources.Limits); diff != "" {
					errs = append(errs, fmt.Sprintf("pod %s of step %s: limits (-want +got):\n%s", pod.Name, step, diff))
				}
			}
			for k, v := range want.labels {
				if got, ok := pod.Labels[k]; !ok || got != v {
					errs = append(errs, fmt.Sprintf("pod %s of step %s: label %s = %q, want %q", pod.Name, step, k, got, v))
				}
			}
			for k, v := range want.annotations {
				if got, ok := pod.Annotations[k]; !ok || got != v {
					errs = append(errs, fmt.Sprintf("pod %s of step %s: annotation %s = %q, want %q", pod.Name, step, k, got, v))
				}
			}
			for _, tol := range want.tolerations {
				if !slices.Contains(pod.Spec.Tolerations, tol) {
					errs = append(errs, fmt.Sprintf("pod %s of step %s: no toleration %+v in %+v", pod.Name, step, tol, pod.Spec.Tolerations))
				}
			}
		}
		if !found {
			errs = append(errs, fmt.Sprintf("no pod of step %s in run %s", step, run))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
}

// confDiff checks `runs diff` of a case's runs before and after its edit:
// the code of exactly the edited steps differs.
func (a *argoLab) confDiff(ctx context.Context, tc confCase, before, after string) error {
	js, errOut, code := a.pipectlTry(ctx, "runs", "diff", before, after, "-o", "json")
	if code != 0 {
		return fmt.Errorf("runs diff %s %s: exit %d: %s", before, after, code, errOut)
	}
	var c struct {
		Code []struct {
			Name    string    `json:"name"`
			Values  []*string `json:"values"`
			Differs bool      `json:"differs"`
		} `json:"code"`
	}
	if err := json.Unmarshal([]byte(js), &c); err != nil {
		return fmt.Errorf("runs diff %s %s: %v\n%s", before, after, err, js)
	}
	if len(c.Code) == 0 {
		return fmt.Errorf("runs diff %s %s: no code rows:\n%s", before, after, js)
	}
	for _, row := range c.Code {
		_, edited := tc.edited[row.Name]
		if row.Differs != edited || len(row.Values) != 2 || row.Values[0] == nil || row.Values[1] == nil {
			return fmt.Errorf("runs diff %s %s: step %s: code differs %v, want %v (the edited steps'), both runs' digests set:\n%s", before, after, row.Name, row.Differs, edited, js)
		}
	}
	return nil
}

// confLineage checks `artifacts lineage` of the resumed run's boom: it
// read first's output, made by the failed first run (reused since), and
// --used-by names both runs' boom as readers of that content.
func (a *argoLab) confLineage(ctx context.Context, first, then string) error {
	js, errOut, code := a.pipectlTry(ctx, "artifacts", "lineage", then+"/boom/seen", "-o", "json")
	if code != 0 {
		return fmt.Errorf("artifacts lineage %s/boom/seen: exit %d: %s", then, code, errOut)
	}
	var l struct {
		Run    string `json:"run"`
		Inputs []struct {
			Name   string `json:"name"`
			SHA256 string `json:"sha256"`
			From   *struct {
				Run  string `json:"run"`
				Step string `json:"step"`
			} `json:"from"`
		} `json:"inputs"`
	}
	if err := json.Unmarshal([]byte(js), &l); err != nil {
		return fmt.Errorf("artifacts lineage: %v\n%s", err, js)
	}
	if l.Run != then || len(l.Inputs) != 1 || l.Inputs[0].Name != "data" || l.Inputs[0].From == nil ||
		l.Inputs[0].From.Run != first || l.Inputs[0].From.Step != "first" {
		return fmt.Errorf("artifacts lineage %s/boom/seen: want boom of %s reading data made by first of %s:\n%s", then, then, first, js)
	}
	js, errOut, code = a.pipectlTry(ctx, "artifacts", "lineage", first+"/first/out", "--used-by", "-o", "json")
	if code != 0 {
		return fmt.Errorf("artifacts lineage --used-by: exit %d: %s", code, errOut)
	}
	var users []struct{ Run, Step string }
	if err := json.Unmarshal([]byte(js), &users); err != nil || len(users) != 2 || users[0].Step != "boom" || users[1].Step != "boom" {
		return fmt.Errorf("artifacts lineage %s/first/out --used-by: want boom of both runs (%v):\n%s", first, err, js)
	}
	// The run keeps its resolved pipeline: every step's plan.
	js, errOut, code = a.pipectlTry(ctx, "runs", "get", then, "--pipeline", "-o", "json")
	var resolved struct {
		Pipeline string `json:"pipeline"`
		Steps    []struct {
			Name string `json:"name"`
		} `json:"steps"`
	}
	if code != 0 || json.Unmarshal([]byte(js), &resolved) != nil || resolved.Pipeline != "conf-resume" || len(resolved.Steps) != 3 || resolved.Steps[1].Name != "boom" {
		return fmt.Errorf("runs get %s --pipeline: exit %d, want the 3 steps of conf-resume: %s\n%s", then, code, errOut, js)
	}
	return nil
}

// confResult is one backend's run of a case.
type confResult struct {
	backend        string
	run            string
	code           int
	stdout, stderr string
	err            error
	record         []confStep
	status         string
	probes         map[string]probeRecord
	raw            map[string]string // the probe's raw record lines by key
}

var localRunID = regexp.MustCompile(`Run (\S+) of pipeline `)

// confRun runs the case's pipeline on one backend and reads back its
// record and probe records, normalised. With first "" the run runs every
// step (--no-cache); otherwise it is a re-run that may reuse the steps of
// run first (normalised to $FIRST). It runs on its own goroutine: it
// reports problems in err, never through t.
func (a *argoLab) confRun(ctx context.Context, backend, file string, params []string, first string, flags ...string) confResult {
	r := confResult{backend: backend}
	args := slices.Clone(flags)
	if first == "" {
		args = append(args, "--no-cache")
	}
	for _, p := range params {
		args = append(args, "-p", p)
	}
	began := time.Now()
	var m []string
	if backend == "local" {
		r.stdout, r.stderr, r.code = a.pipectlTry(ctx, append([]string{"run", file}, args...)...)
		m = localRunID.FindStringSubmatch(r.stderr)
	} else {
		r.stdout, r.stderr, r.code = a.pipectlTry(ctx, append(append([]string{"run", file, "--on", "argo", "-n", a.ns}, imageFlags...),
			append([]string{"--image", pipectlImage, "--s3-secret", s3Secret, "--s3-endpoint", "http://" + a.c.MinIOEndpoint,
				"--service-account", "pipectl-step"}, args...)...)...)
		m = runID.FindStringSubmatch(r.stderr)
	}
	a.t.Logf("%s run took %s", backend, time.Since(began).Round(100*time.Millisecond))
	if m == nil {
		r.err = fmt.Errorf("no run id (exit %d)", r.code)
		return r
	}
	r.run = m[1]
	js, errOut, code := a.pipectlTry(ctx, "runs", "get", r.run, "-o", "json")
	if code != 0 {
		r.err = fmt.Errorf("runs get %s: exit %d: %s", r.run, code, errOut)
		return r
	}
	var rec struct {
		Status string `json:"status"`
		Origin *struct {
			Pipectl   string `json:"pipectl"`
			ImageTags bool   `json:"imageTags"`
		} `json:"origin"`
		Steps []struct {
			Name      string          `json:"name"`
			DependsOn []string        `json:"dependsOn"`
			Status    string          `json:"status"`
			ExitCode  *int            `json:"exitCode"`
			Attempts  int             `json:"attempts"`
			Cached    bool            `json:"cached"`
			From      string          `json:"cachedFrom"`
			Item      json.RawMessage `json:"item"`
			Gang      []struct {
				Attempt   int    `json:"attempt"`
				Reason    string `json:"reason"`
				Restarted bool   `json:"restarted"`
				Ranks     []struct {
					Rank         int             `json:"rank"`
					LastProgress json.RawMessage `json:"lastProgress"`
					LastLine     string          `json:"lastLine"`
				} `json:"ranks"`
			} `json:"gangAttempts"`
			Outputs []struct {
				Name   string  `json:"name"`
				Type   string  `json:"type"`
				URI    string  `json:"uri"`
				Size   int64   `json:"size"`
				SHA256 string  `json:"sha256"`
				Value  *string `json:"value"`
			} `json:"outputs"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(js), &rec); err != nil {
		r.err = fmt.Errorf("runs get %s: %v\n%s", r.run, err, js)
		return r
	}
	// The record says what ran: the pipectl, and on both backends that no
	// image kept its tag (on Argo, imageFlags pin them in the test bed's registry).
	if o := rec.Origin; o == nil || o.Pipectl == "" || o.ImageTags {
		r.err = fmt.Errorf("runs get %s: origin %+v, want the pipectl version and imageTags false", r.run, o)
		return r
	}
	root := envValue(a.env, "PIPECTL_ARTIFACTS")
	pairs := []string{root, "$ROOT", r.run, "$RUN"}
	if first != "" {
		pairs = append(pairs, first, "$FIRST")
	}
	norm := strings.NewReplacer(pairs...)
	r.status = rec.Status
	r.raw = map[string]string{}
	r.probes = map[string]probeRecord{}
	loops := map[string]bool{} // loop steps: their iterations have the logs
	for _, s := range rec.Steps {
		if name, _, ok := strings.Cut(s.Name, "["); ok {
			loops[name] = true
		}
	}
	for _, s := range rec.Steps {
		var item bytes.Buffer
		if len(s.Item) > 0 {
			if err := json.Compact(&item, s.Item); err != nil {
				r.err = fmt.Errorf("runs get %s: step %s: item: %v", r.run, s.Name, err)
				return r
			}
		}
		step := confStep{Item: item.String(), Name: s.Name, DependsOn: s.DependsOn, Status: s.Status, ExitCode: s.ExitCode, Attempts: s.Attempts, Cached: s.Cached, CachedFrom: norm.Replace(s.From), Outputs: []confOutput{}}
		for _, g := range s.Gang {
			cg := confGang{Attempt: g.Attempt, Reason: g.Reason, Restarted: g.Restarted}
			for _, rk := range g.Ranks {
				cg.Ranks = append(cg.Ranks, confRank{Rank: rk.Rank, Progress: len(rk.LastProgress) > 0, LastLine: rk.LastLine})
			}
			step.Gang = append(step.Gang, cg)
		}
		for _, o := range s.Outputs {
			uri, _ := url.PathUnescape(o.URI) // file:// escapes train[0]
			out := confOutput{Name: o.Name, Type: o.Type, URI: norm.Replace(uri), Size: o.Size, SHA256: o.SHA256, Value: o.Value}
			if o.Name == "seen" && s.Cached {
				out.Size, out.SHA256 = 0, probeSum // the first run's, checked there
			} else if o.Name == "seen" {
				// The probe's record: the same bytes as its log line
				// (checked below), compared normalised.
				b, errOut, code := a.pipectlTry(ctx, "artifacts", "cat", r.run+"/"+s.Name+"/seen")
				if code != 0 {
					r.err = fmt.Errorf("artifacts cat %s/%s/seen: exit %d: %s", r.run, s.Name, code, errOut)
					return r
				}
				r.raw[s.Name+" (artifact)"] = b
				out.Size, out.SHA256 = 0, probeSum
			}
			step.Outputs = append(step.Outputs, out)
		}
		r.record = append(r.record, step)
		if s.Status == "Skipped" || s.Cached || loops[s.Name] {
			continue // no program ran: no log
		}
		logs, errOut, code := a.pipectlTry(ctx, "logs", r.run, s.Name)
		if code != 0 {
			r.err = fmt.Errorf("logs %s %s: exit %d: %s", r.run, s.Name, code, errOut)
			return r
		}
		if err := r.readProbes(s.Name, logs, norm); err != nil {
			r.err = err
			return r
		}
	}
	return r
}

var rankPrefix = regexp.MustCompile(`rank (\d+)\]`)

// readProbes collects the probe's record lines ("probe: {...}") of a step's
// log, one per rank, normalised.
func (r *confResult) readProbes(step, logs string, norm *strings.Replacer) error {
	for line := range strings.Lines(logs) {
		i := strings.Index(line, "probe: {")
		if i < 0 {
			continue
		}
		key := step
		if m := rankPrefix.FindStringSubmatch(line[:i]); m != nil {
			key += " rank " + m[1]
		}
		if _, dup := r.raw[key]; dup {
			return fmt.Errorf("step %s: two probe records for %q in its log:\n%s", step, key, logs)
		}
		raw := strings.TrimSuffix(line[i+len("probe: "):], "\n") + "\n"
		r.raw[key] = raw
		rec, err := normProbe(raw, norm)
		if err != nil {
			return fmt.Errorf("step %s: %v", step, err)
		}
		if slices.Contains(rec.Env, "PIPECTL_FRAMEWORK=mpi") {
			// An mpi step's command runs once (the launcher): its record
			// is the step's, whether its log lines say "rank 0" (a local
			// gang's) or not (node 0's pod's).
			key = step
			if _, dup := r.probes[key]; dup {
				return fmt.Errorf("step %s: two probe records of its launcher in its log:\n%s", step, logs)
			}
		}
		r.probes[key] = rec
	}
	return nil
}

var workPath = regexp.MustCompile(`(^|\s|")/[^\s"]*?/((?:inputs|outputs|metrics|checkpoint|ranks/[0-9]+)/)`)

// normProbe decodes a probe record and normalises what differs by backend by
// design: the store root ($ROOT), the run id ($RUN), the step's work folder
// ($WORK/inputs/…, $WORK/outputs/…, $WORK/ranks/N/…, a rank's
// PIPECTL_METRICS in $WORK/metrics/, its PIPECTL_CHECKPOINT_DIR
// $WORK/checkpoint), the rendezvous address
// and port ($MASTER_ADDR, $MASTER_PORT: checked to be set and to agree with
// their PET_ twins first).
func normProbe(raw string, norm *strings.Replacer) (probeRecord, error) {
	var rec probeRecord
	if err := json.Unmarshal([]byte(raw), &rec); err != nil {
		return rec, fmt.Errorf("probe record %q: %v", raw, err)
	}
	fix := func(s string) string { return workPath.ReplaceAllString(norm.Replace(s), "${1}$$WORK/${2}") }
	for i := range rec.Argv {
		rec.Argv[i] = fix(rec.Argv[i])
	}
	for i := range rec.Read {
		rec.Read[i] = fix(rec.Read[i])
	}
	vars := map[string]string{}
	for _, kv := range rec.Env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	for _, pair := range [][2]string{{"MASTER_ADDR", "PET_MASTER_ADDR"}, {"MASTER_PORT", "PET_MASTER_PORT"}} {
		v, set := vars[pair[0]]
		if !set {
			continue
		}
		if v == "" || vars[pair[1]] != v {
			return rec, fmt.Errorf("probe record: %s=%q, %s=%q: want both set and equal", pair[0], v, pair[1], vars[pair[1]])
		}
		if _, err := strconv.ParseUint(v, 10, 16); pair[0] == "MASTER_PORT" && err != nil {
			return rec, fmt.Errorf("probe record: MASTER_PORT=%q is not a port", v)
		}
	}
	// The frameworks' rendezvous variables name rank 0's address and port too.
	for k, want := range map[string]string{"DMLC_TRACKER_URI": vars["MASTER_ADDR"], "DMLC_TRACKER_PORT": vars["MASTER_PORT"],
		"JAX_COORDINATOR_ADDRESS": vars["MASTER_ADDR"] + ":" + vars["MASTER_PORT"]} {
		if v, set := vars[k]; set && v != want {
			return rec, fmt.Errorf("probe record: %s=%q, want %q (rank 0's address and port)", k, v, want)
		}
	}
	if err := normMPI(&rec, vars); err != nil {
		return rec, err
	}
	for i, kv := range rec.Env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "MASTER_ADDR", "PET_MASTER_ADDR", "DMLC_TRACKER_URI":
			rec.Env[i] = k + "=$MASTER_ADDR"
		case "MASTER_PORT", "PET_MASTER_PORT", "DMLC_TRACKER_PORT":
			rec.Env[i] = k + "=$MASTER_PORT"
		case wireEnvMetrics:
			_, v, _ := strings.Cut(kv, "=")
			rec.Env[i] = k + "=" + fix(v)
		case wireEnvCheckpointDir:
			_, v, _ := strings.Cut(kv, "=")
			rec.Env[i] = k + "=" + strings.TrimSuffix(fix(v+"/"), "/")
		case "JAX_COORDINATOR_ADDRESS":
			rec.Env[i] = k + "=$MASTER_ADDR:$MASTER_PORT"
		default:
			rec.Env[i] = fix(kv)
		}
	}
	slices.Sort(rec.Env)
	return rec, nil
}

// normMPI normalises what an mpi step's launcher sees by design differently
// on the two backends: its hostfile's path ($HOSTFILE) and content — locally
// this machine with every slot (4), on Kubernetes each node pod with
// procsPerNode (2 each) — read as "$HOSTFILE: N slots on M node(s)", M the
// NNODES it names, after checking that every host has
// OMPI_MCA_orte_set_default_slots slots ($SLOTS_PER_HOST) and the hosts are
// distinct; and the node pods' own variables for the MPI agents (OpenMPI's
// rsh agent, the agents' port), which a local launcher has no use for.
func normMPI(rec *probeRecord, vars map[string]string) error {
	hostfile := vars["OMPI_MCA_orte_default_hostfile"]
	if hostfile == "" {
		return nil
	}
	perHost := vars["OMPI_MCA_orte_set_default_slots"]
	for i, a := range rec.Argv {
		if a == hostfile {
			rec.Argv[i] = "$HOSTFILE"
		}
	}
	for i, r := range rec.Read {
		quoted, ok := strings.CutPrefix(r, hostfile+": . = ")
		if !ok {
			continue
		}
		content, err := strconv.Unquote(quoted)
		if err != nil {
			return fmt.Errorf("probe record: hostfile %q: %v", r, err)
		}
		total, hosts := 0, map[string]bool{}
		for line := range strings.Lines(content) {
			var host string
			var n int
			if _, err := fmt.Sscanf(line, "%s slots=%d\n", &host, &n); err != nil || strconv.Itoa(n) != perHost || hosts[host] {
				return fmt.Errorf("probe record: hostfile line %q: want \"HOST slots=%s\" (OMPI_MCA_orte_set_default_slots), each host once", line, perHost)
			}
			hosts[host] = true
			total += n
		}
		rec.Read[i] = fmt.Sprintf("$HOSTFILE: %d slots on %s node(s)", total, vars["NNODES"])
	}
	rec.Env = slices.DeleteFunc(rec.Env, func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return k == "OMPI_MCA_plm_rsh_agent" || k == "PIPECTL_MPI_AGENT_PORT"
	})
	for i, kv := range rec.Env {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "OMPI_MCA_orte_default_hostfile":
			rec.Env[i] = k + "=$HOSTFILE"
		case "OMPI_MCA_orte_set_default_slots":
			rec.Env[i] = k + "=$SLOTS_PER_HOST"
		}
	}
	return nil
}

// confCompare checks each backend's result against the table, and the first
// two (local, argo) against each other.
func confCompare(t *testing.T, tc confCase, results ...confResult) {
	want := wantRecord(tc)
	wantCode := map[string]int{"Succeeded": 0, "Failed": 1}[tc.status]
	if len(results) == 2 {
		local, argo := results[0], results[1]
		if diff := cmp.Diff(local.record, argo.record); diff != "" {
			t.Errorf("the run records differ between backends (-local +argo):\n%s", diff)
		}
		if diff := cmp.Diff(local.probes, argo.probes); diff != "" {
			t.Errorf("the programs saw different things on the two backends (-local +argo):\n%s", diff)
		}
	}
	for _, r := range results {
		if r.code != wantCode || r.status != tc.status {
			t.Errorf("%s: exit code %d, status %s; want %d, %s\nstderr:\n%s", r.backend, r.code, r.status, wantCode, tc.status, r.stderr)
		}
		if diff := cmp.Diff(want, r.record); diff != "" {
			t.Errorf("%s: run record (-want +got):\n%s", r.backend, diff)
		}
		if diff := cmp.Diff(tc.probes, r.probes); diff != "" {
			t.Errorf("%s: what the programs saw (-want +got):\n%s", r.backend, diff)
		}
		// An output "seen" holds the bytes the probe printed.
		for key, b := range r.raw {
			step, isArtifact := strings.CutSuffix(key, " (artifact)")
			if !isArtifact {
				continue
			}
			line, ok := r.raw[step]
			if !ok {
				line = r.raw[step+" rank 0"]
			}
			if b != line {
				t.Errorf("%s: output seen of step %s = %q, but the probe printed %q", r.backend, step, b, line)
			}
		}
	}
}

// wantRecord is the normalised run record the case wants: URIs of its
// outputs filled in.
func wantRecord(tc confCase) []confStep {
	steps := slices.Clone(tc.steps)
	for i, s := range steps {
		steps[i].Outputs = slices.Clone(s.Outputs)
		for j, o := range steps[i].Outputs {
			if o.Value == nil && o.URI == "" {
				steps[i].Outputs[j].URI = "$ROOT/$RUN/" + s.Name + "/" + o.Name
			}
		}
	}
	return steps
}

// pipectlTry runs pipectl like pipectl does, reporting a failure to start in
// stderr and exit code -1 instead of failing the test (it runs off the
// test's goroutine).
func (a *argoLab) pipectlTry(ctx context.Context, args ...string) (string, string, int) {
	out, errOut, code, err := a.exec(ctx, args...)
	if err != nil {
		return out, fmt.Sprintf("pipectl %s: %v", strings.Join(args, " "), err), -1
	}
	return out, errOut, code
}

func envValue(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, val, _ := strings.Cut(kv, "="); k == name {
			v = val
		}
	}
	return v
}
