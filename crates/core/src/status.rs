//! Commit status rules of document 2.

pub const STATES: [&str; 4] = ["error", "failure", "pending", "success"];

/// Most statuses one sha and context may collect in a repository.
pub const MAX_PER_SHA_AND_CONTEXT: i64 = 1000;

/// How many contexts' latest statuses are in each state: what the combined state is made of
/// (the store counts them in the statement that reads the page).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StateCounts {
    pub total: i64,
    /// `error` or `failure`.
    pub failing: i64,
    pub pending: i64,
}

impl StateCounts {
    /// `failure` if any context failed, else `pending` if any is pending or there is none,
    /// else `success`.
    pub fn state(&self) -> &'static str {
        if self.failing > 0 {
            "failure"
        } else if self.total == 0 || self.pending > 0 {
            "pending"
        } else {
            "success"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::StateCounts;

    fn combined_state<const N: usize>(latest: [&str; N]) -> &'static str {
        let count = |f: fn(&str) -> bool| latest.iter().filter(|s| f(s)).count() as i64;
        StateCounts { total: N as i64, failing: count(|s| s == "error" || s == "failure"), pending: count(|s| s == "pending") }.state()
    }

    #[test]
    fn derivation_table() {
        assert_eq!(combined_state([]), "pending");
        assert_eq!(combined_state(["success", "pending"]), "pending");
        assert_eq!(combined_state(["success", "error", "pending"]), "failure");
        assert_eq!(combined_state(["failure"]), "failure");
        assert_eq!(combined_state(["success", "success"]), "success");
    }
}
