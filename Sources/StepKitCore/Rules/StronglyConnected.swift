import StepKitBase

/// Tarjan's strongly connected components over nodes `0..<count`, iterative (tasks may have
/// 100,000 steps, too deep for recursion). `emit` receives each component, with whether it loops
/// (more than one node, or a node with an edge to itself), after every component it can reach:
/// the order sums over the rule graph need. Edges to nodes outside `0..<count` are ignored.
/// The component `emit` is given lives in a buffer reused for the next (one that `emit` keeps
/// is copied then).
enum StronglyConnected {
    static func components(count: Int, successors: (Int) -> [Int], emit: (_ component: [Int], _ looping: Bool) -> Void) {
        var index = Array(repeating: -1, count: count)
        var low = Array(repeating: 0, count: count)
        var onStack = Array(repeating: false, count: count)
        var stack: [Int] = []
        var counter = 0
        // The walk's frames and each component gathered in buffers made once, not per root and
        // per component.
        var work: [(node: Int, edge: Int)] = []
        var component: [Int] = []
        for root in 0..<count where index[root] < 0 {
            work.append((root, 0))
            index[root] = counter; low[root] = counter; counter += 1
            stack.append(root); onStack[root] = true
            while let top = work.last {
                let v = top.node
                let edges = successors(v)
                if top.edge < edges.count {
                    work[work.count - 1].edge += 1
                    let w = edges[top.edge]
                    guard w >= 0 && w < count else { continue }
                    if index[w] < 0 {
                        index[w] = counter; low[w] = counter; counter += 1
                        stack.append(w); onStack[w] = true
                        work.append((w, 0))
                    } else if onStack[w] {
                        low[v] = min(low[v], index[w])
                    }
                    continue
                }
                work.removeLast()
                if let parent = work.last { low[parent.node] = min(low[parent.node], low[v]) }
                guard low[v] == index[v] else { continue }
                component.removeAll(keepingCapacity: true)
                while let w = stack.popLast() {
                    onStack[w] = false
                    component.append(w)
                    if w == v { break }
                }
                emit(component, component.count > 1 || edges.contains(v))
            }
        }
    }
}
