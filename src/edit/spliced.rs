//! A large file's candidate kept as its base with one region replaced, so a preview
//! holds one copy of the file, not two (issue 34; docs/benchmarks.md, "Peak memory").
//!
//! The edit engine resolves every text edit of a file to splices on the same base
//! (`resolve.rs`). [`Spliced`] is those splices gathered into one region: the bytes
//! `base[start..end]`, widened on both sides to whole lines with [`CONTEXT`] more lines
//! each way, replaced by `text`. Outside the region the candidate is the base, byte for
//! byte; its edges are line starts. That is the shape of a diff window
//! ([`super::DiffWindow`]), so the diff, the validation, the candidate's hash and its
//! store read the base and the region, never a second whole copy.

use super::diff::{is_binary, DiffWindow};

/// Lines of context kept on each side of the splices: one more than the diff's 3, so a
/// hunk's context never reaches past the region (as `journal::window::CONTEXT`).
pub const CONTEXT: usize = 4;

/// Bytes at the start of a file that decide whether it is binary (`is_binary`).
const SNIFF: usize = 8000;

/// A candidate as `base` with `base[start..end]` replaced by `text` (byte offsets into
/// the base; both line starts or the base's end, with [`CONTEXT`] lines of the base
/// around the splices inside the region where the base has them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spliced {
    /// First byte of the base replaced (a line start).
    pub start: usize,
    /// First byte of the base kept after the region (a line start or the base's end).
    pub end: usize,
    /// The candidate's bytes in the region.
    pub text: Vec<u8>,
}

impl Spliced {
    /// The region of `base` holding `splices` — `(start, end, text)`: replace
    /// `base[start..end]` by `text`, sorted by start, not overlapping, each within the
    /// base — widened to whole lines and [`CONTEXT`] lines each way, with the text the
    /// splices give it. `None` for no splices.
    pub fn of(base: &[u8], splices: &[(usize, usize, &[u8])]) -> Option<Spliced> {
        let first = splices.first()?.0.min(base.len());
        let last = splices
            .iter()
            .map(|s| s.1)
            .max()
            .unwrap_or(first)
            .min(base.len());
        let mut start = line_start(base, first);
        for _ in 0..CONTEXT {
            if start == 0 {
                break;
            }
            start = line_start(base, start - 1);
        }
        let mut end = last;
        if end > 0 && end < base.len() && base[end - 1] != b'\n' {
            end = next_line(base, end);
        }
        for _ in 0..CONTEXT {
            end = next_line(base, end);
        }
        let added: usize = splices.iter().map(|s| s.2.len()).sum();
        let mut text = Vec::with_capacity((end - start).saturating_add(added));
        let mut cursor = start;
        for &(s, e, t) in splices {
            text.extend_from_slice(base.get(cursor..s).unwrap_or_default());
            text.extend_from_slice(t);
            cursor = cursor.max(e);
        }
        text.extend_from_slice(base.get(cursor..end).unwrap_or_default());
        Some(Spliced { start, end, text })
    }

    /// The candidate's length in bytes.
    pub fn len(&self, base: &[u8]) -> usize {
        base.len() - (self.end - self.start) + self.text.len()
    }

