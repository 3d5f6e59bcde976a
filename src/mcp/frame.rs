//! The MCP server's input, one JSON-RPC message a line, with a bound on a line's size
//! that answers instead of going silent.
//!
//! rmcp drops a line longer than its limit and answers nothing (it logs through
//! `tracing`, which this server does not print): a client that sent a 17 MB
//! `edit_preview` waited forever. [`BoundedLines`] sits between standard input and
//! rmcp, under a larger limit of its own ([`MAX_MESSAGE_BYTES`]): a line that passes
//! it is cut there (rmcp reads the cut part as unparsable and ignores it), the rest of
//! the line is skipped, and rmcp is handed instead a small request in its place —
//! `tools/call` of [`TOO_LARGE_TOOL`] with the id the client gave, found in the
//! line's first bytes — which the server answers with an error naming the limit
//! (README.md, "Serve it to agents (MCP)"). Without an id in the first
//! [`HEAD_BYTES`] the placeholder carries none, and rmcp answers "Invalid request".

use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

/// The largest message (one line, in bytes, without its newline) the server reads:
/// 256 MiB, room for a plan or a file content of the size the CLI takes (README,
/// "Performance and limits").
pub const MAX_MESSAGE_BYTES: usize = 256 * 1024 * 1024;

/// The tool name of the placeholder request that stands for a message over
/// [`MAX_MESSAGE_BYTES`]: not a name of a real tool (those have no `/`).
pub const TOO_LARGE_TOOL: &str = "ultra-edit/message-too-large";

/// How much of a line is kept to find its id.
const HEAD_BYTES: usize = 64 * 1024;

/// Standard input for rmcp, with lines over `limit` replaced (see the module doc).
pub struct BoundedLines<R> {
    inner: R,
    limit: usize,
    /// Bytes read from `inner`, `input[at..]` not yet handed on.
    input: Vec<u8>,
    at: usize,
    /// Bytes of the current line handed on so far.
    line: usize,
    /// Its first bytes, for the id.
    head: Vec<u8>,
    /// Skipping the rest of an over-long line.
    skipping: bool,
    /// Bytes to hand on before any more input (the placeholder).
    pending: Vec<u8>,
}

impl<R> BoundedLines<R> {
    /// `inner` with lines longer than `limit` bytes replaced.
    pub fn new(inner: R, limit: usize) -> Self {
        BoundedLines {
            inner,
            limit,
            input: Vec::new(),
            at: 0,
            line: 0,
            head: Vec::new(),
            skipping: false,
            pending: Vec::new(),
        }
    }

    /// Hand on what is buffered into `out`: pending placeholder bytes first, then
    /// input up to the end of the line or the limit. Returns how many bytes it wrote.
    fn drain(&mut self, out: &mut ReadBuf<'_>) -> usize {
        if !self.pending.is_empty() {
            let n = self.pending.len().min(out.remaining());
            out.put_slice(&self.pending[..n]);
            self.pending.drain(..n);
            return n;
        }
        while self.at < self.input.len() {
            let rest = &self.input[self.at..];
            let newline = memchr::memchr(b'\n', rest);
            if self.skipping {
                match newline {
                    Some(i) => {
                        self.at += i + 1;
                        self.skipping = false;
                        self.line = 0;
                        self.head.clear();
                    }
                    None => self.at = self.input.len(),
                }
                continue;
            }
            // Up to and with the newline, within the limit (the newline is not counted).
            let line_part = newline.unwrap_or(rest.len());
            let room = self.limit - self.line;
            if line_part > room {
                // Over the limit: hand on what fits, then cut the line there.
                let n = room.min(out.remaining());
                let (taken, _) = rest.split_at(n);
                out.put_slice(taken);
                self.keep_head(n);
                self.at += n;
                self.line += n;
                if self.line == self.limit {
                    self.pending = placeholder(top_level_id(&self.head));
                    self.skipping = true;
                }
                return n;
            }
            let wanted = newline.map_or(rest.len(), |i| i + 1);
            let n = wanted.min(out.remaining());
            out.put_slice(&rest[..n]);
            self.keep_head(n);
            self.at += n;
            if newline.is_some_and(|i| n == i + 1) {
                self.line = 0;
                self.head.clear();
            } else {
                self.line += n;
            }
            return n;
        }
        0
    }

