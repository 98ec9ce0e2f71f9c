import SyncProtocol

/// A data set record as a `Codable` struct: the baseline for the canonical writer, which is `JSONEncoder`
/// at its best (typed properties, no dynamic keys) with `.prettyPrinted` and `.sortedKeys`.
struct CodableRecord: Codable {
    var id: String
    var createdAt: String
    var updatedAt: String
    var version: String
    var deleted: Bool
    var title: String
    var notes: String
    var category: String
    var owner: String
    var priority: Int64
    var quantity: Int64
    var price: Double
    var score: Double
    var complete: Bool
    var dueDate: String
    var tags: [String]
    var parentId: String?

    /// The struct holding the same values as `record` (a ``DataSet`` record with system properties).
    init(_ record: [String: JSONValue]) {
        id = record["id"]!.stringValue!
        createdAt = record["createdAt"]!.stringValue!
        updatedAt = record["updatedAt"]!.stringValue!
        version = record["version"]!.stringValue!
        deleted = record["deleted"]!.boolValue!
        title = record["title"]!.stringValue!
        notes = record["notes"]!.stringValue!
        category = record["category"]!.stringValue!
        owner = record["owner"]!.stringValue!
        priority = record["priority"]!.integerValue!
        quantity = record["quantity"]!.integerValue!
        price = record["price"]!.doubleValue!
        score = record["score"]!.doubleValue!
        complete = record["complete"]!.boolValue!
        dueDate = record["dueDate"]!.stringValue!
        tags = record["tags"]!.arrayValue!.map { $0.stringValue! }
        parentId = record["parentId"]!.stringValue
    }

    /// Writes `parentId` as `null` when absent, as the canonical record does, so both outputs hold the same members.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(updatedAt, forKey: .updatedAt)
        try container.encode(version, forKey: .version)
        try container.encode(deleted, forKey: .deleted)
        try container.encode(title, forKey: .title)
        try container.encode(notes, forKey: .notes)
        try container.encode(category, forKey: .category)
        try container.encode(owner, forKey: .owner)
        try container.encode(priority, forKey: .priority)
        try container.encode(quantity, forKey: .quantity)
        try container.encode(price, forKey: .price)
        try container.encode(score, forKey: .score)
        try container.encode(complete, forKey: .complete)
        try container.encode(dueDate, forKey: .dueDate)
        try container.encode(tags, forKey: .tags)
        try container.encode(parentId, forKey: .parentId)
    }
}
