import NIOCore
@testable import TableSyncServer
import Testing

/// When a connection has waited too long for its client (``RequestDeadlines``), event by event.
@Suite("Request deadlines")
struct RequestDeadlinesTests {
    enum Event { case bytes, head, end, answered }

    static func at(_ milliseconds: Int64) -> NIODeadline { .uptimeNanoseconds(UInt64(milliseconds) * 1_000_000) }

    /// Events at their times (ms), and the deadline in force after the last: its time (ms) and kind, or none.
    static let cases: [([(Event, Int64)], (Int64, RequestDeadlines.Kind)?)] = [
        ([], (60_000, .idle)), // a new connection: idle from its start
        ([(.bytes, 100)], (10_100, .header)), // the head is due from its first byte
        ([(.bytes, 100), (.bytes, 5_000)], (10_100, .header)), // more bytes do not move it
        ([(.bytes, 100), (.head, 300)], (30_300, .body)), // the body is due from the head
        ([(.bytes, 100), (.head, 300), (.end, 400)], nil), // the server owes the answer: no deadline
        ([(.bytes, 100), (.head, 300), (.end, 400), (.answered, 900)], (60_900, .idle)),
        // Pipelined: a second head is read while the first is answered; its body is due, then nothing until both are
        // answered.
        ([(.bytes, 0), (.head, 10), (.end, 20), (.bytes, 30), (.head, 40)], (30_040, .body)),
        ([(.bytes, 0), (.head, 10), (.end, 20), (.bytes, 30), (.head, 40), (.end, 50), (.answered, 60)], nil),
        (
            [
                (.bytes, 0), (.head, 10), (.end, 20), (.bytes, 30), (.head, 40), (.end, 50), (.answered, 60),
                (.answered, 70)
            ], (60_070, .idle)
        ),
        // A next request's bytes while the first is still being answered: its head is due.
        ([(.bytes, 0), (.head, 10), (.end, 20), (.bytes, 500)], (10_500, .header))
    ]

    @Test("the deadline in force after each sequence of events", arguments: cases)
    func deadline(events: [(Event, Int64)], expected: (Int64, RequestDeadlines.Kind)?) {
        var deadlines = RequestDeadlines(
            headerTimeout: .seconds(10), bodyTimeout: .seconds(30), idleTimeout: .seconds(60), openedAt: Self.at(0))
        for (event, time) in events {
            switch event {
            case .bytes: deadlines.bytesArrived(at: Self.at(time))
            case .head: deadlines.headReceived(at: Self.at(time))
            case .end: deadlines.requestEnded(at: Self.at(time))
            case .answered: deadlines.answerEnded(at: Self.at(time))
            }
        }
        #expect(deadlines.deadline == expected.map { RequestDeadlines.Deadline(at: Self.at($0.0), kind: $0.1) })
    }
}
