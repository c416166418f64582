import Testing
@testable import StepKit
@testable import StepKitBase
@testable import StepKitCore

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

/// What sessions rely on: a table by index that behaves as a dictionary would.
@Suite struct IndexTableAsDictionaryTests {
    @Test func behavesAsADictionaryByIndex() {
        var map: IndexTable<String> = [3: "three"]
        #expect(map[3] == "three" && map[4] == nil && map.count == 1)
        #expect(map.updateValue("THREE", forKey: 3) == "three")
        #expect(map.updateValue("one", forKey: 1) == nil)
        map[9, default: "n"] += "ine"
        #expect(map[9] == "nine")
        #expect(map.keys.sorted() == [1, 3, 9] && map.values.sorted() == ["THREE", "nine", "one"])
        #expect(map.map { $0.key }.sorted() == [1, 3, 9])
        map[3] = nil
        #expect(map.count == 2 && map[3] == nil)
        var other = IndexTable<String>()
        other[9] = "nine"
        other[1] = "one"
        #expect(map == other)
    }

    /// Random inserts, replacements and removals agree with a dictionary, over keys dense enough
    /// to collide; a copy taken midway keeps its own contents (copy on write).
    @Test func agreesWithADictionaryUnderRandomChanges() {
        var state: UInt64 = 0x1DE7_0000_0000_0001
        func next() -> Int {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return Int(state % 1_000_000)
        }
        var map = IndexTable<Int>()
        var model: [Int: Int] = [:]
        var snapshot: (map: IndexTable<Int>, model: [Int: Int])?
        for round in 0..<60_000 {
            let key = next() % (round < 30_000 ? 64 : 4_096)
            switch next() % 3 {
            case 0, 1:
                let value = next()
                #expect(map.updateValue(value, forKey: key) == model.updateValue(value, forKey: key))
            default:
                let removed = map[key]
                map[key] = nil
                #expect(removed == model.removeValue(forKey: key))
            }
            if round % 997 == 0 {
                #expect(map.count == model.count)
                #expect(model.allSatisfy { map[$0.key] == $0.value })
                #expect(Dictionary(uniqueKeysWithValues: map.map { ($0.key, $0.value) }) == model)
            }
            if round == 20_000 { snapshot = (map, model) }
        }
        if let snapshot {
            #expect(snapshot.map.count == snapshot.model.count)
            #expect(snapshot.model.allSatisfy { snapshot.map[$0.key] == $0.value })
            #expect(snapshot.map != map)
        }
        for key in Array(model.keys) { map[key] = nil }
        #expect(map.isEmpty && map.keys.isEmpty && map == IndexTable<Int>())
    }

    /// Every index up to the highest written is found again; a negative index reads as absent;
    /// tables grown to different lengths compare by their entries.
    @Test func holdsEveryIndex() {
        var map = IndexTable<Int>()
        let keys = Array(0..<50_000)
        for k in keys.reversed() { map[k] = k &* 3 }
        #expect(map.count == keys.count)
        #expect(keys.allSatisfy { map[$0] == $0 &* 3 })
        #expect(map[50_000] == nil && map[-1] == nil && map[Int.min] == nil)
        var grown = IndexTable<Int>()
        grown[90_000] = 1
        grown[90_000] = nil
        grown[1] = 2
        #expect(grown == [1: 2] && grown.keys == [1] && grown != [1: 3] && grown != [1: 2, 2: 2])
    }
}
