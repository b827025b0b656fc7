//! What `report` prints of what others named (a mount's name, a mount
//! destination a container's report line gives, an engine's name for a
//! container or its image): on a terminal, a control character is shown
//! as an escape, never sent (ESC would start a terminal sequence); in
//! Markdown, which a CI job's page renders as HTML, markup is shown as
//! text (`<script>` is never a tag).

/// `text` with every control character but the newline shown as an
/// escape (`\u{1b}`).
pub fn visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() && c != '\n' {
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
