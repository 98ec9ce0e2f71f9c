import TestSupport

extension ServerProcess {
    /// `tablesync-server` (`executable`) on `database` (its `--database` value: `sqlite:PATH` or a `postgres://`
    /// URL) serving `tables` (pages of up to 1,000 records), with `options` (more flags), its log in `logFile`;
    /// returns once it listens.
    convenience init(
        executable: String, database: String, tables: [String], logFile: String, options: [String] = []
    )
        throws
    {
        var arguments = ["--host", "127.0.0.1", "--database", database] + options
        for table in tables { arguments += ["--table", table + ":maxTop=1000"] }
        try self.init(arguments, logPath: logFile, executable: executable)
    }
}
