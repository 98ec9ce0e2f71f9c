import ArgumentParser
import TableSync

/// The exit codes of `tablesync` (the one place they are decided; the help text lists them).
enum ExitStatus: Int32 {
    case done = 0
    case failure = 1
    case usage = 2
    case conflictsWaiting = 3
    case unreachable = 4
    case authentication = 5
    case locked = 6
    case invalidStore = 7
    case recordsSkipped = 8
    case gitState = 9
    case commitFailed = 10

    /// The exit status of a run that failed with an error of `kind`.
    init(_ kind: FailureKind) {
        switch kind {
        case .usage: self = .usage
        case .invalidStore: self = .invalidStore
        case .locked: self = .locked
        case .unreachable: self = .unreachable
        case .authentication: self = .authentication
        case .gitState: self = .gitState
        case .other: self = .failure
        }
    }
}

extension ExitCode {
    /// Ends a command with `status` after it printed its result: `throw ExitCode(.conflictsWaiting)`.
    init(_ status: ExitStatus) {
        self.init(status.rawValue)
    }
}
