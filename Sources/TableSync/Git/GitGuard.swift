import SyncProtocol
import TableSyncStorage

/// A push, pull or sync refused because of where git left the store: `HEAD` behind the commit of the store's last
/// sync, or a merge, rebase, cherry-pick or revert in progress. Nothing was sent or written.
public struct GitStateRefused: CategorizedError, Equatable {
    /// What git left the store in.
    package enum Cause: Sendable, Equatable {
        /// `HEAD` is behind the commit of the store's last sync.
        case headBehindLastSync
        /// A merge, rebase, cherry-pick or revert is under way, or store files are unmerged.
        case operationInProgress
    }

    /// What git left the store in.
    package let cause: Cause
    /// Why, with what to do.
    package let reason: String
    /// Always ``FailureKind/gitState``.
    public var kind: FailureKind { .gitState }
    /// The refusal.
    public var description: String { reason }

    /// A refusal for `cause`, explained by `reason`.
    package init(cause: Cause, reason: String) {
        self.cause = cause
        self.reason = reason
    }
}

/// Refuses to push or pull while git is in the middle of something, or from a `HEAD` behind the store's last sync.
///
/// - A merge, rebase, cherry-pick or revert under way (or store files unmerged): the work tree is half one commit,
///   half another; files git took away for the operation would read as deleted by hand, files it is merging as
///   edits, and a pull would write over files being merged.
/// - `HEAD` behind the commit of the store's last sync (``HeadPosition/behind``): a checkout of history or a reset
///   to an older commit. Its record files may hold hand edits that were sent long ago and its journal operations
///   that were sent since; sent again, they would undo newer changes. Allowed on purpose, such a store still sends
///   only real edits (old server copies are brought up to date, files the older commit lacks are brought back), but
///   it is a decision for a person, not for cron.
enum GitGuard {
    /// Throws ``GitStateRefused`` when an operation is under way, or when `baseline`'s `HEAD` is behind the last
    /// sync, unless `allowingOlderHead`.
    static func check(_ baseline: GitBaseline?, allowingOlderHead: Bool) throws {
        guard let baseline else { return }
        if let operation = try baseline.repository.operationInProgress() {
            throw GitStateRefused(cause: .operationInProgress, reason: "\(operation); nothing was sent or written.")
        }
        guard baseline.position == .behind, !allowingOlderHead else { return }
        let head = baseline.head.map { String($0.prefix(12)) } ?? "?"
        let synced = baseline.state.syncedHead.map { String($0.prefix(12)) } ?? "?"
        let back =
            baseline.repository.isBisecting
            ? "End the bisect first (git bisect reset)"
            : "Go back to the branch (git switch -, or git checkout \(synced))"
        throw GitStateRefused(
            cause: .headBehindLastSync,
            reason: """
                HEAD (\(head)) is behind the commit of this store's last sync (\(synced)): a checkout of an older \
                commit or a reset. Its files and journal are older than what was sent already; nothing was sent. \
                \(back), or sync this commit anyway allowing an older HEAD: old server copies are then brought up to \
                date, and only real edits go out.
                """)
    }

    /// Throws ``GitStateRefused`` when a git command started writing the work tree since `baseline` was read, or
    /// moved `HEAD` (a checkout that began while the store was scanned, or ran whole meanwhile): what the scan saw may
    /// be half that checkout, and files it removed would read as deleted by hand.
    static func checkWorkTreeSettled(_ baseline: GitBaseline?) throws {
        guard let baseline else { return }
        if let writing = baseline.repository.workTreeBeingWritten() {
            throw GitStateRefused(cause: .operationInProgress, reason: "\(writing); nothing was sent or written.")
        }
        let head = try baseline.repository.run(["rev-parse", "-q", "--verify", "HEAD"], allowing: [1]).text
        guard head != (baseline.head ?? "") else { return }
        throw GitStateRefused(
            cause: .operationInProgress,
            reason: """
                a git command moved HEAD while the store was being read (a checkout, switch or reset); nothing was \
                sent or written: run again
                """)
    }

    /// What `status` says of git's state, one sentence each: what would stop the next run, and a clone whose merges
    /// would not go through TableSync's merge driver.
    static func warnings(_ baseline: GitBaseline?) throws -> [String] {
        guard let baseline else { return [] }
        var warnings: [String] = []
        // Unmerged files show as broken files with both sides already.
        if let operation = try baseline.repository.operationInProgress(checkingUnmergedFiles: false) {
            warnings.append("\(operation); push, pull and sync wait for it (exit 9).")
        }
        if baseline.position == .behind {
            warnings.append(
                """
                HEAD is behind the commit of the last sync (a checkout of history or a reset); push, pull and sync \
                refuse it (exit 9) unless allowed an older HEAD.
                """
            )
        }
        if !baseline.repository.mergesStore {
            warnings.append("git would merge this store's files as text: run tablesync git-setup in this clone.")
        }
        return warnings
    }
}