    /// The candidate's bytes in order: the base before the region, the region's text,
    /// the base after it.
    pub fn pieces<'a>(&'a self, base: &'a [u8]) -> [&'a [u8]; 3] {
        [
            base.get(..self.start).unwrap_or_default(),
            &self.text,
            base.get(self.end..).unwrap_or_default(),
        ]
    }

    /// The whole candidate, assembled (a second copy of the file: for the paths that
    /// need it contiguous, never a large preview's).
    pub fn to_vec(&self, base: &[u8]) -> Vec<u8> {
        self.pieces(base).concat()
    }

    /// The candidate's blake3, hashed piece by piece (the same hash as of
    /// [`Spliced::to_vec`]).
    pub fn hash(&self, base: &[u8]) -> blake3::Hash {
        let mut h = blake3::Hasher::new();
        for piece in self.pieces(base) {
            h.update(piece);
        }
        h.finalize()
    }

    /// Lines of the candidate as `count_lines` counts them (`\n` bytes, plus one for
    /// an unterminated last line).
    pub fn count_lines(&self, base: &[u8]) -> usize {
        let newlines: usize = self
            .pieces(base)
            .iter()
            .map(|p| memchr::memchr_iter(b'\n', p).count())
            .sum();
        let last = self
            .pieces(base)
            .iter()
            .rev()
            .find_map(|p| p.last().copied());
        newlines + usize::from(last.is_some_and(|b| b != b'\n'))
    }

    /// Whether the candidate looks binary (`is_binary` of its first 8000 bytes).
    pub fn is_binary(&self, base: &[u8]) -> bool {
        if self.start >= SNIFF {
            return is_binary(base);
        }
        let mut head = Vec::with_capacity(SNIFF);
        for piece in self.pieces(base) {
            let room = SNIFF - head.len();
            head.extend_from_slice(&piece[..piece.len().min(room)]);
        }
        is_binary(&head)
    }

    /// The candidate equals its base.
    pub fn unchanged(&self, base: &[u8]) -> bool {
        base.get(self.start..self.end) == Some(self.text.as_slice())
    }

    /// The region as a diff window of the base (old) and the candidate (new), for
    /// [`super::window_diff`].
    pub fn diff_window<'a>(&'a self, base: &'a [u8]) -> DiffWindow<'a> {
        let (head, old, tail) = (
            base.get(..self.start).unwrap_or_default(),
            base.get(self.start..self.end).unwrap_or_default(),
            base.get(self.end..).unwrap_or_default(),
        );
        DiffWindow {
            old,
            new: &self.text,
            lines_before: memchr::memchr_iter(b'\n', head).count(),
            outside_utf8: std::str::from_utf8(head).is_ok() && std::str::from_utf8(tail).is_ok(),
            binary: is_binary(base) || self.is_binary(base),
            sizes: (base.len() as u64, self.len(base) as u64),
        }
    }
}

/// The start of the line holding byte `at` of `bytes`.
fn line_start(bytes: &[u8], at: usize) -> usize {
    memchr::memrchr(b'\n', &bytes[..at.min(bytes.len())]).map_or(0, |i| i + 1)
}

/// The start of the line after the one starting at or holding `at` (the end when it
/// is the last).
fn next_line(bytes: &[u8], at: usize) -> usize {
    match bytes.get(at..) {
        Some(rest) => memchr::memchr(b'\n', rest).map_or(bytes.len(), |i| at + i + 1),
        None => bytes.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(n: usize) -> Vec<u8> {
        (1..=n)
            .flat_map(|i| format!("line {i}\n").into_bytes())
            .collect()
    }

    #[test]
    fn the_region_is_whole_lines_with_four_lines_of_context() {
        let base = numbered(20);
        let at = base.windows(7).position(|w| w == b"line 10").unwrap();
        // Replace "10" in line 10 by "X".
        let s = Spliced::of(&base, &[(at + 5, at + 7, b"X")]).unwrap();
        assert_eq!(&base[..s.start], &numbered(5)[..]);
        assert_eq!(
            s.text,
            b"line 6\nline 7\nline 8\nline 9\nline X\nline 11\nline 12\nline 13\nline 14\n"
        );
        assert_eq!(s.end, numbered(14).len());
        let whole = s.to_vec(&base);
        let mut want = base.clone();
        want.splice(at + 5..at + 7, *b"X");
        assert_eq!(whole, want);
        assert_eq!(s.len(&base), want.len());
        assert_eq!(s.hash(&base), blake3::hash(&want));
        assert_eq!(s.count_lines(&base), 20);
        assert!(!s.unchanged(&base));
    }

    #[test]
    fn the_region_stops_at_the_files_ends() {
        let base = b"a\nb\nc".to_vec();
        let s = Spliced::of(&base, &[(0, 1, b"A"), (4, 5, b"C")]).unwrap();
        assert_eq!((s.start, s.end), (0, 5));
        assert_eq!(s.text, b"A\nb\nC");
        assert_eq!(s.count_lines(&base), 3);
        // Appending at the end.
        let s = Spliced::of(&base, &[(5, 5, b"\nd\n")]).unwrap();
        assert_eq!((s.start, s.end), (0, 5));
        assert_eq!(s.to_vec(&base), b"a\nb\nc\nd\n");
        assert_eq!(s.count_lines(&base), 4);
        assert_eq!(Spliced::of(&base, &[]), None);
    }
}
