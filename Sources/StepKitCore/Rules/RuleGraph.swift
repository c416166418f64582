import StepKitBase

/// The task's steps as a graph whose edges are every way navigation can go, worked out once at
/// compile time so that progress costs nothing per step.
///
/// A step with a skip rule (or in a section with one) may be passed over, so it counts 0 towards
/// the fewest steps still to come; every step counts 1 towards the most. The most is unbounded
/// (nil) where a loop can be reached.
struct RuleGraph: Sendable {
    /// Per step: the steps navigation can go to after it (`steps.count` stands for the end).
    let successors: [[Int]]
    /// Per step: the fewest steps that can still be shown after leaving it (nil: no way to end).
    let fewestAfter: [Int?]
    /// Per step: the most steps that can still be shown after leaving it (nil: unbounded).
    let mostAfter: [Int?]

    init(_ routing: Routing) {
        let n = routing.steps.count
        var successors: [[Int]] = []
        successors.reserveCapacity(n)
        for i in 0..<n {
            // Sorted, then each target once, in place (a step has a handful of edges: no set
            // needed, and no second array).
            var targets: [Int] = []
            routing.forEachMove(leaving: i) { targets.append($0.target ?? n) }
            targets.sort()
            var kept = 0
            for j in targets.indices where kept == 0 || targets[kept - 1] != targets[j] {
                targets[kept] = targets[j]
                kept += 1
            }
            targets.removeLast(targets.count - kept)
            successors.append(targets)
        }
        self.successors = successors
        let skippable = (0..<n).map { routing.skippable($0) }
        let fewest = RuleGraph.fewest(PredecessorTable(successors), skippable: skippable)
        let longest = RuleGraph.longest(successors)
        fewestAfter = successors.map { next in
            next.compactMap { fewest[ifPresent: $0] ?? nil }.min()
        }
        mostAfter = successors.map { next in
            var most = 0
            for s in next {
                guard longest.indices.contains(s), let l = longest[s] else { return nil }
                most = max(most, l)
            }
            return most
        }
    }

    /// Per node (`successors.count` stands for the end): the steps that lead to it in one move,
    /// in step order. Built when needed (compiling, checking), not kept with the task.
    static func predecessors(_ successors: [[Int]]) -> [[Int]] {
        let n = successors.count
        var predecessors = Array(repeating: [Int](), count: n + 1)
        for (v, next) in successors.enumerated() {
            for s in next where s >= 0 && s <= n { predecessors[s].append(v) }
        }
        return predecessors
    }

    /// `predecessors(_:)` in two flat arrays (node `s`'s predecessors are
    /// `sources[start[s]..<start[s + 1]]`, in step order), for the compile: a list per node
    /// grown edge by edge was most of working out the fewest steps (`benchmarks/README.md`,
    /// issue 36).
    struct PredecessorTable {
        private(set) var start: [Int]
        private(set) var sources: [Int]

        init(_ successors: [[Int]]) {
            let n = successors.count
            // Nodes 0...n; start[s + 2] first counts the edges into s.
            var start = Array(repeating: 0, count: n + 3)
            var edges = 0
            for next in successors {
                for s in next where s >= 0 && s <= n {
                    start[s + 2] += 1
                    edges += 1
                }
            }
            // Summed, start[s + 1] is where s's sources begin; filling moves it on to where they
            // end, which is where s + 1's begin: after it, s's are start[s]..<start[s + 1].
            for k in stride(from: 2, to: n + 3, by: 1) { start[k] += start[k - 1] }
            var sources = Array(repeating: 0, count: edges)
            for (v, next) in successors.enumerated() {
                for s in next where s >= 0 && s <= n {
                    sources[start[s + 1]] = v
                    start[s + 1] += 1
                }
            }
            self.start = start
            self.sources = sources
        }

        /// Nodes, the end (`successors.count`) included.
        var count: Int { start.count - 2 }
    }

    /// Fewest steps shown from each node to the end, the node included: 0-1 breadth-first search
    /// from the end over reversed edges.
    private static func fewest(_ predecessors: PredecessorTable, skippable: [Bool]) -> [Int?] {
        let n = predecessors.count - 1
        guard n >= 0 else { return [] }
        var distance = Array(repeating: Int.max, count: n + 1)
        distance[n] = 0
        var front: [Int] = [], back: [Int] = [n]
        var head = 0
        while !front.isEmpty || head < back.count {
            let node: Int
            if let f = front.popLast() {
                node = f
            } else {
                node = back[head]
                head += 1
            }
            let base = distance[node]
            for e in predecessors.start[node]..<predecessors.start[node + 1] {
                let v = predecessors.sources[e]
                let w = skippable[v] ? 0 : 1
                if base + w < distance[v] {
                    distance[v] = base + w
                    if w == 0 { front.append(v) } else { back.append(v) }
                }
            }
        }
        return distance.map { $0 == Int.max ? nil : $0 }
    }

    /// Most steps shown from each node to the end, the node included; nil where a loop can be
    /// reached. Components come after everything they reach, which is the order the sums need.
    private static func longest(_ successors: [[Int]]) -> [Int?] {
        let n = successors.count
        let count = n + 1
        func next(_ v: Int) -> [Int] { v < n ? successors[v] : [] }
        var result = Array<Int?>(repeating: nil, count: count)
        StronglyConnected.components(count: count, successors: next) { component, looping in
            for u in component {
                if looping { result[u] = nil; continue }
                if u == n { result[u] = 0; continue }
                var most = 0
                var bounded = true
                for s in next(u) {
                    guard s >= 0 && s < count, let l = result[s] else { bounded = false; break }
                    most = max(most, l)
                }
                result[u] = bounded ? most + 1 : nil
            }
        }
        return result
    }
}
