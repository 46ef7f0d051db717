#!/usr/bin/env bash
# Installs croupier as a systemd service on a Raspberry Pi (or any systemd Linux).
# Idempotent: run it again after building a new binary to upgrade.
#
#   sudo systemd/install.sh [--binary PATH]    install or upgrade, enable and (re)start
#   sudo systemd/install.sh --uninstall        stop, disable, remove units, rules and binary
#                                              (keeps /etc/croupier and /var/lib/croupier)
#
# What it does: a `croupier` system user in the dialout and gpio groups; the binary in
# /usr/local/bin; /etc/croupier/table.toml from systemd/table.toml unless one exists; the
# unit in /etc/systemd/system; the udev rules in /etc/udev/rules.d.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=${DESTDIR:-}
binary="$here/../target/release/croupier"
action=install
while (($#)); do
  case "$1" in
    --binary) binary=$2; shift 2 ;;
    --uninstall) action=uninstall; shift ;;
    -h|--help) sed -n 2,12p "$0"; exit 0 ;;
    *) echo "install.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

have_systemd() { [ -z "$root" ] && [ -d /run/systemd/system ]; }

if [ "$action" = uninstall ]; then
  if have_systemd; then
    systemctl disable --now croupier.service croupier-backup.timer 2>/dev/null || true
  fi
  rm -f "$root/etc/systemd/system/croupier.service" "$root/etc/udev/rules.d/99-croupier.rules" \
        "$root/etc/systemd/system/croupier-backup.service" "$root/etc/systemd/system/croupier-backup.timer" \
        "$root/usr/local/bin/croupier"
  if have_systemd; then
    systemctl daemon-reload
    udevadm control --reload-rules 2>/dev/null || true
  fi
  echo "croupier removed (kept /etc/croupier and /var/lib/croupier: delete them to drop config and data)"
  exit 0
fi

[ -x "$binary" ] || { echo "install.sh: no binary at $binary (cargo build --release first, or --binary PATH)" >&2; exit 1; }

# The groups and the user (no home, no login); not in a DESTDIR staging install.
if [ -z "$root" ]; then
  for g in dialout gpio; do
    getent group "$g" >/dev/null || groupadd --system "$g"
  done
  if ! id croupier >/dev/null 2>&1; then
    useradd --system --no-create-home --home-dir /var/lib/croupier --shell /usr/sbin/nologin \
            --user-group --groups dialout,gpio croupier
  else
    usermod -a -G dialout,gpio croupier
  fi
fi

install -D -m 0755 "$binary" "$root/usr/local/bin/croupier"
install -D -m 0644 "$here/croupier.service" "$root/etc/systemd/system/croupier.service"
install -D -m 0644 "$here/croupier-backup.service" "$root/etc/systemd/system/croupier-backup.service"
install -D -m 0644 "$here/croupier-backup.timer" "$root/etc/systemd/system/croupier-backup.timer"
install -D -m 0644 "$here/99-croupier.rules" "$root/etc/udev/rules.d/99-croupier.rules"
install -d -m 0750 "$root/etc/croupier"
if [ ! -e "$root/etc/croupier/table.toml" ]; then
  install -m 0640 "$here/table.toml" "$root/etc/croupier/table.toml"
  echo "wrote /etc/croupier/table.toml: set your shoe, variant and buttons there"
else
  echo "kept the existing /etc/croupier/table.toml"
fi
[ -n "$root" ] || chgrp croupier "$root/etc/croupier" "$root/etc/croupier/table.toml"
"$root/usr/local/bin/croupier" check-config "$root/etc/croupier/table.toml"

if have_systemd; then
  udevadm control --reload-rules && udevadm trigger --subsystem-match=tty --subsystem-match=gpio || true
  systemctl daemon-reload
  systemctl enable croupier.service croupier-backup.timer
  systemctl restart croupier.service
  systemctl start croupier-backup.timer
  systemctl --no-pager status croupier.service | head -5 || true
fi
echo "croupier installed"
