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
//!
//! The process's timers live here too: [`every`] and [`on_grid`] put its periodic timers on
//! one grid, and [`Alarm`] is a one-shot timer that wakes the runtime once. Each wake-up of
//! an idle runtime costs a thread switched out and back in, the figure a Pi pays for
//! (`docs/src/benchmarks.md`, "Timers on one grid").

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
    /// Steps of the wall clock seen since the start (`StepWatch`): each moved the rows'
    /// `at_ms` by more than a second against the monotonic clock.
    pub steps: u64,
    /// The last of them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_step: Option<ClockStep>,
}

/// A step of the wall clock: at `at_ms` (wall time after it) it read `step_ms` away from
/// where the monotonic clock says it should be (negative: it went back).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct ClockStep {
    /// The wall time just after the step, Unix ms.
    pub at_ms: i64,
    /// How far it moved, ms (negative: backwards).
    pub step_ms: i64,
}

/// A difference between the wall clock's and the monotonic clock's progress above this is
/// a step (NTP slews by at most 0.5 ms a second; a second is a set, not a slew).
pub const STEP_THRESHOLD_MS: i64 = 1000;

/// Watches the wall clock against the monotonic one (issue #32 item 12): every row's
/// `at_ms` and a once-a-second probe pass through [`StepWatch::observe`], so a step (a
/// manual `date -s`, an NTP daemon's first correction after a boot without network) is
/// logged, counted, and shown on `/readyz` (`clock.steps`, `clock.last_step`). The table's
/// order never depends on it (`seq` orders everything); this is for the people who read
/// the timestamps.
#[derive(Debug, Default)]
pub struct StepWatch {
    inner: std::sync::Mutex<StepState>,
}

#[derive(Debug, Default)]
struct StepState {
    last: Option<(i64, std::time::Instant)>,
    steps: u64,
    last_step: Option<ClockStep>,
}

impl StepWatch {
    /// The wall clock read `wall_ms` at monotonic `mono`; answers the step it shows, if
    /// any (and counts it).
    pub fn observe(&self, wall_ms: i64, mono: std::time::Instant) -> Option<ClockStep> {
        let mut s = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let step = s.last.and_then(|(wall0, mono0)| {
            let elapsed = i64::try_from(mono.saturating_duration_since(mono0).as_millis())
                .unwrap_or(i64::MAX);
            let step_ms = wall_ms - wall0.saturating_add(elapsed);
            (step_ms.abs() > STEP_THRESHOLD_MS).then_some(ClockStep {
                at_ms: wall_ms,
                step_ms,
            })
        });
        if let Some(step) = step {
            s.steps += 1;
            s.last_step = Some(step);
        }
        if s.last.is_none_or(|(_, m)| mono >= m) {
            s.last = Some((wall_ms, mono));
        }
        step
    }

    /// Steps seen so far, and the last.
    pub fn summary(&self) -> (u64, Option<ClockStep>) {
        let s = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        (s.steps, s.last_step)
    }
}

/// This process's watch.
pub static STEPS: std::sync::LazyLock<StepWatch> = std::sync::LazyLock::new(StepWatch::default);

/// Observes the wall clock reading `wall_ms` now; a step is logged.
pub fn observe_wall(wall_ms: i64) {
    if let Some(step) = STEPS.observe(wall_ms, std::time::Instant::now()) {
        tracing::warn!(
            step_ms = step.step_ms,
            at_ms = step.at_ms,
            "the wall clock stepped {} by {} ms: rows' at_ms jump with it (their order is their seq)",
            if step.step_ms < 0 { "back" } else { "forward" },
            step.step_ms.abs()
        );
    }
}

/// The wall clock now, Unix ms, observed for steps.
pub fn wall_now_ms() -> i64 {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    observe_wall(ms);
    ms
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
        steps: 0,
        last_step: None,
    }
}

