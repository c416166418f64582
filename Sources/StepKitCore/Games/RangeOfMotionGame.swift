import Glibc
import StepKitBase

/// ResearchKit's `ORKRangeOfMotionStep` (knee) and `ORKShoulderRangeOfMotionStep` (shoulder):
/// which joint, and which limb (`limbOption`, left or right: the predefined tasks' parameter).
struct RangeOfMotionSettings: Sendable, Equatable {
    var joint = "knee"
    var limbOption = "left"

    static let joints = ["knee", "shoulder"]
    static let limbs = ["left", "right"]

    static func parse(_ r: FieldReader) -> RangeOfMotionSettings? {
        var s = RangeOfMotionSettings()
        s.joint = r.choice("joint", of: joints) ?? s.joint
        s.limbOption = r.choice("limbOption", of: limbs) ?? s.limbOption
        return s
    }
}

/// Range of motion (docs/active-tasks.md): the host holds the device against the limb and
/// pushes its attitude as `sample`s; the participant moves the limb as far as it goes and taps
/// the screen (any `tap`), which ends the test. No chance: the result is a function of the
/// samples alone.
///
/// Each sample gives one angle in degrees: a sample with `w` is an attitude quaternion (x, y, z,
/// w), normalized, whose angle is its rotation about the device's x axis, atan2(2(wx + yz),
/// 1 − 2(x² + z²)) (the pitch with the device in portrait, continuous through 90°); a sample
/// without `w` gives the angle itself as `x` (a host that has Euler angles, such as a browser's
/// `beta`). Angles are unwrapped: each is taken as the one of a, a ± 360 nearest the previous
/// sample's, so a movement through ±180° does not jump.
struct RangeOfMotionGame: GameRules {
    let settings: RangeOfMotionSettings
    private(set) var count = 0
    private(set) var start: Double?
    private(set) var last: Double?
    private(set) var minimum: Double?
    private(set) var maximum: Double?
    private(set) var finished = false
    private(set) var finishedAt: Int64?

    init(settings: RangeOfMotionSettings) {
        self.settings = settings
    }

    var isOver: Bool { finished }
    var nextDue: Int64? { nil }
    mutating func advance(to time: Int64) {}

    /// The device angle of `input` (degrees, before unwrapping), or a refusal.
    static func angle(_ input: GameInput) throws(StepKitError) -> Double {
        guard let w = input.w else {
            guard abs(input.x) <= 360 else {
                throw GameInput.refused("outOfRange", "A sample without \"w\" gives the device's angle as \"x\", in degrees from -360 to 360.")
            }
            return input.x
        }
        let (x, y, z) = (input.x, input.y, input.z)
        let norm = (x * x + y * y + z * z + w * w).squareRoot()
        guard abs(x) <= 1, abs(y) <= 1, abs(z) <= 1, abs(w) <= 1, norm >= 0.5 else {
            throw GameInput.refused("outOfRange", "An attitude quaternion's x, y, z and w are each from -1 to 1, and it is a unit quaternion (length near 1).")
        }
        let (qx, qy, qz, qw) = (x / norm, y / norm, z / norm, w / norm)
        return atan2(2 * (qw * qx + qy * qz), 1 - 2 * (qx * qx + qz * qz)) * 180 / Double.pi
    }

    mutating func apply(_ input: GameInput) throws(StepKitError) {
        switch input.kind {
        case .sample:
            var a = try RangeOfMotionGame.angle(input)
            if let last {
                if a - last > 180 { a -= 360 } else if last - a > 180 { a += 360 }
            }
            count += 1
            if start == nil { start = a }
            last = a
            minimum = min(minimum ?? a, a)
            maximum = max(maximum ?? a, a)
        case .tap:
            guard count > 0 else {
                throw GameInput.refused("notYet", "The test ends with a tap once the device has sent its attitude (a sample).")
            }
            finished = true
            finishedAt = input.at
        case .key, .drag, .touch:
            throw GameInput.refused("wrongInput", "The range of motion test takes the device's attitude as samples, and a tap to finish.")
        }
    }

    /// Flexed and extended: the knee test starts with the knee bent and ends with it stretched;
    /// the shoulder test starts with the arm down (extended) and ends with it raised (flexed).
    private var flexed: Double? { settings.joint == "knee" ? start : last }
    private var extended: Double? { settings.joint == "knee" ? last : start }

    private static func degrees(_ d: Double?) -> JSON { d.map { .number($0) } ?? .null }

    var stateJSON: JSONObject {
        JSONObject([
            "type": .string("rangeOfMotion"),
            "joint": .string(settings.joint),
            "limbOption": .string(settings.limbOption),
            "samples": .int(Int64(count)),
            "angle": RangeOfMotionGame.degrees(last),
            "start": RangeOfMotionGame.degrees(start),
            "minimum": RangeOfMotionGame.degrees(minimum),
            "maximum": RangeOfMotionGame.degrees(maximum),
            "over": .bool(isOver),
        ])
    }

    var resultJSON: JSONObject {
        JSONObject([
            "joint": .string(settings.joint),
            "limbOption": .string(settings.limbOption),
            "numberOfSamples": .int(Int64(count)),
            "start": RangeOfMotionGame.degrees(start),
            "finish": RangeOfMotionGame.degrees(last),
            "minimum": RangeOfMotionGame.degrees(minimum),
            "maximum": RangeOfMotionGame.degrees(maximum),
            "range": RangeOfMotionGame.degrees(maximum.flatMap { mx in minimum.map { mx - $0 } }),
            "flexed": RangeOfMotionGame.degrees(flexed),
            "extended": RangeOfMotionGame.degrees(extended),
            "finished": .bool(finished),
            "finishTime": finishedAt.map(GameInput.seconds) ?? .null,
        ])
    }
}
