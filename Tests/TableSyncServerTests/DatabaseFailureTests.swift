import GRDB
import HTTPTypes
import PostgresNIO
import SyncProtocol
@testable import TableSyncServer
import Testing

/// Every error code of both databases has an answer: the request's fault (400/413), busy or slow for now (503 with
/// `Retry-After`), or the server's fault (500). The codes come from PostgreSQL's appendix A and `sqlite3.h`.
@Suite("Database failures")
struct DatabaseFailureTests {
    @Test(
        "PostgreSQL SQLSTATEs",
        arguments: [
            ("22P05", DatabaseFailure.invalidInput), // untranslatable character (U+0000 in jsonb)
            ("22007", .invalidInput), // invalid datetime format
            ("22012", .invalidInput), // division by zero
            ("22003", .invalidInput), // numeric value out of range
            ("22021", .invalidInput), // invalid byte sequence for encoding (a NUL byte in text)
            ("2F005", .invalidInput), // function executed no return statement
            ("54001", .invalidInput), // statement too complex / stack depth
            ("54023", .invalidInput), // too many arguments
            ("54000", .tooLarge), // jsonb or string over its size limit
            ("57014", .timedOut), // statement_timeout or cancel request
            ("25P04", .timedOut), // transaction_timeout
            ("23505", .unavailable), // unique violation: a race a retry settles
            ("40001", .unavailable), // serialization failure
            ("40P01", .unavailable), // deadlock detected
            ("53100", .unavailable), // disk full
            ("53200", .unavailable), // out of memory
            ("53300", .unavailable), // too many connections
            ("55P03", .unavailable), // lock not available
            ("57P01", .unreachable), // admin shutdown
            ("57P02", .unreachable), // crash shutdown
            ("57P03", .unreachable), // cannot connect now
            ("57000", .unavailable), // operator intervention, otherwise
            ("08006", .unreachable), // connection failure
            ("25P03", .unavailable), // idle in transaction timeout
            ("72000", .unavailable), // snapshot too old
            ("42P01", .fault), // undefined table: the schema was changed by hand
            ("42501", .fault), // insufficient privilege
            ("58030", .fault), // I/O error
            ("XX001", .fault), // data corrupted
            ("0A000", .fault), // feature not supported
            ("28P01", .fault), // invalid password
            ("3D000", .fault), // database does not exist
            ("55000", .fault), // object not in prerequisite state
            ("P0001", .fault), // raise exception
            ("ZZ999", .fault) // a class no rule names
        ])
    func postgresStates(state: String, failure: DatabaseFailure) {
        #expect(DatabaseFailure.postgres(sqlState: state) == failure)
    }

    @Test(
        "PostgresNIO's own errors",
        arguments: [
            (PSQLError.Code.queryCancelled, DatabaseFailure.timedOut),
            (.tooManyParameters, .invalidInput),
            (.serverClosedConnection, .unreachable),
            (.clientClosedConnection, .unavailable),
            (.connectionError, .unreachable),
            (.uncleanShutdown, .unreachable),
            (.poolClosed, .unreachable),
            (.messageDecodingFailure, .fault),
            (.unexpectedBackendMessage, .fault),
            (.saslError, .fault),
            (.sslUnsupported, .fault)
        ])
    func postgresCodes(code: PSQLError.Code, failure: DatabaseFailure) {
        #expect(DatabaseFailure.postgres(code: code) == failure)
    }

