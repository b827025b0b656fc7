//! What `report` prints of what others named (a mount's name, a mount
//! destination a container's report line gives, an engine's name for a
//! container or its image): on a terminal, a control character is shown
//! as an escape, never sent (ESC would start a terminal sequence); in
//! Markdown, which a CI job's page renders as HTML, markup is shown as
//! text (`<script>` is never a tag).

/// Whether `c` is a character that changes how the text around it reads
/// without being seen: the bidirectional controls (which reorder what
/// follows: U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C) and
/// the zero-width and invisible ones (U+200B-U+200D, U+2060-U+2064,
/// U+FEFF, U+00AD, U+180E).
pub fn unseen(c: char) -> bool {
    matches!(c,
        '\u{202a}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}'
            | '\u{200b}'..='\u{200f}'
            | '\u{061c}'
            | '\u{2060}'..='\u{2064}'
            | '\u{feff}'
            | '\u{00ad}'
            | '\u{180e}')
}

/// `text` with every control character but the newline, and every
/// [`unseen`] one, shown as an escape (`\u{1b}`, `\u{202e}`).
pub fn visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if (c.is_control() && c != '\n') || unseen(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// `text` as Markdown that renders as this very text: `<`, `>` and `&`
/// as HTML entities (no tag, no entity of the text's own), each other
/// ASCII punctuation mark Markdown may read as markup behind a backslash,
/// and control characters shown as escapes.
pub fn markup_free(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in visible(text).chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            c if "\\`*_{}[]()#+-.!|~\"'".contains(c) => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_and_markup_is_text() {
        let name = "/mnt/\u{1b}]0;owned\u{7}\u{1b}[2J<script>alert(1)</script> (tmpfs on x)";
        let shown = visible(name);
        assert!(!shown.chars().any(|c| c.is_control()), "{shown}");
        assert_eq!(
            shown,
            "/mnt/\\u{1b}]0;owned\\u{7}\\u{1b}[2J<script>alert(1)</script> (tmpfs on x)"
        );
        assert_eq!(visible("a\nb\tc"), "a\nb\\tc");
        // A name that reads backwards, or hides a part, is shown as it is.
        let bidi = "img\u{202e}gpj.exe\u{200b}";
        assert_eq!(visible(bidi), "img\\u{202e}gpj.exe\\u{200b}");
        assert!(!markup_free(bidi).chars().any(unseen));
        let markdown = markup_free(name);
        assert!(!markdown.contains(['<', '>']), "{markdown}");
        assert!(
            markdown.contains("&lt;script&gt;alert\\(1\\)"),
            "{markdown}"
        );
        assert_eq!(
            markup_free("a|b `c` [d](e) &amp;"),
            "a\\|b \\`c\\` \\[d\\]\\(e\\) &amp;amp;"
        );
    }
}
