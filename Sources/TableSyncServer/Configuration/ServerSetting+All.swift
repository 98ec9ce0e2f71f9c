import Foundation

extension ServerSetting {
    /// Every setting of `tablesync-server`, in the order `--help` and docs/server.md list them. A new setting is one
    /// entry here and, where it lands, one member of ``ServerConfiguration``.
    package static let all: [ServerSetting] = [
        ServerSetting(
            flag: "host", key: "host", form: .value(valueName: "ADDRESS"), default: ServerConfiguration.defaultHost,
            help: "The address to listen on; it must be loopback unless tokens or JWT keys are configured.",
            read: { (input: SettingInput) throws(ConfigurationError) in try input.text() },
            apply: { $1.host = $0 }),
        wholeNumber(
            "port", key: "port", default: "\(ServerConfiguration.defaultPort)",
            help: "The TCP port to listen on; 0 picks a free port.", \.port,
            range: 0...65535),
        ServerSetting(
            flag: "database", key: "database", environmentVariable: "TABLESYNC_SERVER_DATABASE",
            form: .value(valueName: "URL"), default: "\(ServerSettingSources.defaultDatabase) in the working directory",
            help: """
                sqlite:PATH or postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=MODE&sslrootcert=FILE]; the \
                password, sslmode and sslrootcert also from PGPASSWORD, PGSSLMODE and PGSSLROOTCERT. sslmode: disable, \
                prefer (default), require, verify-ca, verify-full; verify-* trust the system's certificate \
                authorities unless sslrootcert names a PEM file.
                """,
            read: { (input: SettingInput) throws(ConfigurationError) in try DatabaseLocation.parse(try input.text()) },
            apply: { $1.database = $0 }),
        ServerSetting(
            flag: "table", key: "tables", form: .repeatedValue(valueName: "NAME[:OPTIONS]"),
            default: "\(ServerSettingSources.defaultTable), the Azure Mobile Apps quickstart's table",
            help: """
                A table to serve, repeatable: NAME or NAME:option=value,… with softDelete=true|false, pageSize=N, \
                maxTop=N, columns=name:type;… (types string, number, boolean, date, dateonly) to accept only those \
                properties, read= and write= anonymous|authenticated|role:NAME|disabled, and perUser=true to keep \
                each user to their own records. A flag replaces the file's table of the same name.
                """,
            read: { (input: SettingInput) throws(ConfigurationError) in try input.tables() },
            apply: { tables, configuration in
                for table in tables {
                    configuration.tables.removeAll { $0.name.lowercased() == table.name.lowercased() }
                    configuration.tables.append(table)
                }
            }),
        ServerSetting(
            flag: "tokens-file", key: "tokensFile", form: .value(valueName: "FILE"), default: "none",
            help: """
                A file with the accepted tokens, one per line: TOKEN or TOKEN NAME. Without it, the tokens of the \
                environment variable TABLESYNC_SERVER_TOKENS (comma- or space-separated).
                """,
            read: { (input: SettingInput) throws(ConfigurationError) in try input.text() },
            apply: { (path: String, configuration: inout ServerConfiguration) throws(ConfigurationError) in
                configuration.tokens = try TokenList.load(file: path)
            }),
        jwt(
            "jwt-issuer", key: "issuer", valueName: "URL", default: "none",
            help: "The iss every JWT must carry (an OpenID Connect provider's issuer URL).",
            read: { (input: SettingInput) throws(ConfigurationError) in try input.text() },
            apply: { $1.issuer = $0 }),
        jwt(
            "jwt-audience", key: "audience", valueName: "ID", default: "none",
            help: "The value a JWT's aud must hold (the client or API id the provider gives).",
            read: { (input: SettingInput) throws(ConfigurationError) in try input.text() },
            apply: { $1.audience = $0 }),
        jwt(
            "jwt-jwks", key: "jwks", valueName: "URL|FILE", default: "none",
            help: """
                The RS256 and ES256 keys: a JWKS URL (https://, or http:// on loopback) or file, loaded again when a \
                token names an unknown kid.
                """,
            read: { (input: SettingInput) throws(ConfigurationError) in
                JWTSettings.KeySetLocation(parsing: try input.text())
            },
            apply: { $1.keySet = $0 }),
        jwt(
            "jwt-hs256-key-file", key: "hs256KeyFile", valueName: "FILE", default: "none",
            help: """
                A file holding the HS256 shared key, at least 32 bytes. Without it, the key of the environment \
                variable TABLESYNC_SERVER_JWT_KEY.
                """,
            read: { (input: SettingInput) throws(ConfigurationError) in
                let path = try input.text()
                guard let data = FileManager.default.contents(atPath: path),
                    let text = String(data: data, encoding: .utf8)
                else {
                    throw ConfigurationError("cannot read the HS256 key file \(path)")
                }
                return JWTSettings.sharedKey(fileContents: text)
            },
            apply: { $1.sharedKey = $0 }),
        jwt(
            "jwt-leeway", key: "leeway", valueName: "SECONDS", default: wholeSeconds(JWTSettings.defaultLeeway),
            help: "Seconds a JWT is still accepted after exp and already before nbf, for clocks that differ.",
            read: { (input: SettingInput) throws(ConfigurationError) in try input.secondsUpToADay() },
            apply: { $1.leeway = $0 }),
        jwt(
            "jwks-refresh-interval", key: "jwksRefreshInterval", valueName: "SECONDS",
            default: wholeSeconds(JWTSettings.defaultKeySetRefreshInterval),
            help: "The fewest seconds between two loads of the key set that unknown kids cause.",
            read: { (input: SettingInput) throws(ConfigurationError) in try input.secondsUpToADay() },
            apply: { $1.keySetRefreshInterval = $0 }),
        jwt(
            "jwt-role-claim", key: "roleClaim", valueName: "NAME", default: JWTSettings.defaultRoleClaim,
            help: "The claim holding the roles that table options role:NAME require.",
            read: { (input: SettingInput) throws(ConfigurationError) in try input.text() },
            apply: { $1.roleClaim = $0 }),
        ServerSetting(
            flag: "max-body-size", key: "maxBodySize", form: .value(valueName: "BYTES"),
            default: "\(ServerConfiguration.defaultMaxBodySize / 1024 / 1024) MiB",
            help: "The largest request body in bytes, after gzip decompression; above it: 413. At most 32 MiB.",
            read: { (input: SettingInput) throws(ConfigurationError) in try input.wholeNumber() },
            apply: { $1.maxBodySize = $0 },
            check: { configuration in
                guard !(1024...ServerConfiguration.largestMaxBodySize).contains(configuration.maxBodySize) else {
                    return nil
                }
                return ConfigurationError(
                    """
                    --max-body-size must be from 1024 to \(ServerConfiguration.largestMaxBodySize) bytes (32 MiB: what \
                    both databases can store), not \(configuration.maxBodySize)
                    """)
            }),
        wholeNumber(
            "max-page-bytes", key: "maxPageBytes", valueName: "BYTES",
            default: "\(ServerConfiguration.defaultMaxPageBytes / 1024 / 1024) MiB",
            help: """
                The most bytes the records of one page may take; a page ends before the record that would pass it, \
                with a link to the next.
                """,
            \.maxPageBytes, range: 1024...ServerConfiguration.largestMaxPageBytes, unit: " bytes (128 MiB)"),
        wholeNumber(
            "max-bulk-reads", key: "maxBulkReads", default: "half the processor cores, at least 1",
            help: """
                The most bulk reads (reads of more than 100 records, $filters that call functions, orders no index \
                gives) running at once; \
                the others wait their turn, at most --statement-timeout, then 503.
                """,
            \.maxBulkReads, range: 1...10_000),
        ServerSetting(
            flag: "bulk-read-priority", key: "bulkReadPriority", form: .value(valueName: "idle|normal"),
            default: BulkReadPriority.default.rawValue,
            help: """
                The processor priority of bulk reads on SQLite: idle runs them only while nothing else wants a \
                processor, so small requests pass at once; normal shares the processors with every other thread.
                """,
            read: { (input: SettingInput) throws(ConfigurationError) in
                try BulkReadPriority.parse(try input.text(), setting: input.source)
            },
            apply: { $1.bulkReadPriority = $0 }),
        ServerSetting(
            flag: "no-batch", key: "batch", form: .switchOff, default: "offered",
            help: "Do not offer the batch endpoint (POST /batch); clients then send one request per operation.",
            read: { (input: SettingInput) throws(ConfigurationError) in try input.boolean() },
            apply: { $1.batch = $0 }),
        ServerSetting(
            flag: "max-batch-operations", key: "maxBatchOperations", form: .value(valueName: "N"),
            default: "\(ServerConfiguration.defaultMaxBatchOperations)",
            help: "The most operations one batch request may carry; above it: 413.",
            read: { (input: SettingInput) throws(ConfigurationError) in try input.wholeNumber() },
            apply: { $1.maxBatchOperations = $0 },
            check: { configuration in
                configuration.maxBatchOperations >= 1
                    ? nil
                    : ConfigurationError(
                        "--max-batch-operations must be at least 1, not \(configuration.maxBatchOperations)")
            }),
        wholeNumber(
            "postgres-pool-size", key: "postgresPoolSize", default: "\(ServerConfiguration.defaultPostgresPoolSize)",
            help: """
                The most connections to PostgreSQL this process opens at once; several instances on one database \
                need their sum under its max_connections.
                """,
            \.postgresPoolSize, range: 1...10_000, unit: " connections"),
        timeLimit(
            "header-timeout", key: "headerTimeout", default: wholeSeconds(ServerConfiguration.defaultHeaderTimeout),
            help: """
                Seconds a client may take to send a request's line and headers, from their first byte; then 408 and \
                the connection is closed.
                """,
            \.headerTimeout),
        timeLimit(
            "body-timeout", key: "bodyTimeout", default: wholeSeconds(ServerConfiguration.defaultBodyTimeout),
            help: """
                Seconds a client may take to send a request's body after its headers; then 408 and the connection is \
                closed.
                """,
            \.bodyTimeout),
        timeLimit(
            "idle-timeout", key: "idleTimeout", default: wholeSeconds(ServerConfiguration.defaultIdleTimeout),
            help: "Seconds a kept-alive connection may wait for its next request before it is closed.",
            \.idleTimeout),
        wholeNumber(
            "max-connections", key: "maxConnections", default: "\(ServerConfiguration.defaultMaxConnections)",
            help: "The most client connections open at once; more wait until one closes.",
            \.maxConnections, range: 1...1_000_000),
        timeLimit(
            "statement-timeout", key: "statementTimeout",
            default: wholeSeconds(ServerConfiguration.defaultStatementTimeout),
            help: """
                Seconds a page read may run; then it is cancelled and the request answered 503. Writes wait for their \
                tables' locks unlimited.
                """,
            \.statementTimeout),
        timeLimit(
            "shutdown-timeout", key: "shutdownTimeout",
            default: wholeSeconds(ServerConfiguration.defaultShutdownTimeout),
            help: "Seconds a stopping server waits for the requests in flight before it cancels them.",
            \.shutdownTimeout),
        ServerSetting(
            flag: "database-wait", key: "databaseWait", form: .value(valueName: "SECONDS"),
            default: wholeSeconds(ServerConfiguration.defaultDatabaseWait),
            help: """
                Seconds a starting server waits for a PostgreSQL database that cannot be reached yet, trying again \
                with backoff; 0: not at all.
                """,
            read: { (input: SettingInput) throws(ConfigurationError) in try input.secondsUpToADay() },
            apply: { $1.databaseWait = $0 },
            check: { configuration in
                let wait = configuration.databaseWait
                guard wait < .zero || wait > ServerConfiguration.longestTimeout else { return nil }
                return ConfigurationError(
                    """
                    --database-wait must be from 0 to \(ServerConfiguration.longestTimeout.components.seconds) \
                    seconds, not \(wait)
                    """)
            }),
        wholeNumber(
            "max-change-wait", key: "maxChangeWait", valueName: "SECONDS",
            default: "\(ServerConfiguration.defaultMaxChangeWait)",
            help: """
                The most whole seconds a change feed request (GET /changes) waits for a change before it is answered \
                304; never more than half --idle-timeout.
                """,
            \.maxChangeWait, range: 1...ServerConfiguration.largestMaxChangeWait, unit: " seconds"),
        wholeNumber(
            "max-filter-depth", key: "maxFilterDepth", default: "\(FilterLimits().maxDepth)",
            help: "The deepest nesting of a $filter's expression; deeper: 400.", \.filterLimits.maxDepth,
            range: 1...100_000),
        wholeNumber(
            "max-filter-terms", key: "maxFilterTerms", default: "\(FilterLimits().maxTerms)",
            help: "The most terms in a $filter (properties, literals, operators, functions, in-list items); more: 400.",
            \.filterLimits.maxTerms, range: 1...100_000),
        wholeNumber(
            "max-filter-growth", key: "maxFilterGrowth", default: "\(FilterLimits().maxGrowth)",
            help: """
                The most times longer than what it reads a $filter's string functions may make a string (nested \
                replace() calls multiply); more: 400.
                """,
            \.filterLimits.maxGrowth, range: 1...100_000)
    ]

    /// A default duration as the help says it: whole seconds.
    private static func wholeSeconds(_ duration: Duration) -> String { "\(duration.components.seconds)" }

    /// A member of the `jwt` object, `--jwt-…` on the command line: it sets a part of ``ServerConfiguration/jwt``,
    /// which ``ServerSettingSources`` keeps only when a key, an issuer or an audience is given.
    private static func jwt<Value>(
        _ flag: String, key: String, valueName: String, default defaultValue: String, help: String,
        read: @escaping @Sendable (SettingInput) throws(ConfigurationError) -> Value,
        apply: @escaping @Sendable (Value, inout JWTSettings) -> Void
    ) -> ServerSetting {
        ServerSetting(
            flag: flag, key: "jwt.\(key)", form: .value(valueName: valueName), default: defaultValue, help: help,
            read: read,
            apply: { value, configuration in
                var settings = configuration.jwt ?? JWTSettings(issuer: "", audience: "")
                apply(value, &settings)
                configuration.jwt = settings
            })
    }
}
