import StepKitBase

/// A predefined active task's parameters, as its step declares them (ResearchKit's
/// `ORKSpatialSpanMemoryStep`, `ORKPSATStep`, `ORKStroopStep`, `ORKTowerOfHanoiStep` and the
/// other steps of docs/active-tasks.md), with ResearchKit's defaults where it has them. A step of
/// one of these types is an active step whose game the host plays through `stepkit_session_input`.
enum GameSettings: Sendable, Equatable {
    case spatialSpanMemory(SpatialSpanSettings)
    case psat(PSATSettings)
    case stroop(StroopSettings)
    case towerOfHanoi(TowerOfHanoiSettings)
    case trailmaking(TrailmakingSettings)
    case reactionTime(ReactionTimeSettings)
    case rangeOfMotion(RangeOfMotionSettings)
    case amslerGrid(AmslerGridSettings)
    case toneAudiometry(ToneAudiometrySettings)
    case tappingInterval(TappingIntervalSettings)
    case holePeg(HolePegSettings)

    /// The step types that are games.
    static let stepTypes = ["spatialSpanMemory", "psat", "stroop", "towerOfHanoi",
                             "trailmaking", "reactionTime"]
        + ["rangeOfMotion", "amslerGrid", "toneAudiometry"]
        + ["tappingInterval", "holePegTestPlace", "holePegTestRemove"]

    /// Reads the game's parameters from its step (the caller finishes `r`).
    static func parse(type: String, _ r: FieldReader, at path: JSONPath) -> GameSettings? {
        let d = r.diagnostics
        let before = d.problems.count
        let settings: GameSettings?
        switch type {
        case "spatialSpanMemory": settings = SpatialSpanSettings.parse(r, at: path).map { .spatialSpanMemory($0) }
        case "psat": settings = PSATSettings.parse(r, at: path).map { .psat($0) }
        case "stroop": settings = StroopSettings.parse(r).map { .stroop($0) }
        case "towerOfHanoi": settings = TowerOfHanoiSettings.parse(r).map { .towerOfHanoi($0) }
        case "trailmaking": settings = TrailmakingSettings.parse(r).map { .trailmaking($0) }
        case "reactionTime": settings = ReactionTimeSettings.parse(r, at: path).map { .reactionTime($0) }
        case "rangeOfMotion": settings = RangeOfMotionSettings.parse(r).map { .rangeOfMotion($0) }
        case "amslerGrid": settings = AmslerGridSettings.parse(r).map { .amslerGrid($0) }
        case "toneAudiometry": settings = ToneAudiometrySettings.parse(r, at: path).map { .toneAudiometry($0) }
        case "tappingInterval": settings = TappingIntervalSettings.parse(r, at: path).map { .tappingInterval($0) }
        case "holePegTestPlace", "holePegTestRemove":
            settings = HolePegSettings.parse(r, at: path, remove: type == "holePegTestRemove").map { .holePeg($0) }
        default: settings = nil
        }
        return d.problems.count == before ? settings : nil
    }

    /// A new game for the step `step` of a run with `seed` (a game without chance ignores it).
    func start(seed: UInt64, step: String) -> GameBoard {
        switch self {
        case .spatialSpanMemory(let s): return .spatialSpanMemory(SpatialSpanGame(settings: s, seed: seed, step: step))
        case .psat(let s): return .psat(PSATGame(settings: s, seed: seed, step: step))
        case .stroop(let s): return .stroop(StroopGame(settings: s, seed: seed, step: step))
        case .towerOfHanoi(let s): return .towerOfHanoi(TowerOfHanoiGame(settings: s))
        case .trailmaking(let s): return .trailmaking(TrailmakingGame(settings: s, seed: seed, step: step))
        case .reactionTime(let s): return .reactionTime(ReactionTimeGame(settings: s, seed: seed, step: step))
        case .rangeOfMotion(let s): return .rangeOfMotion(RangeOfMotionGame(settings: s))
        case .amslerGrid(let s): return .amslerGrid(AmslerGridGame(settings: s))
        case .toneAudiometry(let s): return .toneAudiometry(ToneAudiometryGame(settings: s, seed: seed, step: step))
        case .tappingInterval(let s): return .tappingInterval(TappingIntervalGame(settings: s))
        case .holePeg(let s): return .holePeg(HolePegGame(settings: s))
        }
    }

    /// Whether the game draws from the run's seed (a task with one draws a seed when it opens).
    var usesSeed: Bool {
        switch self {
        case .towerOfHanoi, .rangeOfMotion, .amslerGrid, .tappingInterval, .holePeg: return false
        default: return true
        }
    }
}

/// The rules every game keeps, so the session drives them alike: time only moves forward
/// (`advance`), an input is taken or refused whole (`apply`), and the state after any inputs is
/// a function of the seed and the inputs with their times alone, so a saved game is its inputs.
protocol GameRules: Sendable, Equatable {
    /// Everything that comes due by `time` (milliseconds of the step's own time): a window that
    /// closes, a stimulus that is shown. Advancing to `a` and then to `b` is advancing to `b`.
    mutating func advance(to time: Int64)
    /// Takes the input at its time (already advanced to) or throws, changing nothing.
    mutating func apply(_ input: GameInput) throws(StepKitError)
    var isOver: Bool { get }
    /// When something next comes due by itself (step time), or nil.
    var nextDue: Int64? { get }
    /// What the host draws or plays now: the state's `active.game`.
    var stateJSON: JSONObject { get }
    /// The result's fields (ResearchKit's names).
    var resultJSON: JSONObject { get }
}

