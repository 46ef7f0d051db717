#!/usr/bin/env bash
# Installs one croupier role as a systemd service (a table on a Raspberry Pi, or a studio's
# relay or floor on any systemd Linux). Idempotent: run it again after building a new binary
# to upgrade.
#
#   sudo systemd/install.sh [--role table|relay|floor] [--binary PATH]
#                                     install or upgrade, enable and (re)start the role
#   sudo systemd/install.sh [--role R] --uninstall
#                                     stop, disable and remove the role's units (and the
#                                     binary once no role is left; keeps /etc/croupier and
#                                     /var/lib/croupier)
#
# A table's binary is `cargo build --profile pi --no-default-features` (target/pi/croupier:
# no relay, floor or PostgreSQL inside), taken by default when present; a relay's or a
# floor's is the default `cargo build --release` (target/release/croupier).
# The role defaults to table. Every role: a `croupier` system user, the binary in
# /usr/local/bin, the role's unit in /etc/systemd/system. table: the user in the dialout
# and gpio groups, /etc/croupier/table.toml from systemd/table.toml unless one exists, the
# backup timer, the udev rules in /etc/udev/rules.d. relay, floor: /etc/croupier/relay.env
# or floor.env (their arguments and, for the floor, the database's password; mode 0600,
# root's) from systemd/ unless one exists: edit it, then start the service.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=${DESTDIR:-}
binary=""
action=install
role=table
while (($#)); do
  case "$1" in
    --binary) binary=$2; shift 2 ;;
    --role) role=$2; shift 2 ;;
    --uninstall) action=uninstall; shift ;;
    -h|--help) sed -n 2,20p "$0"; exit 0 ;;
    *) echo "install.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

# Each role's units (the first is the service) and its files in /etc/croupier.
case "$role" in
  table) units=(croupier.service croupier-backup.service croupier-backup.timer) ;;
  relay) units=(croupier-relay.service) ;;
  floor) units=(croupier-floor.service) ;;
  *) echo "install.sh: unknown role $role (table, relay or floor)" >&2; exit 2 ;;
esac
service=${units[0]}
all_services=(croupier.service croupier-relay.service croupier-floor.service)

have_systemd() { [ -z "$root" ] && [ -d /run/systemd/system ]; }

if [ "$action" = uninstall ]; then
  if have_systemd; then
    enabled=("$service")
    [ "$role" = table ] && enabled+=(croupier-backup.timer)
    systemctl disable --now "${enabled[@]}" 2>/dev/null || true
  fi
  for u in "${units[@]}"; do
    rm -f "$root/etc/systemd/system/$u"
  done
  [ "$role" = table ] && rm -f "$root/etc/udev/rules.d/99-croupier.rules"
  # The binary goes with the last role on this machine.
  left=0
  for s in "${all_services[@]}"; do
    [ -e "$root/etc/systemd/system/$s" ] && left=1
  done
  [ "$left" = 1 ] || rm -f "$root/usr/local/bin/croupier"
  if have_systemd; then
    systemctl daemon-reload
    [ "$role" = table ] && { udevadm control --reload-rules 2>/dev/null || true; }
  fi
  echo "croupier $role removed (kept /etc/croupier and /var/lib/croupier: delete them to drop config and data)"
  exit 0
fi

if [ -z "$binary" ]; then
  binary="$here/../target/release/croupier"
  [ "$role" = table ] && [ -x "$here/../target/pi/croupier" ] && binary="$here/../target/pi/croupier"
fi
[ -x "$binary" ] || { echo "install.sh: no binary at $binary (a table: cargo build --profile pi --no-default-features; a relay or floor: cargo build --release; or --binary PATH)" >&2; exit 1; }
# A table's build leaves the studio's roles out (Cargo.toml [features]); one binary serves
# every role on a machine, so it must have the command of each studio role that is here.
for r in relay floor; do
  if [ "$role" = "$r" ] || [ -e "$root/etc/systemd/system/croupier-$r.service" ]; then
    "$binary" help "$r" >/dev/null 2>&1 || {
      echo "install.sh: $binary has no '$r' command: it is a table's build; the $r needs the default build (cargo build --release)" >&2
      exit 1
    }
  fi
done

# The user (no home, no login) and, for a table, its device groups; not in a DESTDIR
# staging install. A relay or a floor needs no device group.
if [ -z "$root" ]; then
  if [ "$role" = table ]; then
    for g in dialout gpio; do
      getent group "$g" >/dev/null || groupadd --system "$g"
    done
  fi
  if ! id croupier >/dev/null 2>&1; then
    groups=()
    [ "$role" = table ] && groups=(--groups dialout,gpio)
    useradd --system --no-create-home --home-dir /var/lib/croupier --shell /usr/sbin/nologin \
            --user-group "${groups[@]}" croupier
  elif [ "$role" = table ]; then
    usermod -a -G dialout,gpio croupier
  fi
fi

install -D -m 0755 "$binary" "$root/usr/local/bin/croupier"
# The units name the Debian package's binary (/usr/bin, Cargo.toml [package.metadata.deb]);
# this script installs a locally built one, which belongs in /usr/local/bin.
for u in "${units[@]}"; do
  install -d "$root/etc/systemd/system"
  sed 's|/usr/bin/croupier|/usr/local/bin/croupier|g' "$here/$u" > "$root/etc/systemd/system/$u"
  chmod 0644 "$root/etc/systemd/system/$u"
done
install -d -m 0750 "$root/etc/croupier"
[ -n "$root" ] || chgrp croupier "$root/etc/croupier"

if [ "$role" = table ]; then
  install -D -m 0644 "$here/99-croupier.rules" "$root/etc/udev/rules.d/99-croupier.rules"
  if [ ! -e "$root/etc/croupier/table.toml" ]; then
    install -m 0640 "$here/table.toml" "$root/etc/croupier/table.toml"
    echo "wrote /etc/croupier/table.toml: set your shoe, variant and buttons there"
  else
    echo "kept the existing /etc/croupier/table.toml"
  fi
  [ -n "$root" ] || chgrp croupier "$root/etc/croupier/table.toml"
  "$root/usr/local/bin/croupier" check-config "$root/etc/croupier/table.toml"
else
  # Root's alone: systemd reads it before dropping privileges, and the floor's holds the
  # database's password.
  env="$role.env"
  if [ ! -e "$root/etc/croupier/$env" ]; then
    install -m 0600 "$here/$env" "$root/etc/croupier/$env"
    fresh=1
    echo "wrote /etc/croupier/$env: set the broker, credentials and addresses there, then: systemctl start $service"
  else
    echo "kept the existing /etc/croupier/$env"
  fi
fi

if have_systemd; then
  systemctl daemon-reload
  if [ "$role" = table ]; then
    udevadm control --reload-rules && udevadm trigger --subsystem-match=tty --subsystem-match=gpio || true
    systemctl enable croupier.service croupier-backup.timer
    systemctl restart croupier.service
    systemctl start croupier-backup.timer
  else
    systemctl enable "$service"
    # Not with the example's placeholder hosts: it would only fail and restart.
    [ "${fresh:-0}" = 1 ] || systemctl restart "$service"
  fi
  systemctl --no-pager status "$service" | head -5 || true
fi
echo "croupier $role installed"
