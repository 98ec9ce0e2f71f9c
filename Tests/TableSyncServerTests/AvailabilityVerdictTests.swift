@testable import TableSyncServer
import Testing

/// The probe's rule for one check's outcome (``PostgresAvailabilityProbe/verdict(of:wasUp:misses:requestsAnswered:)``):
/// a refusal is away at once, slow checks are away only three in a row, and a slow check while requests are answered
/// is no miss. The live outage itself is DatabaseOutageTests'.
@Suite("Database availability: a check's verdict")
struct AvailabilityVerdictTests {
    typealias Probe = PostgresAvailabilityProbe

    /// The verdicts of `outcomes` in turn, from a database that is up, each with `requestsAnswered`.
    private func run(_ outcomes: [(Probe.Outcome, requestsAnswered: Bool)]) -> [Bool] {
        var (isUp, misses) = (true, 0)
        return outcomes.map { outcome, answered in
            let verdict = Probe.verdict(of: outcome, wasUp: isUp, misses: misses, requestsAnswered: answered)
            (isUp, misses) = (verdict.isUp, verdict.misses)
            return isUp
        }
    }

    @Test("a refused check is away at once; an answered one is up again")
    func refusalAndAnswer() {
        #expect(run([(.away("refused"), false), (.answered, false)]) == [false, true])
    }

    @Test("slow checks are away only three in a row; an answer between them starts the count again")
    func missesInARow() {
        let miss = (Probe.Outcome.miss("slow"), requestsAnswered: false)
        #expect(run([miss, miss, miss]) == [true, true, false])
        #expect(run([miss, miss, (.answered, false), miss, miss]) == [true, true, true, true, true])
    }

    @Test("slow checks while the database answers requests are no misses: a busy database is not away")
    func busyDatabase() {
        let busy = (Probe.Outcome.miss("slow"), requestsAnswered: true)
        #expect(run(Array(repeating: busy, count: 10)) == Array(repeating: true, count: 10))
        let miss = (Probe.Outcome.miss("slow"), requestsAnswered: false)
        #expect(run([miss, miss, busy, miss, miss]) == [true, true, true, true, true], "a busy check resets the count")
        #expect(run([miss, miss, busy, miss, miss, miss]).last == false)
    }

    @Test("a database declared away stays away through slow checks, answered requests or not, until its check answers")
    func awayUntilAnswered() {
        let verdict = Probe.verdict(of: .miss("slow"), wasUp: false, misses: 3, requestsAnswered: true)
        #expect(verdict.isUp == false)
        #expect(Probe.verdict(of: .answered, wasUp: false, misses: 3, requestsAnswered: false).isUp)
    }
}
