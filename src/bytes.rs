//! Byte-slice helpers shared by the edit engine's diff and the journal's chunking of a
//! candidate like its snapshot: both skip what two versions share at either end.

/// Length of the longest common prefix, in bytes (compared 4 KiB at a time).
pub(crate) fn common_prefix_len(a: &[u8], b: &[u8]) -> usize {
    const STEP: usize = 4096;
    let (a, b) = (a.chunks(STEP), b.chunks(STEP));
    let mut same = 0;
    for (x, y) in a.zip(b) {
        if x == y {
            same += x.len();
        } else {
            return same + x.iter().zip(y).take_while(|(p, q)| p == q).count();
        }
    }
    same
}

/// Length of the longest common suffix, in bytes (compared 4 KiB at a time).
pub(crate) fn common_suffix_len(a: &[u8], b: &[u8]) -> usize {
    const STEP: usize = 4096;
    let (a, b) = (a.rchunks(STEP), b.rchunks(STEP));
    let mut same = 0;
    for (x, y) in a.zip(b) {
        if x == y {
            same += x.len();
        } else {
            let equal = x
                .iter()
                .rev()
                .zip(y.iter().rev())
                .take_while(|(p, q)| p == q);
            return same + equal.count();
        }
    }
    same
}
