#!/usr/bin/env bash
# The report test (issue 8), run by `make test`: a run's, a fleet's and a sweep's report, and a
# forecast's page, are opened in a real headless browser (Debian's chromium). Each must render:
# the screenshot is not blank (enough non-white pixels and colours), the DOM after loading holds
# every chart, and the browser logged no console message (the page's Content-Security-Policy
# forbids every request, so any attempt to load a resource is logged as a violation). Laid out
# at 1400 px, each report's tables fit (none cut or scrolling), no chart's text runs past its
# chart, the paired-difference charts are there, and every policy has the same colour in the
# three reports (ios the fixed #0072B2). Control pages with a blocked image, a cut table and a
# title running off its chart are checked the same way first and must fail, so the test can fail.
#   Tests/Report/report-browser-test.sh .build/debug/bgsim
set -euo pipefail
bgsim=$(realpath "${1:-.build/debug/bgsim}")
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HOME="$tmp"   # chromium's profile and crash files stay in the temporary folder

browser() {  # browser PAGE PNG: screenshot and console log; prints the rendered DOM to PAGE.dom
  local page=$1 png=$2
  timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
    --user-data-dir="$tmp/profile" --window-size=1400,2400 --enable-logging=stderr --v=0 \
    --screenshot="$png" "file://$page" 2> "$page.log" >/dev/null
  timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$tmp/profile" \
    --dump-dom "file://$page" 2>/dev/null > "$page.dom"
}

check() {  # check PAGE PNG MIN_CHARTS: exits non-zero with a reason if the page did not render
  python3 - "$1" "$2" "$3" <<'PY'
import re, struct, sys, zlib
page, png, min_charts = sys.argv[1], sys.argv[2], int(sys.argv[3])
problems = []
console = [l for l in open(page + ".log", errors="replace") if ":CONSOLE" in l]
if console:
    problems.append("the browser logged %d console message(s), first: %s" % (len(console), console[0].strip()[:300]))
dom = open(page + ".dom", errors="replace").read()
charts = len(re.findall(r'<svg class="chart"', dom))
if charts < min_charts:
    problems.append("%d charts in the rendered page, expected at least %d" % (charts, min_charts))
# Decode the PNG (8-bit RGB or RGBA, non-interlaced, as chromium writes it).
data = open(png, "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, width = 8, b"", 0
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        width, height, depth, ctype = struct.unpack(">IIBB", body[:10])
        channels = {2: 3, 6: 4}[ctype]
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
raw, stride = zlib.decompress(idat), width * channels
prev, pixels, colours, inked = bytearray(stride), 0, set(), 0
for y in range(height):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - channels] if i >= channels else 0
        b, c = prev[i], prev[i - channels] if i >= channels else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    prev = line
    if y % 4: continue
    for x in range(0, width, 4):
        px = tuple(line[x * channels:x * channels + 3])
        pixels += 1
        if px != (255, 255, 255): inked += 1
        colours.add(px)
share = inked / max(pixels, 1)
if share < 0.03 or len(colours) < 12:
    problems.append("the screenshot looks blank: %.1f%% non-white pixels, %d colours" % (100 * share, len(colours)))
if problems:
    print("%s: NOT rendered: %s" % (page, "; ".join(problems)))
    sys.exit(1)
print("%s: rendered: %d charts, %.0f%% non-white pixels, %d colours, no console messages" % (page, charts, 100 * share, len(colours)))
PY
}

