#!/usr/bin/env bash
# A single-node Ceph RADOS Gateway for tests: one mon, one OSD on memstore (RAM, nothing on disk),
# one radosgw, from Debian's packages (apt-get install -y radosgw ceph-mon ceph-osd), on 127.0.0.1
# only.
#
#   scripts/rgw.sh start   starts it (about 20 s) and prints the FERRY_TEST_S3_* settings to export
#   scripts/rgw.sh stop    stops it and removes its folder
#
# FERRY_RGW_DIR (default /tmp/ferry-rgw) and FERRY_RGW_PORT (default 7480) move it.
set -euo pipefail
DIR=${FERRY_RGW_DIR:-/tmp/ferry-rgw}
PORT=${FERRY_RGW_PORT:-7480}
MON_PORT=${FERRY_RGW_MON_PORT:-3300}
ACCESS_KEY=ferrytestaccess
SECRET_KEY=ferrytestsecret0123456789
CONF="$DIR/ceph.conf"

stop() {
  for pidfile in "$DIR"/run/*.pid; do
    [ -f "$pidfile" ] || continue
    kill "$(cat "$pidfile")" 2>/dev/null || true
  done
  sleep 1
  for pidfile in "$DIR"/run/*.pid; do
    [ -f "$pidfile" ] || continue
    kill -9 "$(cat "$pidfile")" 2>/dev/null || true
  done
  rm -rf "$DIR"
}

start() {
  for tool in ceph-mon ceph-osd radosgw radosgw-admin monmaptool ceph; do
    command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install -y radosgw ceph-mon ceph-osd" >&2; exit 1; }
  done
  stop
  mkdir -p "$DIR/mon" "$DIR/osd" "$DIR/rgw" "$DIR/run" "$DIR/log"
  local fsid
  fsid=$(cat /proc/sys/kernel/random/uuid)
  cat > "$CONF" <<CONF
[global]
fsid = $fsid
mon host = v2:127.0.0.1:$MON_PORT
public addr = 127.0.0.1
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
keyring = $DIR/keyring
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd crush chooseleaf type = 0
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
mon max pg per osd = 1000
run dir = $DIR/run
pid file = $DIR/run/\$name.pid
admin socket = $DIR/run/\$name.asok
log file = $DIR/log/\$name.log
osd objectstore = memstore
memstore device bytes = 1073741824
osd max object name len = 256
osd max object namespace len = 64
[mon.a]
mon data = $DIR/mon
[osd.0]
osd data = $DIR/osd
[client.rgw]
rgw frontends = beast endpoint=127.0.0.1:$PORT
rgw data = $DIR/rgw
rgw dns name = 127.0.0.1
CONF
  ceph-authtool --create-keyring "$DIR/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
  ceph-authtool "$DIR/keyring" --gen-key -n client.admin --cap mon 'allow *' --cap osd 'allow *' --cap mgr 'allow *' >/dev/null
  ceph-authtool "$DIR/keyring" --gen-key -n osd.0 --cap mon 'allow profile osd' --cap osd 'allow *' >/dev/null
  ceph-authtool "$DIR/keyring" --gen-key -n client.rgw --cap mon 'allow rw' --cap osd 'allow rwx' >/dev/null
  monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$MON_PORT]" "$DIR/monmap" >/dev/null
  ceph-mon -c "$CONF" --mkfs -i a --monmap "$DIR/monmap" --keyring "$DIR/keyring"
  ceph-mon -c "$CONF" -i a
  ceph -c "$CONF" osd create >/dev/null
  ceph-osd -c "$CONF" -i 0 --mkfs 2>/dev/null
  ceph-osd -c "$CONF" -i 0
  ceph -c "$CONF" osd crush add osd.0 1.0 host=localhost root=default >/dev/null 2>&1 || true
  radosgw -c "$CONF" -n client.rgw
  local i
  for i in $(seq 1 240); do
    if curl -s -o /dev/null "http://127.0.0.1:$PORT/"; then break; fi
    sleep 0.5
  done
  curl -s -o /dev/null "http://127.0.0.1:$PORT/" || { echo "radosgw did not answer; logs in $DIR/log" >&2; exit 1; }
  radosgw-admin -c "$CONF" user create --uid=ferry --display-name=ferry \
    --access-key="$ACCESS_KEY" --secret-key="$SECRET_KEY" >/dev/null
  echo "export FERRY_TEST_S3_ENDPOINT=http://127.0.0.1:$PORT"
  echo "export FERRY_TEST_S3_ACCESS_KEY_ID=$ACCESS_KEY"
  echo "export FERRY_TEST_S3_SECRET_ACCESS_KEY=$SECRET_KEY"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
