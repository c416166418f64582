import StepKitBase

/// ResearchKit's `ORKTowerOfHanoiStep` parameter: the number of disks (the predefined task's
/// default is 5).
struct TowerOfHanoiSettings: Sendable, Equatable {
    var numberOfDisks = 5

    static func parse(_ r: FieldReader) -> TowerOfHanoiSettings? {
        TowerOfHanoiSettings(numberOfDisks: r.integer("numberOfDisks", in: 1...8) ?? 5)
    }
}

/// The tower of Hanoi (docs/active-tasks.md): three towers, 0 to 2; the disks (1 the smallest)
/// start on tower 0, largest at the bottom. A move (a `drag` from a tower to another) takes the
/// top disk of `from` onto `to` if `to` is empty or its top disk is larger; any other move is
/// refused. The puzzle is solved when every disk is on tower 2.
struct TowerOfHanoiGame: GameRules {
    struct Move: Sendable, Equatable {
        let at: Int64
        let from: Int
        let to: Int
    }

    let settings: TowerOfHanoiSettings
    /// Each tower's disks from the bottom up.
    private(set) var towers: [[Int]]
    private(set) var moves: [Move] = []

    /// What a board holds while its game is changed in place (`GameBoard.change`).
    static let placeholder = TowerOfHanoiGame(settings: TowerOfHanoiSettings(numberOfDisks: 1))

    init(settings: TowerOfHanoiSettings) {
        self.settings = settings
        towers = [Array((1...settings.numberOfDisks).reversed()), [], []]
    }

    var isOver: Bool { towers[2].count == settings.numberOfDisks }
    var nextDue: Int64? { nil }
    mutating func advance(to time: Int64) {}

    mutating func apply(_ input: GameInput) throws(StepKitError) {
        guard input.kind == .drag else { throw GameInput.refused("wrongInput", "The tower of Hanoi takes moves: a drag from a tower to another.") }
        guard input.from < 3, input.to < 3, input.from != input.to else {
            throw GameInput.refused("illegalMove", "A move goes from one tower to another, numbered 0 to 2.")
        }
        guard let disk = towers[input.from].last else {
            throw GameInput.refused("illegalMove", "Tower \(input.from) has no disk to move.")
        }
        if let below = towers[input.to].last, below < disk {
            throw GameInput.refused("illegalMove", "Disk \(disk) cannot go onto the smaller disk \(below).")
        }
        towers[input.from].removeLast()
        towers[input.to].append(disk)
        moves.append(Move(at: input.at, from: input.from, to: input.to))
    }

    var stateJSON: JSONObject {
        JSONObject([
            "type": .string("towerOfHanoi"),
            "numberOfDisks": .int(Int64(settings.numberOfDisks)),
            "towers": .array(towers.map { .array($0.map { .int(Int64($0)) }) }),
            "targetTower": .int(2),
            "moves": .int(Int64(moves.count)),
            "over": .bool(isOver),
        ])
    }

    var resultJSON: JSONObject {
        JSONObject([
            "puzzleWasSolved": .bool(isOver),
            "moves": .array(moves.map { m in
                .object(["timestamp": GameInput.seconds(m.at), "donorTowerIndex": .int(Int64(m.from)), "recipientTowerIndex": .int(Int64(m.to))])
            }),
        ])
    }
}
