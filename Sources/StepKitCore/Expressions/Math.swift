import Glibc
import StepKitBase

/// The C library's `log`, `exp` and `pow` under names that do not clash with the evaluator's
/// own (`ExpressionEvaluator` has `exp`-like operator names). None of them traps: a result with
/// no finite value is an infinity or NaN, which the evaluator turns into null.
enum Math {
    static func log(_ x: Double) -> Double { Glibc.log(x) }
    static func exp(_ x: Double) -> Double { Glibc.exp(x) }
    static func pow(_ x: Double, _ y: Double) -> Double { Glibc.pow(x, y) }
}
