import ArgumentParser
import Experiments
import Foundation
import Reports
import ResultFiles
import ScenarioFiles
import Scheduling
import SimEngine

/// Exit codes: distinct, documented in `--help`, and tested.
enum Exit {
    static let success: Int32 = 0
    /// The input was fine but the run failed (for example, an output could not be written).
    static let runtimeFailure: Int32 = 1
    /// Bad input or usage: a scenario file, a `--set` value, an option.
    static let badInput: Int32 = 2
    /// `merge`: the shards do not make one complete study (missing or duplicate units,
    /// shards of different studies, damaged unit files).
    static let incomplete: Int32 = 3
}

/// Every command names itself (`commandName`): otherwise argument-parser derives the name
/// from the type's, through `String(describing:)` and reflection, whose protocol-conformance
/// lookups cost about 5 M instructions at each start (callgrind), a quarter of parsing.
struct BGSim: AsyncParsableCommand {
    /// Computed: a user's own program (`my-bgsim`) is named, and its version given, as itself.
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: Program.current.name,
            abstract: "Simulate how a phone decides when apps' background work runs, and compare scheduling policies.",
            discussion: """
                Examples:
                  bgsim examples
                  bgsim run default
                  bgsim sweep refresh-setting --replications 2
                  bgsim validate default --print
                  bgsim run models/scenarios/default.yaml
                  bgsim run models/scenarios/default.yaml --replications 30 --seed 7
                  bgsim run models/scenarios/default.yaml --out /tmp/study --jobs 2
                  bgsim run models/scenarios/default.yaml --set charger.preset=wired-5w
                  bgsim validate models/scenarios/default.yaml --set people.sessions_per_day=80
                  bgsim sweep models/sweeps/refresh-setting.yaml --jobs 2
                  bgsim sweep models/sweeps/refresh-setting.yaml --shard 1/4 --out /tmp/s1
                  bgsim merge /tmp/s1 /tmp/s2 /tmp/s3 /tmp/s4 --out /tmp/sweep
                  bgsim sweep models/sweeps/refresh-setting.yaml --emit-slurm /scratch/sweep
                  bgsim report results/default --format md

                Exit codes: 0 success, 1 runtime failure, 2 bad input or usage (a scenario,
                a sweep, an option, a folder that is not a results folder), 3 incomplete or
                inconsistent shards (merge).
                """,
            version: Program.current == .bgsim ? Manifest.toolVersion : "\(Program.current.name) \(Program.current.version) (bgsim \(Manifest.toolVersion))",
            subcommands: [
                Run.self, SweepCommand.self, Merge.self, ReportCommand.self, ForecastCommand.self, Validate.self, Examples.self, Policies.self,
                Mechanisms.self, SensitivityCommand.self, TimelineCommand.self,
            ]
        )
    }
}

/// The `bgsim` command line, as a library: a package of a user's own policies gets an
/// executable that is bgsim plus those policies with a `main.swift` of one line,
///
/// ```swift
/// import BGSimCommandLine
/// BGSimCommandLine.main(policies: [QuietHoursPolicy.self])
/// ```
///
/// and every command (`run`, `sweep`, `--shard`, `--emit-slurm`, `merge`, `validate`,
/// `report`) then takes those policies by name, as it takes the built-in ones.
public enum BGSimCommandLine {
    /// Registers `policies`, runs the command line of this process, and exits with its code
    /// (0 success, 1 runtime failure, 2 bad input or usage, 3 incomplete shards).
    ///
    /// - Parameters:
    ///   - policies: the program's own policies, taken by name as the built-in ones are.
    ///   - version: the program's version (of the package that holds its policies): each
    ///     manifest records it beside the executable's name and each policy's package.
    ///
    /// Synchronous: the main thread waits for the command on a semaphore. An `async` main parks
    /// the main thread in `dispatch_main`, whose `sigsuspend` on a read-only mask crashes
    /// valgrind 3.19 (Debian 12's), and with it `make instructions`.
    public static func main(policies: [any RegisteredPolicy.Type] = [], version: String? = nil) -> Never {
        StandardStreams.openClosed()
        PolicyRegistry.register(policies)
        // The name it was called by, for messages and the reproduce line; one a message or a
        // YAML comment could not hold whole (empty, a control character) reads as bgsim.
        var name = CommandLine.arguments.first.map { URL(fileURLWithPath: $0).lastPathComponent } ?? "bgsim"
        if name.isEmpty || name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) { name = "bgsim" }
        if name != "bgsim" || version != nil {
            Program.current = Program(name: name, version: version ?? "unversioned")
        }
        // A process started from a thread that blocks signals (a Swift concurrency thread's
        // Process) inherits that mask; dispatch_main's sigsuspend used to lift it. The main
        // thread takes SIGINT and SIGTERM (Interruption) while the work runs on threads that
        // block them.
        var stopSignals = sigset_t()
        sigemptyset(&stopSignals)
        sigaddset(&stopSignals, SIGINT)
        sigaddset(&stopSignals, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &stopSignals, nil)
        let arguments = Array(CommandLine.arguments.dropFirst())
        let finished = ExitCode()
        Task.detached {
            finished.code = await Main.run(arguments)
            finished.done.signal()
        }
        finished.done.wait()
        #if BGSIM_EVENT_COSTS
        FileHandle.standardError.write(Data(EventCosts.report().utf8))
        #endif
        exit(StandardStreams.flushed(finished.code))
    }

    /// The command's exit code, written before `done` is signalled and read after it.
    private final class ExitCode: @unchecked Sendable {
        var code: Int32 = 0
        let done = DispatchSemaphore(value: 0)
    }
}

