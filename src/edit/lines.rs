//! Lines of raw bytes, without building a table of them.
//!
//! One rule everywhere in `edit`: a line ends after each `\n` (the terminator is part
//! of the line, so `\r\n` stays with its line); a final segment without `\n` is a line
//! if it is non-empty; an empty input has no lines. Everything here walks the bytes
//! with `memchr` and allocates nothing per line, so a caller that needs one line of a
//! 200 MiB file, or a count, does not pay 16 bytes for every line of it.

use std::ops::Range;

/// The lines of `bytes`, each with its terminator, front to back.
pub(crate) fn lines(bytes: &[u8]) -> Lines<'_> {
    Lines { bytes, at: 0 }
}

/// Iterator returned by [`lines`].
pub(crate) struct Lines<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Iterator for Lines<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        let rest = self.bytes.get(self.at..).filter(|r| !r.is_empty())?;
        let len = memchr::memchr(b'\n', rest).map_or(rest.len(), |i| i + 1);
        self.at += len;
        rest.get(..len)
    }
}

/// Byte ranges of the lines of `bytes` (see the module rule).
#[cfg(test)]
pub(crate) fn line_spans(bytes: &[u8]) -> Vec<Range<usize>> {
    let mut at = 0;
    lines(bytes)
        .map(|line| {
            at += line.len();
            at - line.len()..at
        })
        .collect()
}

/// The lines of `bytes` as slices, in one table (16 bytes per line).
pub(crate) fn split_lines(bytes: &[u8]) -> Vec<&[u8]> {
    lines(bytes).collect()
}

/// Number of lines of `bytes`.
pub(crate) fn count_lines(bytes: &[u8]) -> usize {
    let newlines = memchr::memchr_iter(b'\n', bytes).count();
    newlines + usize::from(bytes.last().is_some_and(|&b| b != b'\n'))
}

/// Byte range of lines `first..=last` (1-based), or `None` when `last` is past the
/// end or the range is empty or starts at 0.
pub(crate) fn line_range(bytes: &[u8], first: usize, last: usize) -> Option<Range<usize>> {
    if first == 0 || first > last {
        return None;
    }
    let mut at = 0;
    let mut start = None;
    for (i, line) in lines(bytes).enumerate() {
        let n = i + 1;
        if n == first {
            start = Some(at);
        }
        at += line.len();
        if n == last {
            return start.map(|s| s..at);
        }
    }
    None
}

/// The start offset of every line of `bytes` and its end (8 bytes per line): for a file
/// with many line-addressed edits, each edit's range is then found in constant time
/// instead of by a walk from the top, which made n edits cost n walks of the file.
pub(crate) struct LineIndex {
    /// Start of each line, then `bytes.len()`.
    bounds: Vec<usize>,
}

impl LineIndex {
    pub(crate) fn new(bytes: &[u8]) -> LineIndex {
        let mut bounds = vec![0];
        bounds.extend(memchr::memchr_iter(b'\n', bytes).map(|i| i + 1));
        if bytes.last().is_some_and(|&b| b != b'\n') {
            bounds.push(bytes.len());
        } else if bytes.is_empty() {
            bounds.clear();
            bounds.push(0);
        }
        LineIndex { bounds }
    }

    /// As [`line_range`].
    pub(crate) fn range(&self, first: usize, last: usize) -> Option<Range<usize>> {
        if first == 0 || first > last || last >= self.bounds.len() {
            return None;
        }
        Some(self.bounds[first - 1]..self.bounds[last])
    }
}

/// A forward-only reader of lines by 0-based index: asking for ascending ranges costs
/// one pass over the bytes in all, and no table.
pub(crate) struct LineCursor<'a> {
    bytes: &'a [u8],
    /// Index of the line that starts at byte `at`.
    line: usize,
    at: usize,
}

impl<'a> LineCursor<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        LineCursor {
            bytes,
            line: 0,
            at: 0,
        }
    }

    /// Lines `range` (0-based indices). Ranges asked for in ascending order are found
    /// by walking on; an earlier one restarts from the top. Lines past the end are
    /// not returned.
    pub(crate) fn get(&mut self, range: Range<usize>) -> Vec<&'a [u8]> {
        if range.start < self.line {
            (self.line, self.at) = (0, 0);
        }
        let mut rest = lines(self.bytes.get(self.at..).unwrap_or_default());
        while self.line < range.start {
            let Some(line) = rest.next() else { break };
            self.at += line.len();
            self.line += 1;
        }
        let out: Vec<&[u8]> = rest.take(range.len()).collect();
        self.at += out.iter().map(|l| l.len()).sum::<usize>();
        self.line += out.len();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_follow_the_rule() {
        fn all(b: &[u8]) -> Vec<&[u8]> {
            lines(b).collect()
        }
        assert_eq!(all(b""), Vec::<&[u8]>::new());
        assert_eq!(all(b"\n"), vec![&b"\n"[..]]);
        assert_eq!(all(b"a\r\nb"), vec![&b"a\r\n"[..], b"b"]);
        assert_eq!(all(b"a\n\n"), vec![&b"a\n"[..], b"\n"]);
        assert_eq!(line_spans(b"a\r\nb"), vec![0..3, 3..4]);
        for b in [&b""[..], b"\n", b"x", b"a\nb", b"a\nb\n", b"\n\n\n"] {
            assert_eq!(count_lines(b), all(b).len(), "{b:?}");
        }
    }

    #[test]
    fn a_line_index_finds_the_ranges_line_range_finds() {
        for text in [
            "",
            "a",
            "a\n",
            "a\nb",
            "a\nb\n",
            "\n\n",
            "a\r\nb\r\n",
            "x\n\ny",
        ] {
            let index = LineIndex::new(text.as_bytes());
            for first in 0..6 {
                for last in 0..6 {
                    assert_eq!(
                        index.range(first, last),
                        line_range(text.as_bytes(), first, last),
                        "{text:?} {first}..={last}"
                    );
                }
            }
        }
    }

    #[test]
    fn line_range_is_one_based_and_inclusive() {
        let b = b"one\ntwo\r\nthree";
        assert_eq!(line_range(b, 1, 1), Some(0..4));
        assert_eq!(line_range(b, 2, 3), Some(4..14));
        assert_eq!(line_range(b, 3, 3), Some(9..14));
        assert_eq!(line_range(b, 3, 4), None);
        assert_eq!(line_range(b, 0, 1), None);
        assert_eq!(line_range(b, 2, 1), None);
        assert_eq!(line_range(b"", 1, 1), None);
    }

    #[test]
    fn cursor_walks_forward_and_restarts_when_asked_backwards() {
        let b = b"0\n1\n2\n3\n4";
        let mut c = LineCursor::new(b);
        assert_eq!(c.get(1..3), vec![&b"1\n"[..], b"2\n"]);
        assert_eq!(c.get(3..3), Vec::<&[u8]>::new());
        assert_eq!(c.get(4..9), vec![&b"4"[..]]);
        assert_eq!(c.get(0..1), vec![&b"0\n"[..]]);
    }
}
