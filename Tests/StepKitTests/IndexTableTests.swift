import Testing
@testable import StepKit

@Suite struct IndexTableTests {
    @Test func readsWritesAndIteratesInIndexOrder() {
        var table = IndexTable<String>()
        #expect(table.isEmpty && table[0] == nil && table[-1] == nil && table[1_000] == nil)
        table[7] = "seven"
        table[2] = "two"
        table[7] = "SEVEN"
        #expect(table.count == 2)
        #expect(table[7] == "SEVEN" && table[2] == "two" && table[3] == nil && table[8] == nil)
        #expect(table.keys == [2, 7] && table.values == ["two", "SEVEN"])
        #expect(table.map { "\($0.key)=\($0.value)" } == ["2=two", "7=SEVEN"])
        table[2] = nil
        table[50] = nil
        #expect(table.count == 1 && table.keys == [7])
        table[3, default: "x"] += "y"
        #expect(table[3] == "xy" && table.count == 2)
    }
}
