"""Distributed XGBoost training, as under Kubeflow Trainer's xgboost runtime.

Every worker reads the DMLC_* variables pipectl sets (Trainer v2's names):
rank 0 (DMLC_TASK_ID=0) starts the tracker at DMLC_TRACKER_URI:DMLC_TRACKER_PORT,
every worker joins it through xgboost.collective and trains on its shard of
the data; the workers build one model together. Rank 0 saves it and scores
it on held-out data.
"""
import argparse
import hashlib
import json
import os

import numpy as np
import xgboost as xgb
from xgboost import collective
from xgboost.tracker import RabitTracker


def data(rows, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(rows, 10))
    w = np.linspace(-2, 2, 10)
    y = ((x @ w + 0.5 * x[:, 0] * x[:, 1]) > 0).astype(np.float32)
    return x, y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=8000)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--threads", type=int, default=0, help="OpenMP threads per worker (0: all cores)")
    ap.add_argument("--model", required=True)
    ap.add_argument("--metrics", required=True)
    a = ap.parse_args()

    rank = int(os.environ["DMLC_TASK_ID"])
    workers = int(os.environ["DMLC_NUM_WORKER"])
    uri = os.environ["DMLC_TRACKER_URI"]
    port = int(os.environ["DMLC_TRACKER_PORT"])

    tracker = None
    if rank == 0:
        tracker = RabitTracker(host_ip="0.0.0.0", n_workers=workers, port=port)
        tracker.start(workers)

    with collective.CommunicatorContext(
        xgboost_communicator="rabit",
        rabit_tracker_uri=uri,
        rabit_tracker_port=port,
        rabit_task_id=str(rank),
        rabit_world_size=workers,
    ):
        me, world = collective.get_rank(), collective.get_world_size()
        x, y = data(a.rows, seed=1)
        shard = slice(me, None, world)  # this worker's rows only
        dtrain = xgb.DMatrix(x[shard], label=y[shard])
        params = {"objective": "binary:logistic", "tree_method": "hist", "max_depth": 4, "eta": 0.3, "nthread": a.threads}
        booster = xgb.train(params, dtrain, num_boost_round=a.rounds)
        raw = booster.save_raw("json")
        # Every worker holds the same model: the workers built it together.
        print(f"worker {me} of {world}: trained on {len(y[shard])} rows, model sha256 {hashlib.sha256(raw).hexdigest()}", flush=True)
    if tracker is not None:
        tracker.join()
    if rank == 0:
        # Outside the communicator: a DMatrix of rank 0's alone.
        with open(a.model, "wb") as f:  # XGBoost's JSON model format
            f.write(booster.save_raw("json"))
        hx, hy = data(2000, seed=2)  # held-out
        accuracy = float(((booster.predict(xgb.DMatrix(hx)) > 0.5) == hy).mean())
        with open(a.metrics, "w") as f:
            json.dump({"accuracy": accuracy, "workers": world}, f)
        print(f"held-out accuracy {accuracy:.4f}", flush=True)


if __name__ == "__main__":
    main()
