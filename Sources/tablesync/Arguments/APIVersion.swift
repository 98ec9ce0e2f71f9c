import ArgumentParser

/// `init --api-version 2|3`: the table protocol version a store speaks, as `tablesync.json` writes it.
///
/// 2 is the Azure Mobile Apps protocol (`ZUMO-API-VERSION: 2.0.0`), 3 the Datasync protocol (`3.0.0`). Any other
/// value is refused by the argument parser, which lists these two.
enum APIVersion: Int, CaseIterable, ExpressibleByArgument {
    case v2 = 2
    case v3 = 3
}
