//! Whether and how the CLI colours its text output (`--color auto|always|never`).
//!
//! `auto` (the default) follows anstream's reading of the environment: `NO_COLOR`
//! (set and non-empty) turns colour off, `CLICOLOR_FORCE` turns it on off a terminal,
//! `CLICOLOR=0` turns it off, otherwise colour is on when standard output is a
//! terminal whose `TERM` is not `dumb`. `always` and `never` override all of that.
//! `--json` output is never coloured.
//!
//! The colours are git's defaults for `git diff` (color.diff.*): headers bold, hunk
//! headers cyan, removed lines red, added lines green; a carriage return at a line's
//! end is shown as `␍` (U+240D) in reverse video.

use anstyle::{AnsiColor, Style};

/// `--color`: when to colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorWhen {
    /// On a terminal, unless NO_COLOR (or CLICOLOR_FORCE off a terminal).
    #[default]
    Auto,
    /// Always, even into a pipe or a file.
    Always,
    /// Never.
    Never,
}

/// Decide once per run: colour for standard output or not.
pub fn enabled(when: ColorWhen, json: bool) -> bool {
    if json {
        return false;
    }
    match when {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        ColorWhen::Auto => !matches!(
            anstream::AutoStream::choice(&std::io::stdout()),
            anstream::ColorChoice::Never
        ),
    }
}

/// The styles of the text output; all plain when colour is off.
#[derive(Debug, Clone, Copy)]
pub struct Palette {
    on: bool,
}

/// What a line of output is, for its style.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// `--- a/…`, `+++ b/…`, `old mode`, `Binary files …`: bold.
    Meta,
    /// `@@ … @@`: cyan.
    Hunk,
    /// A removed line: red.
    Removed,
    /// An added line: green.
    Added,
    /// A warning or a conflict heading: yellow.
    Warning,
    /// An error: bold red.
    Error,
    /// Dates and ids in `log`: yellow, as git's commit ids.
    Id,
}

impl Palette {
    /// A palette that colours when `on`.
    pub fn new(on: bool) -> Palette {
        Palette { on }
    }

    fn style(role: Role) -> Style {
        let fg = |c: AnsiColor| Style::new().fg_color(Some(c.into()));
        match role {
            Role::Meta => Style::new().bold(),
            Role::Hunk => fg(AnsiColor::Cyan),
            Role::Removed => fg(AnsiColor::Red),
            Role::Added => fg(AnsiColor::Green),
            Role::Warning | Role::Id => fg(AnsiColor::Yellow),
            Role::Error => fg(AnsiColor::Red).bold(),
        }
    }

    /// `text` in the style of `role` (then reset), or as it is when colour is off.
    pub fn paint(&self, role: Role, text: &str) -> String {
        if !self.on || text.is_empty() {
            return text.to_string();
        }
        let style = Palette::style(role);
        format!("{}{text}{}", style.render(), style.render_reset())
    }

    /// The visible mark of a carriage return at a line's end: `␍`, in reverse video
    /// when colour is on (written after the line's own colour is reset).
    pub fn carriage_return(&self) -> String {
        if !self.on {
            return "␍".into();
        }
        let mark = Style::new().invert();
        format!("{}␍{}", mark.render(), mark.render_reset())
    }
}
