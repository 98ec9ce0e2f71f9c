import SyncProtocol

/// Turns the text of `$filter` into a tree, with errors that name the parameter and the column.
enum FilterText {
    static func parse(_ text: String) throws(ProtocolError) -> FilterExpression {
        do {
            return try FilterParser.parse(text)
        } catch let error as FilterParseError {
            throw ProtocolError.badRequest("$filter \(error)")
        } catch {
            throw ProtocolError.badRequest("$filter cannot be parsed: \(error)")
        }
    }
}
