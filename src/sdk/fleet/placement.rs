//! Where a new persistent profile goes: rendezvous (highest random weight) hashing of the
//! profile name over stable member names.
//!
//! Every member scores every name; the highest score owns it. A member that joins takes only
//! the names it now scores highest on (about 1/N of them) and no other name changes owner,
//! and a member's health never enters the score. Profiles already on disk are found by asking
//! the members ([`super::route`]), so a join never moves an existing profile: the hash only
//! places profiles that exist nowhere yet.

/// The score of `member` for `key`: a 64-bit hash of both (FNV-1a over the bytes, then the
/// splitmix64 finalizer so nearby names spread evenly). Stable across versions and machines.
pub fn score(member: &str, key: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in member
        .bytes()
        .chain(std::iter::once(0xff))
        .chain(key.bytes())
    {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    mix(h)
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The owner of `key` among `members` (highest score; the name breaks a tie); `None` when
/// there is no member.
pub fn owner<'a>(key: &str, members: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    members
        .into_iter()
        .max_by(|a, b| score(a, key).cmp(&score(b, key)).then_with(|| b.cmp(a)))
}

/// `members` from most to least preferred for `key` (for spreading ties).
pub fn ranking<'a>(key: &str, members: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let mut v: Vec<&str> = members.into_iter().collect();
    v.sort_by(|a, b| score(b, key).cmp(&score(a, key)).then_with(|| a.cmp(b)));
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("profile-{i}")).collect()
    }

    fn slots(n: usize) -> Vec<String> {
        (1..=n).map(|i| format!("afhttp-{i}")).collect()
    }

    fn owners(keys: &[String], members: &[String]) -> HashMap<String, String> {
        keys.iter()
            .map(|k| {
                let o = owner(k, members.iter().map(String::as_str)).unwrap();
                (k.clone(), o.to_string())
            })
            .collect()
    }

    #[test]
    fn stable_for_the_same_members_in_any_order() {
        let keys = names(500);
        let members = slots(4);
        let mut reversed = members.clone();
        reversed.reverse();
        assert_eq!(owners(&keys, &members), owners(&keys, &reversed));
        // Fixed values: the hash must not change between versions (profiles would be
        // placed somewhere else than where drivers of the previous version put them).
        assert_eq!(score("afhttp-1", "work"), 0xcdf6_ec42_3a69_5a34);
        assert_eq!(score("a", ""), 0x193f_1020_af07_6db5);
        assert_eq!(
            owner("work", ["afhttp-1", "afhttp-2", "afhttp-3"]),
            owner("work", ["afhttp-3", "afhttp-1", "afhttp-2"])
        );
        assert_eq!(owner("x", std::iter::empty()), None);
    }

    #[test]
    fn a_new_member_takes_only_its_share() {
        let keys = names(10_000);
        let before = owners(&keys, &slots(3));
        let after = owners(&keys, &slots(4));
        let mut moved = 0;
        for k in &keys {
            if before[k] != after[k] {
                // Only to the newcomer, never between old members.
                assert_eq!(after[k], "afhttp-4", "{k}");
                moved += 1;
            }
        }
        // About a quarter of the names: the newcomer's share.
        let share = moved as f64 / keys.len() as f64;
        assert!((share - 0.25).abs() < 0.02, "moved {share}");
    }

    #[test]
    fn a_leaving_member_moves_only_its_own_names() {
        let keys = names(5_000);
        let before = owners(&keys, &slots(4));
        let after = owners(&keys, &slots(3));
        for k in &keys {
            if before[k] != "afhttp-4" {
                assert_eq!(before[k], after[k], "{k}");
            }
        }
    }

    #[test]
    fn no_member_is_favoured_by_more_than_a_few_percent() {
        let keys = names(10_000);
        for n in [2, 3, 4, 5, 8] {
            let members = slots(n);
            let mut count: HashMap<String, usize> = HashMap::new();
            for o in owners(&keys, &members).into_values() {
                *count.entry(o).or_default() += 1;
            }
            let fair = keys.len() as f64 / n as f64;
            for m in &members {
                let got = count.get(m).copied().unwrap_or(0) as f64;
                let off = (got - fair).abs() / keys.len() as f64;
                assert!(off < 0.02, "{n} members: {m} has {got} of {}", keys.len());
            }
        }
    }

    #[test]
    fn ranking_starts_with_the_owner() {
        let members = slots(5);
        let m: Vec<&str> = members.iter().map(String::as_str).collect();
        for k in names(100) {
            let r = ranking(&k, m.iter().copied());
            assert_eq!(Some(r[0]), owner(&k, m.iter().copied()));
            assert_eq!(r.len(), 5);
        }
    }
}
