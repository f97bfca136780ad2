//! Commit status rules of document 2.

pub const STATES: [&str; 4] = ["error", "failure", "pending", "success"];

/// Most statuses one sha and context may collect in a repository.
pub const MAX_PER_SHA_AND_CONTEXT: i64 = 1000;

/// How many contexts' latest statuses are in each state: what the combined state is made of.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StateCounts {
    pub total: i64,
    /// `error` or `failure`.
    pub failing: i64,
    pub pending: i64,
}

impl StateCounts {
    /// The counts of these states (one per context).
    pub fn of<'a>(states: impl IntoIterator<Item = &'a str>) -> StateCounts {
        states.into_iter().fold(StateCounts::default(), |mut n, state| {
            n.total += 1;
            match state {
                "error" | "failure" => n.failing += 1,
                "pending" => n.pending += 1,
                _ => {}
            }
            n
        })
    }

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
        StateCounts::of(latest).state()
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
