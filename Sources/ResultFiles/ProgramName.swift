import Synchronization

/// The name messages call this process's executable by: `bgsim`, or a user's own program built
/// on bgsim's command line with its policies (`my-bgsim`), so that "run it with: ..." names a
/// command that knows the study's policies.
package enum ProgramName {
    private static let value = Mutex("bgsim")

    /// `bgsim` unless the program said otherwise at start.
    package static var current: String {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}
