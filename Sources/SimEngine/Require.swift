/// Traps with `message` when `condition` is false, in every build configuration.
///
/// For misuse a user of the library can cause — a policy breaking its contract, scheduling in
/// the past — rather than bgsim's own invariants. `precondition` drops its message from
/// optimized builds, leaving a bare "illegal instruction" in the release `bgsim`; this keeps it.
@inlinable
public func require(
    _ condition: Bool, _ message: @autoclosure () -> String,
    file: StaticString = #fileID, line: UInt = #line
) {
    if !condition { misuse(message(), file: file, line: line) }
}

@usableFromInline @inline(never)
func misuse(_ message: String, file: StaticString, line: UInt) -> Never {
    fatalError(message, file: file, line: line)
}
