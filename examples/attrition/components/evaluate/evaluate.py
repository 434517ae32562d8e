#!/usr/bin/env python3
"""Evaluate the attrition model written by train.py on a test CSV.

Usage:
  evaluate.py --model PATH --data PATH --metrics PATH --accuracy PATH

Writes --metrics as a JSON object {"accuracy", "auc", "loss", "rows"} and
--accuracy as the bare accuracy number. Accuracy uses a 0.5 threshold on the
predicted probability; AUC is the rank-based (Mann-Whitney) ROC AUC with ties
counted as one half; loss is the mean binary cross-entropy.
"""

import argparse
import json
import math
import os
import sys
import time
import warnings

import numpy as np
import torch

LABEL = "attrition"


def log(msg):
    print(msg, flush=True)


def die(msg, code=2):
    print("[evaluate] error: " + msg, file=sys.stderr, flush=True)
    sys.exit(code)


def build_model(layer_sizes):
    """features -> hidden (ReLU) ... -> 1 logit. Same layout as train.py."""
    layers = []
    for i in range(len(layer_sizes) - 1):
        layers.append(torch.nn.Linear(layer_sizes[i], layer_sizes[i + 1]))
        if i < len(layer_sizes) - 2:
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


def load_model(path):
    if not os.path.isfile(path):
        die("--model %s: no such file" % path)
    try:
        ckpt = torch.load(path, map_location="cpu")
    except Exception as e:  # noqa: BLE001 - any unpickling problem is bad input
        die("--model %s: cannot load: %s" % (path, e))
    need = ("state_dict", "feature_names", "mean", "std", "layer_sizes")
    if not isinstance(ckpt, dict) or any(k not in ckpt for k in need):
        die("--model %s: not a train.py model (expected keys %s)" % (path, ", ".join(need)))
    names = list(ckpt["feature_names"])
    sizes = [int(s) for s in ckpt["layer_sizes"]]
    if len(sizes) < 2 or sizes[0] != len(names) or sizes[-1] != 1:
        die("--model %s: layer sizes %s do not match %d features" % (path, sizes, len(names)))
    if len(ckpt["mean"]) != len(names) or len(ckpt["std"]) != len(names):
        die("--model %s: mean/std length does not match the feature count" % path)
    model = build_model(sizes)
    try:
        model.load_state_dict(ckpt["state_dict"])
    except Exception as e:  # noqa: BLE001
        die("--model %s: state_dict does not fit layer sizes %s: %s" % (path, sizes, e))
    model.eval()
    mean = np.asarray(ckpt["mean"], dtype=np.float64)
    std = np.asarray(ckpt["std"], dtype=np.float64)
    return model, names, mean, std, sizes


def load_csv(path, feature_names):
    """Return (X [n, f] in the model's feature order, y [n])."""
    if not os.path.isfile(path):
        die("--data %s: no such file" % path)
    with open(path, newline="") as f:
        header_line = f.readline()
    header = [h.strip() for h in header_line.strip().split(",")] if header_line.strip() else []
    if not header:
        die("--data %s: empty file, expected a CSV with a header row" % path)
    missing = [c for c in feature_names + [LABEL] if c not in header]
    if missing:
        die("--data %s: missing column(s) %s" % (path, ", ".join(missing)))
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
    y = m[:, header.index(LABEL)]
    if not np.all((y == 0) | (y == 1)):
        die("--data %s: column %r must contain only 0 and 1" % (path, LABEL))
    X = m[:, [header.index(c) for c in feature_names]]
    return X, y


def roc_auc(y, scores):
    """Rank-based ROC AUC (Mann-Whitney U); tied scores get their average rank."""
    n_pos = int(y.sum())
    n_neg = len(y) - n_pos
    if n_pos == 0 or n_neg == 0:
        return None
    order = np.argsort(scores, kind="mergesort")
    sorted_scores = scores[order]
    ranks = np.empty(len(scores), dtype=np.float64)
    # Average 1-based rank for every run of equal scores.
    _, starts, counts = np.unique(sorted_scores, return_index=True, return_counts=True)
    avg = starts + (counts + 1) / 2.0
    ranks[order] = np.repeat(avg, counts)
    return float((ranks[y == 1].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def check_output_path(flag, path):
    if not path or os.path.isdir(path):
        die("%s %r must be a file path" % (flag, path))
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        die("%s: parent directory %s does not exist" % (flag, parent))


def main(argv=None):
    ap = argparse.ArgumentParser(description="Evaluate the attrition model on a test CSV.")
    ap.add_argument("--model", required=True, help="model file written by train.py")
    ap.add_argument("--data", required=True, help="test CSV (with header, label column 'attrition')")
    ap.add_argument("--metrics", required=True, help="output JSON metrics path")
    ap.add_argument("--accuracy", required=True, help="output path for the bare accuracy number")
    args = ap.parse_args(argv)
    check_output_path("--metrics", args.metrics)
    check_output_path("--accuracy", args.accuracy)
    if os.path.abspath(args.metrics) == os.path.abspath(args.accuracy):
        die("--metrics and --accuracy must be different paths")

    t0 = time.time()
    torch.set_num_threads(1)  # a single forward pass of a tiny MLP
    model, names, mean, std, sizes = load_model(args.model)
    log("loaded model %s (%s, %d features)" % (args.model, "->".join(map(str, sizes)), len(names)))
    X, y = load_csv(args.data, names)
    log("loaded %s: %d rows, positive rate %.4f" % (args.data, len(y), y.mean()))

    Xs = torch.from_numpy(((X - mean) / std).astype(np.float32))
    with torch.no_grad():
        logits = model(Xs).squeeze(1).double()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(
            logits, torch.from_numpy(y)).item()
    logits = logits.numpy()
    prob = 1.0 / (1.0 + np.exp(-logits))
    accuracy = float(((prob >= 0.5).astype(np.float64) == y).mean())
    auc = roc_auc(y, logits)
    if auc is None:
        log("warning: the test set has a single class; AUC is undefined (null)")

    metrics = {"accuracy": accuracy, "auc": auc, "loss": float(loss), "rows": int(len(y))}
    if not math.isfinite(metrics["loss"]):
        die("loss is not finite (%r); the model is broken" % metrics["loss"], code=1)
    with open(args.metrics, "w") as f:
        json.dump(metrics, f, indent=2, sort_keys=True)
        f.write("\n")
    with open(args.accuracy, "w") as f:
        f.write("%.6f" % accuracy)
    log("accuracy %.4f auc %s loss %.4f rows %d"
        % (accuracy, "null" if auc is None else "%.4f" % auc, loss, len(y)))
    log("wrote %s and %s in %.2fs" % (args.metrics, args.accuracy, time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
