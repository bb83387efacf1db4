//! A process that keeps one CPU busy until it is dropped: the other work a disturbed
//! measurement sees.

use std::process::{Child, Command};

pub struct Hog(pub Child);

impl Hog {
    pub fn start() -> Self {
        Self(
            Command::new("sh")
                .args(["-c", "while :; do :; done"])
                .spawn()
                .unwrap(),
        )
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
