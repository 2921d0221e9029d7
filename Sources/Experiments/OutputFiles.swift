import Foundation

/// A failure while running, not caused by the input: an output that cannot be written.
public struct RuntimeFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Writes a set of files so that each one appears whole or not at all.
///
/// Every file is first written in full to a hidden temporary file in the same folder
/// (`.runs.csv.tmp-<pid>`) and flushed to disk; only when all are written are they renamed
/// into place. `rename(2)` within one file system is atomic, so a run that fails or is killed
/// leaves either the previous files or the new ones, never a truncated CSV that looks whole.
public enum OutputFiles {
    public static func write(_ files: [(name: String, contents: String)], to folder: URL) throws(RuntimeFailure) {
        let fm = FileManager.default
        do {
            try fm.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw RuntimeFailure("cannot create output folder \(folder.path): \(reason(error))")
        }
        var temporaries: [(URL, URL)] = []
        defer { for (tmp, _) in temporaries { try? fm.removeItem(at: tmp) } }
        for file in files {
            let final = folder.appendingPathComponent(file.name)
            let tmp = folder.appendingPathComponent(".\(file.name).tmp-\(getpid())")
            temporaries.append((tmp, final))
            do {
                try Data(file.contents.utf8).write(to: tmp)
                let handle = try FileHandle(forWritingTo: tmp)
                try handle.synchronize()
                try handle.close()
            } catch {
                throw RuntimeFailure("cannot write \(final.path): \(reason(error))")
            }
        }
        for (tmp, final) in temporaries {
            guard rename(tmp.path, final.path) == 0 else {
                throw RuntimeFailure("cannot move \(tmp.path) to \(final.path): \(String(cString: strerror(errno)))")
            }
        }
        temporaries.removeAll()
    }

    private static func reason(_ error: Error) -> String {
        let ns = error as NSError
        if let posix = ns.userInfo[NSUnderlyingErrorKey] as? NSError, posix.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(posix.code)))
        }
        return ns.localizedFailureReason ?? ns.localizedDescription
    }
}
