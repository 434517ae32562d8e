#!/usr/bin/env python3
"""Score every trial's model on a validation CSV and keep the best.

Usage:
  pick.py --models DIR --data CSV --lrs JSON --trials PATH --best-lr PATH --model PATH

DIR holds one model per trial, named by its index (0, 1, ...), as pipectl
collects a loop step's outputs. The best trial has the highest ROC AUC (then
the lowest loss). Writes --trials (a JSON list of {trial, lr, accuracy, auc,
loss}), --best-lr and a copy of the best model to --model, and prints the
table.
"""

import argparse
import importlib.util
import json
import os
import shutil
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
# The attrition example's evaluate.py: the same model loading and metrics.
# (The component's working directory is the examples folder, so a cluster
# run ships both.)
EVALUATE = os.path.join(HERE, "..", "..", "..", "attrition", "components", "evaluate", "evaluate.py")


def die(msg):
    print("[pick] error: " + msg, file=sys.stderr, flush=True)
    sys.exit(2)


def load_evaluate():
    spec = importlib.util.spec_from_file_location("evaluate", EVALUATE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def score(ev, path, data):
    model, names, mean, std, _ = ev.load_model(path)
    X, y = ev.load_csv(data, names)
    Xs = torch.from_numpy(((X - mean) / std).astype(np.float32))
    with torch.no_grad():
        logits = model(Xs).squeeze(1).double()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, torch.from_numpy(y)).item()
    logits = logits.numpy()
    prob = 1.0 / (1.0 + np.exp(-logits))
    return {"accuracy": float(((prob >= 0.5) == y).mean()), "auc": ev.roc_auc(y, logits), "loss": float(loss)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for flag in ("--models", "--data", "--lrs", "--trials", "--best-lr", "--model"):
        ap.add_argument(flag, required=True)
    args = ap.parse_args(argv)
    try:
        lrs = json.loads(args.lrs)
    except ValueError as e:
        die("--lrs %r: not JSON: %s" % (args.lrs, e))
    if not os.path.isdir(args.models):
        die("--models %s: not a directory" % args.models)
    trials = sorted(os.listdir(args.models), key=lambda n: int(n) if n.isdigit() else -1)
    if not trials or any(not t.isdigit() for t in trials):
        die("--models %s: expected entries 0, 1, ..., got %s" % (args.models, trials))
    if len(trials) != len(lrs):
        die("%d models but %d learning rates" % (len(trials), len(lrs)))
    torch.set_num_threads(1)
    ev = load_evaluate()
    rows = []
    for t in trials:
        m = score(ev, os.path.join(args.models, t), args.data)
        rows.append(dict(trial=int(t), lr=lrs[int(t)], **m))
    best = max(rows, key=lambda r: (r["auc"] if r["auc"] is not None else -1.0, -r["loss"]))
    print("%-6s %-8s %-9s %-7s %-7s" % ("trial", "lr", "accuracy", "auc", "loss"))
    for r in rows:
        mark = "  <- best" if r is best else ""
        auc = "null" if r["auc"] is None else "%.4f" % r["auc"]
        print("%-6d %-8s %-9.4f %-7s %-7.4f%s" % (r["trial"], r["lr"], r["accuracy"], auc, r["loss"], mark))
    with open(args.trials, "w") as f:
        json.dump(rows, f, indent=2)
        f.write("\n")
    with open(args.best_lr, "w") as f:
        f.write(str(best["lr"]))
    shutil.copyfile(os.path.join(args.models, str(best["trial"])), args.model)
    print("best: trial %d, lr %s" % (best["trial"], best["lr"]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
