//! Chunkings: the ways the harness splits an output into stream chunks.
//!
//! A chunking is a label and the byte offsets where chunks end (the last is the output's
//! length). The fixed ones are every character, and byte chunkings of 3 and 7 that cut code
//! points; [`random`] adds seeded random chunkings (1–12 bytes), the same for a case on every
//! run. Engines that take text get each chunking with its cuts moved to the next character
//! boundary ([`to_char_boundaries`]).

/// A labelled chunking: the end offset of each chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunking {
    /// How it was made (`chars`, `3 bytes`, `random 1`...).
    pub label: String,
    /// The end offset of each chunk, increasing; the last is the output's length.
    pub cuts: Vec<usize>,
}

/// One chunk per character.
pub fn chars(output: &str) -> Chunking {
    Chunking {
        label: "chars".to_owned(),
        cuts: output
            .char_indices()
            .map(|(i, c)| i + c.len_utf8())
            .collect(),
    }
}

/// Chunks of `step` bytes (they may cut code points).
pub fn bytes(output: &str, step: usize) -> Chunking {
    let step = step.max(1);
    Chunking {
        label: format!("{step} bytes"),
        cuts: (1..=output.len().div_ceil(step))
            .map(|i| (i * step).min(output.len()))
            .collect(),
    }
}

/// The chunkings of the fixtures' streaming rule: every character, 3 bytes, 7 bytes.
pub fn standard(output: &str) -> Vec<Chunking> {
    vec![chars(output), bytes(output, 3), bytes(output, 7)]
}

/// `count` random chunkings of 1–12 bytes, seeded by `seed` (a case's id hashed with
/// [`seed_of`]): the same on every run.
pub fn random(output: &str, seed: u64, count: usize) -> Vec<Chunking> {
    (0..count)
        .map(|n| {
            let mut state = seed ^ (n as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let mut cuts = Vec::new();
            let mut at = 0;
            while at < output.len() {
                at = (at + 1 + (splitmix(&mut state) % 12) as usize).min(output.len());
                cuts.push(at);
            }
            Chunking {
                label: format!("random {}", n + 1),
                cuts,
            }
        })
        .collect()
}

/// A stable 64-bit seed for a text (FNV-1a).
pub fn seed_of(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The chunking with every cut moved to the next character boundary (cuts that meet are
/// merged): for engines that take text.
pub fn to_char_boundaries(output: &str, chunking: &Chunking) -> Chunking {
    let mut cuts: Vec<usize> = Vec::with_capacity(chunking.cuts.len());
    for &cut in &chunking.cuts {
        let mut cut = cut.min(output.len());
        while !output.is_char_boundary(cut) {
            cut += 1;
        }
        if cuts.last() != Some(&cut) {
            cuts.push(cut);
        }
    }
    Chunking {
        label: chunking.label.clone(),
        cuts,
    }
}

/// The chunks of `output` at `cuts`.
pub fn pieces<'o>(output: &'o [u8], cuts: &[usize]) -> Vec<&'o [u8]> {
    let mut from = 0;
    cuts.iter()
        .map(|&cut| {
            let piece = &output[from.min(cut)..cut];
            from = cut;
            piece
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunkings_cover_the_output() {
        let text = "añb€c";
        for chunking in standard(text)
            .into_iter()
            .chain(random(text, seed_of("x"), 3))
        {
            assert_eq!(chunking.cuts.last(), Some(&text.len()), "{chunking:?}");
            assert_eq!(
                pieces(text.as_bytes(), &chunking.cuts).concat(),
                text.as_bytes()
            );
            let snapped = to_char_boundaries(text, &chunking);
            assert!(snapped.cuts.iter().all(|&c| text.is_char_boundary(c)));
            assert_eq!(
                pieces(text.as_bytes(), &snapped.cuts).concat(),
                text.as_bytes()
            );
        }
        assert_eq!(bytes(text, 3).cuts, [3, 6, 8]);
        assert_eq!(to_char_boundaries(text, &bytes(text, 3)).cuts, [3, 7, 8]);
        assert_eq!(random(text, 7, 2), random(text, 7, 2));
        assert!(standard("").iter().all(|c| c.cuts.is_empty()));
    }
}
