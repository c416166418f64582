/// Total arithmetic on clock values and durations (milliseconds as `Int64`) and on the counts
/// that grow with them (samples, bytes).
///
/// A host clock may return any `Int64` (INT64_MIN, INT64_MAX, a jump back of centuries) and
/// restoration data may carry any elapsed time, so no computation on them may trap: every sum and
/// difference of times goes through these, and saturates at the ends of `Int64` instead of
/// overflowing. Saturation keeps order (a later time never comes out earlier), which is what the
/// engine's comparisons of times need.
///
/// `@inlinable`: generic, and used by the modules above on every tick and step.
extension FixedWidthInteger where Self: SignedInteger {
    /// `self + other`, or `max` / `min` when the true sum lies beyond them.
    @inlinable package func addingSaturated(_ other: Self) -> Self {
        let (sum, overflow) = addingReportingOverflow(other)
        guard overflow else { return sum }
        return other > 0 ? .max : .min
    }

    /// `self - other`, or `max` / `min` when the true difference lies beyond them.
    @inlinable package func subtractingSaturated(_ other: Self) -> Self {
        let (difference, overflow) = subtractingReportingOverflow(other)
        guard overflow else { return difference }
        return other < 0 ? .max : .min
    }

    /// `self * other`, or `max` / `min` when the true product lies beyond them.
    @inlinable package func multipliedSaturated(by other: Self) -> Self {
        let (product, overflow) = multipliedReportingOverflow(by: other)
        guard overflow else { return product }
        return (self < 0) == (other < 0) ? .max : .min
    }

    /// `self` limited to `lower...upper` (`lower` wins if the bounds cross).
    @inlinable package func clamped(_ lower: Self, _ upper: Self) -> Self {
        Swift.max(lower, Swift.min(self, upper))
    }
}
