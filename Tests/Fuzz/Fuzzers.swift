// libFuzzer entry points, built by scripts/fuzz.sh (`swiftc -sanitize=fuzzer`) together with the sources they test;
// not part of the package. One binary each: FUZZ_FILTER and FUZZ_JSON (SyncProtocol's parsers), FUZZ_SERVER (the
// server's handling of list queries and write bodies).
// Besides crashes, each checks a property; a violation traps, so libFuzzer keeps the input.

#if FUZZ_FILTER
/// `$filter`: parsing never crashes; what parses prints as text that parses back to the same expression, and
/// evaluating it against a record never crashes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFilter(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let expression = try? FilterParser.parse(text) else { return 0 }
    let printed = FilterPrinter.print(expression)
    guard let reparsed = try? FilterParser.parse(printed) else {
        fatalError("printed filter does not parse: \(printed)")
    }
    if reparsed != expression { fatalError("round trip changed the filter: \(text) → \(printed)") }
    _ = FilterEvaluator.matches(expression, record: ["id": "a", "text": "b", "n": 1, "d": 2.5, "f": false, "z": nil])
    return 0
}
#endif

#if FUZZ_JSON
/// JSON: parsing never crashes; what parses writes canonically, and the canonical text parses to the same
/// value and writes to the same bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard let value = try? JSONParser.parse(Array(UnsafeBufferPointer(start: data, count: size))) else { return 0 }
    let canonical = CanonicalJSON.encode(value)
    guard let reparsed = try? JSONParser.parse(canonical) else { fatalError("canonical JSON does not parse") }
    if CanonicalJSON.encode(reparsed) != canonical { fatalError("canonical JSON is not stable") }
    return 0
}
#endif

#if FUZZ_SERVER
import CSQLite

/// The server's request handling, built with SyncProtocol, the server's query, SQL and record-checking sources
/// and swift-http-types (scripts/fuzz.sh). The first byte chooses what the rest is:
/// - even: the query string of `GET /tables/todo` (v2 or v3 by the second bit). Whatever the server accepts must
///   become SQL of one read-only statement whose placeholders all have values, in both dialects,
///   and the SQLite statement must run on a real database of varied rows without an error (an error there would
///   be a 500). Nothing from the request may reach the SQL text except through a binding. And what the `$filter`
///   cost check lets through must end within the statement time limit and its grace: the statement is interrupted
///   at the limit, as the server interrupts it, and no single step of it (a function building a huge string) may
///   run on past the interrupt for longer than the grace.
/// - odd, second bit clear: a request body, read as a batch envelope and as a record, each item checked as the routes
///   check it.
/// - odd, second bit set: a chunked request body (the seeds hold broken ones), followed by ``ChunkedBodyScan`` at
///   once and in pieces of the size the next byte gives: the verdict must not depend on how the bytes arrive.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzServer(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let selector = bytes.first else { return 0 }
    if selector & 1 == 0 {
        fuzzListQuery(String(decoding: bytes.dropFirst(), as: UTF8.self), version: selector & 2 == 0 ? .v2 : .v3)
    } else if selector & 2 == 0 {
        fuzzWriteBody(Array(bytes.dropFirst()))
    } else {
        fuzzChunkedBody(Array(bytes.dropFirst()))
    }
    return 0
}

private func fuzzChunkedBody(_ input: [UInt8]) {
    guard let first = input.first else { return }
    let pieceSize = Int(first % 16) + 1
    let body = Array(input.dropFirst())
    let limit = 4096
    func verdict(pieces size: Int) -> ChunkedBodyScan.Verdict {
        var scan = ChunkedBodyScan(limit: limit)
        var start = 0
        while start < body.count {
            let end = min(start + size, body.count)
            let verdict = body[start..<end].withUnsafeBytes { scan.scan($0) }
            switch verdict {
            case .reading:
                start = end
            case .ended(let consumed):
                if consumed < 1 || consumed > end - start { fatalError("ended \(consumed) bytes into \(end - start)") }
                return .ended(consumed: start + consumed)
            default:
                return verdict
            }
        }
        return .reading
    }
    let whole = verdict(pieces: max(1, body.count))
    let pieces = verdict(pieces: pieceSize)
    if whole != pieces { fatalError("\(whole) at once, \(pieces) in pieces of \(pieceSize)") }
}

private func fuzzListQuery(_ text: String, version: ProtocolVersion) {
    guard let query = try? QueryString(text),
        let list = try? ListQuery.parse(query, version: version, table: TableOptions(name: "todo"))
    else { return }
    for dialect in [SQLDialect.sqlite, .postgres] {
        // A filter the translator refuses is a 400, as the route answers it.
        guard let statements = try? RecordQuerySQL.list(table: "todo", query: list, dialect: dialect) else { continue }
        for statement in [statements.page] + (statements.count.map { [$0] } ?? []) {
            let marker: Character = dialect == .sqlite ? "?" : "$"
            let numbers = placeholders(in: statement.sql, marker: marker)
            // Every placeholder has its value. (A value may go unused: a date literal compared with a body property
            // binds its instant, then its text.)
            if statement.bindings.isEmpty || !numbers.isSubset(of: 1...statement.bindings.count) {
                fatalError(
                    "placeholders \(numbers.sorted()) for \(statement.bindings.count) bindings: \(statement.sql)")
            }
            if dialect == .sqlite { FuzzDatabase.shared.run(statement) }
        }
    }
}

