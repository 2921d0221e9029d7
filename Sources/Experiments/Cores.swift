import Foundation
import ResultFiles
import ScenarioFiles

/// How many simulations this process should run at once by default: the CPUs it may run on,
/// not the CPUs the machine has.
///
/// Foundation's `activeProcessorCount` counts every online CPU, so a sweep started under
/// `taskset -c 0-3`, inside a Slurm allocation or in a container limited with
/// `docker run --cpus 2` would start one simulation per CPU of the whole machine, each
/// holding its rows in memory, on a few cores. This counts as `nproc` and the JVM do: the CPU
/// affinity mask (taskset, Slurm's and cgroups' cpusets), capped by a cgroup CPU quota
/// (`cpu.max` in cgroup v2, `cpu.cfs_quota_us` / `cpu.cfs_period_us` in v1) on the process's
/// cgroup or any cgroup above it, rounded up.
package enum Cores {
    /// The default for `--jobs`: at least 1.
    package static func available() -> Int {
        var cores = affinityCount() ?? ProcessInfo.processInfo.activeProcessorCount
        if let quota = quota() { cores = min(cores, Int(quota.rounded(.up))) }
        return max(1, cores)
    }

    /// CPUs in this process's affinity mask, from `Cpus_allowed_list` in `/proc/self/status`
    /// (`sched_getaffinity` needs `_GNU_SOURCE`, which Swift's Glibc module does not define);
    /// nil if it cannot be read (not Linux). `statusFile` is a parameter for tests.
    static func affinityCount(statusFile: String = "/proc/self/status") -> Int? {
        guard let status = try? String(contentsOfFile: statusFile, encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("Cpus_allowed_list:") {
            return parseCPUList(line.dropFirst("Cpus_allowed_list:".count).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }

    /// A kernel CPU list such as `0-3,8,10-11` (7 CPUs); nil if malformed or empty.
    static func parseCPUList(_ text: String) -> Int? {
        var count = 0
        for part in text.split(separator: ",") {
            let bounds = part.split(separator: "-", omittingEmptySubsequences: false)
            guard let low = Int(bounds[0]), bounds.count <= 2 else { return nil }
            let high = bounds.count == 2 ? Int(bounds[1]) : low
            guard let high, high >= low else { return nil }
            count += high - low + 1
        }
        return count > 0 ? count : nil
    }

    /// The tightest CPU quota, in CPUs, on this process's cgroup and those above it; nil if
    /// none is set. `root` and `cgroupFile` are parameters for tests.
    static func quota(root: String = "/sys/fs/cgroup", cgroupFile: String = "/proc/self/cgroup") -> Double? {
        guard let membership = try? String(contentsOfFile: cgroupFile, encoding: .utf8) else { return nil }
        var tightest: Double?
        func take(_ q: Double?) { if let q { tightest = min(tightest ?? q, q) } }
        for line in membership.split(separator: "\n") {
            // hierarchy-ID:controllers:path; cgroup v2 is "0::path", v1 names "cpu" among
            // its controllers ("4:cpu,cpuacct:/path").
            let fields = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            let controllers = fields[1].split(separator: ",")
            let path = String(fields[2])
            if fields[0] == "0" && fields[1].isEmpty {
                // Mounted at the root (unified), or beside the v1 controllers (hybrid).
                let mount = FileManager.default.fileExists(atPath: root + "/cgroup.controllers") ? root : root + "/unified"
                for dir in ancestors(mount, path) { take(read(dir + "/cpu.max").flatMap(parseCPUMax)) }
            } else if controllers.contains("cpu") {
                let mount = FileManager.default.fileExists(atPath: root + "/cpu,cpuacct") ? root + "/cpu,cpuacct" : root + "/cpu"
                for dir in ancestors(mount, path) {
                    if let q = read(dir + "/cpu.cfs_quota_us").flatMap({ Double($0) }),
                        let p = read(dir + "/cpu.cfs_period_us").flatMap({ Double($0) }), q > 0, p > 0
                    {
                        take(q / p)
                    }
                }
            }
        }
        return tightest
    }

    /// `cpu.max`: "quota period" in microseconds, or "max period" for no limit.
    static func parseCPUMax(_ text: String) -> Double? {
        let parts = text.split(separator: " ")
        guard parts.count == 2, let quota = Double(parts[0]), let period = Double(parts[1]), quota > 0, period > 0 else {
            return nil
        }
        return quota / period
    }

    /// The cgroup's folder and every folder above it up to the mount, deepest first. Inside
    /// a container with its own cgroup namespace the path is "/" and only the mount is read.
    static func ancestors(_ mount: String, _ path: String) -> [String] {
        var parts = path.split(separator: "/").map(String.init)
        var dirs: [String] = []
        while true {
            dirs.append(([mount] + parts).joined(separator: "/"))
            if parts.isEmpty { break }
            parts.removeLast()
        }
        return dirs
    }

    private static func read(_ file: String) -> String? {
        (try? String(contentsOfFile: file, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
