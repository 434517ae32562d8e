// Command s3bench compares pipectl's S3 transfers with `mc cp` against one
// real MinIO server on loopback: upload and download of one large file and
// of a directory of many small files. Each transfer runs in a child process
// (pipectl's through this same binary), so both tools' peak RSS is measured
// the same way, from the child's rusage.
//
//	go run ./artifacts/internal/s3bench [-size 1GiB] [-files 1000] [-file-size 64KiB] [-runs 3]
//
// The MinIO and mc binaries come from $PIPECTL_TEST_MINIO and
// $PIPECTL_TEST_MC (miniotest.EnvBinary, EnvMC), or are built with test/e2e/tools/build.sh.
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"pipectl.dev/pipectl/artifacts"
	"pipectl.dev/pipectl/artifacts/miniotest"
	"pipectl.dev/pipectl/artifacts/progress"
)

const bucket = "bench"

// Child-process environment: set by the parent for `s3bench child …`.
const (
	envEndpoint = "AWS_ENDPOINT_URL"
	envAccess   = "AWS_ACCESS_KEY_ID"
	envSecret   = "AWS_SECRET_ACCESS_KEY"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "measure" {
		if err := measureChild(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "s3bench measure:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "child" {
		if err := child(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "s3bench child:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "s3bench:", err)
		os.Exit(1)
	}
}

type config struct {
	size, files, fileSize int64
	// sizeText and fileSizeText are -size and -file-size as given.
	sizeText, fileSizeText string
	runs                   int
	dir                    string
	partSize               int64
	concurrency            int
	keep                   bool
	settle                 bool
}

// transfer is one transfer measured with both tools: the arguments of
// mc and of `s3bench child` for run r.
type transfer struct {
	name  string
	bytes int64
	mc    func(run int) []string
	pc    func(run int) []string
}

// result is the seconds and peak RSS of each run of a transfer by one tool.
type result struct{ secs, rss []float64 }

// tools is how each tool runs: its binary (pipectl's is this one) and
// environment.
type tools struct {
	self, mcBin     string
	mcEnv, childEnv []string
	childFlags      []string // the store's settings, before the transfer's arguments
}

// run measures each transfer with both tools against a MinIO server it
// starts, and prints the table of results.
func run() error {
	c, err := parseFlags()
	if err != nil {
		return err
	}
	if c.dir == "" {
		if c.dir, err = os.MkdirTemp("", "s3bench-"); err != nil {
			return err
		}
		if !c.keep {
			defer os.RemoveAll(c.dir)
		}
	}
	minioBin, err := tool("minio", miniotest.EnvBinary)
	if err != nil {
		return err
	}
	mcBin, err := tool("mc", miniotest.EnvMC)
	if err != nil {
		return err
	}
	big, small, err := generate(c)
	if err != nil {
		return err
	}

	srv, err := miniotest.Run(minioBin, filepath.Join(c.dir, "minio"))
	if err != nil {
		return err
	}
	defer srv.Kill()
	ctx := context.Background()
	if err := srv.MakeBucket(ctx, bucket); err != nil {
		return err
	}
	mcEnv := append(os.Environ(),
		"MC_CONFIG_DIR="+filepath.Join(c.dir, "mc-config"),
		fmt.Sprintf("MC_HOST_bench=http://%s:%s@%s", srv.AccessKey, srv.SecretKey, srv.Host),
		"MC_DISABLE_PAGER=1",
	)
	childEnv := append(os.Environ(),
		envEndpoint+"="+srv.Endpoint, envAccess+"="+srv.AccessKey, envSecret+"="+srv.SecretKey,
	)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	out := filepath.Join(c.dir, "out")
	transfers := transfersOf(c, big, small, out)
	results, err := runTransfers(c, srv, tools{self: self, mcBin: mcBin, mcEnv: mcEnv, childEnv: childEnv,
		childFlags: []string{"-part-size", strconv.FormatInt(c.partSize, 10), "-concurrency", strconv.Itoa(c.concurrency)}}, transfers, out)
	if err != nil {
		return err
	}
	report(c, transfers, results)
	return nil
}

// parseFlags returns the configuration the flags give.
func parseFlags() (config, error) {
	var c config
	flag.StringVar(&c.sizeText, "size", "1GiB", "size of the large file")
	flag.Int64Var(&c.files, "files", 1000, "number of files of the directory")
	flag.StringVar(&c.fileSizeText, "file-size", "64KiB", "size of each file of the directory")
	flag.IntVar(&c.runs, "runs", 3, "runs of each transfer; the median is reported")
	flag.StringVar(&c.dir, "dir", "", "work directory (default: a new temporary one)")
	flag.Int64Var(&c.partSize, "part-size", 0, "pipectl's S3 part size in bytes (0: default)")
	flag.IntVar(&c.concurrency, "concurrency", 0, "pipectl's parts in flight (0: default)")
	flag.BoolVar(&c.keep, "keep", false, "keep the work directory")
	flag.BoolVar(&c.settle, "settle", true, "before each measured transfer, write back dirty pages (sync) so no transfer pays for the previous one's writes")
	flag.Parse()
	var err error
	if c.size, err = parseSize(c.sizeText); err != nil {
		return c, err
	}
	if c.fileSize, err = parseSize(c.fileSizeText); err != nil {
		return c, err
	}
	return c, nil
}

// generate writes the large file (big) and the directory of files (small)
// in the work directory.
func generate(c config) (big, small string, err error) {
	fmt.Fprintf(os.Stderr, "s3bench: generating %s file and %d × %s files in %s\n", c.sizeText, c.files, c.fileSizeText, c.dir)
	big = filepath.Join(c.dir, "src", "big.bin")
	if err := writeRandom(big, c.size, 1); err != nil {
		return "", "", err
	}
	small = filepath.Join(c.dir, "src", "files")
	for i := range c.files {
		if err := writeRandom(filepath.Join(small, fmt.Sprintf("d%02d", i%10), fmt.Sprintf("f%04d.bin", i)), c.fileSize, uint64(i+2)); err != nil {
			return "", "", err
		}
	}
	return big, small, nil
}

// transfersOf are the transfers measured, uploads first (downloads read
// them): of big and of the directory small, downloaded into out.
func transfersOf(c config, big, small, out string) []transfer {
	size, fileSize := c.sizeText, c.fileSizeText
	root := "s3://" + bucket + "/pipectl"
	return []transfer{{
		name:  "upload " + size + " file",
		bytes: c.size,
		mc: func(r int) []string {
			return []string{"cp", "--quiet", big, fmt.Sprintf("bench/%s/mc/big-%d", bucket, r)}
		},
		pc: func(r int) []string { return []string{"publish", root, fmt.Sprintf("r%d/s/big", r), big} },
	}, {
		name:  "download " + size + " file",
		bytes: c.size,
		mc: func(r int) []string {
			return []string{"cp", "--quiet", fmt.Sprintf("bench/%s/mc/big-%d", bucket, r), filepath.Join(out, fmt.Sprintf("mc-big-%d", r))}
		},
		pc: func(r int) []string {
			return []string{"fetch", root, fmt.Sprintf("r%d/s/big", r), filepath.Join(out, fmt.Sprintf("pc-big-%d", r))}
		},
	}, {
		name:  fmt.Sprintf("upload %d×%s dir", c.files, fileSize),
		bytes: c.files * c.fileSize,
		mc: func(r int) []string {
			return []string{"cp", "--quiet", "--recursive", small + "/", fmt.Sprintf("bench/%s/mc/dir-%d/", bucket, r)}
		},
		pc: func(r int) []string { return []string{"publish", root, fmt.Sprintf("r%d/s/dir", r), small} },
	}, {
		name:  fmt.Sprintf("download %d×%s dir", c.files, fileSize),
		bytes: c.files * c.fileSize,
		mc: func(r int) []string {
			return []string{"cp", "--quiet", "--recursive", fmt.Sprintf("bench/%s/mc/dir-%d/", bucket, r), filepath.Join(out, fmt.Sprintf("mc-dir-%d", r)) + "/"}
		},
		pc: func(r int) []string {
			return []string{"fetch", root, fmt.Sprintf("r%d/s/dir", r), filepath.Join(out, fmt.Sprintf("pc-dir-%d", r))}
		},
	}}
}

// runTransfers runs each transfer c.runs times with each tool (t) against
// server srv, removing the downloads (out) after each download transfer,
// and returns their results, [mc, pipectl] for each transfer.
func runTransfers(c config, srv *miniotest.Server, t tools, transfers []transfer, out string) ([][2]result, error) {
	results := make([][2]result, len(transfers)) // [mc, pipectl]
	// Uploads first (downloads read them); tools alternate within each run.
	for i, tr := range transfers {
		for r := range c.runs {
			for k := range 2 {
				tool := (k + r) % 2 // alternate which tool goes first
				var m measurement
				var err error
				if c.settle {
					syscall.Sync()
				}
				before := procCPU(srv.Pid())
				if tool == 0 {
					m, err = measure(t.self, t.mcEnv, t.mcBin, tr.mc(r)...)
				} else {
					m, err = measure(t.self, t.childEnv, t.self, slices.Concat([]string{"child"}, t.childFlags, tr.pc(r))...)
				}
				if err != nil {
					return nil, fmt.Errorf("%s (%s): %w", tr.name, []string{"mc", "pipectl"}[tool], err)
				}
				m.serverCPU = procCPU(srv.Pid()) - before
				results[i][tool].secs = append(results[i][tool].secs, m.secs)
				results[i][tool].rss = append(results[i][tool].rss, m.rssMiB)
				fmt.Fprintf(os.Stderr, "s3bench: %-28s %-8s run %d: %6.2fs %5.0f MiB, CPU %.2fs client %.2fs server\n",
					tr.name, []string{"mc", "pipectl"}[tool], r+1, m.secs, m.rssMiB, m.cpu, m.serverCPU)
			}
		}
		if strings.HasPrefix(tr.name, "download") {
			if err := os.RemoveAll(out); err != nil {
				return nil, err
			}
		}
	}
	return results, nil
}

// report prints the table of the transfers' results and whether the goal
// is met.
func report(c config, transfers []transfer, results [][2]result) {
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "transfer\ttool\tseconds\tmin–max\tMB/s\tpeak RSS MiB\tthroughput vs mc\tRSS vs mc\t\n")
	ok := true
	for i, tr := range transfers {
		mcS, mcR := median(results[i][0].secs), slices.Max(results[i][0].rss)
		pcS, pcR := median(results[i][1].secs), slices.Max(results[i][1].rss)
		mb := float64(tr.bytes) / 1e6
		fmt.Fprintf(w, "%s\tmc\t%.2f\t%s\t%.0f\t%.0f\t\t\t\n", tr.name, mcS, spread(results[i][0].secs), mb/mcS, mcR)
		fmt.Fprintf(w, "%s\tpipectl\t%.2f\t%s\t%.0f\t%.0f\t%.2f×\t%.2f×\t\n", tr.name, pcS, spread(results[i][1].secs), mb/pcS, pcR, mcS/pcS, pcR/mcR)
		if mcS/pcS < 1.05 || pcR > mcR {
			ok = false
		}
	}
	w.Flush()
	fmt.Printf("runs: %d (median time, max RSS); goal: ≥1.05× mc's throughput at ≤ mc's peak RSS: %s\n", c.runs, map[bool]string{true: "met", false: "NOT met"}[ok])
}

type measurement struct{ secs, rssMiB, cpu, serverCPU float64 }

// measure runs a command through `s3bench measure` and returns its wall
// time, peak RSS and CPU time.
//
// On Linux a child's peak RSS starts at its parent's RSS when it forks (the
// high-water mark survives exec), so both tools are started from a small
// launcher process rather than from this one, which has generated gigabytes.
func measure(self string, env []string, bin string, args ...string) (measurement, error) {
	cmd := exec.Command(self, append([]string{"measure", bin}, args...)...)
	cmd.Env = env
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return measurement{}, fmt.Errorf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, stderr.String())
	}
	var m measurement
	if _, err := fmt.Sscan(stdout.String(), &m.secs, &m.rssMiB, &m.cpu); err != nil {
		return m, fmt.Errorf("measure printed %q: %v", stdout.String(), err)
	}
	return m, nil
}

