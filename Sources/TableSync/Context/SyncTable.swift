import SyncProtocol
import TableSyncStorage

/// One table of an open store: local reads, queries and changes. Every change writes the record file and
/// queues an operation for the next push; nothing talks to the server here.
///
/// ```swift
/// let todo = try await context.table("todo")
/// var item = try await todo.insert(["text": "Buy milk"])       // gets a new id
/// item["complete"] = true
/// try await todo.update(item)                                  // collapses into the pending insert
/// ```
public struct SyncTable: Sendable {
    /// The table's name.
    public let name: String
    /// The store it belongs to.
    package let context: SyncContext

    /// Adds a record. Without an `id` it gets a new one (a lowercase UUID). Server-managed properties
    /// (`createdAt`, `updatedAt`, `version`, `deleted`) are dropped. Returns the record as stored.
    /// - Throws: ``StoreError/readOnly`` on a read-only context; ``StoreError/recordExists(table:id:)``,
    ///   ``StoreError/invalidRecordID(_:reason:)`` or ``StoreError/invalidRecord(table:reason:)`` for the record;
    ///   ``FileSystemError`` when the disk fails.
    @discardableResult
    public func insert(_ record: [String: JSONValue]) async throws -> [String: JSONValue] {
        try await context.insert(record, table: name)
    }

    /// Replaces the content of the record with `record["id"]`, keeping its server-managed properties.
    /// A record whose content does not change queues nothing. Returns the record as stored.
    /// - Throws: ``StoreError/readOnly`` on a read-only context; ``StoreError/recordNotFound(table:id:)`` or
    ///   ``StoreError/invalidRecord(table:reason:)`` for the record; ``StoreError/brokenRecordFile(_:)`` when its
    ///   file does not parse; ``FileSystemError`` when the disk fails.
    @discardableResult
    public func update(_ record: [String: JSONValue]) async throws -> [String: JSONValue] {
        try await context.update(record, table: name)
    }

    /// Removes the record with `id`; the delete is queued with the record as it was.
    /// - Throws: ``StoreError/readOnly`` on a read-only context; ``StoreError/recordNotFound(table:id:)``;
    ///   ``FileSystemError`` when the disk fails.
    public func delete(id: String) async throws {
        try await context.delete(id: id, table: name)
    }

    /// The record with `id`, or `nil` when there is none.
    /// - Throws: ``StoreError/brokenRecordFile(_:)`` when the record's file does not parse; ``FileSystemError``.
    public func read(id: String) async throws -> [String: JSONValue]? {
        try await context.read(id: id, table: name)
    }

    /// Pushes this table's pending operations, then pulls what changed on the server: incrementally from the
    /// watermark of `queryID` (created on first use), or everything matching `filter` without one
    /// (``SyncContext/pull(table:queryID:filter:options:)``).
    /// - Throws: as ``SyncContext/pull(table:queryID:filter:options:)``.
    @discardableResult
    public func pull(
        queryID: String? = nil, filter: String? = nil, options: SyncOptions = SyncOptions()
    ) async throws -> PullReport {
        try await context.pull(table: name, queryID: queryID, filter: filter, options: options)
    }

    /// Removes local records (those matching `filter`, or all) and resets the table's query watermarks
    /// (``SyncContext/purge(table:filter:force:)``). Returns what it removed and dropped.
    /// - Throws: as ``SyncContext/purge(table:filter:force:)``.
    @discardableResult
    public func purge(filter: String? = nil, force: Bool = false) async throws -> PurgeReport {
        try await context.purge(table: name, filter: filter, force: force)
    }
}

extension SyncTable {
    /// The local records that `query` selects, in its order. Broken record files are skipped (see
    /// ``SyncContext/status()`` for them).
    /// - Throws: ``FileSystemError`` when the table's directory cannot be read.
    public func query(_ query: LocalQuery = LocalQuery()) async throws -> [[String: JSONValue]] {
        query.apply(to: try await context.records(table: name))
    }
}