/// The clock's status now. Never fails: a refused call (a sandbox without `adjtimex`)
/// reports `synchronised: false`, `source: unavailable` and the reason.
pub fn read() -> ClockStatus {
    let (steps, last_step) = STEPS.summary();
    let status = match adjtimex() {
        Ok((ret, status, maxerror, esterror)) => interpret(ret, status, maxerror, esterror),
        Err(e) => ClockStatus {
            synchronised: false,
            source: "unavailable",
            max_error_us: None,
            est_error_us: None,
            state: "unknown",
            error: Some(e.to_string()),
            steps: 0,
            last_step: None,
        },
    };
    ClockStatus {
        steps,
        last_step,
        ..status
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

/// Sleeps until `at` on the runtime's monotonic clock, or forever without one: a deadline
/// in a `select!` that may have none (the table loop's timers, the publisher's flush).
pub async fn until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The instant every periodic timer of the process counts from (see [`every`]).
static GRID: std::sync::OnceLock<tokio::time::Instant> = std::sync::OnceLock::new();

/// The first point at or after `at` of the process's grid of step `period` (for `at`
/// before the grid's origin, the origin).
pub fn on_grid(at: tokio::time::Instant, period: std::time::Duration) -> tokio::time::Instant {
    let origin = *GRID.get_or_init(tokio::time::Instant::now);
    let since = at.saturating_duration_since(origin).as_nanos();
    let step = period.as_nanos().max(1);
    let steps = since.div_ceil(step);
    let offset = u64::try_from(steps.saturating_mul(step)).unwrap_or(u64::MAX);
    origin + std::time::Duration::from_nanos(offset)
}

/// An interval of `period` whose ticks fall on one grid shared by the whole process, so
/// that every periodic timer of the same period (the heartbeat, the checkpointer, the
/// wall-clock watch, the sessions' re-checks, the publisher's flush) fires at the same
/// instants and a quiet table wakes once a second, not once per timer. Each timer of its
/// own cost two wake-ups a second: tokio's timer wheel wakes at the start of the 64 ms
/// slot a deadline falls in and again at the deadline (`docs/src/benchmarks.md`,
/// "Timers on one grid").
///
/// Unlike `tokio::time::interval`, the first tick is the next point of the grid, not
/// now; a tick missed is skipped, so the ticks stay on the grid.
pub fn every(period: std::time::Duration) -> tokio::time::Interval {
    let first = on_grid(
        tokio::time::Instant::now() + std::time::Duration::from_nanos(1),
        period,
    );
    let mut interval = tokio::time::interval_at(first, period);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    interval
}

/// A one-shot alarm on a timerfd of its own, which wakes the runtime once, at the
/// deadline. A tokio timer 64 ms or more away wakes it twice: at the start of the wheel's
/// slot the deadline falls in, and at the deadline. The demo dealer waits its pace before
/// every action; on tokio's timer that was one wake-up more for every row
/// (`docs/src/benchmarks.md`, "Timers on one grid"). Where a timerfd cannot be made, it
/// falls back to tokio's timer.
pub struct Alarm {
    fd: Option<tokio::io::unix::AsyncFd<AlarmFd>>,
}

/// The timerfd, as `AsyncFd` takes it.
struct AlarmFd(nix::sys::timerfd::TimerFd);

impl std::os::fd::AsRawFd for AlarmFd {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsFd;
        self.0.as_fd().as_raw_fd()
    }
}

impl Alarm {
    /// An alarm, not set.
    pub fn new() -> Alarm {
        use nix::sys::timerfd::{ClockId, TimerFd, TimerFlags};
        let made = TimerFd::new(
            ClockId::CLOCK_MONOTONIC,
            TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC,
        )
        .map_err(std::io::Error::from)
        // SAFETY: the `TimerFd` owns its fd, open for its whole life and always the same,
        // and the `AsyncFd` owns the `TimerFd`: the fd stays registered only while valid.
        .and_then(|fd| {
            unsafe { tokio::io::unix::AsyncFd::register(AlarmFd(fd)) }.map_err(Into::into)
        });
        match made {
            Ok(fd) => Alarm { fd: Some(fd) },
            Err(e) => {
                tracing::debug!(error = %e, "no timerfd: the alarm uses tokio's timer");
                Alarm { fd: None }
            }
        }
    }

    /// Whether it runs on its own timerfd (not on tokio's timer).
    pub fn on_timerfd(&self) -> bool {
        self.fd.is_some()
    }

    /// Waits `after`.
    pub async fn sleep(&self, after: std::time::Duration) {
        if let Some(fd) = &self.fd {
            if !after.is_zero() && Alarm::ring(fd, after).await.is_ok() {
                return;
            }
        }
        tokio::time::sleep(after).await;
    }

    async fn ring(
        fd: &tokio::io::unix::AsyncFd<AlarmFd>,
        after: std::time::Duration,
    ) -> std::io::Result<()> {
        use nix::sys::time::TimeSpec;
        use nix::sys::timerfd::{Expiration, TimerSetTimeFlags};
        // Setting it again replaces a deadline left by a wait that was dropped.
        fd.get_ref().0.set(
            Expiration::OneShot(TimeSpec::from_duration(after)),
            TimerSetTimeFlags::empty(),
        )?;
        loop {
            let mut ready = fd.readable().await?;
            // Not expired yet (a readiness left over): EAGAIN, and the guard clears it.
            if let Ok(rang) = ready.try_io(|fd| fd.get_ref().0.wait().map_err(Into::into)) {
                return rang;
            }
        }
    }
}

impl Default for Alarm {
    fn default() -> Alarm {
        Alarm::new()
    }
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
    fn a_wall_clock_step_either_way_is_seen_and_a_slew_is_not() {
        let w = StepWatch::default();
        let t0 = std::time::Instant::now();
        let at = |s: u64| t0 + std::time::Duration::from_millis(s);
        assert_eq!(w.observe(1_000_000, at(0)), None, "the first reading");
        assert_eq!(w.observe(1_010_000, at(10_000)), None, "in step");
        assert_eq!(w.observe(1_020_400, at(20_000)), None, "400 ms off: a slew");
        // Set back an hour.
        let back = w
            .observe(1_030_400 - 3_600_000, at(30_000))
            .expect("a step back");
        assert_eq!(back.step_ms, -3_600_000);
        // Then on from there, in step; then forward 5 s.
        assert_eq!(w.observe(1_040_400 - 3_600_000, at(40_000)), None);
        let fwd = w
            .observe(1_055_400 - 3_600_000, at(50_000))
            .expect("a step forward");
        assert_eq!(fwd.step_ms, 5_000);
        assert_eq!(w.summary(), (2, Some(fwd)));
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
    fn a_point_on_the_grid_is_the_first_at_or_after_the_instant() {
        let period = std::time::Duration::from_millis(300);
        let now = tokio::time::Instant::now();
        for later in [0, 1, 299, 300, 301, 12_345] {
            let at = now + std::time::Duration::from_millis(later);
            let point = on_grid(at, period);
            assert!(point >= at && point - at < period, "{later} ms");
            assert_eq!(
                on_grid(point, period),
                point,
                "a point of the grid is its own"
            );
            let apart = (on_grid(at + period * 7, period) - point).as_nanos();
            assert_eq!(apart % period.as_nanos(), 0, "{later} ms");
        }
    }

    #[tokio::test]
    async fn intervals_made_at_different_times_tick_together() {
        let period = std::time::Duration::from_millis(200);
        let mut first = every(period);
        tokio::time::sleep(std::time::Duration::from_millis(130)).await;
        let mut second = every(period);
        let made = tokio::time::Instant::now();
        let (a, b) = tokio::join!(first.tick(), second.tick());
        assert!(b >= made, "the first tick is not at once");
        let (c, d) = tokio::join!(first.tick(), second.tick());
        // The instants each tick was due at, not when the test saw them: exact under load.
        // Only pairs across the two intervals: one interval's own ticks are a period apart
        // whatever its origin.
        for (x, y) in [(a, b), (a, d), (c, b), (c, d)] {
            let apart = if x > y { x - y } else { y - x };
            assert_eq!(apart.as_nanos() % period.as_nanos(), 0, "{x:?} {y:?}");
        }
    }

    #[tokio::test]
    async fn an_alarm_rings_after_its_time_every_time_it_is_set() {
        let alarm = Alarm::new();
        assert!(alarm.on_timerfd(), "Linux makes a timerfd");
        for ms in [30, 1, 70] {
            let after = std::time::Duration::from_millis(ms);
            let set = std::time::Instant::now();
            alarm.sleep(after).await;
            assert!(
                set.elapsed() >= after,
                "{ms} ms: rang after {:?}",
                set.elapsed()
            );
        }
        // A wait given up leaves its deadline behind; the next wait is the new one's.
        let dropped = tokio::time::timeout(
            std::time::Duration::from_millis(5),
            alarm.sleep(std::time::Duration::from_millis(40)),
        )
        .await;
        assert!(dropped.is_err());
        let set = std::time::Instant::now();
        alarm.sleep(std::time::Duration::from_millis(80)).await;
        assert!(set.elapsed() >= std::time::Duration::from_millis(80));
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
