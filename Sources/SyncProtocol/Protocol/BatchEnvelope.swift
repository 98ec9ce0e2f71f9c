/// The bodies of the batch extension (``ProtocolExtension/batch``): `POST /batch` carries an ordered list of
/// operations across tables, and the answer lists one result per operation, in the same order.
///
/// Each operation is what one single request would be, and its result is what that request would answer:
///
/// ```json
/// {"operations": [
///   {"op": "insert", "table": "todo", "item": {"id": "a", "text": "milk"}},
///   {"op": "replace", "table": "todo", "id": "b", "version": "AAAAAAAAB9E=", "item": {"id": "b", "text": "eggs"}},
///   {"op": "delete", "table": "todo", "id": "c", "version": "AAAAAAAAB9I="}
/// ]}
/// ```
/// ```json
/// {"results": [
///   {"status": 201, "body": {"id": "a", "text": "milk", "version": "…", …}},
///   {"status": 412, "body": {"id": "b", "text": "bread", "version": "…", …}},
///   {"status": 204}
/// ]}
/// ```
///
/// A request with `"return": "minimal"` (``ProtocolExtension/batchMinimalAnswers``, like HTTP's
/// `Prefer: return=minimal`) gets, for a written record that holds exactly the properties of the item sent,
/// only its system properties: `{"status": 201, "system": {"id": "a", "version": "…", "createdAt": "…",
/// "updatedAt": "…", "deleted": false}}`. The record is the item sent with those. Every other result (a merge
/// that kept other properties, a conflict's server copy, an error) carries its whole body.
public enum BatchEnvelope {
    /// The member of the request that holds the operations.
    public static let operationsMember = "operations"
    /// The member of the request that asks for minimal answers, and its value.
    public static let returnMember = "return"
    public static let minimalReturn = "minimal"
    /// The member of the response that holds the results.
    public static let resultsMember = "results"
}

/// One operation of a batch: the equivalent of one `POST`, `PUT`, `PATCH` or `DELETE` on a table.
public struct BatchOperation: Sendable, Equatable {
    /// Which single request the operation stands for.
    public enum Kind: String, Sendable, CaseIterable {
        /// `POST /tables/{table}`.
        case insert
        /// `PUT /tables/{table}/{id}`: replaces the record's properties.
        case replace
        /// `PATCH /tables/{table}/{id}`: merges the item's properties into the record.
        case merge
        /// `DELETE /tables/{table}/{id}`.
        case delete
    }

    /// What the operation does.
    public var kind: Kind
    /// The table it writes to.
    public var table: String
    /// The record's id: required for every kind but `insert` (whose id, if any, is in `item`).
    public var id: String?
    /// The precondition: the operation applies only while the record has this `version` (`If-Match`).
    public var version: String?
    /// The request body of an insert, replace or merge.
    public var item: JSONValue?

    /// An operation; see the members for what each argument means.
    public init(kind: Kind, table: String, id: String? = nil, version: String? = nil, item: JSONValue? = nil) {
        self.kind = kind
        self.table = table
        self.id = id
        self.version = version
        self.item = item
    }

    /// The operation as its JSON object in the request.
    public var json: JSONValue {
        var members: [String: JSONValue] = ["op": .string(kind.rawValue), "table": .string(table)]
        if let id { members["id"] = .string(id) }
        if let version { members["version"] = .string(version) }
        if let item { members["item"] = item }
        return .object(members)
    }

    /// Reads one operation; `index` places it in error messages.
    public static func parse(_ value: JSONValue, index: Int) throws(BatchEnvelopeError) -> BatchOperation {
        let place = "\(BatchEnvelope.operationsMember)[\(index)]"
        guard case .object(let members) = value else {
            throw BatchEnvelopeError("\(place) must be an object, not \(value.typeName)")
        }
        for name in members.keys where !["op", "table", "id", "version", "item"].contains(name) {
            throw BatchEnvelopeError("\(place) has an unknown member \"\(name)\"; use op, table, id, version and item")
        }
        guard let kindText = members["op"]?.stringValue, let kind = Kind(rawValue: kindText) else {
            throw BatchEnvelopeError(
                "\(place).op must be one of \(Kind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard let table = members["table"]?.stringValue else {
            throw BatchEnvelopeError("\(place).table must be a string")
        }
        func optionalString(_ name: String) throws(BatchEnvelopeError) -> String? {
            guard let member = members[name], !member.isNull else { return nil }
            guard let text = member.stringValue else { throw BatchEnvelopeError("\(place).\(name) must be a string") }
            return text
        }
        let id = try optionalString("id")
        let version = try optionalString("version")
        let item = members["item"].flatMap { $0.isNull ? nil : $0 }
        if kind != .insert, id == nil { throw BatchEnvelopeError("\(place).id is required for \(kind.rawValue)") }
        if kind != .delete, item == nil { throw BatchEnvelopeError("\(place).item is required for \(kind.rawValue)") }
        if kind == .insert, version != nil { throw BatchEnvelopeError("\(place).version has no meaning for insert") }
        return BatchOperation(kind: kind, table: table, id: id, version: version, item: item)
    }
}

/// The request body of `POST /batch`.
public struct BatchRequest: Sendable, Equatable {
    /// The operations, applied in this order, each on its own.
    public var operations: [BatchOperation]
    /// Whether a written record that holds exactly the item sent comes back as its system properties only.
    public var minimalAnswers: Bool

