import SyncProtocol
import TableSyncStorage

/// Reads typed fields out of a JSON settings file, turning every mismatch into a ``StoreError`` that names
/// the file and the field.
struct SettingsReader {
    let file: String
    let members: [String: JSONValue]
    let prefix: String

    /// Parses `bytes` of `file`, which must hold a JSON object.
    init(file: String, bytes: [UInt8]) throws {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes)
        } catch let error as JSONParseError {
            throw StoreError.invalidJSONFile(file: file, error: error)
        }
        guard case .object(let members) = value else {
            throw StoreError.invalidSettings(
                file: file, field: "(top level)", reason: "expected a JSON object, found \(value.typeName)")
        }
        self.init(file: file, members: members, prefix: "")
    }

    init(file: String, members: [String: JSONValue], prefix: String) {
        self.file = file
        self.members = members
        self.prefix = prefix
    }

    func path(_ key: String) -> String { prefix.isEmpty ? key : prefix + "." + key }

    func failure(_ key: String, _ reason: String) -> StoreError {
        .invalidSettings(file: file, field: path(key), reason: reason)
    }

    func optionalString(_ key: String) throws -> String? {
        switch members[key] {
        case nil, .null?: return nil
        case .string(let text)?: return text
        case let other?: throw failure(key, "expected a string, found \(other.typeName)")
        }
    }

    func string(_ key: String) throws -> String {
        guard let text = try optionalString(key) else { throw failure(key, "is missing") }
        return text
    }

    func optionalBool(_ key: String) throws -> Bool? {
        switch members[key] {
        case nil, .null?: return nil
        case .bool(let value)?: return value
        case let other?: throw failure(key, "expected true or false, found \(other.typeName)")
        }
    }

    func optionalInteger(_ key: String) throws -> Int? {
        switch members[key] {
        case nil, .null?: return nil
        case let value?:
            guard let integer = value.integerValue, let result = Int(exactly: integer) else {
                throw failure(
                    key, "expected an integer, found \(value.typeName == "number" ? "a fraction" : value.typeName)")
            }
            return result
        }
    }

    func optionalObject(_ key: String) throws -> SettingsReader? {
        switch members[key] {
        case nil, .null?: return nil
        case .object(let nested)?: return SettingsReader(file: file, members: nested, prefix: path(key))
        case let other?: throw failure(key, "expected an object, found \(other.typeName)")
        }
    }

    /// The nested objects of an object-valued field, by key.
    func objectMembers(_ key: String) throws -> [(key: String, reader: SettingsReader)] {
        guard let nested = try optionalObject(key) else { return [] }
        return try nested.members.sorted { CanonicalJSON.keyPrecedes($0.key, $1.key) }.map { name, value in
            switch value {
            case .object(let inner):
                return (name, SettingsReader(file: file, members: inner, prefix: nested.path(name)))
            case let other: throw nested.failure(name, "expected an object, found \(other.typeName)")
            }
        }
    }
}
