import SyncProtocol
import TableSyncStorage

/// One page of a list answer, checked record by record: one record the store cannot hold (an id the protocol
/// forbids, which azure-mobile-apps-node accepts) must not stop the rest of the page and the table.
struct ServerPage {
    /// The records that passed ``ServerRecord/init(validating:requireUpdatedAt:)``, in server order: what the pull
    /// writes.
    var records: [ServerRecord] = []
    /// Every item that can place the pull's cursor, valid or not, in server order: an object with a string `id`
    /// and an `updatedAt` date. A refused record among them still moves the cursor past it.
    var cursorItems: [[String: JSONValue]] = []
    /// The items refused, with why.
    var refused: [RefusedItem] = []
    /// The v3 `nextLink`, if any.
    var nextLink: String?
    /// Items in the answer, refused ones included.
    var itemCount = 0
    /// The server's count of every record the query matches, when it was asked for and sent.
    var totalCount: Int?

    /// An item of the page that the store cannot hold.
    struct RefusedItem: Equatable {
        /// Its id, when it has a string one.
        var id: String?
        /// Why it was refused.
        var reason: String
        /// `true` when the server marks it deleted: nothing to hold, nothing to report.
        var deleted: Bool
    }

    /// Checks each of `items`.
    init(items: [JSONValue], nextLink: String?, totalCount: Int? = nil) {
        self.nextLink = nextLink
        self.totalCount = totalCount
        itemCount = items.count
        records.reserveCapacity(items.count)
        cursorItems.reserveCapacity(items.count)
        for item in items {
            do {
                let record = try ServerRecord(validating: item, requireUpdatedAt: true)
                records.append(record)
                cursorItems.append(record.properties)
            } catch {
                let id = item[SystemProperty.id]?.stringValue
                refused.append(
                    RefusedItem(id: id, reason: error.reason, deleted: item[SystemProperty.deleted]?.boolValue == true))
                if id != nil, case .object(let members) = item,
                    members[SystemProperty.updatedAt]?.stringValue.flatMap(Timestamp.init(parsing:)) != nil
                {
                    cursorItems.append(members)
                }
            }
        }
    }
}

/// A list request the server refused (a status other than 200, 401 and 403).
struct ListRefused: Error {
    /// The request's URL.
    var url: String
    var status: Int
    /// The server's `error` message, if it sent one.
    var message: String?
    /// The largest `$top` the table accepts, when the server says so (``ProtocolHeader/maxTop``).
    var maxTop: Int?

    /// The refusal as the pull reports it.
    var syncError: SyncError { .requestRefused(url: url, status: status, reason: message ?? "") }
}

/// A record the server sent that the store cannot hold (an id the protocol forbids, a `version` with control
/// characters, a `deleted` that is not a boolean): left out, reported, and skipped by the query's watermark,
/// while the rest of its page and table are pulled.
public struct SkippedServerRecord: Sendable, Equatable {
    /// The table pulled.
    public var table: String
    /// The record's id as the server wrote it, when it has a string one.
    public var id: String?
    /// Why the store refused it.
    public var reason: String

    /// A record of `table` (with `id`, if it has a string one) skipped for `reason`.
    package init(table: String, id: String?, reason: String) {
        self.table = table
        self.id = id
        self.reason = reason
    }
}
