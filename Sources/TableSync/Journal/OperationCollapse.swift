/// The rule for a new local change to a record that already has a pending operation, as the Azure Mobile
/// Apps SDKs apply it. A pure function: see `OperationCollapseTests` for every cell.
///
/// | pending \ new | insert | update | delete |
/// |---|---|---|---|
/// | none   | add      | add            | add |
/// | insert | error    | keep insert    | drop both (nothing reaches the server) |
/// | update | error    | keep update    | replace by delete, on the update's base version |
/// | delete | error    | error          | error |
enum OperationCollapse {
    /// What to do with the journal.
    enum Outcome: Sendable, Equatable {
        /// No operation is pending: add the new one at the end.
        case add
        /// The pending operation already covers the change (push sends the latest content): keep it as is.
        case keepPending
        /// The change cancels the pending insert: remove it and add nothing.
        case dropBoth
        /// Remove the pending operation and add the new one at the end, with the pending one's base version.
        case replacePending
        /// The change is not allowed; the reason says why.
        case reject(String)
    }

    /// The outcome of a `new` change to a record whose pending operation is `pending`.
    static func outcome(pending: PendingOperation.Kind?, new: PendingOperation.Kind) -> Outcome {
        guard let pending else { return .add }
        switch (pending, new) {
        case (.insert, .update), (.update, .update): return .keepPending
        case (.insert, .delete): return .dropBoth
        case (.update, .delete): return .replacePending
        case (.insert, .insert): return .reject("an insert of this record is already pending")
        case (.update, .insert):
            return .reject("the record exists (an update of it is pending), so it cannot be inserted")
        case (.delete, _):
            return .reject("a delete of this record is pending; push it before changing the record again")
        }
    }
}