/// The numbers of the placeholders (`?n` or `$n`) outside string literals.
private func placeholders(in sql: String, marker: Character) -> Set<Int> {
    var numbers = Set<Int>()
    var inLiteral = false
    var index = sql.startIndex
    while index < sql.endIndex {
        let character = sql[index]
        if character == "'" { inLiteral.toggle() }
        if !inLiteral, character == marker {
            let digits = sql[sql.index(after: index)...].prefix { $0.isASCII && $0.isNumber }
            if let number = Int(digits) { numbers.insert(number) }
        }
        index = sql.index(after: index)
    }
    return numbers
}

private func fuzzWriteBody(_ bytes: [UInt8]) {
    guard let value = try? JSONParser.parse(bytes) else { return }
    if let batch = try? BatchRequest.parse(value) {
        for operation in batch.operations {
            if let item = operation.item { _ = try? IncomingRecord(item) }
            if let id = operation.id { _ = RecordID.problem(with: id) }
        }
        _ = CanonicalJSON.encode(batch.json)
    }
    if let record = try? IncomingRecord(value), let id = record.id, RecordID.problem(with: id) != nil {
        fatalError("a record with an invalid id passed: \(id.debugDescription)")
    }
}

/// An in-memory SQLite database with the server's schema and rows of every JSON type, for the list SQL to run on.
private final class FuzzDatabase: @unchecked Sendable {
    static let shared = FuzzDatabase()
    private var handle: OpaquePointer?

    private init() {
        guard sqlite3_open(":memory:", &handle) == SQLITE_OK,
            RecordColumns.schema(.sqlite).allSatisfy({ sqlite3_exec(handle, $0.sql, nil, nil, nil) == SQLITE_OK })
        else {
            fatalError("cannot set up SQLite")
        }
        // Besides small rows of every JSON type, rows whose strings are as long as records get, for the cost of string
        // functions: what a filter does to a stored value, it does to the longest one.
        let long = String(repeating: "abcdé", count: 20_000)
        let bodies =
            [
                #"{"text":"milk","n":1,"d":2.5,"f":true,"z":null,"when":"2024-05-01T10:20:30.123Z"}"#,
                #"{"text":"ÉCLAIR","n":-3,"d":1e300,"f":false,"when":"not a date","nested":{"a":[1,2]},"list":["x"]}"#,
                #"{"n":"7","text":7,"f":"true","d":null}"#,
                #"{}"#
            ] + (0..<8).map { #"{"text":"\#(long)","when":"\#(long)","n":\#($0)}"# }
        for (index, body) in bodies.enumerated() {
            let insert =
                """
                INSERT INTO \(RecordColumns.recordsTable) VALUES ('todo', 'r\(index)', \(index), \(index * 10), \
                \(index % 2), '\(body)')
                """
            guard sqlite3_exec(handle, insert, nil, nil, nil) == SQLITE_OK else { fatalError("cannot insert \(body)") }
        }
    }

    /// The statement time limit of the fuzzer's statements, and the grace past it that no statement may take.
    static let timeLimit = Duration.milliseconds(200)
    static let grace = Duration.milliseconds(500)

    /// Prepares `statement` (it must be one read-only statement, each of its placeholders with a value), binds
    /// and runs it to the end or to the time limit; any error but the interrupt at the limit traps, and so does a
    /// statement that ends later than the limit and its grace.
    func run(_ statement: SQLStatement) {
        let started = ContinuousClock.now
        FuzzDeadline.instant = started + Self.timeLimit
        sqlite3_progress_handler(handle, 1000, { _ in ContinuousClock.now > FuzzDeadline.instant ? 1 : 0 }, nil)
        defer {
            sqlite3_progress_handler(handle, 0, nil, nil)
            let elapsed = ContinuousClock.now - started
            if elapsed > Self.timeLimit + Self.grace {
                fatalError(
                    """
                    a statement the cost check accepts ran \(elapsed), past the limit of \(Self.timeLimit) and its \
                    grace: \(statement.sql) with \(statement.bindings)
                    """
                )
            }
        }
        var prepared: OpaquePointer?
        var tail: UnsafePointer<CChar>?
        let text = statement.sql
        let status = text.withCString { sqlite3_prepare_v2(handle, $0, -1, &prepared, &tail) }
        guard status == SQLITE_OK, let prepared else { fatalError("SQLite refused: \(message()) in \(text)") }
        defer { sqlite3_finalize(prepared) }
        if let tail, tail.pointee != 0 { fatalError("more than one statement: \(text)") }
        if sqlite3_stmt_readonly(prepared) == 0 { fatalError("a list query that writes: \(text)") }
        let parameters = Int(sqlite3_bind_parameter_count(prepared))
        if parameters > statement.bindings.count {
            fatalError("\(parameters) parameters for \(statement.bindings.count) bindings: \(text)")
        }
        for (offset, value) in statement.bindings.prefix(parameters).enumerated() {
            let position = Int32(offset + 1)
            switch value {
            case .null: sqlite3_bind_null(prepared, position)
            case .bool(let flag): sqlite3_bind_int64(prepared, position, flag ? 1 : 0)
            case .integer(let integer): sqlite3_bind_int64(prepared, position, integer)
            case .double(let double): sqlite3_bind_double(prepared, position, double)
            case .text(let string):
                sqlite3_bind_text(prepared, position, string, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
            }
        }
        while true {
            let step = sqlite3_step(prepared)
            if step == SQLITE_DONE || step == SQLITE_INTERRUPT { return }
            if step != SQLITE_ROW {
                fatalError("SQLite failed at run time: \(message()) in \(text) with \(statement.bindings)")
            }
        }
    }

    private func message() -> String { String(cString: sqlite3_errmsg(handle)) }
}

/// When the statement running must be interrupted: read by SQLite's progress handler, a C function that captures
/// nothing. The fuzzer runs one input at a time.
private enum FuzzDeadline {
    nonisolated(unsafe) static var instant = ContinuousClock.now
}
#endif
