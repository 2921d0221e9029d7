#!/usr/bin/env python3
"""Convert one user's app log in LSApp's layout into a bgsim people trace.

LSApp (Aliannejadi et al., ACM TOIS 2021; docs/sources.md §8) is a tab-separated file with
the columns user_id, session_id, timestamp (local "YYYY-MM-DD HH:MM:SS"), app_name and
event_type (Opened, Closed, User Interaction, Broken). This script pairs each Opened with the
next Closed of the same app and writes one launch per pair:

    time,event,app,duration,exit
    30600,launch,news,45,home

- time: seconds since midnight of the Monday on or before the user's first event (bgsim's
  day 0 is a Monday), or since midnight of --start.
- app: the scenario app that --map names for the log's app name, else the log's name (bgsim
  replays an app the scenario does not model as another app).
- A launch that overlaps the previous one starts when it ends; one that opens within
  --join seconds of the previous one's end in the same LSApp session continues that bgsim
  session (it starts exactly at that end). Opened without a Closed, and pairs shorter than a
  second, are dropped; the counts go to stderr.
- exit is home: the log does not say whether the app was swiped away.

Usage:
    convert-lsapp.py LOG.tsv --user 1 --map "Google Chrome=news" --map Gmail=mail -o people.csv
"""
import argparse
import csv
import datetime
import sys


def seconds(x):
    """Seconds as bgsim reads them: digits, at most six decimals, never an exponent (a
    month is 2.6 million seconds, which '%g' wrote as 2.6e+06)."""
    return f"{x:.6f}".rstrip("0").rstrip(".")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("log", help="a file in LSApp's layout (tab-separated, with a header row)")
    ap.add_argument("--user", required=True, help="the user_id to convert")
    ap.add_argument("--map", action="append", default=[], metavar="LOG_NAME=APP",
                    help="name a log app as a scenario app (repeatable)")
    ap.add_argument("--start", help="day 0, YYYY-MM-DD (default: the Monday on or before the first event)")
    ap.add_argument("--join", type=float, default=2.0, help="seconds within which a launch continues a session (2)")
    ap.add_argument("-o", "--out", default="-", help="the trace to write (default: stdout)")
    args = ap.parse_args()

    names = {}
    for m in args.map:
        if "=" not in m:
            sys.exit(f"convert-lsapp.py: --map expects LOG_NAME=APP, got '{m}'")
        k, v = m.split("=", 1)
        names[k] = v

    events = []
    columns = ("user_id", "session_id", "timestamp", "app_name", "event_type")
    try:
        with open(args.log, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f, delimiter="\t")
            for n, row in enumerate(reader, start=2):
                missing = [c for c in columns if c not in row]
                if missing:
                    sys.exit(f"convert-lsapp.py: {args.log}: expected LSApp's columns, missing {', '.join(missing)}")
                # A row cut short (or with extra fields) is an error, not a row dropped unseen.
                if None in row or any(v is None for v in row.values()):
                    got = sum(v is not None for k, v in row.items() if k is not None) + len(row.get(None) or [])
                    sys.exit(f"convert-lsapp.py: {args.log}:{n}: expected {len(reader.fieldnames)} tab-separated fields, got {got}")
                if row["user_id"] != args.user:
                    continue
                try:
                    t = datetime.datetime.strptime(row["timestamp"], "%Y-%m-%d %H:%M:%S")
                except ValueError:
                    sys.exit(f"convert-lsapp.py: {args.log}:{n}: expected a timestamp YYYY-MM-DD HH:MM:SS, got '{row['timestamp']}'")
                events.append((t, n, row["session_id"], row["app_name"], row["event_type"]))
    except OSError as e:
        sys.exit(f"convert-lsapp.py: {args.log}: cannot read it ({e.strerror or e})")
    except UnicodeDecodeError:
        sys.exit(f"convert-lsapp.py: {args.log}: not UTF-8 text: expected LSApp's tab-separated log")
    except csv.Error as e:
        sys.exit(f"convert-lsapp.py: {args.log}: not a tab-separated log ({e})")
    if not events:
        sys.exit(f"convert-lsapp.py: {args.log}: no events of user {args.user}")
    events.sort()

    if args.start:
        day0 = datetime.datetime.strptime(args.start, "%Y-%m-%d")
    else:
        first = events[0][0]
        day0 = datetime.datetime(first.year, first.month, first.day) - datetime.timedelta(days=first.weekday())

    open_at = {}  # app -> (time, session) of its unmatched Opened
    pairs, unmatched, short = [], 0, 0
    for t, _, session, app, kind in events:
        if kind == "Opened":
            if app in open_at:
                unmatched += 1
            open_at[app] = (t, session)
        elif kind == "Closed" and app in open_at:
            start, s = open_at.pop(app)
            pairs.append((start, t, s, app))
    unmatched += len(open_at)
    pairs.sort()

    rows, last_end, last_session = [], None, None
    for start, end, session, app in pairs:
        start_s = (start - day0).total_seconds()
        end_s = (end - day0).total_seconds()
        if start_s < 0:
            continue
        if last_end is not None and (start_s < last_end or (session == last_session and start_s - last_end <= args.join)):
            start_s = last_end
        if end_s - start_s < 1:
            short += 1
            continue
        rows.append((start_s, names.get(app, app), end_s - start_s))
        last_end, last_session = end_s, session

    out = sys.stdout if args.out == "-" else open(args.out, "w", encoding="utf-8")
    out.write("time,event,app,duration,exit\n")
    for start_s, app, duration in rows:
        if "," in app or "\n" in app:
            app = app.replace(",", " ").replace("\n", " ")
        out.write(f"{seconds(start_s)},launch,{app},{seconds(duration)},home\n")
    if out is not sys.stdout:
        out.close()
    print(f"convert-lsapp.py: {len(rows)} launches of user {args.user} from day 0 = {day0:%Y-%m-%d} "
          f"({unmatched} opened without a close, {short} under a second dropped)", file=sys.stderr)


if __name__ == "__main__":
    main()
