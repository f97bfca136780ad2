//! Commit status rules of document 2.

pub const STATES: [&str; 4] = ["error", "failure", "pending", "success"];

/// Most statuses one sha and context may collect in a repository.
pub const MAX_PER_SHA_AND_CONTEXT: i64 = 1000;

/// Combined state over the latest status of each context.
pub fn combined_state<'a>(latest: impl IntoIterator<Item = &'a str>) -> &'static str {
    let mut any = false;
    let mut pending = false;
    for s in latest {
        any = true;
        match s {
            "error" | "failure" => return "failure",
            "pending" => pending = true,
            _ => {}
        }
    }
    if !any || pending {
        "pending"
    } else {
        "success"
    }
}

#[cfg(test)]
mod tests {
    use super::combined_state;
    #[test]
    fn derivation_table() {
        assert_eq!(combined_state([]), "pending");
        assert_eq!(combined_state(["success", "pending"]), "pending");
        assert_eq!(combined_state(["success", "error", "pending"]), "failure");
        assert_eq!(combined_state(["failure"]), "failure");
        assert_eq!(combined_state(["success", "success"]), "success");
    }
}
