#!/usr/bin/env bash
# The report test (issue 8), run by `make test`: a run's and a sweep's report, and a forecast's
# page, are opened in a real headless browser (Debian's chromium). Each must render: the screenshot is not blank
# (enough non-white pixels and colours), the DOM after loading holds every chart, and the
# browser logged no console message (the page's Content-Security-Policy forbids every request,
# so any attempt to load a resource is logged as a violation). A page with a blocked image is
# checked the same way first and must fail, so the test can fail.
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

# The detector must catch a page that tries a request.
cat > "$tmp/blocked.html" <<'HTML'
<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="default-src 'none'"></head>
<body><svg class="chart" width="600" height="400"><rect width="600" height="400" fill="#0072B2"/></svg><img src="http://example.invalid/x.png"></body></html>
HTML
browser "$tmp/blocked.html" "$tmp/blocked.png"
if check "$tmp/blocked.html" "$tmp/blocked.png" 1 >/dev/null; then
  echo "report test: the control page with a blocked request passed the check" >&2; exit 1
fi

"$bgsim" run models/scenarios/default.yaml --replications 3 --set duration=2d --out "$tmp/run" --quiet
"$bgsim" report "$tmp/run" --quiet
"$bgsim" sweep models/sweeps/refresh-setting.yaml --replications 2 --set duration=1d --no-tasks --out "$tmp/sweep" --quiet
"$bgsim" report "$tmp/sweep" --quiet

browser "$tmp/run/report.html" "$tmp/run.png"
check "$tmp/run/report.html" "$tmp/run.png" 11    # 3 bars, CDF, scatter, 6 timelines
browser "$tmp/sweep/report.html" "$tmp/sweep.png"
check "$tmp/sweep/report.html" "$tmp/sweep.png" 16  # 3 bars, scatter, 2 axes x 4 lines, 4 timelines (no CDF: --no-tasks)
"$bgsim" forecast Examples/forecast/news-app.yaml --people 12 --sweep-people 4 --set duration=3d --out "$tmp/forecast" --quiet
browser "$tmp/forecast/forecast.html" "$tmp/forecast.png"
check "$tmp/forecast/forecast.html" "$tmp/forecast.png" 3  # runs by hour of 2 tasks, a typical week
if [ -n "${REPORT_SCREENSHOTS:-}" ]; then cp "$tmp/run.png" "$tmp/sweep.png" "$tmp/forecast.png" "$REPORT_SCREENSHOTS/"; fi
echo "report test passed: run and sweep reports and a forecast's page render in chromium with every chart and no request"
