package checkpoint

import (
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/artifacts/miniotest"
)

// Variables the helper process of TestCrashDuringSync reads.
const (
	crashHelperEnv   = "PIPECTL_TEST_CHECKPOINT_CRASH_DIR"
	crashEndpointEnv = "PIPECTL_TEST_CHECKPOINT_CRASH_ENDPOINT"
	crashBucket      = "crash"
)

// stallingStore is a store whose upload of a file named b.pt sends its
// first bytes and then hangs, as a sync cut off mid-file does, until the
// process is killed.
type stallingStore struct{ artifacts.Store }

func (s stallingStore) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	if strings.HasSuffix(key, "/b.pt") {
		_, _ = io.CopyN(io.Discard, r, size/2)
		<-ctx.Done()
		return ctx.Err()
	}
	return s.Store.Put(ctx, key, r, size)
}

func crashStore(t *testing.T, endpoint, access, secret string) artifacts.Store {
	t.Helper()
	s, err := artifacts.NewS3(context.Background(), crashBucket, "runs", artifacts.S3Options{Endpoint: endpoint, AccessKey: access, SecretKey: secret})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestCrashDuringSync: a process killed (SIGKILL) while it syncs a
// checkpoint to a real MinIO, one file of the new generation stored and
// the next one half sent, leaves no manifest: a restore takes the
// previous complete checkpoint, never the partial one, and the next sync
// takes the generation's number again, clearing what the killed one left.
func TestCrashDuringSync(t *testing.T) {
	if dir := os.Getenv(crashHelperEnv); dir != "" {
		// The helper: sync dir as generation 2, through a store that hangs
		// on b.pt; the test kills it there.
		store := stallingStore{crashStore(t, os.Getenv(crashEndpointEnv), os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"))}
		k := &Keeper{Store: store, Run: "r1", Step: "train", Dir: dir}
		_, err := k.Sync(context.Background())
		t.Fatalf("the sync returned (%v): it should have hung on b.pt", err)
	}
	srv := miniotest.Start(t)
	ctx := t.Context()
	if err := srv.MakeBucket(ctx, crashBucket); err != nil {
		t.Fatal(err)
	}
	store := crashStore(t, srv.Endpoint, srv.AccessKey, srv.SecretKey)
	k := newKeeper(t, store, "r1")
	write(t, k.Dir, "a.pt", "epoch3-a")
	write(t, k.Dir, "b.pt", "epoch3-b")
	if gen, err := k.Sync(ctx); gen != 1 || err != nil {
		t.Fatalf("Sync = %d, %v; want generation 1", gen, err)
	}
	write(t, k.Dir, "a.pt", "epoch4-a")
	write(t, k.Dir, "b.pt", strings.Repeat("epoch4-b", 1<<16))

	helper := exec.Command(os.Args[0], "-test.run=^TestCrashDuringSync$", "-test.v")
	helper.Env = append(os.Environ(), crashHelperEnv+"="+k.Dir, crashEndpointEnv+"="+srv.Endpoint,
		"AWS_ACCESS_KEY_ID="+srv.AccessKey, "AWS_SECRET_ACCESS_KEY="+srv.SecretKey)
	var out strings.Builder
	helper.Stdout, helper.Stderr = &out, &out
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	prefix := Prefix("r1", "train")
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(keys(t, store, prefix), "00000002/a.pt") {
		if time.Now().After(deadline) {
			_ = helper.Process.Kill()
			_ = helper.Wait()
			t.Fatalf("the helper stored no file of generation 2 within a minute:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // well into b.pt
	if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = helper.Wait()
	if got := keys(t, store, prefix); got != "00000001.json 00000001/a.pt 00000001/b.pt 00000002/a.pt" {
		t.Fatalf("after the crash the store holds %q, want generation 1 and the killed sync's a.pt, no manifest 2", got)
	}

	k2 := newKeeper(t, store, "r1")
	r, err := k2.Restore(ctx)
	if err != nil || r.Generation != 1 {
		t.Fatalf("Restore after the crash = %v, %v; want generation 1", r, err)
	}
	if got := read(t, k2.Dir); got != "a.pt=epoch3-a b.pt=epoch3-b" {
		t.Errorf("restored %q, want generation 1's files, none of the killed sync's", got)
	}
	write(t, k2.Dir, "a.pt", "epoch5-a")
	if gen, err := k2.Sync(ctx); gen != 2 || err != nil {
		t.Fatalf("Sync after the crash = %d, %v; want generation 2", gen, err)
	}
	if got := keys(t, store, prefix); got != "00000002.json 00000002/a.pt 00000002/b.pt" {
		t.Errorf("store holds %q, want generation 2 alone (keep 1)", got)
	}
	k3 := newKeeper(t, store, "r1")
	if _, err := k3.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	if got := read(t, k3.Dir); got != "a.pt=epoch5-a b.pt=epoch3-b" {
		t.Errorf("restored %q after the next sync", got)
	}
}
