"""bgsim's sensitivity estimators checked against SALib's on the same points and outputs.

`bgsim sensitivity check` evaluates the Ishigami function at Saltelli's design and at Morris
trajectories and writes the points, the outputs and its estimates; SALib's analysers, given
those outputs, must give the same indices and elementary effects. `make test` runs this with
SALib installed in its environment (make python).
"""
import csv
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from SALib.analyze import morris, sobol

BINARY = os.environ.get("BGSIM_BINARY") or str(Path(__file__).resolve().parents[2] / ".build" / "debug" / "bgsim")
PROBLEM = {"num_vars": 3, "names": ["x1", "x2", "x3"], "bounds": [[0, 1]] * 3}


@pytest.fixture(scope="module")
def check(tmp_path_factory):
    if not os.access(BINARY, os.X_OK):
        pytest.fail(f"no bgsim binary at {BINARY}: build it (swift build) or set BGSIM_BINARY")
    out = tmp_path_factory.mktemp("check")
    subprocess.run([BINARY, "sensitivity", "check", "--samples", "1024", "--trajectories", "20", "--tolerance", "0.05", "--out", str(out)],
                   check=True, stdout=subprocess.DEVNULL)

    def table(name):
        with open(out / name, newline="") as f:
            return list(csv.DictReader(f))
    return table


def points(rows):
    return np.array([[float(r[c]) for c in ("x1", "x2", "x3")] for r in rows]), np.array([float(r["y"]) for r in rows])


def test_sobol_indices_are_salibs(check):
    _, y = points(check("sobol.csv"))
    ours = {r["factor"]: r for r in check("indices.csv") if r["method"] == "sobol"}
    theirs = sobol.analyze(PROBLEM, y, calc_second_order=False, num_resamples=10, seed=1)
    for i, name in enumerate(PROBLEM["names"]):
        assert float(ours[name]["first"]) == pytest.approx(theirs["S1"][i], abs=1e-9)
        assert float(ours[name]["total"]) == pytest.approx(theirs["ST"][i], abs=1e-9)
        # 1,024 samples: within 0.05 of the closed form.
        assert float(ours[name]["first"]) == pytest.approx(float(ours[name]["known_first"]), abs=0.05)
        assert float(ours[name]["total"]) == pytest.approx(float(ours[name]["known_total"]), abs=0.05)


def test_morris_effects_are_salibs(check):
    x, y = points(check("morris.csv"))
    ours = {r["factor"]: r for r in check("indices.csv") if r["method"] == "morris"}
    theirs = morris.analyze(PROBLEM, x, y, num_levels=4, num_resamples=10, seed=1)
    for i, name in enumerate(PROBLEM["names"]):
        assert float(ours[name]["mu_star"]) == pytest.approx(theirs["mu_star"][i], rel=1e-9)
        assert float(ours[name]["mu"]) == pytest.approx(theirs["mu"][i], rel=1e-9, abs=1e-9)
        assert float(ours[name]["sigma"]) == pytest.approx(theirs["sigma"][i], rel=1e-9)
