//! A process's resource figures from `/proc` (Linux): this process's for `/metrics`, the
//! service's for the resource benchmark.

/// What `/proc/<pid>` says about a process.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ProcessFigures {
    /// Resident set size now, bytes (`VmRSS`).
    pub rss_bytes: u64,
    /// Peak resident set size, bytes (`VmHWM`).
    pub rss_peak_bytes: u64,
    /// Threads.
    pub threads: u64,
    /// User + system CPU time, seconds.
    pub cpu_seconds: f64,
    /// When the process started, Unix seconds (from the boot time and its start tick:
    /// the wall clock, for people and dashboards only).
    pub start_time_seconds: f64,
}

/// Keeps large allocations out of the heap for the service's life: each is mapped and
/// unmapped on its own, so its pages go back to the system when it is freed.
///
/// Why: an argon2id hash or check (every login, the demo accounts at start) allocates 19 MiB
/// at once. glibc maps such a block, but on freeing it raises its mapping threshold to that
/// size, so the next one comes from a thread's heap and stays resident: the demo service
/// sat at 33 MB after start-up instead of 13 MB (the goal is 20 MB). Setting the threshold
/// explicitly (to glibc's own default) turns that adjustment off. Other C libraries keep
/// their own policy.
pub fn return_large_allocations() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallopt only sets an allocator parameter; called before other threads.
        let ok = unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024) };
        if ok != 1 {
            tracing::debug!("mallopt(M_MMAP_THRESHOLD) refused");
        }
    }
}

/// A storm is over when this many fewer connections are open than at its peak.
const STORM: usize = 256;

/// Watches `open` (connections and viewers now) once a second and, when it has fallen by
/// [`STORM`] from its peak, gives the heap's free pages back to the system
/// ([`release_free_memory`]); the peak then starts again from what is open.
///
/// Why: thousands of connections opening and closing leave the memory they used free but
/// scattered through glibc's heaps, below chunks still in use, where its automatic trim
/// (only the top of a heap) never reaches: measured with `benches/storm_rss.py`, the
/// service kept 18 MB after a storm of 2,000 `/ws/public` viewers, 400 SSE streams and
/// 2,000 requests, and grew with each storm; `malloc_trim(0)` gave 14 MB of it back.
/// `M_ARENA_MAX = 1` (tried through `GLIBC_TUNABLES`) kept 16 MB: the arenas are not it.
pub fn trim_after_storms(open: impl Fn() -> usize + Send + 'static) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = crate::clock::every(std::time::Duration::from_secs(1));
        let mut peak = 0;
        loop {
            tick.tick().await;
            let now = open();
            peak = now.max(peak);
            if peak - now >= STORM {
                peak = now;
                // It walks the heaps under their locks: not on a runtime worker.
                let _ = tokio::task::spawn_blocking(release_free_memory).await;
            }
        }
    })
}

/// Returns every free page of the heap to the system (`malloc_trim(0)`, glibc); whether
/// anything was given back. Other C libraries: nothing to do here.
pub fn release_free_memory() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: malloc_trim only releases free memory; it takes the allocator's locks.
        let released = unsafe { libc::malloc_trim(0) } == 1;
        tracing::debug!(released, "malloc_trim after a connection storm");
        released
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    false
}

/// Clock ticks per second for `/proc` times.
fn ticks_per_second() -> f64 {
    // SAFETY: sysconf has no preconditions; it only reads a constant.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

/// The `kB` value of `key` in a `/proc/<pid>/status` text, in bytes.
fn status_kb(status: &str, key: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with(key))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Parses `/proc/<pid>/stat` into (utime + stime ticks, start tick).
fn stat_ticks(stat: &str) -> Option<(u64, u64)> {
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    let (_, rest) = stat.rsplit_once(')')?;
    let f: Vec<&str> = rest.split_whitespace().collect();
    // Field 3 (state) is f[0]; utime is field 14, stime 15, starttime 22.
    let utime: u64 = f.get(11)?.parse().ok()?;
    let stime: u64 = f.get(12)?.parse().ok()?;
    let start: u64 = f.get(19)?.parse().ok()?;
    Some((utime + stime, start))
}

impl ProcessFigures {
    /// This process's figures; fields that cannot be read stay zero.
    pub fn read() -> ProcessFigures {
        ProcessFigures::at("/proc/self")
    }

    /// Process `pid`'s figures; fields that cannot be read stay zero.
    pub fn of(pid: u32) -> ProcessFigures {
        ProcessFigures::at(&format!("/proc/{pid}"))
    }

    fn at(dir: &str) -> ProcessFigures {
        let mut p = ProcessFigures::default();
        if let Ok(status) = std::fs::read_to_string(format!("{dir}/status")) {
            p.rss_bytes = status_kb(&status, "VmRSS:").unwrap_or(0);
            p.rss_peak_bytes = status_kb(&status, "VmHWM:").unwrap_or(0);
            p.threads = status
                .lines()
                .find_map(|l| l.strip_prefix("Threads:"))
                .and_then(|n| n.trim().parse().ok())
                .unwrap_or(0);
        }
        let hz = ticks_per_second();
        if let Some((cpu, start)) = std::fs::read_to_string(format!("{dir}/stat"))
            .ok()
            .as_deref()
            .and_then(stat_ticks)
        {
            p.cpu_seconds = cpu as f64 / hz;
            let boot = std::fs::read_to_string("/proc/stat").ok().and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("btime "))
                    .and_then(|n| n.trim().parse::<u64>().ok())
            });
            if let Some(boot) = boot {
                p.start_time_seconds = boot as f64 + start as f64 / hz;
            }
        }
        p
    }
}

/// Descriptors a service needs besides its HTTP connections: the database and its WAL,
/// the spill file, the PTY or serial port, the broker, logs, the runtime's own.
pub const FD_OVERHEAD: u64 = 64;

/// Raises this process's soft limit on open files to its hard limit (capped at 1 << 20
/// when unlimited), as far as the kernel allows; answers the limit now in force. A
/// service that serves thousands of viewers must not stop at a login shell's 1,024.
pub fn raise_fd_limit() -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read and write the struct passed by pointer.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return 1024;
    }
    let wanted = if lim.rlim_max == libc::RLIM_INFINITY {
        1 << 20
    } else {
        lim.rlim_max
    };
    if lim.rlim_cur < wanted {
        let raised = libc::rlimit {
            rlim_cur: wanted,
            rlim_max: lim.rlim_max,
        };
        // SAFETY: as above.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            return wanted;
        }
    }
    lim.rlim_cur
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_found_after_the_command_name() {
        let stat = "42 (a (b) c) S 1 42 42 0 -1 4194560 100 0 0 0 7 3 0 0 20 0 5 0 12345 1000 200";
        assert_eq!(stat_ticks(stat), Some((10, 12345)));
        assert_eq!(
            status_kb("VmRSS:\t  1234 kB\n", "VmRSS:"),
            Some(1234 * 1024)
        );
    }

    #[test]
    fn this_process_has_figures() {
        let p = ProcessFigures::read();
        assert!(p.rss_bytes > 0 && p.rss_peak_bytes >= p.rss_bytes, "{p:?}");
        assert!(p.threads >= 1 && p.start_time_seconds > 1.0e9, "{p:?}");
    }
}
