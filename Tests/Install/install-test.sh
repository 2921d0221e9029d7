#!/usr/bin/env bash
# The install test, run by `make test`: bgsim installed as `make install` lays it out (here the
# given binary, through `make install-files`) into a new prefix runs its bundled examples by
# name from an empty folder, finding them under PREFIX/share/bgsim, not in this clone.
#   Tests/Install/install-test.sh .build/debug/bgsim
set -euo pipefail
binary=$(realpath "${1:-.build/debug/bgsim}")
repo=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "install test FAILED: $*" >&2; exit 1; }

make -s -C "$repo" install-files PREFIX="$tmp/prefix" INSTALL_BIN="$binary" >/dev/null
mkdir "$tmp/empty"
cd "$tmp/empty"
bgsim="$tmp/prefix/bin/bgsim"
listing=$(env -u BGSIM_MODELS "$bgsim" examples) || fail "bgsim examples"
grep -q "^Files in $tmp/prefix/share/bgsim/models/scenarios" <<<"$listing" || fail "the examples are not the installed ones: $listing"
grep -q '^  default ' <<<"$listing" && grep -q '^  refresh-setting ' <<<"$listing" || fail "examples missing: $listing"
env -u BGSIM_MODELS "$bgsim" run default --replications 2 --set duration=6h --quiet || fail "bgsim run default"
env -u BGSIM_MODELS "$bgsim" sweep refresh-setting --replications 1 --set duration=2h --quiet || fail "bgsim sweep refresh-setting"
for f in results/default_duration-6h/manifest.json results/refresh-setting/manifest.json; do
  [ -s "$f" ] || fail "no $f"
done
grep -q "\"scenario_file\": \"$tmp/prefix/share/bgsim/models/scenarios/default.yaml\"" results/default_duration-6h/manifest.json ||
  fail "the run did not read the installed default.yaml"
env -u BGSIM_MODELS "$bgsim" validate defualt 2>"$tmp/err" && fail "a misspelt name was accepted"
grep -qx "error: defualt: no such scenario file; did you mean the bundled scenario 'default' (bgsim run default)?" "$tmp/err" ||
  fail "the misspelt name's error: $(cat "$tmp/err")"
# A prefix with a space, quotes, `$`, a backtick and `$(...)` is one path: installed there,
# nothing run, nothing written beside it or in the checkout; an empty PREFIX is refused.
odd="$tmp/odd dir/it's \"q\" \$HOME \`touch ran1\` \$(touch ran2)"
before=$(cd "$repo" && git status --porcelain --untracked-files=all 2>/dev/null | sort)
make -s -C "$repo" install-files PREFIX="$odd" INSTALL_BIN="$binary" >/dev/null || fail "install into '$odd'"
[ -x "$odd/bin/bgsim" ] && [ -f "$odd/share/bgsim/models/scenarios/default.yaml" ] || fail "not installed into '$odd'"
[ ! -e "$repo/ran1" ] && [ ! -e "$repo/ran2" ] || fail "a command in PREFIX ran"
[ "$(ls -A "$tmp/odd dir")" = "it's \"q\" \$HOME \`touch ran1\` \$(touch ran2)" ] || fail "written beside the prefix: $(ls -A "$tmp/odd dir")"
after=$(cd "$repo" && git status --porcelain --untracked-files=all 2>/dev/null | sort)
[ "$before" = "$after" ] || fail "the checkout changed: $after"
"$odd/bin/bgsim" --version >/dev/null || fail "the installed binary does not run"
if make -s -C "$repo" install-files PREFIX= INSTALL_BIN="$binary" 2>"$tmp/err"; then fail "an empty PREFIX was accepted"; fi
grep -q "^error: PREFIX is empty" "$tmp/err" || fail "the empty PREFIX's error: $(cat "$tmp/err")"

echo "install test passed: installed in a new prefix, bgsim lists its bundled examples and runs 'default' and sweeps 'refresh-setting' by name from an empty folder; a prefix with a space, quotes, \$, a backtick and \$(...) is one path, nothing in it runs"
