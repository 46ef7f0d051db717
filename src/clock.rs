//! Whether the system clock is synchronised, as the kernel's NTP state says (`adjtimex`
//! with no modes: a read, the call `timedatectl` relies on too).
//!
//! The Pi has no real-time clock: after a boot without network its wall clock starts
//! wherever `fake-hwclock` left it. Nothing in the table depends on it — events are
//! ordered by their sequence number, and the table task never reads the wall clock (the
//! store stamps each row's `at_ms` for people, and the hash chain covers it, but recovery,
//! ordering and replay use `seq` only). The status is reported so an operator knows
//! whether those timestamps can be trusted: in `/readyz`, `/metrics` and on the panel.
//! It does not gate readiness: a table without network must still deal.
//!
//! [`interpret`] is a pure function of the raw values; [`read`] makes the call.

use serde::Serialize;

/// `STA_UNSYNC` in `timex.status`: the kernel considers the clock unsynchronised.
const STA_UNSYNC: i64 = 0x0040;
/// `TIME_ERROR`, the return value for a clock that is not synchronised.
const TIME_ERROR: i64 = 5;

/// The clock's state, as served in `/readyz` (`clock`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct ClockStatus {
    /// Whether the kernel considers the clock synchronised (an NTP daemon disciplines it).
    pub synchronised: bool,
    /// Where the answer comes from: `adjtimex`, or `unavailable` when the call failed.
    pub source: &'static str,
    /// The kernel's maximum error estimate, in microseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_error_us: Option<u64>,
    /// The kernel's estimated error, in microseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub est_error_us: Option<u64>,
    /// The kernel's clock state: `ok`, `insert_leap`, `delete_leap`, `leap_in_progress`,
    /// `leap_occurred`, `error`, or `unknown`.
    pub state: &'static str,
    /// Why the clock could not be read (with `source: unavailable`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Interprets one `adjtimex` answer: its return value (the clock state), `status`,
/// `maxerror` and `esterror` (microseconds). Synchronised means `STA_UNSYNC` is clear and
/// the state is not `TIME_ERROR`.
pub fn interpret(ret: i64, status: i64, maxerror: i64, esterror: i64) -> ClockStatus {
    let state = match ret {
        0 => "ok",
        1 => "insert_leap",
        2 => "delete_leap",
        3 => "leap_in_progress",
        4 => "leap_occurred",
        TIME_ERROR => "error",
        _ => "unknown",
    };
    ClockStatus {
        synchronised: status & STA_UNSYNC == 0 && ret != TIME_ERROR && (0..=4).contains(&ret),
        source: "adjtimex",
        max_error_us: u64::try_from(maxerror).ok(),
        est_error_us: u64::try_from(esterror).ok(),
        state,
        error: None,
    }
}

/// The clock's status now. Never fails: a refused call (a sandbox without `adjtimex`)
/// reports `synchronised: false`, `source: unavailable` and the reason.
pub fn read() -> ClockStatus {
    match adjtimex() {
        Ok((ret, status, maxerror, esterror)) => interpret(ret, status, maxerror, esterror),
        Err(e) => ClockStatus {
            synchronised: false,
            source: "unavailable",
            max_error_us: None,
            est_error_us: None,
            state: "unknown",
            error: Some(e.to_string()),
        },
    }
}

/// `adjtimex(2)` with `modes = 0` (read only): `(return value, status, maxerror, esterror)`.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn adjtimex() -> std::io::Result<(i64, i64, i64, i64)> {
    // SAFETY: `timex` is plain integers, so all-zero is a valid value, and zero `modes`
    // asks the kernel only to fill it in; the pointer is to a live local for the call.
    let mut tx: libc::timex = unsafe { std::mem::zeroed() };
    let ret = unsafe { libc::adjtimex(&mut tx) };
    if ret == -1 {
        return Err(std::io::Error::last_os_error());
    }
    // `c_long` is 32 bits on 32-bit ARM (older Pi OS images), 64 here: widen explicitly.
    #[allow(clippy::useless_conversion)]
    Ok((
        i64::from(ret),
        i64::from(tx.status),
        i64::from(tx.maxerror),
        i64::from(tx.esterror),
    ))
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn adjtimex() -> std::io::Result<(i64, i64, i64, i64)> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "adjtimex is only read on Linux (glibc)",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_disciplined_clock_is_synchronised_with_its_error_bounds() {
        // As an NTP daemon leaves it: STA_PLL (0x0001) and STA_NANO (0x2000) set.
        let s = interpret(0, 0x2001, 16_500, 120);
        assert!(s.synchronised);
        assert_eq!(s.state, "ok");
        assert_eq!((s.max_error_us, s.est_error_us), (Some(16_500), Some(120)));
    }

    #[test]
    fn the_unsync_flag_or_time_error_means_not_synchronised() {
        // A fresh boot without network: STA_UNSYNC, TIME_ERROR, maxerror at 16 s.
        let s = interpret(5, 0x0040, 16_000_000, 16_000_000);
        assert!(!s.synchronised);
        assert_eq!(s.state, "error");
        // The flag alone is enough.
        assert!(!interpret(0, 0x0041, 10, 10).synchronised);
        // TIME_ERROR alone too (e.g. STA_CLOCKERR).
        assert!(!interpret(5, 0x1000, 10, 10).synchronised);
    }

    #[test]
    fn leap_second_states_stay_synchronised_and_are_named() {
        let s = interpret(1, 0x0011, 100, 10);
        assert!(s.synchronised);
        assert_eq!(s.state, "insert_leap");
        assert_eq!(interpret(4, 0, 1, 1).state, "leap_occurred");
    }

    #[test]
    fn nonsense_values_are_not_trusted() {
        let s = interpret(42, 0, -1, -7);
        assert!(!s.synchronised);
        assert_eq!(s.state, "unknown");
        assert_eq!((s.max_error_us, s.est_error_us), (None, None));
    }

    #[test]
    fn the_real_call_answers_on_this_machine() {
        let s = read();
        assert_eq!(s.source, "adjtimex", "{s:?}");
        assert!(s.error.is_none());
        assert!(s.max_error_us.is_some(), "{s:?}");
        eprintln!("clock here: {s:?}");
    }
}
