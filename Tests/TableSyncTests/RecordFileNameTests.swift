import Testing
@testable import TableSync

@Suite struct RecordFileNameTests {
    @Test func plainIdsKeepTheirName() {
        #expect(RecordFileName.fileName(for: "a1b2-c3") == "a1b2-c3.json")
        #expect(RecordFileName.fileName(for: "Todo") == "^todo.json")
    }
}
