import StepKitBase

/// The consent record in a consent review step's result, and the signed document
/// (`stepkit_session_consent_document`): the reviewed text with the participant's names, the
/// date of consent and a reference to the signature file, as Markdown and as HTML. The engine
/// writes no PDF; a host that wants one prints the HTML.
enum ConsentRecord {
    /// `result` (a consent review step's result) with `consent`: whether the participant agreed,
    /// the document's version and SHA-256, the names given and the date (the visit's end).
    static func adding(to result: JSON, document: ConsentDocument, answer: JSON?, date: JSON) -> JSON {
        guard case .object(var fields) = result else { return result }
        fields["consent"] = record(document: document, answer: answer, date: date)
        return .object(fields)
    }

    static func record(document: ConsentDocument, answer: JSON?, date: JSON) -> JSON {
        let given = answer?.objectValue
        var record = JSONObject([
            "consented": .bool(given?["consented"] == .bool(true)),
            "documentVersion": .string(document.version),
            "documentSHA256": .string(document.sha256),
            "signatureDate": date,
        ])
        for key in ["givenName", "familyName"] {
            if let name = given?[key]?.stringValue { record[key] = .string(name) }
        }
        return .object(record)
    }
}

extension Session {
    /// The signed consent document of this run: the task's consent review step's latest answer
    /// and the latest signature on the path. Refused when the task has no consent review step.
    package func consentDocument() throws(StepKitError) -> JSON {
        guard let index = task.steps.firstIndex(where: { if case .consentReview? = $0.hosted { return true } else { return false } }),
              let document = task.steps[ifPresent: index]?.hosted?.consentDocument else {
            throw StepKitError(.state, code: "noConsentReview", message: "The task has no consent review step, so there is no signed document.")
        }
        let position = path.latestPosition(of: index)
        let visit = position.flatMap { path[ifPresent: $0] }
        let isCurrent = position == path.count - 1 && !isFinished
        let answer = isCurrent ? answers[index] : visit?.answer
        let date: JSON = visit.map { .string(CivilTime.iso8601(milliseconds: $0.endDate ?? now)) } ?? .null
        let record = ConsentRecord.record(document: document, answer: answer, date: date)
        // The latest signature the participant gave on the path.
        var signature: JSON = .null
        for i in path.indices.reversed() {
            let v = path[i]
            guard task.step(at: v.stepIndex)?.hosted?.reportKind == .signature, !v.skipped else { continue }
            let current = i == path.count - 1 && !isFinished
            if let s = current ? answers[v.stepIndex] : v.answer { signature = s; break }
        }
        let blocks = ConsentRecord.blocks(document, record: record, signature: signature)
        var out = record.objectValue ?? JSONObject()
        out["signature"] = signature
        out["markdown"] = .string(ConsentRecord.markdown(blocks))
        out["html"] = .string(ConsentRecord.html(blocks, title: document.title))
        return .object(out)
    }
}

extension ConsentRecord {
    enum Block { case title(String), heading(String), paragraph(String) }

    /// The document's blocks, then the signature page.
    static func blocks(_ document: ConsentDocument, record: JSON, signature: JSON) -> [Block] {
        var blocks: [Block] = [.title(document.title), .paragraph("Version \(document.version)")]
        for section in document.sections {
            blocks.append(.heading(section.title))
            for p in paragraphs(section.content ?? section.summary ?? "") { blocks.append(.paragraph(p)) }
        }
        let r = record.objectValue ?? JSONObject()
        let consented = r["consented"] == .bool(true)
        let names = [r["givenName"]?.stringValue, r["familyName"]?.stringValue].compactMap { $0 }.joined(separator: " ")
        blocks.append(.heading(document.signaturePageTitle))
        blocks.append(.paragraph("Participant: " + (names.isEmpty ? "(not given)" : names)))
        blocks.append(.paragraph(consented ? "Consented: yes" : "Consented: no"))
        if let date = r["signatureDate"]?.stringValue { blocks.append(.paragraph("Date: " + date)) }
        if let s = signature.objectValue, let name = s["fileName"]?.stringValue, let digest = s["sha256"]?.stringValue {
            blocks.append(.paragraph("Signature: \(name) (\(s["contentType"]?.stringValue ?? "")), SHA-256 \(digest)"))
        } else {
            blocks.append(.paragraph("Signature: (none)"))
        }
        blocks.append(.paragraph("Document SHA-256: \(document.sha256)"))
        return blocks
    }

    private static func paragraphs(_ text: String) -> [String] {
        var out: [String] = []
        var current: [Substring] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.allSatisfy({ $0 == " " || $0 == "\t" || $0 == "\r" }) {
                if !current.isEmpty { out.append(current.joined(separator: "\n")); current = [] }
            } else {
                current.append(line)
            }
        }
        if !current.isEmpty { out.append(current.joined(separator: "\n")) }
        return out
    }

    static func markdown(_ blocks: [Block]) -> String {
        blocks.map { block -> String in
            switch block {
            case .title(let t): return "# " + t + "\n"
            case .heading(let t): return "## " + t + "\n"
            case .paragraph(let t): return t + "\n"
            }
        }.joined(separator: "\n")
    }

    /// A whole HTML document; every text is escaped (a definition's texts are plain text).
    static func html(_ blocks: [Block], title: String) -> String {
        var out = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>\(escape(title))</title></head><body>\n"
        for block in blocks {
            switch block {
            case .title(let t): out += "<h1>\(escape(t))</h1>\n"
            case .heading(let t): out += "<h2>\(escape(t))</h2>\n"
            case .paragraph(let t): out += "<p>\(escape(t).split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "<br>"))</p>\n"
            }
        }
        return out + "</body></html>\n"
    }

    static func escape(_ text: String) -> String {
        var out = ""
        for c in text.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }
}
