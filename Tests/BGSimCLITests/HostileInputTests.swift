import Foundation
import Testing

/// The hostile-input corpus (issue 42): inputs written to break a simulator shared on
/// clusters, each of which must end with exit code 2, one line on stderr naming the problem,
/// nothing written, in under 200 MB (a debug build).
@Suite("Hostile input")
struct HostileInputTests {
    /// One hostile input: the files of a scratch folder, the arguments, and a fragment the
    /// error line must contain.
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var files: [String: Data]
        var arguments: [String]
        var expected: String
        var testDescription: String { name }
    }

    /// A small valid scenario: the repository's profiles, two days, one app.
    static let base = """
        duration: 2d
        models: \(repo.path)/models
        charging: nightly
        network: home-office
        people: median
        apps:
          - news
        policies: [eager]
        phone: iphone-15
        """

    static func text(_ s: String) -> Data { Data(s.utf8) }

    /// `base` with `old` replaced by `new`, as the scenario `s.yaml`, run.
    static func edit(_ name: String, _ old: String, _ new: String, _ expected: String) -> Case {
        precondition(base.contains(old), "base has no '\(old)'")
        return Case(
            name: name, files: ["s.yaml": text(base.replacingOccurrences(of: old, with: new))], arguments: ["run", "s.yaml"],
            expected: expected)
    }

    /// `base` with the top-level section `extra` starts with in place of its own (or added),
    /// run.
    static func add(_ name: String, _ extra: String, _ expected: String) -> Case {
        let key = String(extra.prefix { $0 != ":" })
        var kept: [Substring] = []
        var skipping = false
        for line in base.split(separator: "\n") {
            if !line.hasPrefix(" ") { skipping = line.hasPrefix(key + ":") }
            if !skipping { kept.append(line) }
        }
        let yaml = kept.joined(separator: "\n") + "\n" + extra + "\n"
        return Case(name: name, files: ["s.yaml": text(yaml)], arguments: ["run", "s.yaml"], expected: expected)
    }

    /// `base` run with `--set` values.
    static func set(_ name: String, _ sets: [String], _ expected: String) -> Case {
        Case(name: name, files: ["s.yaml": text(base)], arguments: ["run", "s.yaml"] + sets.flatMap { ["--set", $0] }, expected: expected)
    }

    /// `base` with a people (or other) trace file.
    static func trace(_ name: String, key: String, _ csv: Data, _ expected: String) -> Case {
        let yaml: String
        switch key {
        case "people": yaml = base.replacingOccurrences(of: "people: median", with: "people: {profile: median, trace: t.csv}")
        case "charging": yaml = base.replacingOccurrences(of: "charging: nightly", with: "charging: {profile: nightly, trace: t.csv}")
        default: yaml = base.replacingOccurrences(of: "network: home-office", with: "network: {profile: home-office, trace: t.csv}")
        }
        return Case(name: name, files: ["s.yaml": text(yaml), "t.csv": csv], arguments: ["run", "s.yaml"], expected: expected)
    }

    static func bomb(levels: Int, under key: String) -> String {
        var lines = ["\(key):", "  a0: &a0 [x, x, x, x, x, x, x, x, x]"]
        for i in 1..<levels { lines.append("  a\(i): &a\(i) [" + Array(repeating: "*a\(i - 1)", count: 9).joined(separator: ", ") + "]") }
        return lines.joined(separator: "\n")
    }

    static let cases: [Case] = fileCases + yamlCases + numberCases + stringCases + listCases + traceCases + optionCases + runCases

    // MARK: - Files

    static let fileCases: [Case] = [
        Case(name: "no such file", files: [:], arguments: ["run", "missing.yaml"], expected: "no such scenario file"),
        Case(name: "a folder", files: ["d/x": text("")], arguments: ["run", "d"], expected: "not a regular file"),
        Case(name: "/dev/zero, which never ends", files: [:], arguments: ["run", "/dev/zero"], expected: "not a regular file"),
        Case(name: "/dev/null", files: [:], arguments: ["validate", "/dev/null"], expected: "not a regular file"),
        Case(name: "an empty file", files: ["s.yaml": Data()], arguments: ["run", "s.yaml"], expected: "duration: missing"),
        Case(name: "only a comment", files: ["s.yaml": text("# nothing\n")], arguments: ["run", "s.yaml"], expected: "duration: missing"),
        Case(name: "a NUL byte", files: ["s.yaml": text(base + "\nname: a\u{0}b\n")], arguments: ["run", "s.yaml"], expected: "NUL byte"),
        Case(name: "not UTF-8", files: ["s.yaml": Data([0x64, 0x75, 0xFF, 0xFE, 0x3A, 0x0A])], arguments: ["run", "s.yaml"], expected: "not UTF-8"),
        Case(
            name: "UTF-16 with its byte-order mark", files: ["s.yaml": Data([0xFF, 0xFE]) + "duration: 1d\n".data(using: .utf16LittleEndian)!],
            arguments: ["run", "s.yaml"], expected: "not UTF-8"),
        Case(
            name: "a UTF-8 byte-order mark, then nothing", files: ["s.yaml": Data([0xEF, 0xBB, 0xBF])], arguments: ["run", "s.yaml"],
            expected: "duration: missing"),
        Case(
            name: "over the size limit", files: ["s.yaml": Data(repeating: UInt8(ascii: "#"), count: 4 << 20) + text("\n")],
            arguments: ["run", "s.yaml"], expected: "over the limit of 4.0 MB (set BGSIM_MAX_INPUT_MB to raise it)"),
        Case(
            name: "random bytes", files: ["s.yaml": Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 7) })],
            arguments: ["run", "s.yaml"], expected: "s.yaml"),
        Case(name: "a list at the top", files: ["s.yaml": text("- duration: 1d\n")], arguments: ["run", "s.yaml"], expected: "expected a mapping"),
        Case(name: "a scalar at the top", files: ["s.yaml": text("hello\n")], arguments: ["run", "s.yaml"], expected: "expected a mapping"),
        Case(name: "two documents", files: ["s.yaml": text(base + "\n---\n" + base)], arguments: ["run", "s.yaml"], expected: "s.yaml"),
        Case(name: "a sweep that is not a file", files: [:], arguments: ["sweep", "/dev/zero"], expected: "not a regular file"),
        Case(
            name: "a sweep whose base scenario is a device", files: ["w.yaml": text("scenario: /dev/zero\naxes: [{path: duration, values: [1d, 2d]}]\n")],
            arguments: ["sweep", "w.yaml"], expected: "not a regular file"),
    ]

    // MARK: - YAML structure

    static let yamlCases: [Case] = [
        Case(
            name: "an alias bomb under an unknown key", files: ["s.yaml": text(base + "\n" + bomb(levels: 9, under: "junk"))], arguments: ["run", "s.yaml"],
            expected: "more than 250000 values"),
        Case(
            name: "an alias bomb as the apps", files: ["s.yaml": text(base.replacingOccurrences(of: "apps:\n  - news", with: bomb(levels: 9, under: "apps")))],
            arguments: ["run", "s.yaml"], expected: "more than 250000 values"),
        Case(
            name: "an alias bomb in a profile's description",
            files: ["s.yaml": text(base + "\ndescription:\n" + bomb(levels: 9, under: "  d").split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))],
            arguments: ["run", "s.yaml"], expected: "s.yaml"),
        set(
            "an alias bomb in --set",
            [
                "people.hourly_weights="
                    + "{a: &a [1,1,1,1,1,1,1,1,1], b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a], c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b], d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c], e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d], f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e], g: [*f,*f,*f,*f,*f,*f,*f,*f,*f]}"
            ], "more than 250000 values"),
        Case(
            name: "flow nesting 100,000 deep",
            files: ["s.yaml": text("a: " + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000) + "\n")],
            arguments: ["run", "s.yaml"], expected: "nested more than 64 levels"),
        Case(
            name: "block nesting 200 deep",
            files: ["s.yaml": text((0..<200).map { String(repeating: " ", count: $0) + "k\($0):" }.joined(separator: "\n") + "\n")],
            arguments: ["run", "s.yaml"], expected: "nested more than 64 levels"),
        Case(
            name: "a dash chain 100 deep", files: ["s.yaml": text("a:\n  " + String(repeating: "- ", count: 100) + "x\n")], arguments: ["run", "s.yaml"],
            expected: "nested more than 64 levels"),
        Case(
            name: "mapping nesting 100 deep in flow",
            files: ["s.yaml": text("a: " + String(repeating: "{b: ", count: 100) + "1" + String(repeating: "}", count: 100) + "\n")],
            arguments: ["run", "s.yaml"], expected: "nested more than 64 levels"),
        Case(name: "a duplicate key", files: ["s.yaml": text(base + "\nduration: 3d\n")], arguments: ["run", "s.yaml"], expected: "duplicate key 'duration'"),
        // The parser compares keys with their tags: a custom tag hid the second.
        Case(
            name: "a duplicate key with a custom tag", files: ["s.yaml": text(base + "\n!foo duration: 3d\n")], arguments: ["run", "s.yaml"],
            expected: "duplicate key 'duration'"),
        Case(name: "tabs for indentation", files: ["s.yaml": text("duration: 2d\napps:\n\t- news\n")], arguments: ["run", "s.yaml"], expected: "invalid YAML"),
        Case(name: "an unterminated quote", files: ["s.yaml": text("duration: \"2d\napps: [news]\n")], arguments: ["run", "s.yaml"], expected: "invalid YAML"),
        Case(
            name: "an unclosed flow list", files: ["s.yaml": text("duration: 2d\napps: [news, mail\n")], arguments: ["run", "s.yaml"], expected: "invalid YAML"),
        add("a complex key", "? [a, b]\n: c", "keys must be plain names"),
        add("a mapping as a key", "{a: 1}: 2", "keys must be plain names"),
        add("a merge key", "<<: {name: x}", "unknown key '<<'"),
        add("a tag that would decode binary", "seed: !!binary aGVsbG8=", "expected a seed"),
        add("an undefined alias", "name: *nowhere", "undefined alias"),
        add("a block scalar as the seed", "seed: |\n  1\n  2", "expected a seed"),
    ]

    // MARK: - Numbers

    static let numberCases: [Case] = [
        // Found by make fuzz-input (seed 3): a session of 1e11 hours drew interruptions over
        // all of it, 11 GB.
        set("a session of 1e11 hours", ["people.session_body_mean=100000000000h"], "from 1us to 1d"),
        // The values that trapped converting to integer microseconds or overflowed a double:
        // their ranges now come from the arithmetic they feed.
        set("capacity 1e305 Wh", ["phone.battery.capacity_wh=1e305"], "to 1000000"),
        set("a download of 1e20 kB", ["apps[0].tasks[0].down_kb=1e20"], "from 0 to 1e9"),
        set("a launch download of 1e300 kB", ["apps[0].launch_down_kb=1e300"], "from 0 to 1000000000"),
        set("a throughput of 1e-12 Mbit/s", ["network.weekday[0].down_mbps=1e-12"], "from 0.001 to 1000000"),
        set("a log-normal sigma of 30", ["apps[0].tasks[0].down_kb={lognormal: {median: 200, sigma: 30}}"], "from 0 to 5"),
        edit("duration NaN", "duration: 2d", "duration: .nan", "duration"),
        edit("duration of minus five minutes", "duration: 2d", "duration: -5m", "duration"),
        edit("duration of a million years", "duration: 2d", "duration: 365000000d", "duration"),
        edit("duration 1e400 seconds", "duration: 2d", "duration: 1e400s", "duration"),
        edit("duration in fortnights", "duration: 2d", "duration: 5 fortnights", "duration"),
        edit("duration zero", "duration: 2d", "duration: 0s", "duration"),
        edit("duration as a list", "duration: 2d", "duration: [2d]", "duration"),
        add("seed -1", "seed: -1", "expected a seed"),
        add("seed 2^64", "seed: 18446744073709551616", "expected a seed"),
        add("seed 1e3", "seed: 1e3", "expected a seed"),
        add("replications 0", "replications: 0", "replications"),
        add("replications ten million", "replications: 10000000", "replications"),
        add("replications 2.5", "replications: 2.5", "replications"),
        add("capacity NaN", "phone: {profile: iphone-15, battery: {capacity_wh: .nan}}", "capacity_wh"),
        add("capacity infinite", "phone: {profile: iphone-15, battery: {capacity_wh: .inf}}", "capacity_wh"),
        add("capacity 1e309", "phone: {profile: iphone-15, battery: {capacity_wh: 1e309}}", "capacity_wh"),
        add("capacity zero", "phone: {profile: iphone-15, battery: {capacity_wh: 0}}", "capacity_wh"),
        add("capacity negative", "phone: {profile: iphone-15, battery: {capacity_wh: -13}}", "capacity_wh"),
        add("charge 101%", "phone: {profile: iphone-15, battery: {initial_charge_pct: 101}}", "initial_charge_pct"),
        add("charge with a percent sign", "phone: {profile: iphone-15, battery: {initial_charge_pct: 80%}}", "initial_charge_pct"),
        add("kibam c of 1", "phone: {profile: iphone-15, battery: {kibam_c: 1}}", "kibam_c"),
        add("sessions per day -5", "people: {profile: median, sessions_per_day: -5}", "sessions_per_day"),
        add("sessions per day 1e9", "people: {profile: median, sessions_per_day: 1e9}", "sessions_per_day"),
        add("23 hourly weights", "people: {profile: median, hourly_weights: [1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]}", "expected 24 weights"),
        add("a NaN hourly weight", "people: {profile: median, hourly_weights: [.nan,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]}", "hourly_weights"),
        add("bedtime 25:00", "people: {profile: median, bedtime: \"25:00\"}", "bedtime"),
        add("bedtime 12:60", "people: {profile: median, bedtime: \"12:60\"}", "bedtime"),
        add("a log-normal sigma of -1", "apps: [{profile: news, launch_down_kb: {lognormal: {median: 10, sigma: -1}}}]", "apps[0]"),
        add("a uniform the wrong way round", "apps: [{profile: news, tasks: [{id: r, kind: refresh, cpu: {uniform: [5s, 1s]}}]}]", "apps[0].tasks[0].cpu"),
        add("a negative download", "apps: [{profile: news, tasks: [{id: r, kind: refresh, down_kb: -1}]}]", "down_kb"),
        add("a refresh grant of NaN seconds", "system: {refresh_grant: .nan}", "refresh_grant"),
        add("a suspension delay of an hour", "system: {suspension_delay: 1h}", "suspension_delay"),
        add("a bench load of a megawatt", "load: {steps: [{power_w: 1000000, for: 1h}]}", "load.steps[0].power_w"),
        add("a bench load step of a microsecond", "load: {steps: [{power_w: 1, for: 1us}], repeat: yes}", "load.steps[0].for"),
        add("a bench load with both power and rate", "load: {steps: [{power_w: 1, c_rate: 1, for: 1h}]}", "exactly one of power_w and c_rate"),
        add("pushes per hour zero", "system: {pushes_per_hour: 0}", "pushes_per_hour"),
        add("interruptions of ten hours", "people: {profile: median, interruption_mean: 10h}", "interruption_mean"),
        add("extension runs a million a day", "apps: [{profile: news, extensions: {runs_per_day: 1000000}}]", "extensions.runs_per_day"),
        add("extension runs under their old key", "apps: [{profile: news, extension_runs_per_day: 2}]", "extensions are a section now"),
        add("a fleet log-normal without bounds", "fleet: [{path: people.sessions_per_day, lognormal: {median: 50, sigma: 0.7}}]", "fleet"),
        add("a fleet over the seed", "fleet: [{path: seed, values: [1, 2]}]", "fleet"),
    ]

    // MARK: - Strings

    static let stringCases: [Case] = [
        add("a name with ../", "name: ../../etc", "expected a name"),
        add("a name with a slash", "name: a/b", "expected a name"),
        add("the name ..", "name: ..", "expected a name"),
        add("an empty name", "name: \"\"", "name"),
        add("a name of 500 characters", "name: " + String(repeating: "n", count: 500), "at most 128 characters"),
        Case(
            name: "a name of 50 MB", files: ["s.yaml": text(base + "\nname: ") + Data(repeating: UInt8(ascii: "n"), count: 50 << 20) + text("\n")],
            arguments: ["run", "s.yaml"], expected: "over the limit of 4.0 MB"),
        add("a name with a newline escape", "name: \"a\\nb\"", "expected a name"),
        add("a name with a right-to-left override", "name: \"a\u{202E}b\"", "expected a name"),
        add("a name with spaces", "name: a b", "expected a name"),
        edit("an app named ..", "  - news", "  - {profile: news, name: ..}", "expected a name"),
        edit("two apps of one name", "  - news", "  - news\n  - news", "already named 'news'"),
        edit("an unknown policy", "policies: [eager]", "policies: [eagre]", "policies[0]"),
        edit(
            "a policy label of 300 characters", "policies: [eager]", "policies: [{name: eager, label: \(String(repeating: "l", count: 300))}]",
            "at most 128 characters"),
        edit("an app profile outside models", "  - news", "  - " + Array(repeating: "..", count: 3).joined(separator: "/") + "/etc/passwd", "apps[0]"),
        edit("a profile path outside models", "phone: iphone-15", "phone: /etc/passwd", "phone"),
        edit("an unknown charging profile", "charging: nightly", "charging: \"\"", "charging"),
        add("an unknown key", "frobnicate: 1", "unknown key 'frobnicate'"),
        add("a generator that crashed GSL", "generator: ran1", "generator"),
        add(
            "a task identifier of 1,000 characters", "apps: [{profile: news, tasks: [{id: \(String(repeating: "i", count: 1000)), kind: refresh}]}]",
            "at most 128 characters"),
    ]

    // MARK: - Lists

    static let listCases: [Case] = [
        add("1,001 apps", "apps: [" + (0...1000).map { "{profile: news, name: a\($0)}" }.joined(separator: ", ") + "]", "at most 1000 apps"),
        add("65 policies", "policies: [" + (0...64).map { "{name: eager, label: p\($0)}" }.joined(separator: ", ") + "]", "at most 64 policies"),
        add("no policies", "policies: []", "at least one policy"),
        add(
            "300,000 hourly weights", "people: {profile: median, hourly_weights: [" + Array(repeating: "1", count: 300_000).joined(separator: ",") + "]}",
            "more than 250000 values"),
        add("background modes not a list", "apps: [{profile: news, background_modes: fetch}]", "background_modes"),
        add("an unknown background mode", "apps: [{profile: news, background_modes: [teleport]}]", "background_modes[0]"),
        add("a load with no steps", "load: {steps: []}", "one or more steps"),
    ]

    // MARK: - Traces

    static let traceCases: [Case] = [
        trace("a people trace that does not exist", key: "people", Data(), "t.csv"),
        Case(
            name: "a trace that is a device",
            files: ["s.yaml": text(base.replacingOccurrences(of: "people: median", with: "people: {profile: median, trace: /dev/zero}"))],
            arguments: ["run", "s.yaml"], expected: "not a regular file"),
        trace("an empty people trace", key: "people", Data(), "empty trace"),
        trace("a people trace without its header", key: "people", text("1h,launch,news,1m,home\n"), "expected the header row"),
        // 30 MB of commas: as many fields as bytes, each once a range and a name (1.4 GB).
        trace(
            "a trace of one line of commas", key: "charging", Data(repeating: UInt8(ascii: ","), count: 30 << 20),
            "got a line that is not a row of column names"),
        trace("a people trace with an extra column", key: "people", text("time,event,app,duration,exit,x\n"), "expected the header row"),
        trace("a people trace with a NUL", key: "people", text("time,event,app,duration,exit\n1h,launch,ne\u{0}ws,1m,home\n"), "NUL byte"),
        trace(
            "a people trace not in UTF-8", key: "people", Data("time,event,app,duration,exit\n1h,launch,".utf8) + Data([0xFF, 0xFE]) + Data(",1m,home\n".utf8),
            "not UTF-8"),
        trace("a people trace with a negative time", key: "people", text("time,event,app,duration,exit\n-1,launch,news,1m,home\n"), "column 'time'"),
        trace("a people trace with a NaN time", key: "people", text("time,event,app,duration,exit\nnan,launch,news,1m,home\n"), "column 'time'"),
        trace("a people trace with a time of 1e30", key: "people", text("time,event,app,duration,exit\n1e30,launch,news,1m,home\n"), "column 'time'"),
        trace("a people trace with an unknown event", key: "people", text("time,event,app,duration,exit\n1h,explode,news,1m,home\n"), "column 'event'"),
        trace("a people trace with a negative duration", key: "people", text("time,event,app,duration,exit\n1h,launch,news,-1m,home\n"), "column 'duration'"),
        trace(
            "a people trace whose launches overlap", key: "people", text("time,event,app,duration,exit\n1h,launch,news,10m,home\n1h5m,launch,news,1m,home\n"),
            "t.csv"),
        trace("a people trace with too few fields", key: "people", text("time,event,app,duration,exit\n1h,launch\n"), "expected 5 fields"),
        trace("a people trace with a CR in a field", key: "people", text("time,event,app,duration,exit\n1h,launch,ne\rws,1m,home\n"), "t.csv"),
        trace(
            "a file named as a trace that is not one", key: "people", text("root:x:0:0:root:/root:/bin/bash\n"), "got a line that is not a row of column names"),
        trace(
            "a people trace with a NEL line break", key: "people", text("time,event,app,duration,exit\u{85}1h,launch,news\u{85}"), "t.csv:2: expected 5 fields"),
        trace("a charging trace whose sessions overlap", key: "charging", text("plug_in,unplug\n0,7h\n6h,8h\n"), "not overlap"),
        trace("a charging trace unplugged before plugged", key: "charging", text("plug_in,unplug\n7h,1h\n"), "after plug_in"),
        trace("a network trace not starting at 0", key: "network", text("time,network,down_mbps,up_mbps\n1h,wifi,10,10\n"), "the first row must be at time 0"),
        trace("a network trace with zero throughput", key: "network", text("time,network,down_mbps,up_mbps\n0,wifi,0,10\n"), "column 'down_mbps'"),
        trace("a network trace with an infinite throughput", key: "network", text("time,network,down_mbps,up_mbps\n0,wifi,inf,10\n"), "column 'down_mbps'"),
        trace(
            "a network trace with a time going back", key: "network", text("time,network,down_mbps,up_mbps\n0,wifi,10,10\n2h,none,,\n1h,wifi,10,10\n"),
            "times must increase"),
        Case(
            name: "a load trace with a negative power", files: ["s.yaml": text(base + "\nload: {trace: l.csv}\n"), "l.csv": text("time,power_w\n0,-5\n")],
            arguments: ["run", "s.yaml"], expected: "column 'power_w'"),
        Case(
            name: "a load trace and steps",
            files: ["s.yaml": text(base + "\nload: {trace: l.csv, steps: [{power_w: 1, for: 1h}]}\n"), "l.csv": text("time,power_w\n0,5\n")],
            arguments: ["run", "s.yaml"], expected: "either steps or trace"),
    ]

    // MARK: - Options

    static let optionCases: [Case] = [
        Case(name: "replications -1", files: ["s.yaml": text(base)], arguments: ["run", "s.yaml", "--replications", "-1"], expected: "replications"),
        Case(name: "replications abc", files: ["s.yaml": text(base)], arguments: ["run", "s.yaml", "--replications", "abc"], expected: "replications"),
        Case(name: "--seed -1", files: ["s.yaml": text(base)], arguments: ["run", "s.yaml", "--seed", "-1"], expected: "seed"),
        Case(name: "--seed 2^64", files: ["s.yaml": text(base)], arguments: ["run", "s.yaml", "--seed", "18446744073709551616"], expected: "seed"),
        Case(name: "jobs 0", files: ["s.yaml": text(base)], arguments: ["run", "s.yaml", "--jobs", "0"], expected: "--jobs"),
        Case(name: "jobs -2", files: ["s.yaml": text(base)], arguments: ["run", "s.yaml", "--jobs", "-2"], expected: "--jobs"),
        Case(name: "jobs a million", files: ["s.yaml": text(base)], arguments: ["run", "s.yaml", "--jobs", "1000000"], expected: "--jobs"),
        Case(name: "timeline 0s", files: ["s.yaml": text(base)], arguments: ["run", "s.yaml", "--timeline", "0s"], expected: "--timeline"),
        Case(name: "timeline 1us", files: ["s.yaml": text(base)], arguments: ["run", "s.yaml", "--timeline", "1us"], expected: "--timeline"),
        Case(name: "timeline -5m", files: ["s.yaml": text(base)], arguments: ["run", "s.yaml", "--timeline", "-5m"], expected: "--timeline"),
        Case(
            name: "a timeline of billions of rows", files: ["s.yaml": text(base)],
            arguments: ["run", "s.yaml", "--timeline", "1s", "--set", "duration=36500d"], expected: "samples over a run"),
        Case(name: "out empty", files: ["s.yaml": text(base)], arguments: ["run", "s.yaml", "--out", ""], expected: "--out ''"),
        Case(name: "out root", files: ["s.yaml": text(base)], arguments: ["run", "s.yaml", "--out", "/"], expected: "the root folder"),
        Case(name: "out a file", files: ["s.yaml": text(base)], arguments: ["run", "s.yaml", "--out", "s.yaml"], expected: "a file, not a folder"),
        Case(
            name: "out the current folder with other files", files: ["s.yaml": text(base)], arguments: ["run", "s.yaml", "--out", "."],
            expected: "the current folder"),
        Case(name: "out of a merge, empty", files: ["s.yaml": text(base)], arguments: ["merge", "a", "--out", ""], expected: "--out ''"),
        set("--set without =", ["nope"], "expected key.path=value"),
        set("--set of an unknown key", ["phnoe.battery.capacity_wh=5"], "unknown key 'phnoe'"),
        // A period the policy walks through one by one, or a look-ahead it reads bin by bin,
        // has a bound it can serve in bounded time per simulated day (1 us Doze took about 5
        // minutes a simulated day; a century's look-ahead read 7 million bins per request).
        // A label names its item in key paths: one that `[1]` or a dot would read otherwise
        // could never be addressed.
        set(
            "a policy labelled with a number", ["policies=[eager, {name: coalesce, label: '1'}]"],
            "expected a name that is not only digits ([1] in a key path is the item at index 1)"),
        set("a policy labelled with a dot", ["policies=[{name: coalesce, label: a.b}]"], "expected a name without '.'"),
        set("an app named with a number", ["apps=[{profile: news, name: '7'}]"], "apps[0].name: expected a name that is not only digits"),
        // Every run's results stay in memory for the summary: a study has at most 2,000,000.
        set(
            "three policies of a million replications", ["policies=[eager, ios, android]", "replications=1000000"],
            "3 policies x 1000000 replications is 3000000 runs; a study has at most 2000000"),
        set(
            "a fleet's uniform with its ends reversed", ["fleet=[{path: people.sessions_per_day, uniform: {from: 90, to: 20}}]"],
            "fleet[0].uniform.to: expected a high end no lower than 'from'"),
        set("a deep Doze IDLE of a microsecond", ["policies=[{name: android, first_idle: 1us}]"], "first_idle: expected a duration from 1s to 36500d"),
        set("a light Doze IDLE of a millisecond", ["policies=[{name: android, light_max_idle: 1ms}]"], "expected a duration from 1s to 36500d"),
        set("a launch look-ahead of a century", ["policies=[{name: ios, launch_lookahead: 36500d}]"], "launch_lookahead: expected a duration from 1us to 1d"),
        set("--set with a newline", ["name=a\nb"], "contains a control character (U+000A)"),
        set("--set of a huge index", ["apps[99999999999999999999].name=x"], "apps"),
        set("--set of a deep path", [(0..<100).map { "k\($0)" }.joined(separator: ".") + "=1"], "s.yaml"),
        set("--set of NaN capacity", ["phone.battery.capacity_wh=nan"], "capacity_wh"),
        Case(name: "shard 0/2", files: ["s.yaml": text(base)], arguments: ["run", "s.yaml", "--shard", "0/2"], expected: "--shard"),
        Case(name: "shard 3/2", files: ["s.yaml": text(base)], arguments: ["run", "s.yaml", "--shard", "3/2"], expected: "--shard"),
        Case(name: "shard 1/0", files: ["s.yaml": text(base)], arguments: ["run", "s.yaml", "--shard", "1/0"], expected: "--shard"),
        Case(name: "precision 1", files: ["s.yaml": text(base)], arguments: ["run", "s.yaml", "--precision", "1"], expected: "--precision"),
        Case(name: "precision NaN", files: ["s.yaml": text(base)], arguments: ["run", "s.yaml", "--precision", "nan"], expected: "--precision"),
        Case(name: "an unknown option", files: ["s.yaml": text(base)], arguments: ["run", "s.yaml", "--frobnicate"], expected: "--frobnicate"),
        Case(name: "an unknown command", files: [:], arguments: ["explode"], expected: "explode"),
        Case(name: "merge of a folder that is not a shard", files: ["x/a": text("")], arguments: ["merge", "x", "--out", "m"], expected: "not a shard folder"),
        Case(name: "merge of a missing folder", files: [:], arguments: ["merge", "nowhere", "--out", "m"], expected: "no such shard folder"),
    ]

    // MARK: - Runs that would never end

    static let runCases: [Case] = [
        add(
            "a refresh resubmitted every microsecond",
            "apps: [{profile: news, tasks: [{id: r, kind: refresh, submit_on: [start, handler], interval: 1us, cpu: 0s}]}]",
            "stopped: more than 16384 events within a simulated second"),
        Case(
            name: "a sweep point whose refresh is resubmitted every microsecond",
            files: [
                "s.yaml": text(base),
                "w.yaml": text(
                    "scenario: s.yaml\nreplications: 1\ndesign: grid\naxes:\n  - {path: 'apps[0].tasks[0].interval', values: [1h, 1us]}\n  - {path: 'apps[0].tasks[0].cpu', values: [0s]}\n"
                ),
            ],
            arguments: ["sweep", "w.yaml", "--jobs", "1", "--quiet"], expected: "point 1: scenario"),
    ]

    /// Runs bgsim in `folder` and measures it: exit status, stderr, peak RSS. Not its time: a
    /// test asserts no time (a loaded machine took 3 s over a 2 s bound); a hang fails the run.
    static func measured(_ arguments: [String], in folder: URL) throws -> (status: Int32, stderr: String, peakKB: Int) {
        let err = FileManager.default.temporaryDirectory.appendingPathComponent("bgsim-hostile-\(UUID().uuidString).err")
        defer { try? FileManager.default.removeItem(at: err) }
        var actions: posix_spawn_file_actions_t = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, err.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        // Through sh, which changes folder and then becomes bgsim (exec keeps the pid).
        let argv = ["/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", folder.path, bgsimBinary()] + arguments
        var cArgs = argv.map { strdup($0) } + [nil]
        defer { for a in cArgs { free(a) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, argv[0], &actions, nil, &cArgs, environ)
        guard rc == 0 else { throw POSIXError(POSIXErrorCode(rawValue: rc) ?? .EIO) }
        // Peak memory from /proc's VmHWM, polled while it runs: wait4's ru_maxrss carries over
        // exec the high-water mark of the vfork that shared this (large) test process's memory.
        // Read only once the process is bgsim: before the exec its status is the vfork's, and a
        // poll that fell there read this test process's memory (331 MB, once, in make test).
        var status: Int32 = 0
        var peakKB = 0
        while waitpid(pid, &status, WNOHANG) == 0 {
            if let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
                text.split(separator: "\n").first == "Name:\tbgsim",
                let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
                let kb = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
            {
                peakKB = max(peakKB, kb)
            }
            usleep(2000)
        }
        let exited = status & 0x7F == 0
        let code = exited ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return (code, (try? String(contentsOf: err, encoding: .utf8)) ?? "", peakKB)
    }

    @Test func theCorpusHasOverAHundredInputs() {
        #expect(Self.cases.count >= 100, "\(Self.cases.count)")
        #expect(Set(Self.cases.map(\.name)).count == Self.cases.count, "names are unique")
    }

    /// BGSIM_MAX_INPUT_MB that is not a number of megabytes is an error, not a limit left as
    /// it was; and a profile that is a link looping on itself is named as such, not "no
    /// profile named" beside a list of known profiles that names it.
    @Test func aBadLimitAndALoopingProfileAreNamed() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Self.base.write(to: dir.appendingPathComponent("s.yaml"), atomically: true, encoding: .utf8)
        for value in ["-1", "abc", "0", "2000000", ""] {
            let r = try bgsim(["validate", "s.yaml"], in: dir, environment: ["BGSIM_MAX_INPUT_MB": value])
            #expect(r.status == 2, "\(value): \(r.stderr)")
            #expect(
                r.stderr
                    == "error: BGSIM_MAX_INPUT_MB: expected a whole number of megabytes from 1 to 1048576 (the largest input file bgsim reads), got '\(value)'\n",
                "\(r.stderr)")
        }
        #expect(try bgsim(["validate", "s.yaml"], in: dir, environment: ["BGSIM_MAX_INPUT_MB": "5"]).status == 0)
        let people = dir.appendingPathComponent("models/people")
        try FileManager.default.createDirectory(at: people, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: people.appendingPathComponent("lp1.yaml").path, withDestinationPath: "lp1.yaml")
        let looped = try bgsim(["validate", "s.yaml", "--set", "people=lp1", "--set", "models=models"], in: dir)
        #expect(
            looped.status == 2 && looped.stderr.hasSuffix("models/people/lp1.yaml: cannot read the profile (Too many levels of symbolic links)\n"),
            "\(looped.stderr)")
    }

    /// A trace is read from its bytes into compact rows: a 64 MB load trace takes less than
    /// twice its size in memory (a 21 MB network trace took 591 MB when rows were dictionaries
    /// of Strings), and a file that is not a trace is not echoed in the error.
    @Test func aLargeTraceTakesASmallMultipleOfItsSizeAndAStrangeFileIsNotEchoed() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        var csv = Data("time,power_w\n".utf8)
        var t = 0
        while csv.count < 64 << 20 {
            csv.append(contentsOf: "\(t / 1000).\(String(t % 1000).leftPadded(3)),\(Double(t % 2999) / 1000)\n".utf8)
            t += 1 + t % 4999
        }
        try csv.write(to: dir.appendingPathComponent("l.csv"))
        try (Self.base + "\nload: {trace: l.csv}\n").write(to: dir.appendingPathComponent("s.yaml"), atomically: true, encoding: .utf8)
        let empty = try Self.measured(["validate", "s.yaml", "--set", "load={steps: [{power_w: 1, for: 1h}]}"], in: dir)
        let r = try Self.measured(["validate", "s.yaml"], in: dir)
        #expect(r.status == 0, "\(r.stderr)")
        let extraMB = (r.peakKB - empty.peakKB) / 1024
        #expect(extraMB < 2 * 64, "the 64 MB trace took \(extraMB) MB more than the scenario without it")

        try (Self.base.replacingOccurrences(of: "people: median", with: "people: {profile: median, trace: /etc/passwd}"))
            .write(to: dir.appendingPathComponent("p.yaml"), atomically: true, encoding: .utf8)
        let passwd = try Self.measured(["validate", "p.yaml"], in: dir)
        #expect(passwd.status == 2 && passwd.stderr.contains("got a line that is not a row of column names"), "\(passwd.stderr)")
        #expect(!passwd.stderr.contains("root"), "\(passwd.stderr)")
    }

    @Test(arguments: cases)
    func isRefusedInOneLineWritingNothing(_ c: Case) throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        for (name, data) in c.files {
            let url = dir.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: url)
        }
        let before = files(in: dir)
        let r = try Self.measured(c.arguments, in: dir)
        #expect(r.status == 2, "exit \(r.status): \(r.stderr)")
        let lines = r.stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == 1 && r.stderr.hasPrefix("error: "), "stderr: \(r.stderr)")
        #expect(r.stderr.contains(c.expected), "expected '\(c.expected)' in: \(r.stderr)")
        #expect(r.peakKB < 200 * 1024, "\(r.peakKB / 1024) MB")
        // Nothing written; a run stopped mid-way may leave its output folder with no unit
        // record in it (nothing that looks finished).
        let after = files(in: dir).filter { !before.contains($0) }
        if c.name.contains("every microsecond") {
            // Point 0 of the sweep is fine and finishes; the storm's unit leaves no file.
            var isFolder: ObjCBool = false
            let regular = after.filter {
                FileManager.default.fileExists(atPath: dir.appendingPathComponent($0).path, isDirectory: &isFolder) && !isFolder.boolValue
            }
            #expect(regular.allSatisfy { $0.contains("p000000") } && (c.arguments[0] == "sweep" || regular.isEmpty), "\(regular)")
            #expect(after.allSatisfy { !$0.hasSuffix("manifest.json") && !$0.hasSuffix("runs.csv") }, "\(after)")
        } else {
            #expect(after.isEmpty, "wrote \(after)")
        }
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
