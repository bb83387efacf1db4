//! The workloads' random numbers: private per-session generators (nothing shared in the
//! timed path), the splitmix64 finaliser, and the fixed key permutation that lays rows out
//! in random order (the same for a given seed, so the database drivers and the built-in
//! engine build the same layout).

/// splitmix64's finaliser: spreads every input bit over the whole word.
#[inline]
pub(crate) fn scramble(mut value: u64) -> u64 {
    value = (value ^ (value >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    value = (value ^ (value >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    value ^ (value >> 31)
}

/// A random permutation of 0..n (Fisher-Yates with splitmix64), the same for a given seed.
pub(crate) fn permutation(n: u64, seed: u64) -> Vec<u64> {
    let mut values: Vec<u64> = (0..n).collect();
    let mut state = seed;
    for index in (1..values.len()).rev() {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        values.swap(index, (scramble(state) % (index as u64 + 1)) as usize);
    }
    values
}

/// xorshift64*: a cheap generator each session owns.
#[derive(Debug, Clone)]
pub(crate) struct SessionRng(u64);

impl SessionRng {
    /// A generator for one worker; different workers get different, fixed streams.
    pub(crate) fn for_worker(worker: usize, salt: u64) -> Self {
        // Never zero: xorshift's one fixed point.
        Self((salt ^ scramble(worker as u64 + 1)) | 1)
    }

    #[inline]
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in [0, 1).
    #[inline]
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// True with probability `share`; never for a share of 0.
    #[inline]
    pub(crate) fn chance(&mut self, share: f64) -> bool {
        share > 0.0 && self.unit() < share
    }

    /// Uniform in 0..n (n > 0).
    #[inline]
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_is_a_fixed_permutation() {
        let values = permutation(1000, 7);
        let mut sorted = values.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..1000).collect::<Vec<_>>());
        assert_eq!(values, permutation(1000, 7));
        assert_ne!(values, permutation(1000, 8));
        // Random order: far from the identity.
        let fixed = values
            .iter()
            .enumerate()
            .filter(|(i, v)| *i as u64 == **v)
            .count();
        assert!(fixed < 10, "{fixed} fixed points");
    }

    #[test]
    fn session_streams_differ_and_chance_matches_its_share() {
        let mut first = SessionRng::for_worker(0, 1);
        let mut second = SessionRng::for_worker(1, 1);
        assert_ne!(first.next_u64(), second.next_u64());
        let hits = (0..100_000).filter(|_| first.chance(0.2)).count();
        assert!((19_000..21_000).contains(&hits), "{hits}");
        assert!(!(0..1000).any(|_| first.chance(0.0)));
    }
}
