//! Text from plugins and models made safe to show: control and escape
//! sequences escaped before a terminal sees them, and long text clipped
//! before an error message repeats it.

use std::borrow::Cow;

/// Whether `c` could drive a terminal or reorder what it shows: C0 and C1
/// controls (ESC starts every escape sequence), DEL, and the bidirectional
/// overrides and isolates.
fn is_unsafe(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every unsafe character written as a visible escape
/// (`\u{1b}`); newlines and tabs are kept. Borrowed when nothing changes.
pub fn terminal_safe(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_unsafe(c) {
            out.push_str(&c.escape_unicode().to_string());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// At most `max` characters of `text`, with how much was left out when it
/// was cut (for error messages that would otherwise echo a huge value).
pub fn clip(text: &str, max: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max) {
        None => Cow::Borrowed(text),
        Some((end, _)) => Cow::Owned(format!(
            "{}… [{} more bytes]",
            &text[..end],
            text.len() - end
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_drive_nothing_and_plain_text_is_untouched() {
        let hostile = "ok\u{1b}]52;c;cHduZWQ=\u{7}\u{1b}[2J\r\u{9b}31m\u{202e}gnp.exe\nnext\tcol";
        let safe = terminal_safe(hostile);
        assert!(!safe.chars().any(is_unsafe), "{safe}");
        assert!(
            safe.contains("\\u{1b}]52") && safe.contains("\\u{202e}"),
            "{safe}"
        );
        assert!(safe.contains("\nnext\tcol"));
        assert!(matches!(terminal_safe("plain — text ✓"), Cow::Borrowed(_)));
    }

    #[test]
    fn clip_names_what_it_left_out() {
        assert_eq!(clip("short", 10), "short");
        assert_eq!(clip("ééééé", 2), "éé… [6 more bytes]");
    }
}
