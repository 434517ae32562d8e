#!/usr/bin/env python3
"""Train a small MLP on the attrition CSV with PyTorch DistributedDataParallel.

Usage:
  train.py --data PATH --epochs E --lr LR --batch-size B --seed S --model PATH

The rank layout comes from the environment, as torchrun or pipectl set it:
RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT. Without them the
script runs as a single process (RANK=0, WORLD_SIZE=1) on 127.0.0.1 and a
free port. The process group uses the gloo backend (CPU).

Each rank trains on rows rank::world_size of the training set; features are
standardised with the mean/std of the full training set, so every rank uses
the same numbers. Only rank 0 writes --model.

If PIPECTL_EXAMPLE_FAIL_RANK equals this process's RANK, the process exits
with code 3 right after joining the process group (used to test gang failure
handling).
"""

import argparse
import math
import os
import socket
import sys
import time
import warnings

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

LABEL = "attrition"
HIDDEN = 32
FAIL_ENV = "PIPECTL_EXAMPLE_FAIL_RANK"

_prefix = "[train]"


def log(msg):
    print("%s %s" % (_prefix, msg), flush=True)


def die(msg, code=2):
    print("%s error: %s" % (_prefix, msg), file=sys.stderr, flush=True)
    sys.exit(code)


def env_int(name, default):
    raw = os.environ.get(name, "")
    if raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        die("environment variable %s=%r is not an integer" % (name, raw))


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def build_model(layer_sizes):
    """features -> hidden (ReLU) ... -> 1 logit. Same layout as evaluate.py."""
    layers = []
    for i in range(len(layer_sizes) - 1):
        layers.append(torch.nn.Linear(layer_sizes[i], layer_sizes[i + 1]))
        if i < len(layer_sizes) - 2:
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


def load_csv(path):
    """Return (feature_names, X float32 [n, f], y float32 [n])."""
    if not os.path.isfile(path):
        die("--data %s: no such file" % path)
    with open(path, newline="") as f:
        header_line = f.readline()
    header = [h.strip() for h in header_line.strip().split(",")] if header_line.strip() else []
    if not header:
        die("--data %s: empty file, expected a CSV with a header row" % path)
    if LABEL not in header:
        die("--data %s: no %r column in header %s" % (path, LABEL, ",".join(header)))
    if len(set(header)) != len(header):
        die("--data %s: duplicate column names in header" % path)
    if len(header) < 2:
        die("--data %s: no feature columns besides %r" % (path, LABEL))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "input contained no data" is reported below
            m = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.float64, ndmin=2)
    except ValueError as e:
        die("--data %s: cannot parse CSV as numbers: %s" % (path, e))
    if m.shape[0] == 0:
        die("--data %s: no data rows" % path)
    if m.shape[1] != len(header):
        die("--data %s: rows have %d columns, header has %d" % (path, m.shape[1], len(header)))
    if not np.all(np.isfinite(m)):
        die("--data %s: contains NaN or infinite values" % path)
    li = header.index(LABEL)
    y = m[:, li]
    if not np.all((y == 0) | (y == 1)):
        die("--data %s: column %r must contain only 0 and 1" % (path, LABEL))
    feature_names = [h for i, h in enumerate(header) if i != li]
    X = np.delete(m, li, axis=1)
    return feature_names, X, y


