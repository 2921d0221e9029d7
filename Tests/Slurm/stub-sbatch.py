#!/usr/bin/env python3
"""`sbatch` as a stub, for the tests that run the scripts `bgsim --emit-slurm` writes without a
cluster (GeneratedScriptTests, make fuzz-input): reads the script's #SBATCH block with
sbatch's own rules (quotes group, a backslash escapes the next character, an unquoted '#'
starts a comment, the block ends at the first line that is not a comment), appends the
options as a JSON line to $STUB_LOG, and prints a job id (the number of calls so far)."""
import json
import os
import sys


def words(line):
    """The arguments of one #SBATCH line, as sbatch's _get_argument reads them."""
    out, i, n = [], 0, len(line)
    while True:
        while i < n and line[i].isspace():
            i += 1
        if i >= n:
            return out
        word, quote, escape = "", None, False
        while i < n and (quote or not line[i].isspace()):
            c = line[i]
            i += 1
            if escape:
                word += c
                escape = False
            elif c == "\\":
                escape = True
            elif quote:
                if c == quote:
                    quote = None
                else:
                    word += c
            elif c in "\"'":
                quote = c
            elif c == "#":
                return out + ([word] if word else [])
            else:
                word += c
        out.append(word)


script = sys.argv[-1]
options = []
with open(script, encoding="utf-8") as f:
    for k, line in enumerate(f):
        line = line.rstrip("\n")
        if k == 0 and line.startswith("#!"):
            continue
        if line.strip() and not line.startswith("#"):
            break
        if line.startswith("#SBATCH"):
            options += words(line[len("#SBATCH"):])
log = os.environ["STUB_LOG"]
with open(log, "a", encoding="utf-8") as f:
    f.write(json.dumps({"script": script, "options": options}) + "\n")
print(sum(1 for _ in open(log, encoding="utf-8")))
