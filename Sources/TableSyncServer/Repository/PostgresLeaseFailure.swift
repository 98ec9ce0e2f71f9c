/// The PostgreSQL pool gave no connection: it could not open one (the database refused or dropped it, or stayed
/// silent), or it was shut down because the database went away (``PostgresPools``). PostgresNIO reports these as
/// errors of its pool module with no SQLSTATE; this names them for ``DatabaseFailure``.
struct PostgresLeaseFailure: Error, CustomStringConvertible {
    /// The pool's own error.
    let underlying: any Error

    var description: String { "no connection to PostgreSQL could be had: \(underlying)" }
}
