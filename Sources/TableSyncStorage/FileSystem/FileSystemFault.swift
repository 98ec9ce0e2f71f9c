#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if DEBUG
import Synchronization
#endif

/// The kinds of ``FileSystem`` call that the fault hook of debug builds tells apart; the raw values are the
/// names `TABLESYNC_FS_FAULT` uses (docs/reliability.md).
enum FileSystemCall: String, CaseIterable, Sendable {
    /// Writing a new (temporary) file.
    case write
    /// Appending to the journal or an index (the `fsync` that follows counts as a ``sync``).
    case append
    /// `fsync` of a file or directory, `syncfs` of the file system.
    case sync
    case rename
    case createDirectory = "mkdir"
    /// Removing a file or an empty directory.
    case remove
    case read

    /// `false` only for reads: every other call changes the disk and counts towards `kill:N`.
    var changesDisk: Bool { self != .read }
}

#if DEBUG
/// One ``FileSystem`` call as the fault hook sees it: the error to fail it with, if any, and whether the process
/// must die right after it (``leave()``).
///
/// Debug builds only: release builds use the empty version below, which compiles to nothing. The hook reads
/// `TABLESYNC_FS_FAULT` (the faults) and `TABLESYNC_FS_FAULT_LOG` (a file that gets one line per call) from the
/// environment of the process once, so crash tests can run the built `tablesync` as a child process and make
/// the disk fill up, fail, or the process die at an exact call.
struct FaultPoint {
    /// The `errno` value the call must fail with.
    let error: Int32?
    private let killsAfterwards: Bool

    /// Counts a call of `call` on `path`; `changesDisk: false` for a step inside a call already counted.
    static func enter(_ call: FileSystemCall, _ path: String, changesDisk: Bool = true) -> FaultPoint {
        guard #available(macOS 15, iOS 18, *), let injector = FileSystemFaultInjector.shared else {
            return FaultPoint(error: nil, killsAfterwards: false)
        }
        let decision = injector.decide(call, path: path, changesDisk: changesDisk && call.changesDisk)
        return FaultPoint(error: decision.error, killsAfterwards: decision.kill)
    }

    /// Ends the call: SIGKILL when it was the call `kill:N` names.
    func leave() {
        guard killsAfterwards else { return }
        kill(getpid(), SIGKILL)
        while true { pause() }
    }
}

/// What `TABLESYNC_FS_FAULT` asks for, and the pure rule of which call it hits.
struct FileSystemFaultPlan: Equatable, Sendable {
    /// A call that fails: the `ordinal`-th call of `call` (and every later one when `onward`) with `code`.
    struct FailureRule: Equatable, Sendable {
        var call: FileSystemCall
        var ordinal: Int
        var onward: Bool
        var code: Int32
    }

    struct SyntaxError: Error, Equatable {
        var reason: String
    }

    static let variable = "TABLESYNC_FS_FAULT"
    static let logVariable = "TABLESYNC_FS_FAULT_LOG"
    static let errorCodes: [String: Int32] = [
        "ENOSPC": ENOSPC, "EIO": EIO, "EDQUOT": EDQUOT, "EROFS": EROFS, "EACCES": EACCES, "EPERM": EPERM
    ]

    var rules: [FailureRule] = []
    /// `kill:N`: SIGKILL right after the N-th call that changes the disk.
    var killAfter: Int?

    init(rules: [FailureRule] = [], killAfter: Int? = nil) {
        self.rules = rules
        self.killAfter = killAfter
    }

    /// Parses `RULE[,RULE...]`, each `CALL:N:ERROR`, `CALL:N+:ERROR` or `kill:N` (docs/reliability.md).
    init(parsing text: String) throws(SyntaxError) {
        for part in text.split(separator: ",", omittingEmptySubsequences: true) {
            let fields = part.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            if fields.count == 2, fields[0] == "kill" {
                guard let ordinal = Int(fields[1]), ordinal > 0 else {
                    throw SyntaxError(reason: "kill:N needs a count from 1, found \"\(part)\"")
                }
                killAfter = ordinal
                continue
            }
            guard fields.count == 3 else {
                throw SyntaxError(reason: "expected CALL:N:ERROR, CALL:N+:ERROR or kill:N, found \"\(part)\"")
            }
            guard let call = FileSystemCall(rawValue: fields[0]) else {
                throw SyntaxError(
                    reason:
                        """
                        unknown call \"\(fields[0])\" (one of \
                        \(FileSystemCall.allCases.map(\.rawValue).joined(separator: ", ")))
                        """
                )
            }
            let onward = fields[1].hasSuffix("+")
            guard let ordinal = Int(onward ? String(fields[1].dropLast()) : fields[1]), ordinal > 0 else {
                throw SyntaxError(reason: "\"\(part)\" needs a count from 1")
            }
            guard let code = Self.errorCodes[fields[2]] ?? Int32(fields[2]) else {
                throw SyntaxError(
                    reason:
                        """
                        unknown error \"\(fields[2])\" (one of \
                        \(Self.errorCodes.keys.sorted().joined(separator: ", ")) or a number)
                        """
                )
            }
            rules.append(FailureRule(call: call, ordinal: ordinal, onward: onward, code: code))
        }
    }

