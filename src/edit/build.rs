//! Builders of plans and edits for a host that writes Rust rather than JSON:
//! `Plan::new().agent("dev").write_file("src/a.rs", bytes)`. Paths are anything that
//! converts into a `String` (`&str`, `String`, `&String`), relative to the root or
//! absolute inside it, checked when the plan is previewed as for a JSON plan. Content
//! is bytes (`&str`, `String`, `&[u8]`, `Vec<u8>`, arrays): UTF-8 goes into `content`,
//! anything else into `content_base64`, so the recorded plan is the same JSON a front
//! end would send. Nothing here checks the plan: [`Plan::check`] (or the preview) does.

use base64::Engine;

use crate::edit::plan::{Edit, Occurrence, Plan};

/// `content` when `bytes` is UTF-8, else `content_base64` (standard, padded).
fn content_fields(bytes: &[u8]) -> (Option<String>, Option<String>) {
    match std::str::from_utf8(bytes) {
        Ok(text) => (Some(text.to_string()), None),
        Err(_) => (
            None,
            Some(base64::engine::general_purpose::STANDARD.encode(bytes)),
        ),
    }
}

impl Edit {
    /// `write_file`: the whole file, whether or not it exists (m1nd's `new_content`).
    pub fn write_file(path: impl Into<String>, bytes: impl AsRef<[u8]>) -> Edit {
        let (content, content_base64) = content_fields(bytes.as_ref());
        Edit::WriteFile {
            path: path.into(),
            content,
            content_base64,
            mode: None,
            expected_base: None,
        }
    }

    /// `create_file`: a file that must not exist yet.
    pub fn create_file(path: impl Into<String>, bytes: impl AsRef<[u8]>) -> Edit {
        let (content, content_base64) = content_fields(bytes.as_ref());
        Edit::CreateFile {
            path: path.into(),
            content,
            content_base64,
            mode: None,
        }
    }

    /// `replace_file`: the whole content of an existing file.
    pub fn replace_file(path: impl Into<String>, bytes: impl AsRef<[u8]>) -> Edit {
        let (content, content_base64) = content_fields(bytes.as_ref());
        Edit::ReplaceFile {
            path: path.into(),
            content,
            content_base64,
            mode: None,
            expected_base: None,
        }
    }

    /// `delete_file`: an existing file.
    pub fn delete_file(path: impl Into<String>) -> Edit {
        Edit::DeleteFile { path: path.into() }
    }

    /// `replace_text`: the one match of `old` (non-empty) becomes `new`; pick a match
    /// with [`Edit::occurrence`].
    pub fn replace_text(
        path: impl Into<String>,
        old: impl Into<String>,
        new: impl Into<String>,
    ) -> Edit {
        Edit::ReplaceText {
            path: path.into(),
            old: old.into(),
            new: new.into(),
            occurrence: None,
        }
    }

    /// `append`: `text` at the end of an existing file, verbatim.
    pub fn append(path: impl Into<String>, text: impl Into<String>) -> Edit {
        Edit::Append {
            path: path.into(),
            text: text.into(),
        }
    }

    /// `prepend`: `text` at the start of an existing file, verbatim.
    pub fn prepend(path: impl Into<String>, text: impl Into<String>) -> Edit {
        Edit::Prepend {
            path: path.into(),
            text: text.into(),
        }
    }

    /// This edit with Unix mode `mode` (≤ 0o777) for the file it writes. Ops that set
    /// no mode (text ops, deletions) are returned unchanged.
    pub fn with_mode(mut self, new_mode: u32) -> Edit {
        if let Edit::WriteFile { mode, .. }
        | Edit::CreateFile { mode, .. }
        | Edit::ReplaceFile { mode, .. } = &mut self
        {
            *mode = Some(new_mode);
        }
        self
    }

    /// This `write_file` or `replace_file` with the blake3 (64 hex digits) of the
    /// content the writer read: the preview refuses it (`base_changed`) when the file
    /// holds anything else (docs/plan.md, "Expected base"). Other ops are returned
    /// unchanged.
    pub fn with_expected_base(mut self, blake3_hex: impl Into<String>) -> Edit {
        if let Edit::WriteFile { expected_base, .. } | Edit::ReplaceFile { expected_base, .. } =
            &mut self
        {
            *expected_base = Some(crate::edit::ExpectedBase::Hash(blake3_hex.into()));
        }
        self
    }

