import SyncProtocol

/// The options of one `GET /tables/{table}` request, parsed and checked.
package struct ListQuery: Sendable, Hashable {
    /// `$filter`, parsed.
    package var filter: FilterExpression?
    /// `$orderby`; the repository adds `id` as the last key so that the order is total.
    package var orderBy: [OrderByKey] = []
    /// `$skip`.
    package var skip: Int = 0
    /// The records this page may hold: `$top`, or the table's page size when the client gave none; in v3 never more
    /// than the page size (a larger `$top` is served a page at a time, each page's `nextLink` asking for the rest).
    package var top: Int
    /// `$top` as the client gave it, before the page size capped it; `nil` without one. The next page's link asks
    /// for what is left of it (``NextPageLink``).
    package var requestedTop: Int?
    /// `$select`: the properties each item carries, system properties included (``parseSelect(_:version:table:)``),
    /// or `nil` for all.
    package var select: [String]?
    /// `__includeDeleted=true`.
    package var includeDeleted = false
    /// `$inlinecount=allpages` (v2) or `$count=true` (v3).
    package var includeCount = false
    /// The declared columns of the table queried, `nil` for a schemaless table. `$filter` and `$orderby` then name
    /// only declared columns (and system properties), and are translated to their typed, indexed expressions.
    package var schema: TableSchema?

    package init(top: Int) { self.top = top }

    /// The largest `$skip` accepted; anything larger is a mistake, not a page.
    package static let maximumSkip = 1_000_000_000

    /// The most `$orderby` keys accepted. Each key is read from every record the database sorts, so the keys
    /// multiply a sort's memory by the size of the records; clients order by one or two (`updatedAt,id`).
    package static let maximumOrderByKeys = 8

    /// The most distinct properties a `$filter` may name. A statement reads each named property of every row it
    /// scans and holds its value until the row is done (``ExtractedProperties``), so the names multiply a read's
    /// memory by the size of the records.
    package static let maximumFilterProperties = 32

    /// Parses the query string of a list request for `version`, with `table`'s paging limits; a `$filter` over
    /// `filterLimits` is refused before it reaches the database (``FilterCost``).
    static func parse(
        _ query: QueryString, version: ProtocolVersion, table: TableOptions,
        filterLimits: FilterLimits = FilterLimits(),
        wholePages: Bool = false
    ) throws(ProtocolError) -> ListQuery {
        let pageSize = table.pageSize ?? version.defaultPageSize
        var result = ListQuery(top: pageSize)
        result.schema = table.schema
        try checkNotNested(query)
        if let text = try query.value(named: QueryOption.filter), !text.trimmingCharacters(in: " ").isEmpty {
            result.filter = try parseFilter(text, table: table, limits: filterLimits)
        }
        if let text = try query.value(named: QueryOption.orderBy), !text.trimmingCharacters(in: " ").isEmpty {
            result.orderBy = try declaredOrderBy(try parseOrderBy(text), table: table)
        }
        if let text = try query.value(named: QueryOption.skip) {
            guard let skip = Int(text), skip >= 0, skip <= maximumSkip else {
                throw ProtocolError.badRequest("$skip must be a whole number from 0 to \(maximumSkip), not '\(text)'")
            }
            result.skip = skip
        }
        if let text = try query.value(named: QueryOption.top) {
            let top = try parseTop(text, table: table)
            result.requestedTop = top
            // Datasync caps $top at its page size and links to the rest; azure-mobile-apps-node serves $top whole,
            // and so does v3 for a client that asks for whole pages (``ProtocolExtension/wholePages``).
            result.top = version == .v3 && !wholePages ? min(top, pageSize) : top
        }
        if let text = try query.value(named: QueryOption.select), !text.trimmingCharacters(in: " ").isEmpty {
            result.select = try parseSelect(text, version: version, table: table)
        }
        result.includeDeleted = try includesDeleted(query)
        try OwnerProperty.checkNotQueried(result, table: table)
        result.includeCount = try includesCount(query, version: version)
        return result
    }

    /// The `$filter` `text`, within `limits` and naming at most ``maximumFilterProperties`` properties, with the
    /// table's declared columns in their declared spelling.
    private static func parseFilter(
        _ text: String, table: TableOptions, limits: FilterLimits
    ) throws(ProtocolError) -> FilterExpression {
        let filter = try FilterText.parse(text)
        try FilterCost.check(filter, textLength: text.unicodeScalars.count, limits: limits)
        let names = Set(filter.propertyNames)
        guard names.count <= maximumFilterProperties else {
            throw ProtocolError.badRequest(
                """
                $filter names \(names.count) properties; give at most \(maximumFilterProperties) (split the \
                query, or use in (…) for one property's values)
                """
            )
        }
        return table.schema.map { schema in filter.renamingProperties { schema.declaredSpelling($0) } } ?? filter
    }

    /// `keys` of a `$orderby` on a table with declared columns: each a system property or a column, in the column's
    /// declared spelling. Any key on a table without.
    private static func declaredOrderBy(
        _ keys: [OrderByKey], table: TableOptions
    ) throws(ProtocolError) -> [OrderByKey] {
        guard let schema = table.schema else { return keys }
        var keys = keys
        for index in keys.indices {
            let name = keys[index].property
            guard SystemProperty.isSystemProperty(name) || schema.column(named: name) != nil else {
                throw ProtocolError.badRequest(
                    """
                    $orderby names '\(name)', which is not a column of table \(table.name); its columns are \
                    \(schema.listed)
                    """
                )
            }
            keys[index].property = schema.declaredSpelling(name)
        }
        return keys
    }

    /// The `$top` `text`: a whole number up to the table's maximum.
    private static func parseTop(_ text: String, table: TableOptions) throws(ProtocolError) -> Int {
        guard let top = Int(text), top >= 0 else {
            throw ProtocolError.badRequest("$top must be a whole number from 0 to \(table.maxTop), not '\(text)'")
        }
        guard top <= table.maxTop else {
            throw ProtocolError.badRequest("$top is \(top), above this table's maximum of \(table.maxTop)")
        }
        return top
    }

    /// Whether the page is to say how many records match: `$inlinecount=allpages` in v2, `$count=true` in v3.
    private static func includesCount(_ query: QueryString, version: ProtocolVersion) throws(ProtocolError) -> Bool {
        switch version {
        case .v2:
            guard let text = try query.value(named: QueryOption.inlineCount) else { return false }
            switch text.lowercased() {
            case QueryOption.inlineCountAllPages: return true
            case "none": return false
            default: throw ProtocolError.badRequest("$inlinecount must be allpages or none, not '\(text)'")
            }
        case .v3:
            guard let text = try query.value(named: QueryOption.count) else { return false }
            return try parseBoolean(text, parameter: QueryOption.count)
        }
    }

    /// Refuses a query string that holds a URL's path and query as a parameter name, such as
    /// `/tables/movies?$orderby=updatedAt`: what a client makes of a link with a path when it takes the link for a
    /// query string. Answered as if the name were unknown, its `$orderby` and `$filter` would be dropped and the page
    /// would be another query's, whose records the client would take for this one's.
    static func checkNotNested(_ query: QueryString) throws(ProtocolError) {
        guard let nested = query.pairs.first(where: { $0.name.contains("?") }) else { return }
        throw ProtocolError.badRequest(
            """
            the query parameter '\(nested.name)' holds a '?', so the query string holds another URL's path and \
            query; send the query string alone after the table's path
            """
        )
    }

    /// `$select` as `version` answers it: the names of the properties each item carries. In v3 exactly those, as
    /// Datasync's server sends them (`$select=title` is `{"title": …}` alone); in v2 the system properties besides,
    /// as this server always sent them to Azure Mobile Apps' clients. A system property is named in its own spelling;
    /// on a table with declared columns a column in its declared one, and a name that is neither is a 400 (a typo
    /// would otherwise select nothing). On a schemaless table any property name is taken: which properties exist is
    /// known only record by record, and a record without one leaves it out.
    static func parseSelect(
        _ text: String, version: ProtocolVersion, table: TableOptions
    ) throws(ProtocolError) -> [String] {
        var names: [String] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let name = part.trimmingCharacters(in: " ")
            if let system = SystemProperty.all.first(where: { $0.caseInsensitiveEquals(name) }) {
                names.append(system)
                continue
            }
            guard PropertyName.isPlain(name) else {
                throw ProtocolError.badRequest(
                    "$select names '\(name)', which is not a property name (letters, digits and _ only)")
            }
            if let schema = table.schema {
                guard let column = schema.column(named: name) else {
                    throw ProtocolError.badRequest(
                        """
                        $select names '\(name)', which is not a column of table \(table.name); its columns are \
                        \(schema.listed)
                        """
                    )
                }
                names.append(column.name)
            } else {
                names.append(name)
            }
        }
        if version == .v2 { names += SystemProperty.all.sorted().filter { !names.contains($0) } }
        return names
    }

    /// `$orderby` as ``OrderByKey/parseList(_:)`` reads it, without `version` (an opaque token, not an order).
    static func parseOrderBy(_ text: String) throws(ProtocolError) -> [OrderByKey] {
        let keys: [OrderByKey]
        do {
            keys = try OrderByKey.parseList(text)
        } catch {
            throw ProtocolError.badRequest(error.reason)
        }
        guard keys.count <= maximumOrderByKeys else {
            throw ProtocolError.badRequest(
                "$orderby names \(keys.count) keys; give at most \(maximumOrderByKeys) (the order ends with id anyway)")
        }
        if keys.contains(where: { $0.property.caseInsensitiveEquals(SystemProperty.version) }) {
            throw ProtocolError.badRequest("$orderby cannot use version; it is an opaque token")
        }
        return keys
    }

    /// Whether the query string says `__includeDeleted=true` (name and value in any case): on a list, a read by id and
    /// a `PUT`.
    static func includesDeleted(_ query: QueryString) throws(ProtocolError) -> Bool {
        guard let text = try query.value(namedIgnoringCase: QueryOption.includeDeleted) else { return false }
        return try parseBoolean(text, parameter: QueryOption.includeDeleted)
    }

    static func parseBoolean(_ text: String, parameter: String) throws(ProtocolError) -> Bool {
        switch text.lowercased() {
        case "true": return true
        case "false": return false
        default: throw ProtocolError.badRequest("\(parameter) must be true or false, not '\(text)'")
        }
    }
}

extension StringProtocol {
    func trimmingCharacters(in character: Character) -> String {
        var slice = Substring(self)
        while slice.first == character { slice.removeFirst() }
        while slice.last == character { slice.removeLast() }
        return String(slice)
    }
}
