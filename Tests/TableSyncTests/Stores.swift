import SyncProtocol
import TestSupport
@testable import TableSync

/// A new store with one table `todo` in a temporary directory.
func makeStore(tables: [String] = ["todo"]) throws -> (TemporaryDirectory, SyncContext) {
    let directory = TemporaryDirectory()
    let context = try SyncContext.initialize(
        directory: directory.path + "/store",
        settings: StoreSettings(remote: "http://127.0.0.1:1", tables: tables))
    return (directory, context)
}
