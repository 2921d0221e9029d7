#!/usr/bin/env bash
# The report benchmark (`make report-bench`): the report of a 10,000-row sweep
# (Benchmarks/sweeps/report-10k.yaml) must open and draw in a browser in under 2 seconds.
# Writes the sweep (once, into .build/report-bench) and its report, then loads the report
# RUNS times in headless chromium. The browser's own start-up is not the page's: a copy of the
# report with a timing script (the report itself allows none) logs, from the page's navigation
# start, when the document was parsed (domInteractive), when it loaded (loadEventEnd) and the
# next frame after load (drawn). Medians of RUNS loads.
set -euo pipefail
cd "$(dirname "$0")/.."
bgsim=.build/release/bgsim
out=.build/report-bench
RUNS=${RUNS:-5}
if [ ! -f "$out/runs.csv" ]; then
  "$bgsim" sweep Benchmarks/sweeps/report-10k.yaml --no-tasks --out "$out" --quiet
fi
s=$(date +%s.%N); "$bgsim" report "$out" --quiet; e=$(date +%s.%N)
echo "runs.csv rows: $(($(wc -l < "$out/runs.csv") - 1)); report written in $(awk "BEGIN{printf \"%.2f\", $e - $s}") s; report.html $(wc -c < "$out/report.html") bytes"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
sed -e '/Content-Security-Policy/d' \
    -e 's#</body></html>#<script>addEventListener("load",()=>requestAnimationFrame(()=>requestAnimationFrame(()=>{const t=performance.getEntriesByType("navigation")[0];console.log("TIMING "+[t.domInteractive,t.loadEventEnd,performance.now()].map(x=>x.toFixed(0)).join(" "));})));</script></body></html>#' \
    "$out/report.html" > "$tmp/timed.html"
grep -q "TIMING" "$tmp/timed.html" || { echo "could not instrument the report" >&2; exit 1; }
for _ in $(seq "$RUNS"); do
  HOME=$tmp timeout 60 chromium --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$tmp/profile" \
    --window-size=1400,3000 --enable-logging=stderr --v=0 --screenshot="$tmp/shot.png" "file://$tmp/timed.html" 2>&1 >/dev/null \
    | sed -n 's/.*"TIMING \([0-9]*\) \([0-9]*\) \([0-9]*\)".*/\1 \2 \3/p'
done > "$tmp/times"
[ -s "$tmp/times" ] || { echo "the browser logged no timing" >&2; exit 1; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
printf "in the browser, median of %d loads: parsed %s ms, loaded %s ms, drawn %s ms (target: under 2000 ms)\n" "$(wc -l < "$tmp/times")" \
  "$(cut -d' ' -f1 "$tmp/times" | median)" "$(cut -d' ' -f2 "$tmp/times" | median)" "$(cut -d' ' -f3 "$tmp/times" | median)"
