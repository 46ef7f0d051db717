//! A studio's network for a test (issue #61's nemesis): each part in its own network
//! namespace, joined to the test's root namespace by veth pairs on bridges. A namespace
//! may have a leg on several bridges (the relay: one towards the cluster, one towards its
//! viewers), so cutting one leg is a partition of exactly that pair of sides: every frame
//! into and out of the leg's host end dropped (an nftables `netdev` table on its ingress
//! and egress hooks), without a reset, as a dead switch port does.
//!
//! Why a filter and not the link set down: the root namespace is the machine's, where the
//! other tests' Chromium runs, and Chromium aborts what a page is loading when it hears
//! the host's interfaces change (`ERR_NETWORK_CHANGED`). A link set down or up is such a
//! change, and so is the IPv6 link-local address the kernel gives every interface that
//! comes up; a filter is neither. So the links are made without IPv6 addresses
//! (`addrgenmode none`: the studio speaks IPv4) and never change state once up: the only
//! changes the root namespace sees are the network's making and its removal.
//!
//! A single path (one TCP port of one peer) is cut with an nftables rule in the
//! namespace instead: a half-open connection while the others work.
//!
//! Needs root, `ip` and `ss` (iproute2) and `nft` (nftables). Without them a test is skipped locally and fails under
//! CI (`CI` set), where `.ci/run` runs as root on a machine that has both.
#![allow(dead_code)]

use crate::skip;

use std::net::Ipv4Addr;
use std::os::unix::process::CommandExt;
use std::process::Command;

/// One bridge: a subnet `10.X.B.0/24` with the root namespace at `.1`.
#[derive(Clone, Debug)]
pub struct Bridge {
    /// The bridge's interface in the root namespace.
    pub dev: String,
    /// Its index `B` in the subnet.
    pub index: u8,
    /// The root namespace's address on it: where the test's own servers (fault proxies,
    /// the PostgreSQL proxy) listen for the namespaces.
    pub root: Ipv4Addr,
    hosts: u8,
}

/// One leg: a namespace's interface on a bridge.
#[derive(Clone, Debug)]
pub struct Leg {
    /// The host end's interface (in the root namespace, on the bridge): set down to cut.
    pub host_dev: String,
    /// The namespace's address on the bridge.
    pub addr: Ipv4Addr,
}

/// A part's namespace and its legs, one per bridge it joins (in the order given).
#[derive(Clone, Debug)]
pub struct Host {
    /// The namespace's name (`ip netns`).
    pub ns: String,
    /// Its legs.
    pub legs: Vec<Leg>,
}

impl Host {
    /// Its address on its first bridge.
    pub fn addr(&self) -> Ipv4Addr {
        self.legs[0].addr
    }

