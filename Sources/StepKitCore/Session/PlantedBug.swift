#if STEPKIT_HARDENING
import Glibc
import StepKitBase

/// Bugs planted on purpose, to show that the fuzz oracles catch the kind of bug they are for
/// (docs/reliability.md, the `answers` target): compiled only into hardening builds
/// (`-DSTEPKIT_HARDENING`, hardening/fuzz/run) and active only when the environment variable
/// `STEPKIT_PLANT_BUG` names one, read once.
enum PlantedBug {
    /// `refusal-drops-answer`: a refused call (without autosave) drops the current step's answer,
    /// breaking "a refused call changes nothing" (`Session`), which the `answers` target's
    /// shadow session is there to catch.
    static let refusalDropsAnswer: Bool = {
        guard let name = getenv("STEPKIT_PLANT_BUG") else { return false }
        return String(cString: name) == "refusal-drops-answer"
    }()

    static func afterRefusal(_ s: inout Session) {
        guard refusalDropsAnswer, let index = s.currentIndex else { return }
        s.answers[index] = nil
    }
}
#endif
