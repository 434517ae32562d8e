#!/usr/bin/env python3
"""Generate a seeded synthetic employee-attrition data set and split it.

Usage:
  preprocess.py --rows N --seed S --test-fraction F --train PATH --test PATH

Every row describes one employee; the binary label `attrition` is drawn from
a logistic function of the features (plus a little noise on the logit), so a
small model can learn it. The same seed always gives the same files.
Only numpy and the standard library are used.
"""

import argparse
import csv
import os
import sys
import time

import numpy as np

DEPARTMENTS = ("sales", "rnd", "hr")
DEPARTMENT_WEIGHTS = (0.30, 0.60, 0.10)

COLUMNS = (
    "age",
    "years_at_company",
    "monthly_income",
    "overtime",
    "job_satisfaction",
    "work_life_balance",
    "distance_from_home",
    "num_companies_worked",
    "last_promotion_years",
    "performance_rating",
) + tuple("department_" + d for d in DEPARTMENTS) + ("attrition",)


def log(msg):
    print(msg, flush=True)


def die(msg, code=2):
    print("preprocess.py: error: " + msg, file=sys.stderr, flush=True)
    sys.exit(code)


def generate(rows, seed):
    """Return a dict column -> numpy array with `rows` employees."""
    rng = np.random.default_rng(seed)

    age = np.clip(np.rint(rng.normal(38.0, 9.0, rows)), 18, 62).astype(np.int64)
    max_tenure = age - 18
    years_at_company = np.minimum(
        np.floor(rng.exponential(6.0, rows)), max_tenure).astype(np.int64)

    department = rng.choice(len(DEPARTMENTS), size=rows, p=DEPARTMENT_WEIGHTS)
    dept_pay = np.array([1.00, 1.10, 0.90])[department]
    income = (2500.0 + 110.0 * (age - 18) + 90.0 * years_at_company) * dept_pay
    income = income * rng.lognormal(0.0, 0.30, rows)
    monthly_income = np.clip(np.rint(income / 10.0) * 10.0, 1000, 30000).astype(np.int64)

    overtime = (rng.random(rows) < 0.28).astype(np.int64)
    job_satisfaction = rng.choice(4, size=rows, p=(0.20, 0.20, 0.30, 0.30)) + 1
    work_life_balance = rng.choice(4, size=rows, p=(0.08, 0.22, 0.50, 0.20)) + 1
    distance_from_home = np.clip(
        np.rint(rng.gamma(1.6, 6.0, rows)), 1, 40).astype(np.int64)
    num_companies_worked = np.minimum(
        rng.poisson(np.maximum(0.3, (age - 18) / 9.0)), 9).astype(np.int64)
    last_promotion_years = np.floor(
        rng.random(rows) * (years_at_company + 1)).astype(np.int64)
    performance_rating = rng.choice(4, size=rows, p=(0.05, 0.15, 0.60, 0.20)) + 1

    # Logistic model of the probability to leave.
    young = (age < 30).astype(np.float64)
    z = (
        -3.40
        + 2.55 * overtime
        + 1.35 * young * overtime
        - 0.90 * (job_satisfaction - 2.6)
        - 0.80 * (work_life_balance - 2.8)
        - 0.07 * (age - 38)
        - 1.65 * np.log(monthly_income / 6000.0)
        + 0.08 * (distance_from_home - 9)
        + 0.30 * (num_companies_worked - 2)
        - 0.10 * years_at_company
        + 0.24 * last_promotion_years
        - 0.50 * (performance_rating - 3)
        + np.array([0.70, -0.35, 0.45])[department]
        + rng.normal(0.0, 0.50, rows)
    )
    p = 1.0 / (1.0 + np.exp(-z))
    attrition = (rng.random(rows) < p).astype(np.int64)

    data = {
        "age": age,
        "years_at_company": years_at_company,
        "monthly_income": monthly_income,
        "overtime": overtime,
        "job_satisfaction": job_satisfaction.astype(np.int64),
        "work_life_balance": work_life_balance.astype(np.int64),
        "distance_from_home": distance_from_home,
        "num_companies_worked": num_companies_worked,
        "last_promotion_years": last_promotion_years,
        "performance_rating": performance_rating.astype(np.int64),
    }
    for i, d in enumerate(DEPARTMENTS):
        data["department_" + d] = (department == i).astype(np.int64)
    data["attrition"] = attrition

    # Shuffle the rows (deterministically for the seed).
    order = rng.permutation(rows)
    return {k: v[order] for k, v in data.items()}


def write_csv(path, table, idx):
    matrix = np.stack([table[c][idx] for c in COLUMNS], axis=1)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        w.writerows(matrix.tolist())


def check_output_path(flag, path):
    if not path:
        die("%s must not be empty" % flag)
    if os.path.isdir(path):
        die("%s %s is a directory, expected a file path" % (flag, path))
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        die("%s: parent directory %s does not exist" % (flag, parent))


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Generate synthetic employee attrition data and split it into train/test CSV files.")
    ap.add_argument("--rows", type=int, required=True, help="number of rows to generate")
    ap.add_argument("--seed", type=int, required=True, help="random seed (>= 0)")
    ap.add_argument("--test-fraction", type=float, required=True,
                    help="fraction of rows for the test set, 0 < F < 1")
    ap.add_argument("--train", required=True, help="output CSV path for the training set")
    ap.add_argument("--test", required=True, help="output CSV path for the test set")
    args = ap.parse_args(argv)

    if args.rows < 10:
        die("--rows must be at least 10, got %d" % args.rows)
    if args.seed < 0:
        die("--seed must be >= 0, got %d" % args.seed)
    if not (0.0 < args.test_fraction < 1.0):
        die("--test-fraction must be strictly between 0 and 1, got %g" % args.test_fraction)
    n_test = int(round(args.rows * args.test_fraction))
    n_train = args.rows - n_test
    if n_test < 1 or n_train < 1:
        die("--rows %d with --test-fraction %g leaves an empty train or test set"
            % (args.rows, args.test_fraction))
    check_output_path("--train", args.train)
    check_output_path("--test", args.test)
    if os.path.abspath(args.train) == os.path.abspath(args.test):
        die("--train and --test must be different paths")

    t0 = time.time()
    log("generating %d rows with seed %d" % (args.rows, args.seed))
    table = generate(args.rows, args.seed)
    y = table["attrition"]
    log("features: %s" % ", ".join(COLUMNS[:-1]))
    log("all rows: %d, positive rate %.4f" % (args.rows, y.mean()))

    train_idx = np.arange(0, n_train)
    test_idx = np.arange(n_train, args.rows)
    write_csv(args.train, table, train_idx)
    log("train: %d rows, positive rate %.4f -> %s" % (n_train, y[train_idx].mean(), args.train))
    write_csv(args.test, table, test_idx)
    log("test: %d rows, positive rate %.4f -> %s" % (n_test, y[test_idx].mean(), args.test))
    log("done in %.2fs" % (time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