    /// Keep the first [`HEAD_BYTES`] of the line, from the `n` bytes just handed on.
    fn keep_head(&mut self, n: usize) {
        let room = HEAD_BYTES.saturating_sub(self.head.len());
        let start = self.at;
        self.head
            .extend_from_slice(&self.input[start..start + n.min(room)]);
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for BoundedLines<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        loop {
            if this.drain(out) > 0 || out.remaining() == 0 {
                return Poll::Ready(Ok(()));
            }
            if this.at < this.input.len() || !this.pending.is_empty() {
                // A line just reached the limit: its placeholder is next.
                continue;
            }
            // Everything buffered was handed on or skipped: read more.
            this.input.clear();
            this.at = 0;
            this.input.resize(64 * 1024, 0);
            let mut read = ReadBuf::new(&mut this.input);
            match Pin::new(&mut this.inner).poll_read(cx, &mut read) {
                Poll::Ready(Ok(())) => {
                    let n = read.filled().len();
                    this.input.truncate(n);
                    if n == 0 {
                        // End of input.
                        return Poll::Ready(Ok(()));
                    }
                }
                Poll::Ready(Err(e)) => {
                    this.input.clear();
                    return Poll::Ready(Err(e));
                }
                Poll::Pending => {
                    this.input.clear();
                    return Poll::Pending;
                }
            }
        }
    }
}

/// The line that stands for an over-long message: a newline (ending the cut part),
/// then a `tools/call` of [`TOO_LARGE_TOOL`] with `id`, or, without an id, a JSON
/// object that is no JSON-RPC message (rmcp answers it "Invalid request").
fn placeholder(id: Option<Vec<u8>>) -> Vec<u8> {
    let mut line = b"\n".to_vec();
    match id {
        Some(id) => {
            line.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
            line.extend_from_slice(&id);
            line.extend_from_slice(
                format!(
                    ",\"method\":\"tools/call\",\"params\":{{\"name\":\"{TOO_LARGE_TOOL}\",\"arguments\":{{}}}}}}\n"
                )
                .as_bytes(),
            );
        }
        None => line.extend_from_slice(b"{\"jsonrpc\":\"2.0\"}\n"),
    }
    line
}

