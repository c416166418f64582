import StepKitBase

/// ResearchKit's `ORKAmslerGridStep`: which eye is tested (`eyeSide`), and StepKit's `gridSize`,
/// the squares along each side of the grid the host draws (20: the Amsler chart's 20 × 20
/// squares of 5 mm).
struct AmslerGridSettings: Sendable, Equatable {
    var eyeSide = "notSpecified"
    var gridSize = 20

    static let eyeSides = ["notSpecified", "left", "right"]

    static func parse(_ r: FieldReader) -> AmslerGridSettings? {
        var s = AmslerGridSettings()
        s.eyeSide = r.choice("eyeSide", of: eyeSides) ?? s.eyeSide
        s.gridSize = r.integer("gridSize", in: 2...40) ?? s.gridSize
        return s
    }
}

/// The Amsler grid (docs/active-tasks.md): the host shows the grid to one eye; where the
/// participant sees lines wavy, broken or missing, they draw round it. The host sends the
/// drawing's points as `sample`s (x, y from 0 to 1 across the grid, from its top left), `key`
/// `"lift"` when the finger leaves the screen (the path is closed), `"clear"` to erase every
/// path, and `"done"` (or any `tap`) to end the test. No chance: the result is the drawing.
struct AmslerGridGame: GameRules {
    struct Point: Sendable, Equatable {
        let x: Double
        let y: Double
    }

    struct Path: Sendable, Equatable {
        var points: [Point] = []
        var start: Int64
        var end: Int64
        /// The squares the path marks (`cells`), worked out when it is closed.
        var cells: [Int] = []
    }

    /// At most this many points in a path: a bound on the cost of working out its squares.
    static let maximumPoints = 10_000

    let settings: AmslerGridSettings
    private(set) var paths: [Path] = []
    private(set) var drawing = false
    private(set) var cleared = 0
    private(set) var finishedAt: Int64?

    init(settings: AmslerGridSettings) {
        self.settings = settings
    }

    var isOver: Bool { finishedAt != nil }
    var nextDue: Int64? { nil }
    mutating func advance(to time: Int64) {}

    mutating func apply(_ input: GameInput) throws(StepKitError) {
        switch input.kind {
        case .sample:
            guard input.w == nil, (0...1).contains(input.x), (0...1).contains(input.y) else {
                throw GameInput.refused("outOfGrid", "A point of the drawing is x and y from 0 to 1 across the grid, from its top left (no \"w\").")
            }
            if drawing {
                guard paths[paths.count - 1].points.count < AmslerGridGame.maximumPoints else {
                    throw GameInput.refused("pathTooLong", "A path has at most \(AmslerGridGame.maximumPoints) points; lift the finger to start another.")
                }
                paths[paths.count - 1].points.append(Point(x: input.x, y: input.y))
                paths[paths.count - 1].end = input.at
            } else {
                paths.append(Path(points: [Point(x: input.x, y: input.y)], start: input.at, end: input.at))
                drawing = true
            }
        case .key where input.key == "lift":
            guard drawing else { throw GameInput.refused("noPath", "No path is being drawn.") }
            close()
        case .key where input.key == "clear":
            paths.removeAll()
            drawing = false
            cleared += 1
        case .key where input.key == "done", .tap:
            if drawing { close() }
            finishedAt = input.at
        case .key, .drag, .touch:
            throw GameInput.refused("wrongInput", "The Amsler grid takes the drawing's points (samples), and the keys \"lift\", \"clear\" and \"done\" (or a tap to finish).")
        }
    }

    private mutating func close() {
        paths[paths.count - 1].cells = AmslerGridGame.cells(of: paths[paths.count - 1].points, size: settings.gridSize)
        drawing = false
    }

    /// The squares a path marks, as row × size + column, in order: the squares its points lie in,
    /// and, for a path of three points or more closed into a polygon (last point back to the
    /// first), the squares whose centres lie inside it (even–odd rule).
    static func cells(of points: [Point], size: Int) -> [Int] {
        var marked = Array(repeating: false, count: size * size)
        let n = Double(size)
        for p in points {
            let column = min(Int(p.x * n), size - 1), row = min(Int(p.y * n), size - 1)
            marked[row * size + column] = true
        }
        if points.count >= 3 {
            for row in 0..<size {
                let cy = (Double(row) + 0.5) / n
                for column in 0..<size where !marked[row * size + column] {
                    let cx = (Double(column) + 0.5) / n
                    var inside = false
                    var j = points.count - 1
                    for i in points.indices {
                        let a = points[i], b = points[j]
                        if (a.y > cy) != (b.y > cy), cx < (b.x - a.x) * (cy - a.y) / (b.y - a.y) + a.x { inside.toggle() }
                        j = i
                    }
                    if inside { marked[row * size + column] = true }
                }
            }
        }
        return marked.indices.filter { marked[$0] }
    }

    private func cellJSON(_ cell: Int) -> JSON {
        .array([.int(Int64(cell % settings.gridSize)), .int(Int64(cell / settings.gridSize))])
    }

    var stateJSON: JSONObject {
        JSONObject([
            "type": .string("amslerGrid"),
            "eyeSide": .string(settings.eyeSide),
            "gridSize": .int(Int64(settings.gridSize)),
            "areas": .int(Int64(paths.count)),
            "drawing": .bool(drawing),
            "points": .int(Int64(drawing ? paths[paths.count - 1].points.count : 0)),
            "over": .bool(isOver),
        ])
    }

    var resultJSON: JSONObject {
        var all = Set<Int>()
        let areas: [JSON] = paths.indices.map { i in
            let path = paths[i]
            let cells = drawing && i == paths.count - 1 ? AmslerGridGame.cells(of: path.points, size: settings.gridSize) : path.cells
            all.formUnion(cells)
            let xs = path.points.map(\.x), ys = path.points.map(\.y)
            return .object([
                "startTime": GameInput.seconds(path.start),
                "endTime": GameInput.seconds(path.end),
                "points": .array(path.points.map { .array([.number($0.x), .number($0.y)]) }),
                "bounds": .object([
                    "minX": .number(xs.min() ?? 0), "minY": .number(ys.min() ?? 0),
                    "maxX": .number(xs.max() ?? 0), "maxY": .number(ys.max() ?? 0),
                ]),
                "cells": .array(cells.map(cellJSON)),
            ])
        }
        return JSONObject([
            "eyeSide": .string(settings.eyeSide),
            "gridSize": .int(Int64(settings.gridSize)),
            "numberOfAreas": .int(Int64(paths.count)),
            "areas": .array(areas),
            "markedCells": .array(all.sorted().map(cellJSON)),
            "cleared": .int(Int64(cleared)),
            "finished": .bool(isOver),
        ])
    }
}