measure() {  # measure PAGE: lays PAGE out at 1400 px in a frame and prints what it finds, as JSON
  local page=$1 dir
  dir=$(dirname "$page")
  cat > "$dir/measure.html" <<HTML
<!DOCTYPE html><html><body style="margin:0">
<iframe id="f" src="$(basename "$page")" style="width:1400px;height:3000px;border:0"></iframe>
<pre id="out">pending</pre>
<script>
document.getElementById("f").addEventListener("load", () => {
  const d = document.getElementById("f").contentDocument;
  const out = {colors: {}, clipped: [], overflowing: [], paired: 0, charts: 0, day: ""};
  const hex = c => "#" + c.match(/\d+/g).slice(0, 3).map(n => (+n).toString(16).padStart(2, "0")).join("").toUpperCase();
  const first = d.querySelector("table.cmp");
  if (first) for (const th of first.querySelectorAll("tbody th")) {
    const sw = th.querySelector(".sw");
    if (sw) out.colors[th.textContent.replace("(bound)", "").trim()] = hex(getComputedStyle(sw).backgroundColor);
  }
  const width = d.documentElement.clientWidth;
  d.querySelectorAll("table").forEach((t, i) => {
    const r = t.getBoundingClientRect();
    if (r.right > width + 1 || t.scrollWidth > t.clientWidth + 1 || t.parentElement.scrollWidth > t.parentElement.clientWidth + 1)
      out.clipped.push("table " + i + " (" + (t.querySelector("th") || t).textContent.slice(0, 30) + "): right edge " + Math.round(r.right) + " of " + width);
  });
  d.querySelectorAll("svg.chart").forEach(svg => {
    out.charts++;
    const box = svg.getBoundingClientRect();
    svg.querySelectorAll("text").forEach(t => {
      const r = t.getBoundingClientRect();
      if (r.width > 0 && (r.right > box.right + 1 || r.left < box.left - 1))
        out.overflowing.push(svg.id + ": '" + t.textContent.slice(0, 40) + "' " + Math.round(Math.max(r.right - box.right, box.left - r.left)) + " px outside");
    });
  });
  out.paired = d.querySelectorAll("#paired svg.chart").length;
  const day = d.getElementById("timeline-day");
  if (day) out.day = day.textContent;
  document.getElementById("out").textContent = JSON.stringify(out);
});
</script></body></html>
HTML
  timeout 120 chromium --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$tmp/profile" \
    --allow-file-access-from-files --virtual-time-budget=20000 --window-size=1400,3000 --dump-dom "file://$dir/measure.html" 2>/dev/null |
    python3 -c 'import html, re, sys; m = re.search(r"<pre id=\"out\">(.*?)</pre>", sys.stdin.read(), re.S); print(html.unescape(m.group(1)) if m else "{}")'
}

laidout() {  # laidout JSON...: exits non-zero naming each page whose layout is wrong
  python3 - "$@" <<'PY'
import json, sys
problems, colours = [], {}
for arg in sys.argv[1:]:
    name, text = arg.split("=", 1)
    m = json.loads(text)
    if m.get("charts", 0) == 0:
        problems.append(f"{name}: nothing measured (the frame did not load: {text[:200]})")
        continue
    problems += [f"{name}: a table does not fit: {c}" for c in m["clipped"]]
    problems += [f"{name}: text runs off its chart: {o}" for o in m["overflowing"]]
    if m["paired"] < 1:
        problems.append(f"{name}: no paired-difference chart")
    for policy, colour in m["colors"].items():
        colours.setdefault(policy, {})[name] = colour
for policy, by_page in colours.items():
    if len(set(by_page.values())) > 1:
        problems.append(f"{policy} has different colours: {by_page}")
if "ios" in colours and set(colours["ios"].values()) != {"#0072B2"}:
    problems.append(f"ios is not #0072B2: {colours['ios']}")
if problems:
    print("NOT laid out: " + "; ".join(problems))
    sys.exit(1)
print("laid out at 1400 px: every table fits, no text off its chart, paired charts drawn; colours " +
      ", ".join(f"{p} {next(iter(c.values()))}" for p, c in colours.items()))
PY
}

# The detector must catch a page that tries a request.
cat > "$tmp/blocked.html" <<'HTML'
<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="default-src 'none'"></head>
<body><svg class="chart" width="600" height="400"><rect width="600" height="400" fill="#0072B2"/></svg><img src="http://example.invalid/x.png"></body></html>
HTML
browser "$tmp/blocked.html" "$tmp/blocked.png"
if check "$tmp/blocked.html" "$tmp/blocked.png" 1 >/dev/null; then
  echo "report test: the control page with a blocked request passed the check" >&2; exit 1
