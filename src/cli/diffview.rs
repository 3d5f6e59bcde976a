//! A candidate diff as people read it: each line of the unified text with its colour
//! (git's `git diff` colours, [`super::color`]) and the invisible made visible — a
//! carriage return before a line's newline shows as `␍` (`-a` / `+a␍` for a line
//! that gained CRLF), after git's habit of showing `\ No newline at end of file`.
//! The stored and `--json` text keeps the raw bytes.

use super::color::{Palette, Role};

/// The role of one line of unified diff text.
fn role(line: &str) -> Option<Role> {
    const META: [&str; 8] = [
        "diff --git ",
        "--- ",
        "+++ ",
        "old mode ",
        "new mode ",
        "new file mode ",
        "deleted file mode ",
        "Binary files ",
    ];
    if META.iter().any(|m| line.starts_with(m)) {
        Some(Role::Meta)
    } else if line.starts_with("@@") {
        Some(Role::Hunk)
    } else if line.starts_with('-') {
        Some(Role::Removed)
    } else if line.starts_with('+') {
        Some(Role::Added)
    } else {
        None
    }
}

/// The line git starts each file's diff with, `diff --git a/PATH b/PATH`: it names the
/// file even when no `---`/`+++` lines follow (a change of mode alone).
pub fn git_header(path: &str) -> String {
    let (a, b) = (
        ultra_edit::edit::diff::diff_name("a/", path),
        ultra_edit::edit::diff::diff_name("b/", path),
    );
    format!("diff --git {a} {b}\n")
}

/// `unified` rendered line by line, each line prefixed by `indent` and ending in `\n`.
pub fn render(unified: &str, indent: &str, palette: &Palette) -> String {
    let mut out = String::with_capacity(unified.len() + unified.len() / 8);
    for line in unified.split_inclusive('\n') {
        let line = line.strip_suffix('\n').unwrap_or(line);
        let (body, cr) = match line.strip_suffix('\r') {
            Some(body) => (body, true),
            None => (line, false),
        };
        let role = role(line);
        out.push_str(indent);
        match role {
            Some(role) => out.push_str(&palette.paint(role, body)),
            None => out.push_str(body),
        }
        if cr {
            out.push_str(&palette.carriage_return());
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_output_marks_carriage_returns_only() {
        let diff =
            "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-a\n+a\r\n b\r\n\\ No newline at end of file\n";
        assert_eq!(
            render(diff, "", &Palette::new(false)),
            "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-a\n+a␍\n b␍\n\\ No newline at end of file\n"
        );
    }

    #[test]
    fn coloured_output_uses_gits_colours() {
        let diff = "old mode 100644\n--- a/f\n@@ -1 +1 @@\n-a\n+a\r\n ctx\n";
        assert_eq!(
            render(diff, "  ", &Palette::new(true)),
            "  \x1b[1mold mode 100644\x1b[0m\n  \x1b[1m--- a/f\x1b[0m\n  \x1b[36m@@ -1 +1 @@\x1b[0m\n  \x1b[31m-a\x1b[0m\n  \x1b[32m+a\x1b[0m\x1b[7m␍\x1b[0m\n   ctx\n"
        );
    }
}
