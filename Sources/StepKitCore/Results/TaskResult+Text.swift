import StepKitBase

/// The task result (`stepkit_session_result`) written straight into the output buffer: the same
/// text, byte for byte, as `JSONWriter` makes of `resultJSON()` (the tree, which stays for
/// verification and as this writer's oracle in `ResultWriterTests`), without building the tree:
/// on a reused 24-step survey the tree's building, writing and freeing were three quarters of the
/// run (issue 36).
///
/// One function per object of the result, in the tree's key order; a field added to the tree
/// is added to the writer of its object in the same place (the test compares the two over every
/// example task and a seeded random walk).
extension Session {
    package func writeResult(to out: inout JSONOutput) {
        let time = endDate ?? now
        out.raw("{\"identifier\":")
        out.string(task.identifier)
        out.raw(",\"taskRunUUID\":")
        out.string(taskRunUUID)
        out.raw(",\"startDate\":")
        out.date(milliseconds: startDate)
        out.raw(",\"endDate\":")
        out.date(milliseconds: time)
        out.raw(",\"results\":[")
        writeStepResults(to: &out, now: time)
        out.raw("],\"timeSpent\":")
        out.number(Double(task.rules.timeLimits.isEmpty ? max(time.subtractingSaturated(startDate), 0) : taskTimeSpent(at: time)) / 1000)
        // The languages the run was shown in (first the one it started in), when it names any.
        if showsLanguage {
            out.raw(",\"language\":")
            out.string(language.text)
            out.raw(",\"languages\":[")
            for (i, used) in language.used.enumerated() {
                if i > 0 { out.byte(UInt8(ascii: ",")) }
                out.string(used)
            }
            out.byte(UInt8(ascii: "]"))
        }
        // The seed and the order each shuffled step and section was shown in (docs/randomization.md).
        if let seed {
            out.raw(",\"randomization\":{\"seed\":")
            out.int(Int64(seed))
            out.raw(",\"orders\":")
            out.value(.object(resultOrders(seed: seed)))
            out.byte(UInt8(ascii: "}"))
        }
        // The calculations on the path's answers, when the task defines any.
        if !task.calculations.isEmpty {
            out.raw(",\"calculations\":")
            out.value(calculationsJSON())
        }
        // SageResearch's async results: the files of recorders that ran across steps.
        if !task.asyncActions.isEmpty {
            out.raw(",\"asyncResults\":[")
            var first = true
            for run in actions.runs {
                for file in Session.fileResults(run.value, now: time) {
                    if !first { out.byte(UInt8(ascii: ",")) }
                    first = false
                    out.value(file)
                }
            }
            out.byte(UInt8(ascii: "]"))
        }
        out.byte(UInt8(ascii: "}"))
    }

    /// The path's step results, consecutive steps of one section under a section result, as deep
    /// as sections nest (what `SectionNesting` builds): `{identifier, startDate, endDate,
    /// results: [...]}`, its dates the first step's start and the last step's end, found by
    /// looking ahead when the section opens (its `endDate` is written before its results).
    private func writeStepResults(to out: inout JSONOutput, now time: Int64) {
        // The open sections, outermost first, and whether each has a result written yet.
        var open: [Int] = []
        var written: [Bool] = []
        var topWritten = false
        let last = path.count - 1
        // A repeating section's visits are written together, nested per instance, as the tree
        // writes them (`stepBlockResult`).
        var next = 0
        for i in path.indices where i >= next {
            let visit = path[i]
            guard let step = task.step(at: visit.stepIndex) else { continue }
            let block = task.rules.blockOfStep[visit.stepIndex]
            let sections = block == nil ? step.sections : Array(step.sections.dropLast())
            var keep = 0
            while keep < open.count && keep < sections.count && open[keep] == sections[keep] { keep += 1 }
            while open.count > keep {
                open.removeLast()
                written.removeLast()
                out.raw("]}")
            }
            var depth = open.count
            while depth < sections.count {
                Session.separate(&out, &written, &topWritten)
                out.raw("{\"identifier\":")
                out.string(task.section(at: sections[depth])?.identifier ?? "")
                out.raw(",\"startDate\":")
                out.date(milliseconds: visit.startDate)
                out.raw(",\"endDate\":")
                out.date(milliseconds: sectionEnd(from: i, sections: sections, depth: depth, now: time))
                out.raw(",\"results\":[")
                open.append(sections[depth])
                written.append(false)
                depth += 1
            }
            Session.separate(&out, &written, &topWritten)
            if let block {
                let result = stepBlockResult(block: block, from: i, now: time)
                out.value(result.json)
                next = result.end
                continue
            }
            let isCurrent = i == last && !isFinished
            writeStepResult(step: step, visit: visit, isCurrent: isCurrent, now: time, to: &out)
        }
        for _ in open { out.raw("]}") }
    }

    /// A comma before a result when its list has one already.
    private static func separate(_ out: inout JSONOutput, _ written: inout [Bool], _ topWritten: inout Bool) {
        if let innermost = written.indices.last {
            if written[innermost] { out.byte(UInt8(ascii: ",")) }
            written[innermost] = true
        } else {
            if topWritten { out.byte(UInt8(ascii: ",")) }
            topWritten = true
        }
    }

