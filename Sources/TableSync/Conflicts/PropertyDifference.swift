import SyncProtocol

/// One property on which the two sides of a conflict differ: the server's value against the local one, `nil`
/// where a side lacks the property. The server-managed properties (`version`, `updatedAt`, …) are left out: they
/// differ in every conflict and say nothing of the content; the conflict's text names the server's version.
public struct PropertyDifference: Sendable, Equatable {
    /// The property's name.
    public var name: String
    /// The server's value, `nil` when the server's copy lacks the property.
    public var server: JSONValue?
    /// The local value, `nil` when the local copy lacks the property.
    public var local: JSONValue?

    /// The properties `server` and `local` disagree on, in canonical key order; empty when their content is the
    /// same. `id` and the server-managed properties are not compared.
    public static func between(server: [String: JSONValue], local: [String: JSONValue]) -> [PropertyDifference] {
        let names = Set(server.keys).union(local.keys).filter { !SystemProperty.isSystemProperty($0) }
        return names.sorted(by: CanonicalJSON.keyPrecedes).compactMap { name in
            server[name] == local[name] ? nil : PropertyDifference(name: name, server: server[name], local: local[name])
        }
    }
}