fi

# The layout check must catch a table cut by its box and a title running off its chart.
mkdir -p "$tmp/control"
cat > "$tmp/control/page.html" <<'HTML'
<!DOCTYPE html><html><body><div style="width:600px;overflow-x:auto"><table class="cmp"><tbody><tr><th><span class="sw" style="background:#123456;display:inline-block;width:9px;height:9px"></span>ios</th>
<td style="white-space:nowrap">a row far wider than the box it sits in, which cuts it and scrolls: the comparison table as it was</td></tr></tbody></table></div>
<section id="paired"><svg class="chart" id="c" width="200" height="40"><text x="8" y="18">a title far longer than the two hundred pixels of its chart</text></svg></section></body></html>
HTML
control=$(measure "$tmp/control/page.html")
if laidout "control=$control" >/dev/null; then
  echo "report test: the control page with a cut table and a title off its chart passed the layout check: $control" >&2; exit 1
fi
python3 -c 'import json, sys; m = json.loads(sys.argv[1]); sys.exit(0 if m["clipped"] and m["overflowing"] and m["colors"] == {"ios": "#123456"} else 1)' "$control" ||
  { echo "report test: the control page's measurements miss its cut table, its long title or its colour: $control" >&2; exit 1; }

"$bgsim" run models/scenarios/default.yaml --replications 3 --set duration=2d --out "$tmp/run" --quiet
"$bgsim" report "$tmp/run" --quiet
"$bgsim" sweep models/sweeps/refresh-setting.yaml --replications 2 --set duration=1d --no-tasks --out "$tmp/sweep" --quiet
"$bgsim" report "$tmp/sweep" --quiet
"$bgsim" run fleet --replications 12 --set duration=2d --out "$tmp/fleet" --quiet
"$bgsim" report "$tmp/fleet" --quiet

browser "$tmp/run/report.html" "$tmp/run.png"
check "$tmp/run/report.html" "$tmp/run.png" 16    # 5 paired, 3 means, CDF, scatter, 6 timelines
browser "$tmp/sweep/report.html" "$tmp/sweep.png"
check "$tmp/sweep/report.html" "$tmp/sweep.png" 21  # 5 paired, 3 means, scatter, 2 axes x 4 lines, 4 timelines (no CDF: --no-tasks)
browser "$tmp/fleet/report.html" "$tmp/fleet.png"
check "$tmp/fleet/report.html" "$tmp/fleet.png" 17  # 5 paired, 3 means, scatter, 2 people, 6 timelines (no CDF: a fleet writes no tasks.csv)
laidout "run=$(measure "$tmp/run/report.html")" "sweep=$(measure "$tmp/sweep/report.html")" "fleet=$(measure "$tmp/fleet/report.html")"
grep -q 'whose night is on the charger' "$tmp/run/report.html" || { echo "report test: the run's timeline is not on a typical day with a charging night" >&2; exit 1; }
"$bgsim" forecast Examples/forecast/news-app.yaml --people 12 --sweep-people 4 --set duration=3d --out "$tmp/forecast" --quiet \
  --range-people 2 --range-trajectories 2 --range-samples 4
browser "$tmp/forecast/forecast.html" "$tmp/forecast.png"
check "$tmp/forecast/forecast.html" "$tmp/forecast.png" 4  # what the refresh depends on, runs by hour of 2 tasks, a typical week
if [ -n "${REPORT_SCREENSHOTS:-}" ]; then cp "$tmp/run.png" "$tmp/sweep.png" "$tmp/fleet.png" "$tmp/forecast.png" "$REPORT_SCREENSHOTS/"; fi
echo "report test passed: run, fleet and sweep reports and a forecast's page render in chromium with every chart and no request, laid out as promised"