    /// A request carrying `operations`.
    public init(operations: [BatchOperation], minimalAnswers: Bool = false) {
        self.operations = operations
        self.minimalAnswers = minimalAnswers
    }

    /// The compact canonical body of a batch whose operations are already encoded (each one
    /// `CanonicalJSON.encode(operation.json, style: .compact)`): byte for byte what encoding ``json`` gives, without
    /// encoding the operations a second time.
    public static func encodeBody(encodedOperations: [[UInt8]], minimalAnswers: Bool) -> [UInt8] {
        var body: [UInt8] = []
        body.reserveCapacity(encodedOperations.reduce(64) { $0 + $1.count + 1 })
        body.append(UInt8(ascii: "{"))
        // Canonical member order: "operations" sorts before "return".
        body.append(contentsOf: CanonicalJSON.encode(.string(BatchEnvelope.operationsMember), style: .compact))
        body.append(contentsOf: Array(":[".utf8))
        for (index, operation) in encodedOperations.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body.append(contentsOf: operation)
        }
        body.append(UInt8(ascii: "]"))
        if minimalAnswers {
            body.append(UInt8(ascii: ","))
            body.append(contentsOf: CanonicalJSON.encode(.string(BatchEnvelope.returnMember), style: .compact))
            body.append(UInt8(ascii: ":"))
            body.append(contentsOf: CanonicalJSON.encode(.string(BatchEnvelope.minimalReturn), style: .compact))
        }
        body.append(UInt8(ascii: "}"))
        return body
    }

    /// The request body.
    public var json: JSONValue {
        var members: [String: JSONValue] = [BatchEnvelope.operationsMember: .array(operations.map(\.json))]
        if minimalAnswers { members[BatchEnvelope.returnMember] = .string(BatchEnvelope.minimalReturn) }
        return .object(members)
    }

    /// Reads a request body; the error names the member at fault.
    public static func parse(_ value: JSONValue) throws(BatchEnvelopeError) -> BatchRequest {
        guard case .object(let members) = value, case .array(let elements)? = members[BatchEnvelope.operationsMember]
        else {
            throw BatchEnvelopeError(
                """
                the batch must be an object with one member \"\(BatchEnvelope.operationsMember)\", an array of \
                operations
                """
            )
        }
        for name in members.keys where name != BatchEnvelope.operationsMember && name != BatchEnvelope.returnMember {
            throw BatchEnvelopeError(
                """
                the batch has an unknown member \"\(name)\"; use \(BatchEnvelope.operationsMember) and \
                \(BatchEnvelope.returnMember)
                """
            )
        }
        var minimalAnswers = false
        switch members[BatchEnvelope.returnMember] {
        case nil, .string("representation")?: break
        case .string(BatchEnvelope.minimalReturn)?: minimalAnswers = true
        default:
            throw BatchEnvelopeError(
                "\(BatchEnvelope.returnMember) must be \"\(BatchEnvelope.minimalReturn)\" or \"representation\"")
        }
        var operations: [BatchOperation] = []
        operations.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            operations.append(try BatchOperation.parse(element, index: index))
        }
        return BatchRequest(operations: operations, minimalAnswers: minimalAnswers)
    }
}

/// What one operation of a batch got: the status and body the equivalent single request would have got.
public struct BatchResult: Sendable, Equatable {
    /// The HTTP status of the single request (201, 200, 204, 409, 412, 404, 410, 400, …).
    public var status: Int
    /// Its body: the record, the server's copy (409, 412), `{"error": …}`, or `nil` when it has none (204) or
    /// when the result is minimal.
    public var body: JSONValue?
    /// The written record's system properties, in a minimal answer: the record is the item sent with these.
    public var systemProperties: [String: JSONValue]?