    /// The end of the section `sections[depth]` opened at visit `start`: the end of the last of the
    /// consecutive visits from there whose steps are in it (within the same enclosing sections).
    private func sectionEnd(from start: Int, sections: [Int], depth: Int, now time: Int64) -> Int64 {
        var end = path[start].endDate ?? time
        var i = start + 1
        while i < path.count {
            let visit = path[i]
            i += 1
            guard let step = task.step(at: visit.stepIndex) else { continue }
            let theirs = step.sections
            guard theirs.count > depth else { break }
            var same = true
            for d in 0...depth where theirs[d] != sections[d] { same = false; break }
            guard same else { break }
            end = visit.endDate ?? time
        }
        return end
    }

    /// One visit's step result and its question results (`StepResult.json`).
    private func writeStepResult(step: Step, visit: Visit, isCurrent: Bool, now time: Int64, to out: inout JSONOutput) {
        let answer = visit.skipped ? nil : (isCurrent ? answers[visit.stepIndex].map { visibleAnswer($0, step: visit.stepIndex) } : visit.answer)
        // The time counted toward time limits; a task without any counts by the dates.
        let spent = task.rules.timeLimits.isEmpty ? max((visit.endDate ?? time).subtractingSaturated(visit.startDate), 0)
            : timing.visit(visit.spent, at: time, isCurrent: isCurrent)
        out.raw("{\"identifier\":")
        out.string(step.identifier)
        out.raw(",\"startDate\":")
        // The two dates are written once and copied into each question result.
        let dates = out.byteCount
        out.date(milliseconds: visit.startDate)
        out.raw(",\"endDate\":")
        out.date(milliseconds: visit.endDate ?? time)
        out.raw(",\"results\":[")
        switch step.content {
        case .message:
            // An active step's results are its recorders' files.
            var first = true
            for run in visit.active?.recorders ?? [] {
                for file in Session.fileResults(run, now: time) {
                    if !first { out.byte(UInt8(ascii: ",")) }
                    first = false
                    out.value(file)
                }
            }
            // A game step's result (`Games/`), as `StepResult.json` gives it.
            if let game = visit.active?.game {
                if !first { out.byte(UInt8(ascii: ",")) }
                out.value(Session.gameResult(game, step: step, start: .string(CivilTime.iso8601(milliseconds: visit.startDate)),
                                             end: .string(CivilTime.iso8601(milliseconds: visit.endDate ?? time))))
            }
        case .question(let format):
            if let repeating = format.rules as? RepeatingFormat {
                out.value(StepResult.instances(step.identifier, repeating, answer, visit: visit, now: time))
            } else {
                Session.writeQuestionResult(step.identifier, format, answer, dates: dates, to: &out)
            }
        case .form(let form):
            let given = answer?.objectValue
            // A page's results are named `page.substep`, as the tree names them (`StepResult`).
            let prefix = step.isPage ? step.identifier + "." : ""
            var first = true
            for item in form.items where !(isCurrent ? !isVisible(item.identifier, step: visit.stepIndex) : visit.hiddenItems.contains(item.identifier)) {
                if !first { out.byte(UInt8(ascii: ",")) }
                first = false
                if let repeating = item.format.rules as? RepeatingFormat {
                    // A repeating block's instances, as the tree writes them (`StepResult.instances`).
                    out.value(StepResult.instances(prefix + item.identifier, repeating, given?[item.identifier], visit: visit, now: time))
                } else {
                    Session.writeQuestionResult(prefix + item.identifier, item.format, given?[item.identifier], dates: dates, to: &out)
                }
            }
        }
        // The time counted on the visit (seconds): not the time between its dates when the
        // run was saved away and restored in between (`TimeCount`).
        out.raw("],\"timeSpent\":")
        out.number(Double(spent) / 1000)
        // A consent review's record (`ConsentRecord`), as `StepResult.json` adds it.
        if case .consentReview(let document)? = step.hosted {
            out.raw(",\"consent\":")
            out.value(ConsentRecord.record(document: document, answer: answer, date: .string(CivilTime.iso8601(milliseconds: visit.endDate ?? time))))
        }
        out.byte(UInt8(ascii: "}"))
    }

    /// `"<start>","endDate":"<end>"`: two quoted dates and the key between them.
    static let datesByteCount = 26 + 11 + 26

    /// One question result; its dates copied from the step result's, written at `dates`
    /// (`"<start>","endDate":"<end>"`).
    private static func writeQuestionResult(_ identifier: String, _ format: AnswerFormat, _ answer: JSON?, dates: Int, to out: inout JSONOutput) {
        out.raw("{\"identifier\":")
        out.string(identifier)
        out.raw(",\"type\":")
        out.string(format.resultType.rawValue)
        out.raw(",\"answer\":")
        out.value(answer)
        out.raw(",\"startDate\":")
        out.repeatBytes(at: dates, count: Session.datesByteCount)
        if let unit = format.rules.unit {
            out.raw(",\"unit\":")
            out.string(unit)
        }
        if let codings = StepResult.codings(format, answer) {
            out.raw(",\"codings\":")
            out.value(.array(codings))
        }
        out.byte(UInt8(ascii: "}"))
    }
}
