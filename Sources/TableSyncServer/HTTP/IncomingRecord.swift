import SyncProtocol

/// A record body sent by a client, with its system properties checked and separated.
struct IncomingRecord: Sendable {
    /// `id`, when the body has one that is neither `null` nor empty.
    var id: String?
    /// `version`, when the body has a non-null one.
    var version: String?
    /// `deleted`, when the body has a non-null one.
    var deleted: Bool?
    /// Every other property except the system properties, which belong to the server.
    var properties: [String: JSONValue]

    /// Splits `body`. Throws 400 when it is not an object, gives a system property twice in different cases (`id`
    /// and `ID`: which one is meant cannot be told), or a system property has the wrong type: `id` and `version` must
    /// be strings, `createdAt` and `updatedAt` dates, `deleted` a boolean (or `null`).
    init(_ body: JSONValue) throws(ProtocolError) {
        guard case .object(let members) = body else {
            throw ProtocolError.badRequest(
                """
                the request body must be a JSON object (a record), not \(body.typeName == "array" ? "an" : "a") \
                \(body.typeName)
                """
            )
        }
        var properties: [String: JSONValue] = [:]
        var spellings: [String: String] = [:]
        for (name, value) in members {
            guard SystemProperty.isSystemProperty(name) else {
                properties[name] = value
                continue
            }
            let canonical = SystemProperty.all.first { $0.caseInsensitiveEquals(name) } ?? name
            if let other = spellings.updateValue(name, forKey: canonical) {
                let both = [other, name].sorted()
                throw ProtocolError.badRequest(
                    "the body gives \(canonical) twice, as '\(both[0])' and '\(both[1])'; send it once, as \(canonical)"
                )
            }
            switch (canonical, value) {
            case (_, .null):
                break
            case (SystemProperty.id, .string("")):
                // Azure's servers generate an id for an insert whose id is missing, null or "": so does this one.
                break
            case (SystemProperty.id, .string(let text)):
                if let problem = RecordID.problem(with: text) {
                    throw ProtocolError.badRequest("id '\(text)' is not allowed: \(problem)")
                }
                id = text
            case (SystemProperty.version, .string(let text)):
                version = text
            case (SystemProperty.createdAt, .string(let text)), (SystemProperty.updatedAt, .string(let text)):
                guard Timestamp(parsing: text) != nil else {
                    throw ProtocolError.badRequest(
                        "\(canonical) must be an ISO 8601 date such as 2024-05-01T10:20:30.123Z, not '\(text)'")
                }
            case (SystemProperty.deleted, .bool(let flag)):
                deleted = flag
            default:
                let expected =
                    canonical == SystemProperty.deleted
                    ? "a boolean"
                    : (canonical == SystemProperty.createdAt || canonical == SystemProperty.updatedAt
                        ? "a date string" : "a string")
                throw ProtocolError.badRequest(
                    """
                    \(canonical) must be \(expected), not \
                    \(value.typeName == "array" || value.typeName == "object" ? "an" : "a") \(value.typeName)
                    """
                )
            }
        }
        self.properties = properties
    }
}
