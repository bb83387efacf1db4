//! The TPC-C specification's random values (clause 2.1.6 and 4.3.2): uniform integers,
//! NURand, a-strings and n-strings, customer last names from syllables, zip codes, and the
//! "ORIGINAL" mark in a tenth of items and stock.

use serde::{Deserialize, Serialize};

use crate::rng::SessionRng;

/// The syllables of a customer's last name (clause 4.3.2.3).
const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

const ALPHANUMERIC: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// The run-time constant C of NURand for each of its three uses (clause 2.1.6), chosen when
/// the database is loaded and recorded with it: the run's C for last names must differ from
/// the load's as clause 2.1.6.1 says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct NurandConstants {
    /// C for customer last names, NURand(255, 0, 999).
    pub c_last: u64,
    /// C for customer ids, NURand(1023, 1, 3000).
    pub c_id: u64,
    /// C for item ids, NURand(8191, 1, 100000).
    pub ol_i_id: u64,
}

impl NurandConstants {
    pub fn draw(random: &mut Random) -> Self {
        NurandConstants {
            c_last: random.uniform(0, 255),
            c_id: random.uniform(0, 1023),
            ol_i_id: random.uniform(0, 8191),
        }
    }
}

/// A loader's or a session's own generator of the specification's values.
pub struct Random {
    rng: SessionRng,
}

impl Random {
    pub fn new(stream: usize, salt: u64) -> Self {
        Random {
            rng: SessionRng::for_worker(stream, salt),
        }
    }

    /// A whole number from `low` to `high`, both included.
    pub fn uniform(&mut self, low: u64, high: u64) -> u64 {
        debug_assert!(low <= high);
        low + self.rng.below(high - low + 1)
    }

    /// A number in [0, 1), for think times.
    pub fn unit(&mut self) -> f64 {
        self.rng.unit()
    }

    /// NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x.
    pub fn nurand(&mut self, a: u64, (low, high): (u64, u64), c: u64) -> u64 {
        (((self.uniform(0, a) | self.uniform(low, high)) + c) % (high - low + 1)) + low
    }

    /// A random alphanumeric string of `low` to `high` characters.
    pub fn a_string(&mut self, low: u64, high: u64) -> String {
        let length = self.uniform(low, high);
        (0..length)
            .map(|_| char::from(ALPHANUMERIC[self.rng.below(ALPHANUMERIC.len() as u64) as usize]))
            .collect()
    }

    /// A random string of `low` to `high` digits.
    pub fn n_string(&mut self, low: u64, high: u64) -> String {
        let length = self.uniform(low, high);
        (0..length)
            .map(|_| char::from(b'0' + self.rng.below(10) as u8))
            .collect()
    }

    /// A zip code: four random digits and "11111" (clause 4.3.2.7).
    pub fn zip(&mut self) -> String {
        self.n_string(4, 4) + "11111"
    }

    /// An i_data or s_data: 26 to 50 characters, a tenth of them holding "ORIGINAL" at a
    /// random place (clause 4.3.3.1).
    pub fn data_maybe_original(&mut self) -> String {
        let mut data = self.a_string(26, 50);
        if self.uniform(1, 10) == 1 {
            let at = self.uniform(0, data.len() as u64 - 8) as usize;
            data.replace_range(at..at + 8, "ORIGINAL");
        }
        data
    }

    /// A decimal from `low` to `high` hundredths, both included, as text with `scale`
    /// digits after the point ("0.1234" for scale 4 from 0 to 2000 ten-thousandths).
    pub fn decimal(&mut self, (low, high): (u64, u64), scale: u32) -> String {
        fixed(self.uniform(low, high), scale)
    }
}

/// `units` / 10^scale as text, exactly.
pub fn fixed(units: u64, scale: u32) -> String {
    let divisor = 10u64.pow(scale);
    if scale == 0 {
        return units.to_string();
    }
    format!(
        "{}.{:0width$}",
        units / divisor,
        units % divisor,
        width = scale as usize
    )
}

/// The last name of number 0 to 999: its three digits' syllables (clause 4.3.2.3).
pub fn last_name(number: u64) -> String {
    let digits = [number / 100, number / 10 % 10, number % 10];
    digits
        .iter()
        .map(|digit| SYLLABLES[*digit as usize])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_names_are_the_specifications_syllables() {
        // Clause 4.3.2.3's own example: 371 is PRICALLYOUGHT.
        assert_eq!(last_name(371), "PRICALLYOUGHT");
        assert_eq!(last_name(0), "BARBARBAR");
        assert_eq!(last_name(999), "EINGEINGEING");
    }

    #[test]
    fn nurand_stays_in_range_and_is_skewed_toward_some_values() {
        let mut random = Random::new(0, 7);
        let mut counts = vec![0u32; 3000];
        for _ in 0..300_000 {
            let id = random.nurand(1023, (1, 3000), 259);
            assert!((1..=3000).contains(&id));
            counts[id as usize - 1] += 1;
        }
        // Uniform would give each id about 100; NURand's OR makes some ids several times
        // more frequent than others.
        let (least, most) = (*counts.iter().min().unwrap(), *counts.iter().max().unwrap());
        assert!(most > 3 * least.max(1), "least {least}, most {most}");
    }

    #[test]
    fn strings_have_their_lengths_and_a_tenth_of_data_is_original() {
        let mut random = Random::new(1, 3);
        let mut original = 0;
        for _ in 0..10_000 {
            let text = random.a_string(8, 16);
            assert!(
                (8..=16).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_alphanumeric())
            );
            let data = random.data_maybe_original();
            assert!((26..=50).contains(&data.len()));
            original += u32::from(data.contains("ORIGINAL"));
        }
        assert!((850..=1150).contains(&original), "{original} of 10000");
        assert_eq!(random.zip().len(), 9);
        assert!(random.zip().ends_with("11111"));
    }

    #[test]
    fn fixed_point_text_is_exact() {
        assert_eq!(fixed(2000, 4), "0.2000");
        assert_eq!(fixed(1, 2), "0.01");
        assert_eq!(fixed(999_999, 2), "9999.99");
        assert_eq!(fixed(3_000_000, 2), "30000.00");
        assert_eq!(fixed(5, 0), "5");
    }
}