    @Test(
        "SQLite result codes, extended ones by their primary code",
        arguments: [
            (ResultCode.SQLITE_BUSY, "database is locked", DatabaseFailure.unavailable),
            (.SQLITE_LOCKED, "database table is locked", .unavailable),
            (.SQLITE_NOMEM, "out of memory", .unavailable),
            (.SQLITE_FULL, "database or disk is full", .unavailable),
            (.SQLITE_ABORT, "abort", .unavailable),
            (.SQLITE_SCHEMA, "database schema has changed", .unavailable),
            (.SQLITE_PROTOCOL, "locking protocol", .unavailable),
            (.SQLITE_CONSTRAINT, "UNIQUE constraint failed", .unavailable),
            (.SQLITE_CONSTRAINT_PRIMARYKEY, "UNIQUE constraint failed", .unavailable),
            (.SQLITE_INTERRUPT, "interrupted", .timedOut),
            (.SQLITE_TOOBIG, "string or blob too big", .tooLarge),
            (.SQLITE_ERROR, "malformed JSON", .invalidInput),
            (.SQLITE_ERROR, "too many SQL variables", .invalidInput),
            (.SQLITE_ERROR, "Expression tree is too large (maximum depth 1000)", .invalidInput),
            (.SQLITE_ERROR, "parser stack overflow", .invalidInput),
            (.SQLITE_ERROR, "LIKE or GLOB pattern too complex", .invalidInput),
            (.SQLITE_ERROR, "string or blob too big", .tooLarge),
            (.SQLITE_ERROR, "no such table: tablesync_records", .fault),
            (.SQLITE_ERROR, "near \"x\": syntax error", .fault),
            (.SQLITE_IOERR, "disk I/O error", .fault),
            (.SQLITE_IOERR_WRITE, "disk I/O error", .fault),
            (.SQLITE_CORRUPT, "database disk image is malformed", .fault),
            (.SQLITE_READONLY, "attempt to write a readonly database", .fault),
            (.SQLITE_CANTOPEN, "unable to open database file", .fault),
            (.SQLITE_PERM, "access permission denied", .fault),
            (.SQLITE_NOTADB, "file is not a database", .fault),
            (.SQLITE_MISUSE, "bad parameter or other API misuse", .fault),
            (.SQLITE_RANGE, "column index out of range", .fault),
            (.SQLITE_INTERNAL, "internal", .fault)
        ])
    func sqliteCodes(code: ResultCode, message: String, failure: DatabaseFailure) {
        #expect(DatabaseFailure(DatabaseError(resultCode: code, message: message)) == failure)
    }

    @Test("the answers: 400 and 413 name what to change, 503 asks to retry, faults are left for the logged 500")
    func answers() throws {
        let write = DatabaseErrorClassifier.Activity.write(table: "todo", id: "a1")
        let refusedRecord = try #require(
            DatabaseErrorClassifier.refusal(.invalidInput, detail: "unsupported Unicode escape", during: write))
        #expect(refusedRecord.status == .badRequest && refusedRecord.message.contains("table todo, record 'a1'"))
        let refusedFilter = try #require(
            DatabaseErrorClassifier.refusal(.invalidInput, detail: "invalid input syntax", during: .query))
        #expect(refusedFilter.status == .badRequest && refusedFilter.message.contains("$filter"))
        #expect(DatabaseErrorClassifier.refusal(.tooLarge, detail: "", during: write)?.status == .contentTooLarge)
        #expect(DatabaseErrorClassifier.refusal(.tooLarge, detail: "", during: .query)?.status == .badRequest)
        for failure in [DatabaseFailure.timedOut, .unavailable, .unreachable] {
            let busy = try #require(DatabaseErrorClassifier.refusal(failure, detail: "x", during: .other))
            #expect(
                busy.status == .serviceUnavailable
                    && busy.retryAfterSeconds == DatabaseErrorClassifier.retryAfterSeconds)
        }
        #expect(DatabaseErrorClassifier.refusal(.unreachable, detail: "x", during: write)?.code == .databaseUnavailable)
        #expect(DatabaseErrorClassifier.refusal(.unavailable, detail: "x", during: write)?.code == nil)
        #expect(DatabaseFailure(PostgresLeaseFailure(underlying: CancellationError())) == .unreachable)
        #expect(DatabaseErrorClassifier.refusal(.fault, detail: "x", during: write) == nil)
        #expect(DatabaseFailure(CancellationError()) == .timedOut)
        #expect(DatabaseFailure(ProtocolError.badRequest("not a database error")) == nil)
        #expect(DatabaseFailure.invalidInput.isCausedByRequest && DatabaseFailure.tooLarge.isCausedByRequest)
        let passing: [DatabaseFailure] = [.timedOut, .unavailable, .unreachable, .fault]
        #expect(passing.allSatisfy { !$0.isCausedByRequest })
    }
}