    /// A result; see the members.
    public init(status: Int, body: JSONValue?, systemProperties: [String: JSONValue]? = nil) {
        self.status = status
        self.body = body
        self.systemProperties = systemProperties
    }

    /// The body of the single request's answer: ``body``, or for a minimal answer `sent` (the item's properties)
    /// with the system properties.
    public func body(sent: [String: JSONValue]?) -> JSONValue? {
        guard let systemProperties else { return body }
        return .object((sent ?? [:]).merging(systemProperties) { _, system in system })
    }

    /// The result as its JSON object in the response.
    public var json: JSONValue {
        var members: [String: JSONValue] = ["status": .integer(Int64(status))]
        if let body { members["body"] = body }
        if let systemProperties { members["system"] = .object(systemProperties) }
        return .object(members)
    }

    /// Reads one result; `index` places it in error messages.
    public static func parse(_ value: JSONValue, index: Int) throws(BatchEnvelopeError) -> BatchResult {
        let place = "\(BatchEnvelope.resultsMember)[\(index)]"
        guard case .object(let members) = value, let status = members["status"]?.integerValue,
            (100...599).contains(status)
        else {
            throw BatchEnvelopeError("\(place) must be an object with an HTTP \"status\"")
        }
        var system: [String: JSONValue]?
        switch members["system"] {
        case nil, .null?: break
        case .object(let properties)?:
            guard properties.keys.allSatisfy(SystemProperty.all.contains) else {
                throw BatchEnvelopeError("\(place).system may hold only system properties")
            }
            system = properties
        default: throw BatchEnvelopeError("\(place).system must be an object")
        }
        return BatchResult(
            status: Int(status), body: members["body"].flatMap { $0.isNull ? nil : $0 }, systemProperties: system)
    }
}

/// The response body of `POST /batch`.
public struct BatchResponse: Sendable, Equatable {
    /// One result per operation, in the request's order.
    public var results: [BatchResult]

    /// A response carrying `results`.
    public init(results: [BatchResult]) { self.results = results }

    /// The response body.
    public var json: JSONValue { .object([BatchEnvelope.resultsMember: .array(results.map(\.json))]) }

    /// Reads a response body; `expectedCount` is the number of operations sent.
    public static func parse(_ value: JSONValue, expectedCount: Int) throws(BatchEnvelopeError) -> BatchResponse {
        guard case .array(let elements)? = value[BatchEnvelope.resultsMember] else {
            throw BatchEnvelopeError(
                "the batch answer must be an object with an array \"\(BatchEnvelope.resultsMember)\"")
        }
        guard elements.count == expectedCount else {
            throw BatchEnvelopeError("the batch answer holds \(elements.count) results for \(expectedCount) operations")
        }
        var results: [BatchResult] = []
        results.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() { results.append(try BatchResult.parse(element, index: index)) }
        return BatchResponse(results: results)
    }
}

/// A batch body that does not have the envelope's shape; the message names the member at fault.
public struct BatchEnvelopeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong and where, e.g. `operations[3].id is required for replace`.
    public var message: String

    /// An error saying `message`.
    public init(_ message: String) { self.message = message }

    public var description: String { message }
}

/// How much one batch may carry, as a server announces it in its health document (`GET /health`, member
/// `batch`): `{"maxOperations": 1000, "maxBytes": 16777216}`. A larger batch is refused with 413.
public struct BatchLimits: Sendable, Equatable {
    /// The member of the health document that holds the limits.
    public static let healthMember = "batch"

    /// Operations per request.
    public var maxOperations: Int
    /// Bytes of the request body, after gzip decompression.
    public var maxBytes: Int

    /// Limits of `maxOperations` operations and `maxBytes` bytes.
    public init(maxOperations: Int, maxBytes: Int) {
        self.maxOperations = maxOperations
        self.maxBytes = maxBytes
    }

    /// The limits as their JSON object.
    public var json: JSONValue {
        ["maxOperations": .integer(Int64(maxOperations)), "maxBytes": .integer(Int64(maxBytes))]
    }

    /// The limits in a health document, or `nil` when it announces none.
    public static func parse(healthDocument: JSONValue) -> BatchLimits? {
        guard let limits = healthDocument[healthMember], let operations = limits["maxOperations"]?.integerValue,
            let bytes = limits["maxBytes"]?.integerValue, operations > 0, bytes > 0
        else { return nil }
        return BatchLimits(maxOperations: Int(operations), maxBytes: Int(bytes))
    }
}
