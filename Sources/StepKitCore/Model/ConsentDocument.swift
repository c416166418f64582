import StepKitBase

/// A task's consent document (`consentDocument`, ResearchKit's `ORKConsentDocument`): a title,
/// a version and sections of ResearchKit's section types. The visual consent step walks its
/// sections, the consent review step shows its text (`reviewText`) and records its version and
/// digest, and `Results/ConsentRendering.swift` renders it signed.
///
/// The digest is the SHA-256 of `reviewText` in UTF-8: the Markdown the participant was shown,
/// so anyone holding the text a result names can check it (docs/task-format.md, "Consent").
final class ConsentDocument: Sendable {
    struct Section: Sendable {
        let type: String
        let title: String
        let summary: String?
        let content: String?

        /// Whether the visual consent step shows it (`onlyInDocument` sections are in the text only).
        var isVisual: Bool { type != "onlyInDocument" }
    }

    /// ResearchKit's section types, each with the title it has when the definition gives none
    /// (`custom` and `onlyInDocument` need one).
    static let sectionTypes: [(type: String, title: String?)] = [
        ("overview", "Welcome"), ("dataGathering", "Data Gathering"), ("privacy", "Privacy"),
        ("dataUse", "Data Use"), ("timeCommitment", "Time Commitment"), ("studySurvey", "Study Survey"),
        ("studyTasks", "Study Tasks"), ("withdrawing", "Withdrawing"), ("custom", nil), ("onlyInDocument", nil),
    ]

    let title: String
    let version: String
    let sections: [Section]
    /// `signaturePageTitle`: the heading of the signature part of the signed document.
    let signaturePageTitle: String
    /// The document as the participant reviews it (Markdown), and its SHA-256.
    let reviewText: String
    let sha256: String

    private init(title: String, version: String, sections: [Section], signaturePageTitle: String, sha256: (String) throws(StepKitError) -> String) throws(StepKitError) {
        self.title = title
        self.version = version
        self.sections = sections
        self.signaturePageTitle = signaturePageTitle
        let text = ConsentDocument.markdown(title: title, version: version, sections: sections)
        self.reviewText = text
        self.sha256 = try sha256(text)
    }

    /// Reads `consentDocument`, reporting every problem; nil when it has any.
    static func compile(_ value: JSON, at path: JSONPath, _ d: Diagnostics) -> ConsentDocument? {
        guard let r = FieldReader(value, at: path, d, what: "a consent document") else { return nil }
        let before = d.problems.count
        let title = r.string("title", required: true, nonEmpty: true)
        let version = r.string("version", required: true, nonEmpty: true)
        let signaturePageTitle = r.string("signaturePageTitle", nonEmpty: true) ?? "Consent"
        var sections: [Section] = []
        if let items = r.array("sections", required: true) {
            if items.isEmpty { d.error("emptySections", "A consent document needs at least one section.", at: path.key("sections")) }
            for (i, item) in items.enumerated() {
                if let section = compileSection(item, at: path.key("sections").index(i), d) { sections.append(section) }
            }
        }
        r.finish()
        guard d.problems.count == before, let title, let version else { return nil }
        do throws(StepKitError) {
            return try ConsentDocument(title: title, version: version, sections: sections, signaturePageTitle: signaturePageTitle) { (text: String) throws(StepKitError) in
                try Digest.sha256(text)
            }
        } catch {
            // The digest needs libcrypto (`Integrity/LibCrypto.swift`).
            d.error(error.problems.first?.code ?? "libcryptoUnavailable", error.problems.first?.message ?? "The document's digest could not be taken.", at: path)
            return nil
        }
    }

    private static func compileSection(_ value: JSON, at path: JSONPath, _ d: Diagnostics) -> Section? {
        guard let r = FieldReader(value, at: path, d, what: "a consent section") else { return nil }
        let before = d.problems.count
        let type = r.choice("type", of: sectionTypes.map(\.type), required: true)
        let title = r.string("title", nonEmpty: true)
        let summary = r.string("summary", nonEmpty: true)
        let content = r.string("content", nonEmpty: true)
        r.finish()
        guard let type, d.problems.count == before else { return nil }
        guard let shown = title ?? sectionTypes.first(where: { $0.type == type })?.title else {
            d.error("missingKey", "A \"\(type)\" section needs a \"title\".", at: path.key("title"))
            return nil
        }
        if summary == nil && content == nil {
            d.error("missingKey", "A consent section needs a \"summary\", a \"content\" or both.", at: path)
            return nil
        }
        return Section(type: type, title: shown, summary: summary, content: content)
    }

    /// The review text: the title, the version, then each section's title and its content (its
    /// summary when it has no content), paragraphs as written.
    static func markdown(title: String, version: String, sections: [Section]) -> String {
        var text = "# \(title)\n\nVersion \(version)\n"
        for section in sections {
            text += "\n## \(section.title)\n\n\(section.content ?? section.summary ?? "")\n"
        }
        return text
    }

    /// The sections as the visual consent step presents them.
    var visualSectionsJSON: JSON {
        .array(sections.filter(\.isVisual).map(\.json))
    }

    /// The document as the consent review step presents it.
    var reviewJSON: JSON {
        .object(["title": .string(title), "version": .string(version), "markdown": .string(reviewText),
                 "sha256": .string(sha256), "sections": .array(sections.map(\.json))])
    }
}

extension ConsentDocument.Section {
    var json: JSON {
        var fields = JSONObject(["type": .string(type), "title": .string(title)])
        if let summary { fields["summary"] = .string(summary) }
        if let content { fields["content"] = .string(content) }
        return .object(fields)
    }
}