/// The raw JSON value of the top-level `"id"` member of the object that `head` starts
/// (a number or a string, as written), if it is within `head`.
fn top_level_id(head: &[u8]) -> Option<Vec<u8>> {
    let mut i = head.iter().position(|b| !b.is_ascii_whitespace())?;
    if head[i] != b'{' {
        return None;
    }
    i += 1;
    let mut depth = 1usize;
    let mut key: Option<(usize, usize)> = None;
    let mut after_key = false;
    while i < head.len() {
        match head[i] {
            b'"' => {
                let start = i;
                i = string_end(head, i)?;
                if depth == 1 && !after_key {
                    key = Some((start, i));
                }
                continue;
            }
            b':' if depth == 1 => {
                after_key = true;
                if key.is_some_and(|(s, e)| &head[s..e] == b"\"id\"") {
                    let mut v = i + 1;
                    while v < head.len() && head[v].is_ascii_whitespace() {
                        v += 1;
                    }
                    let end = match head.get(v)? {
                        b'"' => string_end(head, v)?,
                        b'-' | b'0'..=b'9' => {
                            let mut e = v;
                            while e < head.len()
                                && matches!(head[e], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                            {
                                e += 1;
                            }
                            // A number cut off by the head's end is not known whole.
                            if e == head.len() {
                                return None;
                            }
                            e
                        }
                        _ => return None,
                    };
                    return Some(head[v..end].to_vec());
                }
                i += 1;
                continue;
            }
            b',' if depth == 1 => {
                after_key = false;
                key = None;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth -= 1;
                if depth == 0 {
                    return None;
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The index just past the JSON string that starts at `head[start]` (a `"`), or
/// `None` if it does not end within `head`.
fn string_end(head: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < head.len() {
        match head[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    /// Everything `BoundedLines` hands on for `input`, read in small pieces.
    fn through(input: &[u8], limit: usize) -> Vec<u8> {
        through_split(input, input.len(), limit)
    }

    /// As [`through`], with the input arriving in two reads split at `at`.
    fn through_split(input: &[u8], at: usize, limit: usize) -> Vec<u8> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            let (a, b) = input.split_at(at);
            let mut r = BoundedLines::new(a.chain(b), limit);
            let mut out = Vec::new();
            let mut buf = [0u8; 7];
            loop {
                let n = r.read(&mut buf).await.unwrap();
                if n == 0 {
                    return out;
                }
                out.extend_from_slice(&buf[..n]);
            }
        })
    }

    #[test]
    fn lines_within_the_limit_pass_unchanged() {
        let input = b"{\"id\":1}\n{\"id\":2,\"x\":\"0123456789\"}\nlast-without-newline";
        assert_eq!(through(input, 40), input);
    }

    #[test]
    fn a_line_over_the_limit_is_cut_and_followed_by_a_placeholder_with_its_id() {
        let input = b"{\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\",\"params\":\"0123456789abcdef\"}\n{\"id\":3}\n";
        let got = through(input, 40);
        let mut want = input[..40].to_vec();
        want.extend_from_slice(
            b"\n{\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\",\"method\":\"tools/call\",\"params\":{\"name\":\"ultra-edit/message-too-large\",\"arguments\":{}}}\n",
        );
        want.extend_from_slice(b"{\"id\":3}\n");
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&want)
        );
    }

    #[test]
    fn a_line_that_reaches_the_limit_exactly_in_one_piece_is_cut_at_the_next() {
        // 20 bytes fill the limit, the 21st is over it: cut, placeholder, next line kept.
        let got = through_split(b"{\"id\":5,\"p\":\"012345\"x\n{}\n", 20, 20);
        assert_eq!(
            String::from_utf8(got).unwrap(),
            "{\"id\":5,\"p\":\"012345\"\n{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"ultra-edit/message-too-large\",\"arguments\":{}}}\n{}\n"
        );
        // A line of exactly the limit passes.
        assert_eq!(
            through(b"{\"id\":5,\"p\":\"012345\"\n", 20),
            b"{\"id\":5,\"p\":\"012345\"\n"
        );
    }

    #[test]
    fn the_id_is_the_top_level_one_as_written() {
        assert_eq!(
            top_level_id(b" {\"id\": 42, \"x\": 1}"),
            Some(b"42".to_vec())
        );
        assert_eq!(
            top_level_id(b"{\"params\":{\"id\":7},\"id\":-1.5e3}"),
            Some(b"-1.5e3".to_vec())
        );
        assert_eq!(top_level_id(b"{\"params\":{\"id\":7}}"), None);
        assert_eq!(top_level_id(b"{\"x\":\"id\",\"id\":null}"), None);
        assert_eq!(top_level_id(b"{\"id\":12"), None, "cut off");
        assert_eq!(top_level_id(b"[1]"), None);
    }

    #[test]
    fn without_an_id_the_placeholder_is_no_request() {
        let got = through(b"{\"params\":\"0123456789abcdef0123456789\"}\n", 20);
        assert_eq!(
            String::from_utf8(got).unwrap(),
            "{\"params\":\"012345678\n{\"jsonrpc\":\"2.0\"}\n"
        );
    }
}