def main(argv=None):
    global _prefix
    ap = argparse.ArgumentParser(
        description="Distributed (DDP, gloo) training of an attrition classifier.")
    ap.add_argument("--data", required=True, help="training CSV (with header, label column 'attrition')")
    ap.add_argument("--epochs", type=int, required=True, help="number of epochs (>= 1)")
    ap.add_argument("--lr", type=float, required=True, help="Adam learning rate (> 0)")
    ap.add_argument("--batch-size", type=int, required=True, help="per-rank batch size (>= 1)")
    ap.add_argument("--seed", type=int, required=True, help="random seed")
    ap.add_argument("--model", required=True, help="output path of the model (written by rank 0 only)")
    args = ap.parse_args(argv)

    if args.epochs < 1:
        die("--epochs must be >= 1, got %d" % args.epochs)
    if not (args.lr > 0 and math.isfinite(args.lr)):
        die("--lr must be a positive number, got %r" % args.lr)
    if args.batch_size < 1:
        die("--batch-size must be >= 1, got %d" % args.batch_size)
    if args.seed < 0:
        die("--seed must be >= 0, got %d" % args.seed)

    rank = env_int("RANK", 0)
    world = env_int("WORLD_SIZE", 1)
    local_rank = env_int("LOCAL_RANK", 0)
    if world < 1:
        die("WORLD_SIZE must be >= 1, got %d" % world)
    if not (0 <= rank < world):
        die("RANK=%d is out of range for WORLD_SIZE=%d" % (rank, world))
    _prefix = "[rank %d/%d]" % (rank, world)

    if rank == 0:
        if not args.model or os.path.isdir(args.model):
            die("--model %r must be a file path" % args.model)
        parent = os.path.dirname(os.path.abspath(args.model))
        if not os.path.isdir(parent):
            die("--model: parent directory %s does not exist" % parent)

    if world == 1:
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        if not os.environ.get("MASTER_PORT"):
            os.environ["MASTER_PORT"] = str(free_port())
    for name in ("MASTER_ADDR", "MASTER_PORT"):
        if not os.environ.get(name):
            die("%s must be set when WORLD_SIZE=%d" % (name, world))
    os.environ["RANK"] = str(rank)
    os.environ["WORLD_SIZE"] = str(world)

    # The model is tiny: one intra-op thread per rank is much faster than several
    # (thread hand-off costs more than the matrix products), and ranks sharing a
    # node do not fight over cores.
    threads = 1
    torch.set_num_threads(threads)

    t0 = time.time()
    log("joining process group: backend gloo, master %s:%s, local_rank %d, threads %d"
        % (os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"], local_rank, threads))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    log("process group ready in %.2fs" % (time.time() - t0))

    if os.environ.get(FAIL_ENV, "").strip() == str(rank):
        log("failing on purpose")
        # A crash, as when a rank is killed: the process is gone at once.
        # sys.exit would run Python's finalization, which closes the
        # process group's sockets first and may outlast the peer that
        # fails on them, so that the peer would exit first.
        sys.stderr.flush()
        os._exit(3)

    torch.manual_seed(args.seed)

    feature_names, X, y = load_csv(args.data)
    n = X.shape[0]
    if n < world:
        die("--data %s has %d rows, fewer than WORLD_SIZE=%d" % (args.data, n, world))
    # Standardise with statistics of the full training set (same on every rank).
    mean = X.mean(axis=0)
    std = X.std(axis=0)
    std[std < 1e-12] = 1.0
    Xs = ((X - mean) / std).astype(np.float32)
    log("loaded %s: %d rows, %d features, positive rate %.4f"
        % (args.data, n, len(feature_names), y.mean()))

    shard_X = torch.from_numpy(np.ascontiguousarray(Xs[rank::world]))
    shard_y = torch.from_numpy(np.ascontiguousarray(y[rank::world].astype(np.float32)))
    shard_rows = shard_X.shape[0]
    # Every rank must run the same number of steps (each step is an allreduce):
    # use the smallest shard to decide it, and spread each shard over that many batches.
    min_shard = n // world
    steps = max(1, math.ceil(min_shard / args.batch_size))

    layer_sizes = [len(feature_names), HIDDEN, 1]
    model = build_model(layer_sizes)
    ddp = DDP(model)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    opt = torch.optim.Adam(ddp.parameters(), lr=args.lr)
    log("model %s, %d steps/epoch, batch size %d, lr %g"
        % ("->".join(str(s) for s in layer_sizes), steps, args.batch_size, args.lr))

    gen = torch.Generator()
    gen.manual_seed(args.seed * 1000003 + rank)
    for epoch in range(1, args.epochs + 1):
        te = time.time()
        perm = torch.randperm(shard_rows, generator=gen)
        total, count = 0.0, 0
        ddp.train()
        for idx in torch.tensor_split(perm, steps):
            xb, yb = shard_X[idx], shard_y[idx]
            opt.zero_grad()
            loss = loss_fn(ddp(xb).squeeze(1), yb)
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
            count += len(idx)
        log("epoch %d/%d loss %.4f shard_rows %d (%.2fs)"
            % (epoch, args.epochs, total / max(1, count), shard_rows, time.time() - te))

    with torch.no_grad():
        checksum = sum(p.detach().double().sum().item() for p in model.parameters())
    log("synchronised parameter checksum %.6f" % checksum)
    dist.barrier()

    if rank == 0:
        state = {
            "state_dict": {k: v.detach().clone() for k, v in model.state_dict().items()},
            "feature_names": list(feature_names),
            "label": LABEL,
            "mean": [float(v) for v in mean],
            "std": [float(v) for v in std],
            "layer_sizes": layer_sizes,
            "train": {
                "rows": int(n),
                "epochs": args.epochs,
                "lr": args.lr,
                "batch_size": args.batch_size,
                "seed": args.seed,
                "world_size": world,
                "checksum": checksum,
            },
        }
        torch.save(state, args.model)
        log("saved model to %s" % args.model)

    dist.destroy_process_group()
    log("done in %.2fs" % (time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
