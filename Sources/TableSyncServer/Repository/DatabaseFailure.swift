import GRDB
import PostgresNIO

/// What a database error means for the request that met it, decided from the database's own code: PostgreSQL's
/// SQLSTATE (by class, its first two characters, where a whole class means one thing) and SQLite's primary result
/// code. Every code maps to one case; a code that no rule names is a fault of the server.
///
/// The answer to each case is ``DatabaseErrorClassifier``'s; the repositories ask ``isCausedByRequest`` to keep one
/// operation's refusal from failing the others of its batch.
enum DatabaseFailure: Sendable, Equatable {
    /// The request's values or `$filter` are beyond what the database can evaluate or store (400).
    case invalidInput
    /// A value larger than the database can hold (413 for a record, 400 for a `$filter`).
    case tooLarge
    /// The statement ran past the statement time limit, or was cancelled because its client went away or the
    /// server is stopping (503 with `Retry-After`).
    case timedOut
    /// The database is busy, out of resources or lost a race that a retry settles, for now (503 with
    /// `Retry-After`).
    case unavailable
    /// The connection to the database was refused, lost or closed by the database's shutdown, or no connection
    /// could be had: the database itself may be gone (503 with `Retry-After` and the code `databaseUnavailable`,
    /// and ``DatabaseAvailability`` checks it at once).
    case unreachable
    /// A fault of the server or the database: a bug, a broken schema, a damaged file (500, logged).
    case fault

    /// `true` when the request alone is at fault, so that a batch answers that operation alone and the others go on.
    var isCausedByRequest: Bool { self == .invalidInput || self == .tooLarge }

    /// The failure `error` stands for, with the database's own words; `nil` when it is no database error.
    init?(_ error: any Error) {
        guard let (failure, _) = Self.classify(error) else { return nil }
        self = failure
    }

    /// The failure `error` stands for and the database's message; `nil` when it is no database error.
    static func classify(_ error: any Error) -> (DatabaseFailure, detail: String)? {
        switch error {
        case let error as PostgresTransactionError:
            guard let inner = error.beginError ?? error.closureError ?? error.commitError else {
                return (.fault, "\(error)")
            }
            return classify(inner) ?? (.fault, "\(inner)")
        case let error as PSQLError:
            if let state = error.serverInfo?[.sqlState] {
                return (postgres(sqlState: state), error.serverInfo?[.message] ?? state)
            }
            return (postgres(code: error.code), "\(error.code)")
        case let error as DatabaseError:
            let message = error.message ?? "\(error.resultCode)"
            return (sqlite(primaryCode: error.resultCode.primaryResultCode.rawValue, message: message), message)
        case let error as PostgresLeaseFailure:
            return (.unreachable, PostgresLocation.reason(of: error.underlying))
        case let error as StatementTimeout:
            return (.timedOut, error.description)
        case is CancellationError:
            return (.timedOut, "cancelled")
        default:
            return nil
        }
    }

    /// PostgreSQL's SQLSTATE (appendix A of its manual).
    static func postgres(sqlState state: String) -> DatabaseFailure {
        if let failure = postgresCodes[state] { return failure }
        return postgresClasses[String(state.prefix(2))] ?? .fault
    }

    /// Codes whose answer differs from their class's.
    private static let postgresCodes: [String: DatabaseFailure] = [
        "57014": .timedOut, // query_canceled: statement_timeout, or a cancel request
        "54000": .tooLarge, // program_limit_exceeded: a jsonb value or string over its size limit
        "55P03": .unavailable, // lock_not_available
        "55006": .unavailable, // object_in_use
        "57P01": .unreachable, // admin_shutdown: the database is stopping, or an administrator ended the session
        "57P02": .unreachable, // crash_shutdown
        "57P03": .unreachable, // cannot_connect_now: starting up or shutting down
        "25P03": .unavailable, // idle_in_transaction_session_timeout
        "25P04": .timedOut // transaction_timeout
    ]

    /// Classes by their first two characters.
    private static let postgresClasses: [String: DatabaseFailure] = [
        "22": .invalidInput, // data exception: untranslatable character, invalid datetime, overflow, division by zero
        "54": .invalidInput, // program limit exceeded: statement too complex, stack depth, too many arguments
        "2F": .invalidInput, // SQL routine exception: a function that returned no value for the data given
        "23": .unavailable, // integrity constraint violation: a concurrent write won a race; a retry sees its row
        "40": .unavailable, // transaction rollback: serialization failure, deadlock
        "53": .unavailable, // insufficient resources: disk full, out of memory, too many connections
        "57": .unavailable, // operator intervention: shutdown, cannot connect now
        "08": .unreachable, // connection exception
        "72": .unavailable, // snapshot too old
        "58": .fault, // system error: I/O
        "XX": .fault, // internal error, data corrupted
        "42": .fault, // syntax error or access rule violation: a bug or a schema changed by hand
        "0A": .fault, // feature not supported
        "28": .fault, // invalid authorization: the server's credentials
        "3D": .fault // invalid catalog name: the configured database
    ]

    /// PostgresNIO's errors that carry no SQLSTATE: the connection and the pool's own.
    static func postgres(code: PSQLError.Code) -> DatabaseFailure {
        switch code {
        case .queryCancelled: return .timedOut
        case .tooManyParameters: return .invalidInput
        // Closed by this server itself: a cancelled request's connection.
        case .clientClosedConnection: return .unavailable
        case .serverClosedConnection, .connectionError, .uncleanShutdown, .poolClosed: return .unreachable
        default: return .fault
        }
    }

    /// SQLite's primary result code (`sqlite3.h`); its generic `SQLITE_ERROR` is told apart by its message.
    static func sqlite(primaryCode: CInt, message: String) -> DatabaseFailure {
        switch primaryCode {
        case 1: return sqliteError(message: message) // SQLITE_ERROR
        case 4, 5, 6, 7, 13, 15, 17: return .unavailable // ABORT, BUSY, LOCKED, NOMEM, FULL, PROTOCOL, SCHEMA
        case 9: return .timedOut // INTERRUPT: the time limit, or a cancelled request
        case 18: return .tooLarge // TOOBIG
        case 19: return .unavailable // CONSTRAINT: a race a retry settles, as PostgreSQL's class 23
        default: return .fault // INTERNAL, PERM, READONLY, IOERR, CORRUPT, CANTOPEN, MISUSE, RANGE, NOTADB, …
        }
    }

    /// `SQLITE_ERROR` covers SQL errors of every kind; the ones a request's data or `$filter` cause are told by
    /// their message, everything else is a fault.
    private static func sqliteError(message: String) -> DatabaseFailure {
        let text = message.lowercased()
        if text.contains("too big") { return .tooLarge }
        if text.contains("interrupted") { return .timedOut }
        let causedByRequest = [
            "json", "too many sql variables", "expression tree is too large", "parser stack overflow",
            "too complex", "too many terms", "integer overflow"
        ]
        return causedByRequest.contains(where: text.contains) ? .invalidInput : .fault
    }
}
