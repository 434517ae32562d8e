// Command mkimage builds pipectl's OCI image (linux/amd64 and linux/arm64)
// without a container daemon and pushes it (make image IMAGE=REGISTRY/pipectl:TAG):
//
//	go run ./cmd/pipectl/internal/mkimage -image REGISTRY/pipectl:TAG [-version V] [-insecure]
//	    [-platform OS/ARCH] [-binary FILE -pod-binary FILE]
//
// -platform builds one platform's image (an index of one); -binary and
// -pod-binary pack already built static binaries of that platform (pipectl
// and its pod runtime, pipectl-pod) instead of building them (the e2e test
// bed packs the ones it built). It prints the pushed reference
// pinned to the index's digest.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"pipectl.dev/pipectl/cmd/internal/buildinfo"
	"pipectl.dev/pipectl/cmd/pipectl/internal/imagebuild"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "mkimage:", err)
		os.Exit(1)
	}
}

func run() error {
	ref := flag.String("image", "", "where to push: REGISTRY/NAME:TAG")
	version := flag.String("version", "dev", "pipectl's version")
	insecure := flag.Bool("insecure", false, "reach the registry over plain HTTP")
	platform := flag.String("platform", "", "build only this platform (OS/ARCH, e.g. linux/amd64); default linux/amd64 and linux/arm64")
	binary := flag.String("binary", "", "pack this already built static binary (of -platform's platform) instead of building one")
	podBinary := flag.String("pod-binary", "", "with -binary: the already built pod runtime (pipectl-pod) to pack")
	flag.Parse()
	if *ref == "" || flag.NArg() > 0 {
		return fmt.Errorf("usage: mkimage -image REGISTRY/NAME:TAG [-version V] [-insecure] [-platform OS/ARCH] [-binary FILE -pod-binary FILE]")
	}
	opts := imagebuild.Options{Source: ".", Version: *version, VersionVar: buildinfo.VersionVar, Log: os.Stderr, Binary: *binary, PodBinary: *podBinary}
	if *platform != "" {
		p, err := v1.ParsePlatform(*platform)
		if err != nil || p.OS == "" || p.Architecture == "" {
			return fmt.Errorf("-platform %q: want OS/ARCH (%v)", *platform, err)
		}
		opts.Platforms = []v1.Platform{*p}
	}
	if *binary != "" && *platform == "" {
		return fmt.Errorf("-binary %s: name its platform with -platform OS/ARCH", *binary)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	began := time.Now()
	idx, err := imagebuild.Build(ctx, opts)
	if err != nil {
		return err
	}
	pushed := time.Now()
	pinned, err := imagebuild.Push(ctx, idx, *ref, *insecure, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "mkimage: built in %s, pushed in %s\n", pushed.Sub(began).Round(100*time.Millisecond), time.Since(pushed).Round(100*time.Millisecond))
	fmt.Println(pinned)
	return nil
}