    /// The remote ends of the TCP connections established in this namespace (`ss`).
    pub fn established_peers(&self) -> Vec<std::net::SocketAddr> {
        let out = Command::new("ip")
            .args([
                "netns",
                "exec",
                &self.ns,
                "ss",
                "-Htn",
                "state",
                "established",
            ])
            .output()
            .expect("ss");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.split_whitespace().last()?.parse().ok())
            .collect()
    }

    /// Silently drops, in this namespace, every TCP packet to or from port `port` of
    /// `peer`: the connections on that path stop answering without a reset, and new ones
    /// never connect, while every other path works. [`Host::unblock`] heals.
    pub fn block(&self, peer: Ipv4Addr, port: u16) {
        let nft = |args: &str| {
            let out = Command::new("ip")
                .args(["netns", "exec", &self.ns, "nft"])
                .args(args.split(' '))
                .output()
                .expect("nft");
            assert!(
                out.status.success(),
                "nft {args}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        nft("add table inet nemesis");
        nft("add chain inet nemesis out { type filter hook output priority 0 ; }");
        nft("add chain inet nemesis in { type filter hook input priority 0 ; }");
        nft(&format!(
            "add rule inet nemesis out ip daddr {peer} tcp dport {port} drop"
        ));
        nft(&format!(
            "add rule inet nemesis in ip saddr {peer} tcp sport {port} drop"
        ));
    }

    /// Removes every [`Host::block`].
    pub fn unblock(&self) {
        let _ = Command::new("ip")
            .args([
                "netns", "exec", &self.ns, "nft", "delete", "table", "inet", "nemesis",
            ])
            .output();
    }

    /// Makes `command` run in this namespace (the process itself, not a wrapper: its pid
    /// is the one the test signals).
    pub fn enter(&self, command: &mut Command) {
        enter(command, &self.ns);
    }
}

/// The network: bridges and namespaces, deleted with this value.
pub struct Net {
    tag: String,
    second_octet: u8,
    bridges: Vec<Bridge>,
    namespaces: Vec<String>,
    links: Vec<String>,
}

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("ip {args:?}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

fn must(args: &[&str]) {
    if let Err(e) = ip(args) {
        panic!("{e}");
    }
}

/// Whether this process may make namespaces: root, with `ip`.
fn capable() -> Result<(), String> {
    // SAFETY: geteuid(2) has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err("network namespaces need root".into());
    }
    ip(&["-V"]).map_err(|e| format!("iproute2's `ip` is missing: {e}"))?;
    Command::new("nft")
        .arg("--version")
        .output()
        .map(|_| ())
        .map_err(|e| format!("nftables' `nft` is missing: {e}"))
}

impl Net {
    /// A new, empty network; `None` (skipped) where namespaces cannot be made outside CI.
    pub fn create() -> Option<Net> {
        if let Err(why) = capable() {
            if std::env::var_os("CI").is_some() {
                panic!("CI: {why} (.ci/run runs as root on a machine with iproute2)");
            }
            skip::skipped(format_args!("{why}"));
            return None;
        }
        // Short names (an interface's is at most 15 bytes) from a number free on this
        // machine: two suites side by side each find their own. The probe bridge is gone
        // again before the network's own are made, so the numbers this process handed out
        // are kept too: two studios of one test would otherwise find the same one free.
        static HANDED_OUT: std::sync::Mutex<Vec<u32>> = std::sync::Mutex::new(Vec::new());
        let mut handed_out = HANDED_OUT
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let pid = std::process::id();
        for k in 0..200u32 {
            let n = (pid + k) % 200;
            if handed_out.contains(&n) {
                continue;
            }
            let tag = format!("nm{n}");
            let probe = format!("{tag}b0");
            if ip(&["link", "add", &probe, "type", "bridge"]).is_ok() {
                must(&["link", "del", &probe]);
                handed_out.push(n);
                return Some(Net {
                    tag,
                    second_octet: 40 + n as u8,
                    bridges: Vec::new(),
                    namespaces: Vec::new(),
                    links: Vec::new(),
                });
            }
        }
        panic!("no free name for a test network (200 taken: stale ones from crashed runs? `ip link | grep nm`)");
    }

    /// A new bridge, up, with the root namespace's address on it.
    pub fn bridge(&mut self) -> Bridge {
        let index = self.bridges.len() as u8;
        let dev = format!("{}b{index}", self.tag);
        let root = Ipv4Addr::new(10, self.second_octet, index, 1);
        must(&["link", "add", &dev, "type", "bridge"]);
        self.links.push(dev.clone());
        must(&["link", "set", &dev, "addrgenmode", "none"]);
        must(&["addr", "add", &format!("{root}/24"), "dev", &dev]);
        must(&["link", "set", &dev, "up"]);
        let b = Bridge {
            dev,
            index,
            root,
            hosts: 1,
        };
        self.bridges.push(b.clone());
        b
    }

    /// A new namespace `name` with a leg on each of `bridges` (by index), loopback up.
    pub fn host(&mut self, name: &str, bridges: &[u8]) -> Host {
        let ns = format!("{}-{name}", self.tag);
        let _ = ip(&["netns", "del", &ns]);
        must(&["netns", "add", &ns]);
        self.namespaces.push(ns.clone());
        must(&["-n", &ns, "link", "set", "lo", "up"]);
        let mut legs = Vec::new();
        for &b in bridges {
            let bridge = &mut self.bridges[b as usize];
            bridge.hosts += 1;
            let h = bridge.hosts;
            let host_dev = format!("{}h{b}x{h}", self.tag);
            let inner = format!("{}n{b}x{h}", self.tag);
            let addr = Ipv4Addr::new(10, self.second_octet, b, h);
            must(&[
                "link", "add", &host_dev, "type", "veth", "peer", "name", &inner,
            ]);
            self.links.push(host_dev.clone());
            must(&["link", "set", &host_dev, "addrgenmode", "none"]);
            must(&["link", "set", &inner, "addrgenmode", "none"]);
            must(&["link", "set", &host_dev, "master", &bridge.dev]);
            must(&["link", "set", &host_dev, "up"]);
            must(&["link", "set", &inner, "netns", &ns]);
            must(&[
                "-n",
                &ns,
                "addr",
                "add",
                &format!("{addr}/24"),
                "dev",
                &inner,
            ]);
            must(&["-n", &ns, "link", "set", &inner, "up"]);
            legs.push(Leg { host_dev, addr });
        }
        Host { ns, legs }
    }

    /// The bridges, in the order made.
    pub fn bridges(&self) -> &[Bridge] {
        &self.bridges
    }

    /// Cuts `leg`: nothing crosses it, and nobody is told (see the module's note on why
    /// a filter rather than the link set down).
    pub fn cut(&self, leg: &Leg) {
        let dev = &leg.host_dev;
        let rules = format!(
            "table netdev {table} {{\n\
             chain into {{ type filter hook ingress device \"{dev}\" priority 0; policy drop; }}\n\
             chain out {{ type filter hook egress device \"{dev}\" priority 0; policy drop; }}\n\
             }}\n",
            table = cut_table(dev)
        );
        let mut nft = Command::new("nft")
            .args(["-f", "-"])
            .stdin(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("nft");
        std::io::Write::write_all(nft.stdin.as_mut().expect("stdin"), rules.as_bytes())
            .expect("nft's input");
        drop(nft.stdin.take());
        let out = nft.wait_with_output().expect("nft");
        assert!(
            out.status.success(),
            "nft -f: {}\n{rules}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Heals `leg`.
    pub fn heal(&self, leg: &Leg) {
        let out = Command::new("nft")
            .args(["delete", "table", "netdev", &cut_table(&leg.host_dev)])
            .output()
            .expect("nft");
        assert!(
            out.status.success(),
            "nft delete table netdev {}: {}",
            cut_table(&leg.host_dev),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The nftables table that cuts the leg whose host end is `dev`.
fn cut_table(dev: &str) -> String {
    format!("cut_{dev}")
}

impl Drop for Net {
    fn drop(&mut self) {
        // A leg still cut: its table would outlive the link it filters.
        for l in &self.links {
            let _ = Command::new("nft")
                .args(["delete", "table", "netdev", &cut_table(l)])
                .stderr(std::process::Stdio::null())
                .output();
        }
        for ns in &self.namespaces {
            let _ = ip(&["netns", "del", ns]);
        }
        for l in self.links.iter().rev() {
            let _ = ip(&["link", "del", l]);
        }
    }
}

/// Makes `command` run in network namespace `ns`: setns(2) between fork and exec.
pub fn enter(command: &mut Command, ns: &str) {
    let path = format!("/run/netns/{ns}");
    let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    // SAFETY: setns(2) between fork and exec changes only the child; the file stays open
    // in the closure until the command is dropped.
    unsafe {
        command.pre_exec(move || {
            use std::os::fd::AsRawFd;
            if libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
}
