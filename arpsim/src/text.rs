//! Text rules shared by every message of the crate: how a piece of input
//! is quoted, how alternatives are listed. A leaf module: it uses nothing of the crate, so both the
//! types and the errors can use it.

/// Most characters of input an error message quotes.
pub const QUOTE_CHARS: usize = 80;

/// `input` in backticks for an error message: at most [`QUOTE_CHARS`]
/// characters, then `…` and the input's length, so that a huge field
/// cannot make a huge message (the error's location gives the position).
pub fn quote(input: &str) -> String {
    match input.char_indices().nth(QUOTE_CHARS) {
        None => format!("`{input}`"),
        Some((cut, _)) => format!("`{}…` ({} bytes)", &input[..cut], input.len()),
    }
}

/// Alternatives for a message: `a`, `a or b`, `a, b or c`.
pub fn one_of<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let names: Vec<&str> = names.into_iter().collect();
    match names.split_last() {
        None => String::new(),
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_are_cut_at_80_characters() {
        assert_eq!(quote("abc"), "`abc`");
        let exact = "é".repeat(QUOTE_CHARS);
        assert_eq!(quote(&exact), format!("`{exact}`"));
        let long = "x".repeat(5000);
        assert_eq!(quote(&long), format!("`{}…` (5000 bytes)", &long[..80]));
    }

    #[test]
    fn alternatives_are_joined_with_or() {
        assert_eq!(one_of([]), "");
        assert_eq!(one_of(["a"]), "a");
        assert_eq!(one_of(["a", "b"]), "a or b");
        assert_eq!(one_of(["a", "b", "c"]), "a, b or c");
    }
}