    /// The error for the `ordinal`-th call of `call`, if a rule names it.
    func error(for call: FileSystemCall, ordinal: Int) -> Int32? {
        rules.first { $0.call == call && (ordinal == $0.ordinal || ($0.onward && ordinal > $0.ordinal)) }?.code
    }

    /// `true` for the call after which the process dies: the `killAfter`-th that changes the disk.
    func kills(afterChangingCall ordinal: Int) -> Bool { ordinal == killAfter }

    static func errorName(_ code: Int32) -> String {
        errorCodes.first(where: { $0.value == code })?.key ?? String(code)
    }
}

/// The process's plan, its call counters, and the log.
@available(macOS 15, iOS 18, *)
final class FileSystemFaultInjector: Sendable {
    struct Decision: Equatable {
        var error: Int32?
        var kill: Bool
    }

    private struct Counters {
        var byCall: [FileSystemCall: Int] = [:]
        var changingDisk = 0
    }

    /// The process's injector, `nil` when neither variable is set (the hook then costs one check per call).
    static let shared: FileSystemFaultInjector? = {
        let faults = getenv(FileSystemFaultPlan.variable).map { String(cString: $0) } ?? ""
        let log = getenv(FileSystemFaultPlan.logVariable).map { String(cString: $0) } ?? ""
        if faults.isEmpty && log.isEmpty { return nil }
        do throws(FileSystemFaultPlan.SyntaxError) {
            return FileSystemFaultInjector(
                plan: try FileSystemFaultPlan(parsing: faults), logPath: log.isEmpty ? nil : log)
        } catch {
            // A test that asks for a fault it cannot get must not run without it.
            var message = "tablesync: \(FileSystemFaultPlan.variable)=\(faults): \(error.reason)\n"
            message.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
            exit(2)
        }
    }()

    let plan: FileSystemFaultPlan
    /// A file that gets one line per call: `CHANGE_NUMBER|- CALL ORDINAL PATH [fail ERROR] [kill]`.
    let logPath: String?
    private let counters = Mutex(Counters())

    init(plan: FileSystemFaultPlan, logPath: String?) {
        self.plan = plan
        self.logPath = logPath
    }

    /// Counts the call and decides what happens to it; logs it when a log is asked for.
    func decide(_ call: FileSystemCall, path: String, changesDisk: Bool) -> Decision {
        counters.withLock { counters in
            let ordinal = counters.byCall[call, default: 0] + 1
            counters.byCall[call] = ordinal
            if changesDisk { counters.changingDisk += 1 }
            let decision = Decision(
                error: plan.error(for: call, ordinal: ordinal),
                kill: changesDisk && plan.kills(afterChangingCall: counters.changingDisk))
            if let logPath {
                var line = "\(changesDisk ? String(counters.changingDisk) : "-") \(call.rawValue) \(ordinal) \(path)"
                if let code = decision.error { line += " fail \(FileSystemFaultPlan.errorName(code))" }
                if decision.kill { line += " kill" }
                Self.append(line + "\n", to: logPath)
            }
            return decision
        }
    }

    /// One `write` with `O_APPEND`, outside ``FileSystem`` so that logging is not itself a counted call.
    private static func append(_ line: String, to path: String) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return }
        var text = line
        text.withUTF8 { _ = write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
    }
}
#else
/// Release builds: no fault hook, nothing to count.
struct FaultPoint {
    var error: Int32? { nil }

    @inline(__always)
    static func enter(_ call: FileSystemCall, _ path: String, changesDisk: Bool = true) -> FaultPoint { FaultPoint() }

    @inline(__always)
    func leave() {}
}
#endif
