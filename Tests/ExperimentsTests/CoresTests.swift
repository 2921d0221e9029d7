import Foundation
import Testing

@testable import Experiments
@testable import ResultFiles
@testable import ScenarioFiles

/// The default `--jobs`: the CPUs this process may use, not the machine's.
@Suite struct CoresTests {
    /// A fake cgroup file system: `files` (path under the root → text) and the process's
    /// `/proc/self/cgroup`.
    static func quota(_ membership: String, _ files: [String: String]) throws -> Double? {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("cgroup-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        for (path, text) in files {
            let url = root.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
        let cgroupFile = root.appendingPathComponent("proc-self-cgroup")
        try membership.write(to: cgroupFile, atomically: true, encoding: .utf8)
        return Cores.quota(root: root.path, cgroupFile: cgroupFile.path)
    }

    @Test(
        arguments: [
            ("max 100000", nil), ("200000 100000", 2.0), ("150000 100000\n", nil), ("50000 100000", 0.5),
            ("0 100000", nil), ("max", nil), ("", nil),
        ] as [(String, Double?)])
    func cpuMaxIsQuotaOverPeriod(text: String, cpus: Double?) {
        // A trailing newline is trimmed by the reader before parsing; here it is not a number.
        #expect(Cores.parseCPUMax(text) == cpus)
    }

    @Test func aCgroupV2QuotaOnTheProcessOrAnyParentCapsIt() throws {
        // Unified hierarchy (cgroup.controllers at the root); the tightest quota wins, here
        // the parent's.
        let files = [
            "cgroup.controllers": "cpu memory", "cpu.max": "max 100000",
            "user.slice/cpu.max": "150000 100000", "user.slice/job/cpu.max": "400000 100000",
        ]
        #expect(try Self.quota("0::/user.slice/job\n", files) == 1.5)
        // No quota anywhere.
        #expect(try Self.quota("0::/user.slice/job\n", ["cgroup.controllers": "cpu", "user.slice/job/cpu.max": "max 100000"]) == nil)
        // Inside a container's cgroup namespace the path is "/": the mount's own file.
        #expect(try Self.quota("0::/\n", ["cgroup.controllers": "cpu", "cpu.max": "250000 100000"]) == 2.5)
    }

    @Test func aCgroupV1QuotaCapsItAndMinusOneIsNoQuota() throws {
        let membership = "4:memory:/x\n3:cpu,cpuacct:/docker/abc\n0::/\n"
        let files = [
            "cpu,cpuacct/docker/abc/cpu.cfs_quota_us": "300000\n", "cpu,cpuacct/docker/abc/cpu.cfs_period_us": "100000\n",
            "cpu,cpuacct/cpu.cfs_quota_us": "-1\n", "cpu,cpuacct/cpu.cfs_period_us": "100000\n",
        ]
        #expect(try Self.quota(membership, files) == 3)
        // The controllers mounted apart ("cpu" alone), no quota set: none.
        #expect(try Self.quota("1:cpu:/\n", ["cpu/cpu.cfs_quota_us": "-1", "cpu/cpu.cfs_period_us": "100000"]) == nil)
        // No cgroup file at all (not Linux, or /proc not mounted): none.
        #expect(Cores.quota(root: "/nonexistent", cgroupFile: "/nonexistent/cgroup") == nil)
    }

    @Test(
        arguments: [("0-1", 2), ("0", 1), ("0-3,8,10-11", 7), ("3-1", nil), ("", nil), ("a-b", nil), ("1-2-3", nil)]
            as [(String, Int?)])
    func cpuListsAreCounted(text: String, cpus: Int?) {
        #expect(Cores.parseCPUList(text) == cpus)
    }

    @Test func ancestorsRunFromTheCgroupUpToTheMount() {
        #expect(Cores.ancestors("/sys/fs/cgroup", "/a/b") == ["/sys/fs/cgroup/a/b", "/sys/fs/cgroup/a", "/sys/fs/cgroup"])
        #expect(Cores.ancestors("/sys/fs/cgroup", "/") == ["/sys/fs/cgroup"])
    }

    /// The affinity count is what `nproc` (coreutils, which reads the same mask with
    /// `sched_getaffinity`) prints for this process. (The CLI tests run bgsim under `taskset`.)
    @Test func theAffinityMaskIsCountedAsNprocCountsIt() throws {
        func run(_ tool: String, _ arguments: [String]) throws -> String {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            p.arguments = [tool] + arguments
            var environment = ProcessInfo.processInfo.environment
            environment["OMP_NUM_THREADS"] = nil  // nproc would report it instead
            p.environment = environment
            let out = Pipe()
            p.standardOutput = out
            try p.run()
            p.waitUntilExit()
            return String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        #expect(Cores.affinityCount().map(String.init) == (try run("nproc", [])))
        #expect(Cores.affinityCount(statusFile: "/nonexistent") == nil)
        #expect(Cores.available() >= 1 && Cores.available() <= ProcessInfo.processInfo.activeProcessorCount)
    }
}