    /// This `replace_text` with the match to replace: 1-based, or
    /// [`Occurrence::All`]. Other ops are returned unchanged.
    pub fn occurrence(mut self, which: impl Into<Occurrence>) -> Edit {
        if let Edit::ReplaceText { occurrence, .. } = &mut self {
            *occurrence = Some(which.into());
        }
        self
    }
}

impl Default for Plan {
    /// An empty plan: no description, agent or policy, no edits (a preview of it is
    /// refused until it has one).
    fn default() -> Self {
        Plan {
            description: None,
            agent: None,
            edits: Vec::new(),
            policy: None,
        }
    }
}

impl Plan {
    /// An empty plan; add edits with the methods below.
    pub fn new() -> Plan {
        Plan::default()
    }

    /// This plan with `description`.
    pub fn description(mut self, description: impl Into<String>) -> Plan {
        self.description = Some(description.into());
        self
    }

    /// This plan with `agent` as its author.
    pub fn agent(mut self, agent: impl Into<String>) -> Plan {
        self.agent = Some(agent.into());
        self
    }

    /// This plan with its own policy instead of the journal's.
    pub fn policy(mut self, policy: crate::Policy) -> Plan {
        self.policy = Some(policy);
        self
    }

    /// This plan with `edit` added last.
    pub fn edit(mut self, edit: Edit) -> Plan {
        self.edits.push(edit);
        self
    }

    /// With [`Edit::write_file`] added.
    pub fn write_file(self, path: impl Into<String>, bytes: impl AsRef<[u8]>) -> Plan {
        self.edit(Edit::write_file(path, bytes))
    }

    /// With [`Edit::create_file`] added.
    pub fn create_file(self, path: impl Into<String>, bytes: impl AsRef<[u8]>) -> Plan {
        self.edit(Edit::create_file(path, bytes))
    }

    /// With [`Edit::replace_file`] added.
    pub fn replace_file(self, path: impl Into<String>, bytes: impl AsRef<[u8]>) -> Plan {
        self.edit(Edit::replace_file(path, bytes))
    }

    /// With [`Edit::delete_file`] added.
    pub fn delete_file(self, path: impl Into<String>) -> Plan {
        self.edit(Edit::delete_file(path))
    }

    /// With [`Edit::replace_text`] added.
    pub fn replace_text(
        self,
        path: impl Into<String>,
        old: impl Into<String>,
        new: impl Into<String>,
    ) -> Plan {
        self.edit(Edit::replace_text(path, old, new))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_plans_are_the_json_a_front_end_would_send() {
        let plan = Plan::new()
            .agent("dev")
            .description("bump")
            .write_file("src/a.rs", "fn a() {}\n")
            .create_file(String::from("bin.dat"), [0xffu8, 0x00])
            .edit(Edit::replace_file("run.sh", b"#!/bin/sh\n").with_mode(0o755))
            .replace_text("b.txt", "x", "y")
            .edit(Edit::replace_text("c.txt", "x", "y").occurrence(Occurrence::All))
            .delete_file("old.txt");
        let json = br##"{"description":"bump","agent":"dev","edits":[
            {"op":"write_file","path":"src/a.rs","content":"fn a() {}\n"},
            {"op":"create_file","path":"bin.dat","content_base64":"/wA="},
            {"op":"replace_file","path":"run.sh","content":"#!/bin/sh\n","mode":493},
            {"op":"replace_text","path":"b.txt","old":"x","new":"y"},
            {"op":"replace_text","path":"c.txt","old":"x","new":"y","occurrence":"all"},
            {"op":"delete_file","path":"old.txt"}]}"##;
        assert_eq!(plan, Plan::from_json(json).unwrap());
        assert_eq!(plan.check(), Ok(()));
        assert_eq!(
            Edit::write_file("a", [0xffu8]).content_bytes().unwrap(),
            Some(vec![0xff])
        );
        assert_eq!(
            Edit::delete_file("a").with_mode(0o600),
            Edit::delete_file("a")
        );
        assert!(Plan::new().check().is_err(), "an empty plan is refused");
    }
}