/// One game's state, whichever game it is.
enum GameBoard: Sendable, Equatable {
    case spatialSpanMemory(SpatialSpanGame)
    case psat(PSATGame)
    case stroop(StroopGame)
    case towerOfHanoi(TowerOfHanoiGame)
    case trailmaking(TrailmakingGame)
    case reactionTime(ReactionTimeGame)
    case rangeOfMotion(RangeOfMotionGame)
    case amslerGrid(AmslerGridGame)
    case toneAudiometry(ToneAudiometryGame)
    case tappingInterval(TappingIntervalGame)
    case holePeg(HolePegGame)

    var name: String {
        switch self {
        case .spatialSpanMemory: return "spatialSpanMemory"
        case .psat: return "psat"
        case .stroop: return "stroop"
        case .towerOfHanoi: return "towerOfHanoi"
        case .trailmaking: return "trailmaking"
        case .reactionTime: return "reactionTime"
        case .rangeOfMotion: return "rangeOfMotion"
        case .amslerGrid: return "amslerGrid"
        case .toneAudiometry: return "toneAudiometry"
        case .tappingInterval: return "tappingInterval"
        case .holePeg(let g): return g.settings.remove ? "holePegTestRemove" : "holePegTestPlace"
        }
    }

    private var rules: any GameRules {
        switch self {
        case .spatialSpanMemory(let g): return g
        case .psat(let g): return g
        case .stroop(let g): return g
        case .towerOfHanoi(let g): return g
        case .trailmaking(let g): return g
        case .reactionTime(let g): return g
        case .rangeOfMotion(let g): return g
        case .amslerGrid(let g): return g
        case .toneAudiometry(let g): return g
        case .tappingInterval(let g): return g
        case .holePeg(let g): return g
        }
    }

    /// Runs `body` on the game in place: the board holds a placeholder meanwhile, so the game's
    /// arrays are referenced once and grow without being copied (an input costs the same at the
    /// hundredth as at the first; `benchmarks/`).
    private mutating func change(_ body: (inout any GameRules) throws(StepKitError) -> Void) throws(StepKitError) {
        var game = rules
        self = .towerOfHanoi(TowerOfHanoiGame.placeholder)
        defer { self = GameBoard.wrap(game) ?? self }
        try body(&game)
    }

    private static func wrap(_ game: any GameRules) -> GameBoard? {
        switch game {
        case let g as SpatialSpanGame: return .spatialSpanMemory(g)
        case let g as PSATGame: return .psat(g)
        case let g as StroopGame: return .stroop(g)
        case let g as TowerOfHanoiGame: return .towerOfHanoi(g)
        case let g as TrailmakingGame: return .trailmaking(g)
        case let g as ReactionTimeGame: return .reactionTime(g)
        case let g as RangeOfMotionGame: return .rangeOfMotion(g)
        case let g as AmslerGridGame: return .amslerGrid(g)
        case let g as ToneAudiometryGame: return .toneAudiometry(g)
        case let g as TappingIntervalGame: return .tappingInterval(g)
        case let g as HolePegGame: return .holePeg(g)
        default: return nil
        }
    }

    mutating func advance(to time: Int64) { try? change { $0.advance(to: time) } }
    mutating func apply(_ input: GameInput) throws(StepKitError) { try change { (g: inout any GameRules) throws(StepKitError) in try g.apply(input) } }
    var isOver: Bool { rules.isOver }
    var nextDue: Int64? { rules.nextDue }
    var stateJSON: JSONObject { rules.stateJSON }
    var resultJSON: JSONObject { rules.resultJSON }
}

/// A game in a visit of its step: the game, the inputs it took (what a save keeps and a restore
/// replays) and the step time it has been advanced to.
struct GameRun: Sendable, Equatable {
    var board: GameBoard
    var inputs: [GameInput] = []
    var time: Int64 = 0

    /// At most this many inputs per game: far past any real game (PSAT's 60 answers, a tapping
    /// test's few hundred taps), a bound on a saved game's replay.
    static let maximumInputs = 100_000

    mutating func advance(to time: Int64) {
        guard time > self.time else { return }
        self.time = time
        board.advance(to: time)
    }

    /// Takes `input` (at or after the game's time) or throws, changing nothing.
    mutating func take(_ input: GameInput) throws(StepKitError) {
        guard !board.isOver else { throw GameInput.refused("gameOver", "The game is over.") }
        guard inputs.count < GameRun.maximumInputs else {
            throw GameInput.refused("tooManyInputs", "The game has taken \(GameRun.maximumInputs) inputs, its limit.")
        }
        // Nothing comes due before the input: each game's `apply` refuses before it changes
        // anything, so the game is changed in place.
        if board.nextDue.map({ $0 > input.at }) ?? true {
            try board.apply(input)
            time = max(time, input.at)
            inputs.append(input)
            return
        }
        // Something comes due first (a window closes): on a copy, kept only if the input is taken.
        var next = self
        next.advance(to: input.at)
        guard !next.board.isOver else { throw GameInput.refused("gameOver", "The game was over before this input's time.") }
        try next.board.apply(input)
        next.inputs.append(input)
        self = next
    }

    /// The game replayed from its saved inputs: each at its time, then advanced to `time`.
    static func replay(_ settings: GameSettings, seed: UInt64, step: String, inputs: [GameInput], time: Int64) throws(StepKitError) -> GameRun {
        var run = GameRun(board: settings.start(seed: seed, step: step))
        for input in inputs {
            guard input.at >= run.time else {
                throw StepKitError(.restore, code: "gameMismatch", message: "A saved game's inputs are not in the order of their times.")
            }
            try run.take(input)
        }
        run.advance(to: time)
        return run
    }
}
