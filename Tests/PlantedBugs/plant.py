#!/usr/bin/env python3
"""Plants each one-line bug of bugs.tsv in a copy of the tree, builds it and runs the guards
(FingerprintTests, OutputInvariantTests, ForecastColumnTests, the policies' own suites and the declared keys'), and
prints a Markdown table of what caught each bug (issue 71). `make planted-bugs`; about a minute
a bug on 2 cores. Exit 1 if a bug was not caught or no longer applies.

bugs.tsv: one bug a line, tab-separated: id, what it breaks, file, the exact text, its
replacement (`\\n` for a line break). The text must occur exactly once in the file.
"""
import os, re, shutil, subprocess, sys

repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
work = os.path.join(repo, ".build-planted")
guards = "FingerprintTests|OutputInvariantTests|ForecastColumnTests|DuetTests|AndroidTests|AOSPTests|DeclaredKeysTests|ScenarioTests|MechanismTests"
swift = os.environ.get("SWIFT", "swift")
only = set(sys.argv[1:])


def copy_tree():
    tree = os.path.join(work, "repo")
    shutil.rmtree(tree, ignore_errors=True)
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=repo,
                           check=True, capture_output=True).stdout.decode().split("\0")
    for f in filter(None, files):
        src = os.path.join(repo, f)
        if os.path.isfile(src):
            os.makedirs(os.path.dirname(os.path.join(tree, f)), exist_ok=True)
            shutil.copy2(src, os.path.join(tree, f))
    return tree


def run(tree, *args):
    return subprocess.run([swift, *args, "--scratch-path", os.path.join(work, "build")], cwd=tree,
                          capture_output=True, text=True)


def main():
    bugs = []
    for line in open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "bugs.tsv"), encoding="utf-8"):
        if line.strip() and not line.startswith("#"):
            ident, what, path, old, new = line.rstrip("\n").split("\t")
            if not only or ident in only:
                bugs.append((ident, what, path, old.replace("\\n", "\n"), new.replace("\\n", "\n")))
    tree = copy_tree()
    built = run(tree, "build", "--build-tests")
    if built.returncode:
        sys.exit("the unchanged copy does not build:\n" + built.stdout[-3000:])
    clean = run(tree, "test", "--skip-build", "--filter", guards)
    if clean.returncode:
        sys.exit("the guards fail on the unchanged copy:\n" + clean.stdout[-3000:])
    print("| bug | breaks | file | caught by |")
    print("| --- | --- | --- | --- |")
    missed = 0
    for ident, what, path, old, new in bugs:
        file = os.path.join(tree, path)
        text = open(file, encoding="utf-8").read()
        if text.count(old) != 1:
            print(f"| {ident} | {what} | `{path}` | **does not apply** ({text.count(old)} matches) |", flush=True)
            missed += 1
            continue
        open(file, "w", encoding="utf-8").write(text.replace(old, new))
        try:
            built = run(tree, "build", "--build-tests")
            if built.returncode:
                caught = "**does not build**"
                missed += 1
            else:
                out = run(tree, "test", "--skip-build", "--filter", guards).stdout
                failed = sorted(set(re.findall(r"✘ Test (\w+)\(", out)))
                crashed = "Fatal error" in out or "Assertion failed" in out or "exited with" in out
                if failed or crashed:
                    stop = re.search(r"(?:Assertion failed|Fatal error): ([^\n]*)", out)
                    caught = ", ".join(f"`{t}`" for t in failed)
                    if stop:
                        caught += ("; " if caught else "") + "assertion: " + stop.group(1).split(": ")[-1][:90]
                else:
                    caught = "**not caught**"
                    missed += 1
        finally:
            open(file, "w", encoding="utf-8").write(text)
        print(f"| {ident} | {what} | `{path}` | {caught} |", flush=True)
    sys.exit(1 if missed else 0)


main()
