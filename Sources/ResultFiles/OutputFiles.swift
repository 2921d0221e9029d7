import Foundation

/// A failure while running, not caused by the input: an output that cannot be written.
package struct RuntimeFailure: Error, CustomStringConvertible {
    /// The message, naming the file and the operating system's reason.
    package let description: String
    /// A failure saying `description`.
    package init(_ description: String) { self.description = description }
}

/// A command line or its arguments are wrong (exit code 2): one line saying what to give instead.
package struct UsageError: Error, CustomStringConvertible {
    /// The message.
    package var description: String
    /// An error saying `description`.
    package init(_ description: String) { self.description = description }
}

/// An exclusive lock on an output folder while a study or a merge writes into it.
///
/// Two bgsim processes writing into one folder (a command started twice, a requeued Slurm task
/// whose first run still runs) would compute the same units side by side, and the first to
/// finish would delete `units/` while the other still read it. The second now stops at once
/// and says why. The lock is `flock(2)` on the folder itself, so no lock file is left in the
/// results; the kernel drops it when the process ends, however it ends, so a killed run
/// leaves nothing to clear and resumes as before. On a file system without `flock` the run
/// goes on unlocked, as it did before.
package final class FolderLock {
    private var descriptor: Int32

    /// Locks `folder` for this process until the lock is released or the process ends; throws if another process holds it.
    package init(_ folder: URL) throws(RuntimeFailure) {
        descriptor = open(folder.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        if flock(descriptor, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK {
            close(descriptor)
            descriptor = -1
            throw RuntimeFailure(
                "\(folder.path) is in use: another bgsim is writing there (a run, sweep, merge or forecast); "
                    + "wait for it to end, or choose another --out")
        }
    }

    /// Releases the lock; written at the end of the work it guards (`defer { lock.release() }`)
    /// so the lock lives until then.
    package func release() {
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
    }

    deinit { release() }
}

/// One output file's contents: text, a header followed by part files joined in order, or a
/// header followed by `count` pieces, each written by `write` into a buffer that goes to disk
/// whenever it holds a megabyte, so the file is never whole in memory.
package enum OutputContent: Sendable {
    case text(String)
    case parts(header: String, [URL])
    case pieces(header: String, count: Int, write: @Sendable (_ index: Int, _ out: CSVBytes) -> Void)
}

/// Writes a set of files so that each one appears whole or not at all, and the set is
/// marked complete only when all of it is in place.
///
/// Every file is first written in full to a hidden temporary file in the same folder
/// (`.runs.csv.tmp-<pid>`) and flushed to disk; only when all are written are they renamed
/// into place. `rename(2)` within one file system is atomic, so a run that fails or is killed
/// leaves either the previous files or the new ones, never a truncated CSV that looks whole.
/// The set's marker (`manifest.json`, listing every file with its SHA-256) is removed
/// before the renames and put in place last, so a folder whose manifest is missing or does
/// not match its files is known to be incomplete.
///
/// `replacing` names the files an earlier set in the folder may have left (a study's CSVs and
/// its report): when the folder's marker shows it held such a set (a bgsim manifest), those
/// this set does not write are removed with the marker, so a folder written again with other
/// options (`--no-tasks` after a run with tasks, a new seed) never keeps a `tasks.csv` or
/// `report.html` of the earlier study beside the new results. A folder without one is not
/// known to be bgsim's (`--out .`), so nothing in it is removed; nor is any other file.
package enum OutputFiles {
    /// Every file a run or sweep writes into its folder, and the report `bgsim report` writes
    /// beside them by default.
    package static let studyFiles = [
        "runs.csv", "summary.csv", "comparisons.csv", "sensitivity.csv", "apps.csv", "tasks.csv", "timeline.csv", "events.csv",
        "report.html", "report.md",
    ]

    /// Writes `files` into `folder`, each to a hidden temporary that is flushed and then renamed into place, after all are written.
    /// `replacing` names an earlier study's files to remove; `marker` (the manifest) is written last,
    /// from the sizes and digests of the others; `progress` is told how far each file has got.
    package static func write(
        _ files: [(name: String, content: OutputContent)], to folder: URL, replacing: [String] = [],
        marker: ((_ written: [(name: String, bytes: Int, sha256: String)]) -> (name: String, text: String))? = nil,
        progress: ((_ name: String, _ done: Int, _ total: Int) -> Void)? = nil
    )
        throws(RuntimeFailure)
    {
        let fm = FileManager.default
        try createFolder(folder, "output folder ")
        var temporaries: [(URL, URL)] = []
        defer { for (tmp, _) in temporaries { try? fm.removeItem(at: tmp) } }
        var written: [(name: String, bytes: Int, sha256: String)] = []
        for file in files {
            let final = folder.appendingPathComponent(file.name)
            let tmp = folder.appendingPathComponent(".\(file.name).tmp-\(getpid())")
            temporaries.append((tmp, final))
            let (bytes, digest) = try writeFile(file.content, to: tmp, final: final) { progress?(file.name, $0, $1) }
            written.append((file.name, bytes, digest))
        }
        var markerFile: (tmp: URL, final: URL)?
        var earlierSet = false
        if let marker {
            let m = marker(written)
            let final = folder.appendingPathComponent(m.name)
            let tmp = folder.appendingPathComponent(".\(m.name).tmp-\(getpid())")
            temporaries.append((tmp, final))
            _ = try writeFile(.text(m.text), to: tmp, final: final)
            markerFile = (tmp, final)
            if fm.fileExists(atPath: final.path) {
                earlierSet = Self.isBGSimManifest(final)
                guard unlink(final.path) == 0 else {
                    throw RuntimeFailure("cannot remove \(final.path): \(String(cString: strerror(errno)))")
                }
            }
        }
        for name in replacing where earlierSet && !files.contains(where: { $0.name == name }) {
            let stale = folder.appendingPathComponent(name)
            guard unlink(stale.path) == 0 || errno == ENOENT else {
                throw RuntimeFailure("cannot remove \(stale.path), left by an earlier study: \(String(cString: strerror(errno)))")
            }
        }
        for (tmp, final) in temporaries where tmp != markerFile?.tmp {
            try move(tmp, final)
        }
        if let markerFile { try move(markerFile.tmp, markerFile.final) }
        temporaries.removeAll()
    }

    /// Whether `url` is a manifest bgsim wrote (its head names the tool).
    static func isBGSimManifest(_ url: URL) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: url.path) else { return false }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: 256)) ?? Data()
        return String(decoding: head, as: UTF8.self).contains("\"tool\": \"bgsim\"")
    }

    static func move(_ tmp: URL, _ final: URL) throws(RuntimeFailure) {
        guard rename(tmp.path, final.path) == 0 else {
            throw RuntimeFailure("cannot move \(tmp.path) to \(final.path): \(String(cString: strerror(errno)))")
        }
    }

    /// Writes and syncs one temporary file; returns its size and SHA-256. `step` is told the
    /// parts or pieces written so far and their number, after each.
    static func writeFile(
        _ content: OutputContent, to tmp: URL, final: URL,
        step: (_ done: Int, _ total: Int) -> Void = { _, _ in }
    ) throws(RuntimeFailure) -> (Int, String) {
        var hash = SHA256()
        var bytes = 0
        do {
            guard FileManager.default.createFile(atPath: tmp.path, contents: nil) else {
                throw RuntimeFailure("cannot write \(final.path): \(String(cString: strerror(errno)))")
            }
            let handle = try FileHandle(forWritingTo: tmp)
            func put(_ data: Data) throws {
                try handle.write(contentsOf: data)
                hash.update(data)
                bytes += data.count
            }
            switch content {
            case .text(let text): try put(Data(text.utf8))
            case .parts(let header, let urls):
                try put(Data(header.utf8))
                for (k, url) in urls.enumerated() {
                    let part = try FileHandle(forReadingFrom: url)
                    while let chunk = try part.read(upToCount: 1 << 20), !chunk.isEmpty { try put(chunk) }
                    try part.close()
                    step(k + 1, urls.count)
                }
            case .pieces(let header, let count, let write):
                try put(Data(header.utf8))
                let buffer = CSVBytes(capacity: 1 << 21)
                for i in 0..<count {
                    write(i, buffer)
                    defer { step(i + 1, count) }
                    guard buffer.count >= 1 << 20 || i == count - 1 else { continue }
                    try buffer.withUnsafeBytes { try put(Data($0)) }
                    buffer.removeAll()
                }
            }
            try handle.synchronize()
            try handle.close()
        } catch let failure as RuntimeFailure {
            throw failure
        } catch {
            throw RuntimeFailure("cannot write \(final.path): \(reason(error))")
        }
        return (bytes, hash.hexDigest())
    }

    /// Removes hidden temporaries (result files being written) left in `folder` by
    /// runs that were killed (their process no longer exists).
    package static func removeLeftovers(in folder: URL) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return }
        for name in names where name.hasPrefix(".") {
            guard let dash = name.range(of: ".tmp-", options: .backwards),
                let pid = Int32(name[dash.upperBound...]), pid != getpid()
            else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { try? FileManager.default.removeItem(at: folder.appendingPathComponent(name)) }
        }
    }

    /// Creates `folder` and its parents; on failure, the error says "cannot create <what><path>"
    /// and why. Foundation often gives no cause (a folder under a file came out as "The operation
    /// could not be completed. (NSCocoaErrorDomain error 512.)"), so a file in the way is looked
    /// for first.
    package static func createFolder(_ folder: URL, _ what: String = "") throws(RuntimeFailure) {
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            var path = folder.standardizedFileURL
            while path.path != "/" {
                var isFolder: ObjCBool = false
                if FileManager.default.fileExists(atPath: path.path, isDirectory: &isFolder) {
                    if !isFolder.boolValue {
                        throw RuntimeFailure("cannot create \(what)\(folder.path): \(path.path) is a file, not a folder")
                    }
                    break
                }
                path.deleteLastPathComponent()
            }
            throw RuntimeFailure("cannot create \(what)\(folder.path): \(reason(error))")
        }
    }

    /// Creates `folder`, a folder bgsim keeps inside an output folder (`units/`, `logs/`), or
    /// takes the one there if it is a real folder. A symbolic link or a file in its place is
    /// refused (exit 2): followed, the link would have bgsim write, and later remove, files
    /// wherever it points, outside `--out`.
    package static func ownFolder(_ folder: URL, _ what: String) throws -> URL {
        var info = stat()
        if lstat(folder.path, &info) == 0 {
            if isSymbolicLink(folder.path) {
                throw UsageError(
                    "\(folder.path) is a symbolic link; bgsim keeps \(what) there and does not follow a link it did not make. "
                        + "Remove the link, or choose another --out")
            }
            if (info.st_mode & S_IFMT) != S_IFDIR {
                throw UsageError("\(folder.path) is not a folder; bgsim keeps \(what) there. Remove it, or choose another --out")
            }
            return folder
        }
        try createFolder(folder, "output folder ")
        return folder
    }

    /// Whether `path` is a symbolic link (not followed).
    package static func isSymbolicLink(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFLNK
    }

    /// Opens `path` for writing, created or emptied, never through a symbolic link (one in its
    /// place fails with ELOOP rather than writing where it points).
    package static func openForWriting(_ path: String) throws(RuntimeFailure) -> Int32 {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else {
            let why = errno == ELOOP ? "it is a symbolic link, which bgsim does not follow" : String(cString: strerror(errno))
            throw RuntimeFailure("cannot write \(path): \(why)")
        }
        return fd
    }

    static func reason(_ error: Error) -> String {
        let ns = error as NSError
        if let posix = ns.userInfo[NSUnderlyingErrorKey] as? NSError, posix.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(posix.code)))
        }
        return ns.localizedFailureReason ?? ns.localizedDescription
    }
}

extension URL {
    /// A file URL for a path as a person gave it, taken literally: Foundation's
    /// `fileURLWithPath` reads a leading `~` as a home folder, so `--out '~'` (quoted, or from
    /// a script) wrote into the home folder rather than a folder named `~`.
    package init(literalPath path: String) { self.init(fileURLWithPath: path.hasPrefix("~") ? "./" + path : path) }
}
