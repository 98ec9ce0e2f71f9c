import Foundation
import SyncProtocol
import TableSyncStorage

/// One table of an open store, read and written as values of your own `Codable` model type: the Azure SDKs'
/// `MSSyncTable` for Swift types.
///
/// The model's coding keys are the record's property names; it needs an `id` (a `String`), and may declare the
/// system properties `createdAt`, `updatedAt` (as `Date` or `String`), `version` and `deleted` to read what the
/// server last said (changes to them are never sent: they belong to the server). Dates are written in UTC as
/// `yyyy-MM-ddTHH:mm:ss.fffZ`, with up to seven fraction digits when the `Date` holds them (to the 100 ns).
///
/// ```swift
/// struct TodoItem: Codable, Sendable {
///     var id: String
///     var text: String
///     var complete: Bool
/// }
///
/// let todo = try await context.table("TodoItem", as: TodoItem.self)
/// try await todo.insert(TodoItem(id: UUID().uuidString, text: "Buy milk", complete: false))
/// let open = try await todo.query(try LocalQuery(filter: "complete eq false", orderBy: "text"))
/// try await todo.pull(queryID: "all-items")
/// ```
public struct TypedTable<Model: Codable & Sendable>: Sendable {
    /// The same table, read and written as JSON objects.
    package let untyped: SyncTable

    /// The table's name.
    public var name: String { untyped.name }

    /// Adds `item` locally and queues its insert. Returns the item as stored.
    /// - Throws: ``ModelCodingError`` when `item` does not encode as a record; then as ``SyncTable/insert(_:)``.
    @discardableResult
    public func insert(_ item: Model) async throws -> Model {
        try Self.decode(try await untyped.insert(try Self.encode(item)), table: name)
    }

    /// Replaces the record with `item`'s id by `item`, keeping the server's system properties, and queues the
    /// update (nothing when the content did not change). Returns the item as stored.
    /// - Throws: ``ModelCodingError`` when `item` does not encode as a record; then as ``SyncTable/update(_:)``.
    @discardableResult
    public func update(_ item: Model) async throws -> Model {
        try Self.decode(try await untyped.update(try Self.encode(item)), table: name)
    }

    /// Removes the record with `id` locally and queues its delete.
    /// - Throws: as ``SyncTable/delete(id:)``.
    public func delete(id: String) async throws {
        try await untyped.delete(id: id)
    }

    /// The item with `id`, or `nil` when there is none.
    /// - Throws: ``ModelCodingError`` when the record does not decode as `Model`; then as ``SyncTable/read(id:)``.
    public func read(id: String) async throws -> Model? {
        try await untyped.read(id: id).map { try Self.decode($0, table: name) }
    }

    /// The local items that `query` selects, in its order. Broken record files are skipped (``SyncContext/status()``
    /// lists them); a record that does not decode as `Model` is an error that names it.
    /// - Throws: ``ModelCodingError`` naming the first record that does not decode; then as ``SyncTable/query(_:)``.
    public func query(_ query: LocalQuery = LocalQuery()) async throws -> [Model] {
        try await untyped.query(query).map { try Self.decode($0, table: name) }
    }

    /// Pushes the table's pending operations, then pulls what changed on the server
    /// (``SyncContext/pull(table:queryID:filter:options:)``).
    /// - Throws: as ``SyncContext/pull(table:queryID:filter:options:)``.
    @discardableResult
    public func pull(
        queryID: String? = nil, filter: String? = nil, options: SyncOptions = SyncOptions()
    ) async throws -> PullReport {
        try await untyped.pull(queryID: queryID, filter: filter, options: options)
    }

    /// Removes local items (those matching `filter`, or all) and resets the table's query watermarks
    /// (``SyncContext/purge(table:filter:force:)``).
    /// - Throws: as ``SyncContext/purge(table:filter:force:)``.
    @discardableResult
    public func purge(filter: String? = nil, force: Bool = false) async throws -> PurgeReport {
        try await untyped.purge(filter: filter, force: force)
    }

    // MARK: - Model ↔ record

    /// `item` as a record: its encoded properties.
    static func encode(_ item: Model) throws -> [String: JSONValue] {
        let data = try encoder.encode(item)
        guard case .object(let record) = try JSONParser.parse(Array(data)) else {
            throw ModelCodingError(reason: "\(Model.self) does not encode as a JSON object")
        }
        return record
    }

    /// `record` as a `Model`.
    static func decode(_ record: [String: JSONValue], table: String) throws -> Model {
        do {
            return try decoder.decode(Model.self, from: Data(CanonicalJSON.encode(.object(record), style: .compact)))
        } catch {
            let id = record[SystemProperty.id]?.stringValue ?? "(no id)"
            throw ModelCodingError(reason: "record \(table)/\(id) does not decode as \(Model.self): \(error)")
        }
    }

    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(Timestamp(date: date).text)
        }
        return encoder
    }

    private static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let timestamp = Timestamp(parsing: text) else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "\"\(text)\" is not an ISO 8601 date")
            }
            return timestamp.date
        }
        return decoder
    }
}

/// A model value that does not encode as a record, or a record that does not decode as the model.
public struct ModelCodingError: CategorizedError, Equatable {
    /// What went wrong, naming the record.
    package let reason: String
    /// Always ``FailureKind/other``.
    public var kind: FailureKind { .other }
    /// What went wrong, naming the record.
    public var description: String { reason }
}

extension SyncContext {
    /// The table `name`, read and written as `Model` values (``TypedTable``).
    /// - Throws: ``StoreError/unknownTable(_:)`` when `name` is not one of the store's tables.
    public func table<Model: Codable & Sendable>(_ name: String, as type: Model.Type) throws -> TypedTable<Model> {
        TypedTable(untyped: try table(name))
    }
}

extension Timestamp {
    /// The instant of `date`, to the 100 ns.
    init(date: Date) {
        self.init(ticks: Int64((date.timeIntervalSince1970 * Double(Timestamp.ticksPerSecond)).rounded()))
    }

    /// The instant as a `Date`.
    var date: Date {
        Date(timeIntervalSince1970: Double(ticks) / Double(Timestamp.ticksPerSecond))
    }
}
