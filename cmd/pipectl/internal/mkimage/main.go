// Command mkimage builds pipectl's OCI image (linux/amd64 and linux/arm64)
// without a container daemon and pushes it (make image IMAGE=REGISTRY/pipectl:TAG):
//
//	go run ./cmd/pipectl/internal/mkimage -image REGISTRY/pipectl:TAG [-version V] [-insecure]
//
// It prints the pushed reference pinned to the index's digest.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

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
	flag.Parse()
	if *ref == "" || flag.NArg() > 0 {
		return fmt.Errorf("usage: mkimage -image REGISTRY/NAME:TAG [-version V] [-insecure]")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	began := time.Now()
	idx, err := imagebuild.Build(ctx, imagebuild.Options{Source: ".", Version: *version, Log: os.Stderr})
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