enum Main {

    /// Parses and runs one command line; returns the exit code.
    static func run(_ arguments: [String]) async -> Int32 {
        await dispatch(arguments)
    }

    /// `--replications -1` as `--replications=-1`: the parser takes a word starting with `-`
    /// for an option, and said "Missing value"; joined, the option's own check says what is
    /// wrong with the number.
    static func joiningNegativeValues(_ arguments: [String]) -> [String] {
        var out: [String] = []
        var i = 0
        while i < arguments.count {
            let a = arguments[i]
            if a.hasPrefix("--"), !a.contains("="), i + 1 < arguments.count, arguments[i + 1].count > 1,
                arguments[i + 1].hasPrefix("-"), Double(arguments[i + 1]) != nil
            {
                out.append(a + "=" + arguments[i + 1])
                i += 2
            } else {
                out.append(a)
                i += 1
            }
        }
        return out
    }

    static func dispatch(_ arguments: [String]) async -> Int32 {
        let arguments = joiningNegativeValues(arguments)
        do {
            // Arguments end up in the manifest's command line, the reports' "reproduce" line
            // and Slurm scripts; a line break there would split a line that must stay whole.
            for a in arguments { try Quoting.refuseControlCharacters(a, what: "the argument \(Quoting.shell(a))") }
            var command = try BGSim.parseAsRoot(arguments)
            if var async = command as? AsyncParsableCommand {
                try await async.run()
            } else {
                try command.run()
            }
            return Exit.success
        } catch let error as ScenarioError {
            printError("error: \(error)")
            return Exit.badInput
        } catch let error as RuntimeFailure {
            printError("error: \(error)")
            return Exit.runtimeFailure
        } catch let error as ReportError {
            printError("error: \(error)")
            return Exit.badInput
        } catch let error as UsageError {
            printError("error: \(error)")
            return Exit.badInput
        } catch let error as Quoting.Refused {
            printError("error: \(error)")
            return Exit.badInput
        } catch let error as MergeError {
            printError("error: \(error)")
            return Exit.incomplete
        } catch {
            // Help and version requests arrive as errors that exit successfully.
            let code = BGSim.exitCode(for: error)
            if code == .success {
                print(BGSim.fullMessage(for: error))
                return Exit.success
            }
            if code == .validationFailure {
                // One line: the error, and where the usage is (the usage block followed it).
                let message = BGSim.message(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)"
                printError("error: \(message) (see --help)")
                return Exit.badInput
            }
            printError("error: \(error)")
            return Exit.runtimeFailure
        }
    }

    static func printError(_ text: String) {
        StandardStreams.writeError(text + "\n")
    }
}

/// Standard input, output and error as a shell may leave them: closed (`2>&-`) or on a full
/// device (`>/dev/full`).
enum StandardStreams {
    /// Puts /dev/null on each of descriptors 0, 1 and 2 that is closed. Left closed, the first
    /// file the process opens takes the number, and what was meant for standard error goes
    /// into it (a results file, a lock); and Foundation's `FileHandle.standardError.write`
    /// traps on a closed descriptor (SIGILL, exit 132).
    static func openClosed() {
        for fd: Int32 in 0...2 where fcntl(fd, F_GETFD) == -1 && errno == EBADF {
            let null = open("/dev/null", O_RDWR)
            if null >= 0, null != fd {
                dup2(null, fd)
                close(null)
            }
        }
    }

    /// Writes to standard error, ignoring failure: a message nobody can read is not an error
    /// of the command's.
    static func writeError(_ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress! + offset, $0.count - offset) }
            if n > 0 { offset += n } else if n < 0 && errno == EINTR { continue } else { return }
        }
        bytes.removeAll()
    }

    /// The exit code once standard output is flushed: a command that succeeded but whose
    /// table or messages could not be written (a full disk) exits 1 and says so.
    static func flushed(_ code: Int32) -> Int32 {
        // Every stream (`stdout` itself is a C global Swift 6 will not read); standard error is
        // written unbuffered, so the one with something left to write is standard output.
        guard fflush(nil) != 0 else { return code }
        let reason = String(cString: strerror(errno))
        writeError("error: cannot write standard output: \(reason)\n")
        return code == 0 ? 1 : code
    }
}
