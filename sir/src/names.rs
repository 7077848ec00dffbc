//! Lexical rules of XML 1.0 that the model's strings must follow.

/// XML 1.0 (5th ed.) production 4, `NameStartChar`.
fn is_name_start_char(c: char) -> bool {
    matches!(c,
        ':' | 'A'..='Z' | '_' | 'a'..='z'
        | '\u{C0}'..='\u{D6}' | '\u{D8}'..='\u{F6}' | '\u{F8}'..='\u{2FF}'
        | '\u{370}'..='\u{37D}' | '\u{37F}'..='\u{1FFF}' | '\u{200C}'..='\u{200D}'
        | '\u{2070}'..='\u{218F}' | '\u{2C00}'..='\u{2FEF}' | '\u{3001}'..='\u{D7FF}'
        | '\u{F900}'..='\u{FDCF}' | '\u{FDF0}'..='\u{FFFD}' | '\u{10000}'..='\u{EFFFF}')
}

/// XML 1.0 production 4a, `NameChar`.
fn is_name_char(c: char) -> bool {
    is_name_start_char(c)
        || matches!(c, '-' | '.' | '0'..='9' | '\u{B7}' | '\u{300}'..='\u{36F}' | '\u{203F}'..='\u{2040}')
}

/// XML 1.0 production 5, `Name`: what a DTD `ID`/`IDREF` value must be.
pub fn is_xml_name(s: &str) -> bool {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) if is_name_start_char(c) => chars.all(is_name_char),
        _ => false,
    }
}

/// Namespaces in XML 1.0, `NCName`: a `Name` without colons (attribute local
/// names and prefixes).
pub fn is_ncname(s: &str) -> bool {
    !s.contains(':') && is_xml_name(s)
}

/// XML 1.0 production 2, `Char`: characters a document may contain at all.
pub fn is_xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..='\u{10FFFF}')
}

/// True when every character of `s` can appear in an XML document.
pub fn is_xml_text(s: &str) -> bool {
    s.chars().all(is_xml_char)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_xml_production_5() {
        assert!(is_xml_name("u1"));
        assert!(is_xml_name("_42-1"));
        assert!(is_xml_name("a.b-c"));
        assert!(!is_xml_name("42-1"), "a Name cannot start with a digit");
        assert!(!is_xml_name(""));
        assert!(!is_xml_name("a b"));
        assert!(!is_ncname("m:x"));
    }

    #[test]
    fn control_characters_are_not_xml_chars() {
        assert!(is_xml_text("a\tb\n"));
        assert!(!is_xml_text("a\u{1}b"));
        assert!(!is_xml_text("\u{FFFE}"));
    }
}
