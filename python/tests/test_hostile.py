"""The reader given folders that are damaged or made to mislead it: it reads only the folder's
own regular files, named as bgsim names them, checks their sizes before reading, bounds its
memory by what the files hold, and says what is wrong with `bgsim.BadResults`."""

import hashlib
import json
import os
import shutil
import time

import bgsim
import pytest

from test_study import studies  # noqa: F401  (the fixture)


def copy_of(studies, tmp_path, name="run"):  # noqa: F811
    folder = tmp_path / name
    shutil.copytree(studies / name, folder)
    return folder


def manifest(folder):
    return json.loads((folder / "manifest.json").read_text())


def write_manifest(folder, m):
    (folder / "manifest.json").write_text(json.dumps(m))


def entry(path):
    data = path.read_bytes()
    return {"name": path.name, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def test_a_manifest_entry_outside_the_folder_is_refused(studies, tmp_path):  # noqa: F811
    folder = copy_of(studies, tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.csv"
    secret.write_text("a,b\n1,2\n")
    for name in ["../outside/secret.csv", str(secret), "/etc/passwd", "/proc/self/pagemap", "sub/runs.csv", "notes.csv"]:
        m = manifest(folder)
        m["files"].append({"name": name, "bytes": 8, "sha256": "0" * 64})
        write_manifest(folder, m)
        with pytest.raises(bgsim.BadResults, match="not a file bgsim writes"):
            bgsim.load(folder)
        write_manifest(folder, manifest(studies / "run"))


def test_links_and_special_files_are_refused(studies, tmp_path):  # noqa: F811
    folder = copy_of(studies, tmp_path)
    elsewhere = tmp_path / "elsewhere.csv"
    shutil.copy(folder / "runs.csv", elsewhere)
    (folder / "runs.csv").unlink()
    os.symlink(elsewhere, folder / "runs.csv")
    with pytest.raises(bgsim.BadResults, match="symbolic link"):
        bgsim.load(folder)
    # Unlisted, a file is not read either: a manifest of no files names nothing to trust.
    m = manifest(folder)
    m["files"] = []
    write_manifest(folder, m)
    with pytest.raises(bgsim.BadResults, match="symbolic link"):
        bgsim.load(folder, verify=False).runs
    (folder / "runs.csv").unlink()
    shutil.copy(elsewhere, folder / "runs.csv")
    with pytest.raises(bgsim.BadResults, match="lists no runs.csv"):
        bgsim.load(folder, verify=False).runs
    (folder / "runs.csv").unlink()
    os.mkfifo(folder / "runs.csv")
    write_manifest(folder, manifest(studies / "run"))
    start = time.monotonic()
    with pytest.raises(bgsim.BadResults, match="not a regular file"):
        bgsim.load(folder)
    assert time.monotonic() - start < 5


def test_sizes_are_checked_before_reading(studies, tmp_path):  # noqa: F811
    folder = copy_of(studies, tmp_path)
    big = folder / "runs.csv"
    with open(big, "ab") as f:
        f.truncate(big.stat().st_size + (300 << 20))  # sparse: 300 MiB of zeros
    m = manifest(folder)
    for f in m["files"]:
        if f["name"] == "runs.csv":
            f["bytes"] = big.stat().st_size
    write_manifest(folder, m)
    start = time.monotonic()
    with pytest.raises(bgsim.BadResults, match="larger than the reader's limit"):
        bgsim.load(folder)
    with pytest.raises(bgsim.BadResults, match="larger than the reader's limit"):
        bgsim.load(folder, verify=False).runs
    assert time.monotonic() - start < 5


def test_a_header_of_millions_of_columns_is_refused_at_once(studies, tmp_path):  # noqa: F811
    folder = copy_of(studies, tmp_path)
    runs = folder / "runs.csv"
    runs.write_text(",".join(f"c{i}" for i in range(2_000_000)) + "\n")
    m = manifest(folder)
    m["files"] = [f if f["name"] != "runs.csv" else entry(runs) for f in m["files"]]
    write_manifest(folder, m)
    start = time.monotonic()
    with pytest.raises(bgsim.BadResults, match="a header longer than"):
        bgsim.load(folder).runs
    runs.write_text(",".join(f"c{i}" for i in range(20_000)) + "\n")
    m["files"] = [f if f["name"] != "runs.csv" else entry(runs) for f in m["files"]]
    write_manifest(folder, m)
    with pytest.raises(bgsim.BadResults, match="20000 columns"):
        bgsim.load(folder).runs
    assert time.monotonic() - start < 10


def test_memory_follows_the_files_not_the_manifests_claims(studies, tmp_path):  # noqa: F811
    folder = copy_of(studies, tmp_path)
    m = manifest(folder)
    for claim in [{"replications": 10**8}, {"points": 10**8}, {"replications": "many"}, {"policies": "eager"}]:
        write_manifest(folder, {**m, **claim})
        with pytest.raises(bgsim.BadResults):
            bgsim.load(folder).per_app()
    write_manifest(folder, m)
    assert len(bgsim.load(folder).per_app()) > 0