// measureChild runs args and prints its wall seconds, peak RSS in MiB and
// CPU seconds.
func measureChild(args []string) error {
	if len(args) == 0 {
		return errors.New("want a command")
	}
	cmd := exec.Command(args[0], args[1:]...)
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%v\n%s", err, stderr.String())
	}
	secs := time.Since(start).Seconds()
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return errors.New("no rusage on this system")
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	fmt.Printf("%f %f %f\n", secs, float64(ru.Maxrss)/1024, cpu) // Maxrss is in KiB on Linux
	return nil
}

// child runs one pipectl transfer: [-part-size N] [-concurrency N]
// [-cpuprofile FILE] publish ROOT KEY SRC or fetch ROOT KEY DEST.
func child(argv []string) error {
	var opts artifacts.Options
	fl := flag.NewFlagSet("child", flag.ContinueOnError)
	fl.Int64Var(&opts.S3.PartSize, "part-size", 0, "S3 part size in bytes (0: the store's default)")
	fl.IntVar(&opts.S3.Concurrency, "concurrency", 0, "parts in flight (0: the store's default)")
	cpuprofile := fl.String("cpuprofile", "", "write a CPU profile to this file")
	if err := fl.Parse(argv); err != nil {
		return err
	}
	args := fl.Args()
	if len(args) != 4 {
		return fmt.Errorf("want publish|fetch ROOT KEY PATH, got %q", args)
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	ctx := context.Background()
	// As the CLI does: bars on a terminal, nothing otherwise (the benchmark).
	ctx = artifacts.WithProgress(ctx, progress.Terminal(os.Stderr))
	s, err := artifacts.Open(ctx, args[1], opts)
	if err != nil {
		return err
	}
	switch args[0] {
	case "publish":
		_, err = artifacts.Publish(ctx, s, args[2], args[3], artifacts.Metadata{Type: "Artifact"})
	case "fetch":
		_, err = artifacts.Fetch(ctx, s, args[2], args[3], artifacts.FetchOptions{})
	default:
		err = fmt.Errorf("unknown transfer %q", args[0])
	}
	return err
}

// procCPU returns the CPU seconds process pid has used, from /proc.
func procCPU(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name (which is in parentheses): utime and stime are the 14th and 15th.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	s, _ := strconv.ParseFloat(f[12], 64)
	return (u + s) / 100 // clock ticks; 100 per second on Linux
}

func tool(name, env string) (string, error) {
	if p := os.Getenv(env); p != "" {
		return p, nil
	}
	return miniotest.BuildTool(name)
}

func writeRandom(p string, size int64, seed uint64) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.Create(p)
	if err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(seed, 7))
	buf := make([]byte, 1<<20)
	for size > 0 {
		for i := 0; i < len(buf); i += 8 {
			binary.LittleEndian.PutUint64(buf[i:], r.Uint64())
		}
		n := min(int64(len(buf)), size)
		if _, err := f.Write(buf[:n]); err != nil {
			f.Close()
			return err
		}
		size -= n
	}
	return f.Close()
}

func parseSize(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1}}
	for _, u := range units {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			v, err := strconv.ParseFloat(n, 64)
			if err != nil {
				return 0, fmt.Errorf("size %q: %w", s, err)
			}
			return int64(v * float64(u.mult)), nil
		}
	}
	return strconv.ParseInt(s, 10, 64)
}

// spread formats the fastest and slowest of v.
func spread(v []float64) string {
	return fmt.Sprintf("%.2f–%.2f", slices.Min(v), slices.Max(v))
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
