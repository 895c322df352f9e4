#!/usr/bin/env bash
# -----------------------------------------------------------------------------
# tests/ha/stack.sh - a real HA PostgreSQL topology on one machine, for the
# plylog cluster tests.
#
# Everything lives in Linux network namespaces that this script creates, all
# attached to one bridge in the root namespace, so the test client in the root
# namespace can reach every address, and a "partition" can be simulated by
# changing routes inside one namespace.  Nothing listens on the machine's own
# addresses (the machine's PostgreSQL on 127.0.0.1:5432 is never touched).
#
# Address plan (fixed; one stack per machine at a time):
#
#   address        namespace      what                                   ports
#   10.88.0.1      (root)         bridge plyha0, the test client side    -
#   10.88.0.10     plyha-etcd     etcd 3.4, single member, Patroni's DCS  2379 client, 2380 peer
#   10.88.0.11     plyha-pg-a1    cell a member pg-a1 (patroni+postgres)  5432 pg, 8008 REST
#   10.88.0.12     plyha-pg-a2    cell a member pg-a2 (patroni+postgres)  5432 pg, 8008 REST
#   10.88.0.13     plyha-px-a     cell a HAProxy -> current primary       5432 pg, 7000 stats
#   10.88.0.21     plyha-pg-b1    cell b member pg-b1                     5432, 8008
#   10.88.0.22     plyha-pg-b2    cell b member pg-b2                     5432, 8008
#   10.88.0.23     plyha-px-b     cell b HAProxy                          5432, 7000
#   10.88.0.31..34 plyha-node1..4 plylog nodes (nothing started here)     -
#
#   Formulas: cell a = 1, cell b = 2; member m of cell c = 10.88.0.(10c+m),
#   HAProxy of cell c = 10.88.0.(10c+3), node i = 10.88.0.(30+i).
#   Database URLs:  postgres://postgres@10.88.0.13:5432/plylog   (cell a)
#                   postgres://postgres@10.88.0.23:5432/plylog   (cell b)
#
#   Each namespace has `lo` up and one veth whose root-namespace end is named
#   like the namespace (e.g. plyha-pg-a1) and is a port of bridge plyha0; the
#   namespace end is `eth0` with 10.88.0.x/24.  Namespaces get no default route:
#   they can only talk to 10.88.0.0/24.
#
# Patroni clusters: scopes `cell-a` / `cell-b`, namespace `/plylog-ha/` in
# etcd (v3 API), synchronous_mode on (not strict), pg_rewind and replication
# slots on, trust auth for 10.88.0.0/24, superuser `postgres` (no password),
# database `plylog` created at bootstrap.
#
# Commands (<dir> holds all state: configs, data dirs, logs, pid files):
#   up <dir>                        build everything; returns when both cells
#                                   accept writes through HAProxy and have a
#                                   streaming sync standby
#   down <dir>                      stop everything, delete namespaces/links
#                                   (idempotent; also kills whatever still runs
#                                   in any plyha-* namespace - e.g. the test's
#                                   plylog nodes - and removes plyha* links);
#                                   <dir> with its logs is kept
#   status <dir>                    members (role/state/lag) + HAProxy's view
#   primary <dir> <a|b>             print the current primary's member name
#   kill-primary <dir> <a|b>        SIGKILL the primary's patroni + postgres
#                                   (every process in its namespace); prints
#                                   the member name
#   restart-member <dir> <a|b> <member> [--no-wait]
#                                   start a killed member's patroni again (first
#                                   waiting for the failover if it still holds
#                                   the leader lock, so it rejoins as standby);
#                                   waits until it runs and the cell has a
#                                   sync standby again (unless --no-wait)
#   wait-ready <dir> [a|b]          wait until the cell(s) are ready (as in up)
#   node-ns <dir> <1..4>            print node i's namespace name
#   addr root|etcd|subnet|bridge    print an address (see `usage`)
#   addr node <i> | cell <a|b> | member <name> | url <a|b>
#   cut <dir> <i> / heal <dir> <i>  partition node i from both cells (HAProxy
#                                   and members) / undo it
#   logs <dir>                      tails of every log
#
# Environment: PLYHA_TIMEOUT (seconds for every wait, default 90).
#
# Requirements: root; iproute2 (ip netns), patroni 3.0.x, etcd 3.4,
# haproxy 2.6, PostgreSQL 15 in /usr/lib/postgresql/15/bin, curl, jq,
# setpriv (util-linux), system user `postgres`.
# -----------------------------------------------------------------------------
set -euo pipefail

# ---- constants ---------------------------------------------------------------
readonly PREFIX=plyha                 # every namespace/link we create starts with this
readonly BRIDGE=${PREFIX}0
readonly NET=10.88.0                  # /24 used for everything
readonly ROOT_ADDR=$NET.1
readonly ETCD_ADDR=$NET.10
readonly PG_BIN=/usr/lib/postgresql/15/bin
readonly PG_PORT=5432
readonly REST_PORT=8008
readonly STATS_PORT=7000
readonly PG_USER=postgres             # OS user running patroni/postgres, and DB superuser
readonly PATRONI_NAMESPACE=/plylog-ha/
readonly MARKER=.plyha-stack          # marks a <dir> created by this script
readonly TIMEOUT=${PLYHA_TIMEOUT:-90} # seconds, every wait
readonly CELLS=(a b)
readonly NODES=(1 2 3 4)

# Never send our 10.88.0.x traffic to an HTTP proxy that may be configured.
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY

# ---- small helpers -------------------------------------------------------------
log() { printf '[stack %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

usage() {
    sed -n '/^# Commands/,/^# Requirements/p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

require_root() { [[ $EUID -eq 0 ]] || die "must run as root (needs ip netns)"; }

# Absolute, symlink-free path, so pid/cmdline checks always see the same string.
canon_dir() {
    [[ -n ${1:-} ]] || usage
    realpath -m -- "$1"
}

cell_num() {
    case ${1:-} in
        a) echo 1 ;;
        b) echo 2 ;;
        *) die "cell must be 'a' or 'b', got '${1:-}'" ;;
    esac
}

check_node() {
    [[ ${1:-} =~ ^[1-4]$ ]] || die "node index must be 1..4, got '${1:-}'"
}

# Member names: pg-<cell><1|2>.  Namespace = plyha-<member>.
cell_members() { echo "pg-$1""1 pg-$1""2"; }
member_cell() {
    [[ ${1:-} =~ ^pg-([ab])([12])$ ]] || die "member must look like pg-a1 .. pg-b2, got '${1:-}'"
    echo "${BASH_REMATCH[1]}"
}
member_addr() {
    member_cell "$1" >/dev/null
    local c=${1:3:1} m=${1:4:1}
    echo "$NET.$(($(cell_num "$c") * 10 + m))"
}
member_ns() { echo "$PREFIX-$1"; }
proxy_addr() { cell_num "$1" >/dev/null; echo "$NET.$(($(cell_num "$1") * 10 + 3))"; }
proxy_ns() { echo "$PREFIX-px-$1"; }
node_addr() { check_node "$1"; echo "$NET.$((30 + $1))"; }
node_ns() { check_node "$1"; echo "$PREFIX-node$1"; }
readonly ETCD_NS=$PREFIX-etcd

# Namespaces / root-namespace links that currently exist with our prefix.
existing_namespaces() { ip netns list 2>/dev/null | awk '{print $1}' | grep "^$PREFIX" || true; }
existing_links() { ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | sed 's/@.*//' | grep "^$PREFIX" || true; }

in_ns() { local ns=$1; shift; ip netns exec "$ns" "$@"; }
ns_exists() {
    local n
    for n in $(existing_namespaces); do [[ $n == "$1" ]] && return 0; done
    return 1
}

# psql without ~/.psqlrc, failing fast on a dead/unreachable server.
psql_at() { # host db sql...
    local host=$1 db=$2; shift 2
    PGCONNECT_TIMEOUT=3 timeout 10 "$PG_BIN/psql" -X -q -w -v ON_ERROR_STOP=1 \
        -h "$host" -p "$PG_PORT" -U "$PG_USER" -d "$db" "$@"
}

rest_get() { # addr path
    curl -fsS --noproxy '*' --max-time 2 "http://$1:$REST_PORT$2"
}

# Poll "$@" every 0.5 s until it succeeds or $1 seconds pass.
wait_for() { # timeout description cmd...
    local timeout=$1 desc=$2; shift 2
    local deadline=$((SECONDS + timeout))
    log "waiting (≤${timeout}s) for $desc"
    until "$@" >/dev/null 2>&1; do
        if ((SECONDS >= deadline)); then
            log "timed out after ${timeout}s waiting for $desc"
            return 1
        fi
        sleep 0.5
    done
}

# ---- processes -------------------------------------------------------------------
# A pid counts as ours only if it is alive (not a zombie) and its command line
# mentions <dir>: every process we start has a path under <dir> in its argv
# (config file, data dir), so a recycled pid is never killed by mistake.
pid_is_ours() { # pid dir
    local pid=$1 dir=$2 state
    [[ $pid =~ ^[0-9]+$ ]] || return 1
    [[ -r /proc/$pid/stat ]] || return 1
    state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) || return 1
    [[ $state != Z ]] || return 1
    local cmdline
    cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
    [[ $cmdline == *"$dir/"* ]]
}

pid_alive() { # pid (no ownership check: used for pids listed by `ip netns pids`)
    local state
    [[ -r /proc/$1/stat ]] || return 1
    state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
    [[ $state != Z ]]
}

# SIGTERM the given pids, wait up to <grace> s, then SIGKILL the survivors.
terminate() { # grace sig pid...
    local grace=$1 sig=$2; shift 2
    local pids=("$@") p left deadline
    ((${#pids[@]})) || return 0
    kill -"$sig" "${pids[@]}" 2>/dev/null || true
    deadline=$((SECONDS + grace))
    while :; do
        left=()
        for p in "${pids[@]}"; do pid_alive "$p" && left+=("$p"); done
        ((${#left[@]})) || return 0
        ((SECONDS < deadline)) || break
        sleep 0.2
    done
    log "still alive after ${grace}s, SIGKILL: ${left[*]}"
    kill -KILL "${left[@]}" 2>/dev/null || true
    deadline=$((SECONDS + 5))
    for p in "${left[@]}"; do
        while pid_alive "$p" && ((SECONDS < deadline)); do sleep 0.1; done
    done
}

# Pids (ours) recorded in the given pid files; first line of each file.
pids_from_files() { # dir file...
    local dir=$1 f pid; shift
    for f in "$@"; do
        [[ -f $f ]] || continue
        pid=$(head -n1 "$f" 2>/dev/null || true)
        if pid_is_ours "$pid" "$dir"; then echo "$pid"; fi
    done
}

# Start a long-running process in a namespace, detached (own session, stdio
# to a log file, so `$(stack.sh up)` never hangs on an inherited pipe).  The
# small sh writes its own pid and then execs `ip netns exec`, which execs the
# command (setpriv/env exec too), so the pid file holds the real daemon's pid.
start_daemon() { # pidfile logfile ns cmd...
    local pidfile=$1 logfile=$2 ns=$3; shift 3
    rm -f "$pidfile" # a stale one (restart-member) must not be mistaken for the new
    # shellcheck disable=SC2016 # $$ / $0 / $@ are for the inner sh
    setsid sh -c 'echo $$ >"$0"; exec "$@"' "$pidfile" ip netns exec "$ns" "$@" \
        </dev/null >>"$logfile" 2>&1 &
    local i
    for i in $(seq 50); do [[ -s $pidfile ]] && return 0; sleep 0.1; done
    die "could not start $* in $ns (no pid file $pidfile)"
}

# ---- logs --------------------------------------------------------------------------
tail_file() { # file [lines]
    [[ -f $1 ]] || return 0
    printf -- '----- %s (last %s lines) -----\n' "$1" "${2:-40}" >&2
    tail -n "${2:-40}" "$1" >&2 || true
}

dump_member_logs() { # dir member
    local d=$1/$2 files
    tail_file "$d/patroni.log"
    # log_filename has a timestamp, so the last one in glob order is the newest
    files=("$d"/pglog/*.log)
    [[ ! -e ${files[0]} ]] || tail_file "${files[-1]}" 25
}

dump_cell_logs() { # dir cell
    local m
    for m in $(cell_members "$2"); do dump_member_logs "$1" "$m"; done
    tail_file "$1/px-$2/haproxy.log" 20
}

dump_all_logs() { # dir
    local c
    tail_file "$1/etcd/etcd.log" 20
    for c in "${CELLS[@]}"; do dump_cell_logs "$1" "$c"; done
}

# ---- network -------------------------------------------------------------------------
net_up() {
    log "creating bridge $BRIDGE ($ROOT_ADDR/24) and namespaces"
    ip link add "$BRIDGE" type bridge
    # STP is off (default), so ports forward immediately; no IPv6 noise.
    sysctl -qw "net.ipv6.conf.$BRIDGE.disable_ipv6=1" 2>/dev/null || true
    ip addr add "$ROOT_ADDR/24" dev "$BRIDGE"
    ip link set "$BRIDGE" up

    ns_add "$ETCD_NS" "$ETCD_ADDR"
    local c m i
    for c in "${CELLS[@]}"; do
        for m in $(cell_members "$c"); do ns_add "$(member_ns "$m")" "$(member_addr "$m")"; done
        ns_add "$(proxy_ns "$c")" "$(proxy_addr "$c")"
    done
    for i in "${NODES[@]}"; do
        ns_add "$(node_ns "$i")" "$(node_addr "$i")"
        # Strict reverse-path filter: once `cut` routes the cell addresses to a
        # sink link, packets *from* those addresses arriving on eth0 are
        # dropped too, making the partition symmetric.
        in_ns "$(node_ns "$i")" sysctl -qw net.ipv4.conf.all.rp_filter=1 net.ipv4.conf.eth0.rp_filter=1
    done

    # Bridged traffic between ports is layer 2 and needs no ip_forward.  If
    # br_netfilter is active (net.bridge.bridge-nf-call-iptables=1), bridged
    # IPv4 goes through the root namespace's iptables FORWARD chain; with no
    # rules that is harmless, but a DROP policy (e.g. docker) would cut the
    # namespaces off from each other.  We only warn: the etcd reachability
    # check from a member namespace (etcd_up) catches it for sure.
    local nf=/proc/sys/net/bridge/bridge-nf-call-iptables
    if [[ -r $nf && $(cat $nf) == 1 ]]; then
        log "note: net.bridge.bridge-nf-call-iptables=1 (bridged traffic passes iptables FORWARD)"
    fi
}

ns_add() { # ns addr
    local ns=$1 addr=$2
    ip netns add "$ns"
    # Root end named like the namespace (<= 15 chars), namespace end eth0.
    ip link add "$ns" type veth peer name eth0 netns "$ns"
    ip link set "$ns" master "$BRIDGE" up
    in_ns "$ns" ip link set lo up
    in_ns "$ns" ip addr add "$addr/24" dev eth0
    in_ns "$ns" ip link set eth0 up
}

net_down() {
    local ns l
    for ns in $(existing_namespaces); do ip netns del "$ns" 2>/dev/null || true; done
    # Deleting a namespace destroys its veth pair; remove whatever is left
    # (bridge, veths whose namespace was already gone) by prefix.
    for l in $(existing_links); do ip link del "$l" 2>/dev/null || true; done
}

# Partition: inside the node's namespace the six cell addresses (both
# HAProxies and all members) are routed to `cut0`, one end of a veth pair
# whose other end stays down, with ARP off - every packet sent there is
# silently discarded (veth drops when the peer is down).  A `blackhole` route
# would not do: local senders get EINVAL at once, i.e. "refused", not a hang.
# With rp_filter=1 (set at creation) replies from those addresses arriving on
# eth0 are dropped as well.  The root namespace still reaches the node.
cut_targets() {
    local c m
    for c in "${CELLS[@]}"; do
        proxy_addr "$c"
        for m in $(cell_members "$c"); do member_addr "$m"; done
    done
}

net_cut() { # node
    local ns addr p
    ns=$(node_ns "$1")
    ns_exists "$ns" || die "namespace $ns does not exist (stack down?)"
    if ! in_ns "$ns" ip link show cut0 >/dev/null 2>&1; then
        in_ns "$ns" ip link add cut0 type veth peer name cut1
        in_ns "$ns" ip link set cut0 arp off up # cut1 stays down: sink
    fi
    for addr in $(cut_targets); do in_ns "$ns" ip route replace "$addr/32" dev cut0; done
    # Prove it is a drop, not a refusal: a TCP connect to each HAProxy must
    # still be hanging after 1 s (timeout's rc 124); both probed in parallel.
    local c px rc probes=()
    for c in "${CELLS[@]}"; do
        px=$(proxy_addr "$c")
        in_ns "$ns" timeout 1 bash -c "exec 3<>/dev/tcp/$px/$PG_PORT" 2>/dev/null &
        probes+=("$!:$px")
    done
    for p in "${probes[@]}"; do
        rc=0
        wait "${p%%:*}" || rc=$?
        [[ $rc == 124 ]] || die "cut of node $1 is not a silent drop: connect to ${p#*:}:$PG_PORT ended with rc=$rc instead of hanging"
    done
    log "node $1 ($ns, $(node_addr "$1")) cut off from cells a and b"
}

net_heal() { # node
    local ns addr
    ns=$(node_ns "$1")
    ns_exists "$ns" || die "namespace $ns does not exist (stack down?)"
    for addr in $(cut_targets); do in_ns "$ns" ip route del "$addr/32" dev cut0 2>/dev/null || true; done
    in_ns "$ns" ip link del cut0 2>/dev/null || true
    local c px
    for c in "${CELLS[@]}"; do
        px=$(proxy_addr "$c")
        in_ns "$ns" timeout 3 bash -c "exec 3<>/dev/tcp/$px/$PG_PORT" 2>/dev/null ||
            log "warning: after heal, node $1 cannot connect to $px:$PG_PORT (is the HAProxy running?)"
    done
    log "node $1 ($ns) healed"
}

# ---- etcd ----------------------------------------------------------------------------
etcd_up() { # dir
    local d=$1/etcd
    mkdir -p "$d"
    log "starting etcd at $ETCD_ADDR:2379"
    # Defaults (heartbeat 100 ms, election 1 s) are fine for a single member;
    # the smallest lease TTL it grants is ~1.5 s, far below Patroni's ttl.
    start_daemon "$d/etcd.pid" "$d/etcd.log" "$ETCD_NS" \
        env -i PATH=/usr/bin:/bin HOME=/root \
        etcd --name etcd0 --data-dir "$d/data" \
        --listen-client-urls "http://$ETCD_ADDR:2379,http://127.0.0.1:2379" \
        --advertise-client-urls "http://$ETCD_ADDR:2379" \
        --listen-peer-urls "http://$ETCD_ADDR:2380" \
        --initial-advertise-peer-urls "http://$ETCD_ADDR:2380" \
        --initial-cluster "etcd0=http://$ETCD_ADDR:2380" \
        --initial-cluster-state new --initial-cluster-token plylog-ha \
        --auto-compaction-mode periodic --auto-compaction-retention 1h
    wait_for "$TIMEOUT" "etcd health" etcd_healthy_from "$(member_ns pg-a1)" ||
        { tail_file "$d/etcd.log"; bridge_hint; die "etcd did not become healthy"; }
}

# Checked from a member namespace: proves namespace-to-namespace forwarding
# through the bridge works, not just root-to-namespace.
etcd_healthy_from() { # ns
    local out
    out=$(in_ns "$1" curl -fsS --noproxy '*' --max-time 2 "http://$ETCD_ADDR:2379/health") || return 1
    [[ $out == *'"health":"true"'* ]]
}

bridge_hint() {
    local nf=/proc/sys/net/bridge/bridge-nf-call-iptables
    if [[ -r $nf ]] && curl -fsS --noproxy '*' --max-time 2 "http://$ETCD_ADDR:2379/health" >/dev/null 2>&1; then
        log "root namespace reaches etcd but $(member_ns pg-a1) does not: bridged traffic is filtered;"
        log "bridge-nf-call-iptables=$(cat $nf); check the iptables FORWARD chain or set it to 0"
    fi
}

# ---- patroni ---------------------------------------------------------------------------
write_post_bootstrap() { # dir
    # Runs once, on the member that initdb's the cell; Patroni passes a
    # connection URL as $1 (and PGOPTIONS=-c synchronous_commit=local).
    cat >"$1/post_bootstrap.sh" <<EOF
#!/bin/sh
set -e
exec $PG_BIN/psql -X -v ON_ERROR_STOP=1 -d "\$1" -c 'CREATE DATABASE plylog'
EOF
    chmod 0755 "$1/post_bootstrap.sh"
}

write_patroni_config() { # dir member
    local dir=$1 member=$2 c addr d
    c=$(member_cell "$member")
    addr=$(member_addr "$member")
    d=$dir/$member
    mkdir -p "$d/run" "$d/pglog"
    # Timing (bootstrap.dcs; cluster-wide, stored in etcd at bootstrap):
    #   ttl 10          leader lock lease: a dead primary's lock expires at most
    #                   10 s after its last renewal -> failover starts within ~10 s
    #                   (Patroni default 30).
    #   loop_wait 2     HA loop period: the replica sees the expired lock <= 2 s later.
    #   retry_timeout 4 how long DCS / PostgreSQL calls are retried before the
    #                   primary demotes itself; loop_wait + 2*retry_timeout = 10
    #                   <= ttl, so a primary cut off from etcd demotes before
    #                   its lock can expire and another member takes over.
    #   maximum_lag_on_failover 1 GiB: generous, a test must never be blocked
    #                   from failing over by replay lag.
    #   synchronous_mode true, strict false: commits wait for the sync standby
    #                   while one exists (no lost commits on failover), but a
    #                   lone primary still takes writes.
    cat >"$d/patroni.yml" <<EOF
scope: cell-$c
namespace: $PATRONI_NAMESPACE
name: $member

log:
  level: INFO
  format: '%(asctime)s %(levelname)s: %(message)s'

restapi:
  listen: $addr:$REST_PORT
  connect_address: $addr:$REST_PORT

etcd3:
  hosts: $ETCD_ADDR:2379

bootstrap:
  dcs:
    ttl: 10
    loop_wait: 2
    retry_timeout: 4
    maximum_lag_on_failover: 1073741824
    synchronous_mode: true
    synchronous_mode_strict: false
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
        max_connections: 300
        shared_buffers: 32MB
        wal_level: replica
        hot_standby: 'on'
        wal_log_hints: 'on'
        max_wal_senders: 10
        max_replication_slots: 10
        wal_keep_size: 256MB
        synchronous_commit: 'on'
        checkpoint_timeout: 5min
  initdb:
    - encoding: UTF8
    - locale: C.UTF-8
    - data-checksums
  post_bootstrap: $dir/post_bootstrap.sh

postgresql:
  listen: $addr,127.0.0.1:$PG_PORT
  connect_address: $addr:$PG_PORT
  data_dir: $d/data
  bin_dir: $PG_BIN
  pgpass: $d/pgpass
  authentication:
    superuser:
      username: $PG_USER
    replication:
      username: $PG_USER
  parameters:
    # Own socket dir: /var/run/postgresql is shared with the machine's
    # PostgreSQL (unix sockets ignore network namespaces) and port 5432 would clash.
    unix_socket_directories: $d/run
    logging_collector: 'on'
    log_directory: $d/pglog
    log_filename: postgresql-%Y%m%d-%H%M%S.log
    log_line_prefix: '%m [%p] %q%u@%d '
  # pg_basebackup's default "spread" checkpoint paces itself over
  # checkpoint_timeout * checkpoint_completion_target (~100 ms per dirty
  # buffer right after initdb, i.e. minutes); cloning a standby must be quick.
  basebackup:
    - checkpoint: fast
  pg_hba:
    - local all all trust
    - host all all 127.0.0.1/32 trust
    - host replication all 127.0.0.1/32 trust
    - host all all $NET.0/24 trust
    - host replication all $NET.0/24 trust
  # A crashed old primary that cannot be rewound is recloned instead of stuck.
  remove_data_directory_on_rewind_failure: true
  remove_data_directory_on_diverged_timelines: true

watchdog:
  mode: 'off'

tags:
  nofailover: false
  noloadbalance: false
  clonefrom: false
  nosync: false
EOF
    chown -R "$PG_USER:$PG_USER" "$d"
    chmod 0700 "$d"
}

start_patroni() { # dir member
    local d=$1/$2
    log "starting patroni $2 at $(member_addr "$2")"
    # patroni runs as the postgres user (it refuses root) with a clean env.
    start_daemon "$d/patroni.pid" "$d/patroni.log" "$(member_ns "$2")" \
        setpriv --reuid="$PG_USER" --regid="$PG_USER" --init-groups -- \
        env -i HOME=/var/lib/postgresql USER="$PG_USER" LOGNAME="$PG_USER" \
        PATH="$PG_BIN:/usr/bin:/bin" LANG=C.UTF-8 LC_ALL=C.UTF-8 \
        patroni "$d/patroni.yml"
}

# /cluster JSON of a cell, from the first member that answers.
cluster_json() { # cell
    local m
    for m in $(cell_members "$1"); do
        rest_get "$(member_addr "$m")" /cluster 2>/dev/null && return 0
    done
    return 1
}

cell_primary() { # cell -> member name of the current leader
    cluster_json "$1" | jq -er '.members[] | select(.role == "leader") | .name'
}

# ---- haproxy ---------------------------------------------------------------------------
write_haproxy_config() { # dir cell
    local d=$1/px-$2 px m
    px=$(proxy_addr "$2")
    mkdir -p "$d"
    {
        cat <<EOF
# HAProxy for cell $2: TCP to whichever member answers OPTIONS /primary with 200.
global
    maxconn 2000
    log stderr format raw local0 notice

defaults
    mode tcp
    log global
    retries 2
    timeout connect 3s
    # Application pools keep idle connections for long; don't cut them.
    timeout client 1h
    timeout server 1h
    timeout check 2s

listen stats
    mode http
    bind $px:$STATS_PORT
    stats enable
    stats uri /
    stats refresh 2s

listen postgres
    bind $px:$PG_PORT
    option httpchk OPTIONS /primary
    http-check expect status 200
    # inter 1s/fall 2/rise 1: a dead primary is out within ~1-2 s (its REST
    # port refuses at once), the new one is in <= 1 s after it reports 200.
    # shutdown-sessions: clients of a demoted primary are disconnected at once.
    default-server inter 1s fall 2 rise 1 on-marked-down shutdown-sessions
EOF
        for m in $(cell_members "$2"); do
            printf '    server %s %s:%s maxconn 500 check port %s\n' "$m" "$(member_addr "$m")" "$PG_PORT" "$REST_PORT"
        done
    } >"$d/haproxy.cfg"
    haproxy -c -q -f "$d/haproxy.cfg" || die "invalid haproxy config $d/haproxy.cfg"
}

start_haproxy() { # dir cell
    local d=$1/px-$2
    log "starting haproxy for cell $2 at $(proxy_addr "$2"):$PG_PORT"
    # -db: stay in the foreground (we detach it ourselves and know its pid).
    start_daemon "$d/haproxy.pid" "$d/haproxy.log" "$(proxy_ns "$2")" \
        haproxy -db -f "$d/haproxy.cfg"
}

# ---- readiness -------------------------------------------------------------------------
cell_has_sync_standby() { # cell
    # Patroni's view: a member with role sync_standby, running, with a known lag.
    # (Patroni 3.0.2 reports replica state "running"; newer ones "streaming".)
    cluster_json "$1" | jq -e '[.members[] | select(.role == "sync_standby"
        and (.state == "running" or .state == "streaming")
        and (.lag | type) == "number")] | length >= 1' >/dev/null || return 1
    # PostgreSQL's view, on the primary behind HAProxy.
    local n
    n=$(psql_at "$(proxy_addr "$1")" postgres -At -c \
        "select count(*) from pg_stat_replication where state = 'streaming' and sync_state = 'sync'") || return 1
    [[ $n -ge 1 ]]
}

cell_accepts_writes() { # cell
    psql_at "$(proxy_addr "$1")" postgres \
        -c 'create table if not exists ha_probe(x int); insert into ha_probe values (1)' &&
        psql_at "$(proxy_addr "$1")" plylog -c 'select 1'
}

wait_cell_ready() { # dir cell
    local dir=$1 c=$2
    wait_for "$TIMEOUT" "cell $c: write through HAProxy $(proxy_addr "$c")" cell_accepts_writes "$c" &&
        wait_for "$TIMEOUT" "cell $c: streaming sync standby" cell_has_sync_standby "$c" &&
        return 0
    dump_cell_logs "$dir" "$c"
    tail_file "$dir/etcd/etcd.log" 10
    die "cell $c is not ready (state left in $dir; run: $0 down $dir)"
}

# ---- commands --------------------------------------------------------------------------
preflight() {
    local c
    for c in ip patroni etcd haproxy curl jq setpriv runuser setsid timeout; do
        command -v "$c" >/dev/null || die "missing command: $c"
    done
    [[ -x $PG_BIN/postgres && -x $PG_BIN/psql ]] || die "PostgreSQL 15 not found in $PG_BIN"
    id "$PG_USER" >/dev/null 2>&1 || die "system user $PG_USER does not exist"
}

cmd_up() {
    require_root
    local dir c m t0=$SECONDS
    dir=$(canon_dir "${1:-}")
    local ns links
    ns=$(existing_namespaces | tr '\n' ' ')
    links=$(existing_links | tr '\n' ' ')
    [[ -z ${ns// /} && -z ${links// /} ]] ||
        die "a stack seems to be up already (namespaces: ${ns:-none}; links: ${links:-none}); run '$0 down <dir>' first"
    [[ $(ip -4 -o addr show) != *"inet $NET."* ]] || die "address range $NET.0/24 is already in use on this machine"
    preflight

    # Fresh state: wipe a previous stack's dir (recognised by the marker),
    # refuse to touch any other non-empty directory.
    if [[ -d $dir && -n $(ls -A "$dir") ]]; then
        [[ -f $dir/$MARKER ]] || die "$dir is not empty and was not made by $0; refusing to use it"
        log "wiping previous stack state in $dir"
        # keep the marker to the end, so an interrupted wipe can be redone
        find "$dir" -mindepth 1 ! -path "$dir/$MARKER" -delete
    fi
    mkdir -p "$dir"
    chmod 0755 "$dir"
    echo "created by $0 at $(date -Is)" >"$dir/$MARKER"
    runuser -u "$PG_USER" -- test -x "$dir" ||
        die "user $PG_USER cannot reach $dir (a parent directory is not traversable); use e.g. /tmp/..."

    net_up
    etcd_up "$dir"
    write_post_bootstrap "$dir"
    for c in "${CELLS[@]}"; do
        for m in $(cell_members "$c"); do
            write_patroni_config "$dir" "$m"
            start_patroni "$dir" "$m"
        done
        write_haproxy_config "$dir" "$c"
        start_haproxy "$dir" "$c"
    done
    for c in "${CELLS[@]}"; do wait_cell_ready "$dir" "$c"; done
    log "stack up in $((SECONDS - t0)) s (state in $dir)"
    cmd_status "$dir"
}

cmd_down() {
    require_root
    local dir t0=$SECONDS
    dir=$(canon_dir "${1:-}")
    local pids=() ns p
    if [[ -d $dir ]]; then
        # 1. Patroni (stops its postgres) and HAProxy, gracefully.
        mapfile -t pids < <(pids_from_files "$dir" "$dir"/pg-*/patroni.pid "$dir"/px-*/haproxy.pid)
        ((${#pids[@]} == 0)) || { log "stopping patroni/haproxy: ${pids[*]}"; terminate 20 TERM "${pids[@]}"; }
        # 2. Postmasters left behind (patroni was SIGKILLed): immediate shutdown.
        mapfile -t pids < <(pids_from_files "$dir" "$dir"/pg-*/data/postmaster.pid)
        ((${#pids[@]} == 0)) || { log "stopping orphaned postmasters: ${pids[*]}"; terminate 5 QUIT "${pids[@]}"; }
        # 3. etcd last, so patroni could still release its leader key.
        mapfile -t pids < <(pids_from_files "$dir" "$dir"/etcd/etcd.pid)
        ((${#pids[@]} == 0)) || { log "stopping etcd: ${pids[*]}"; terminate 10 TERM "${pids[@]}"; }
    fi
    # 4. Safety sweep: anything still running inside any plyha-* namespace
    #    (backends, a test's plylog nodes, a stack made with another <dir>).
    for ns in $(existing_namespaces); do
        pids=()
        for p in $(ip netns pids "$ns" 2>/dev/null || true); do pid_alive "$p" && pids+=("$p"); done
        ((${#pids[@]} == 0)) || { log "killing processes left in $ns: ${pids[*]}"; terminate 5 TERM "${pids[@]}"; }
    done
    # 5. Namespaces, veths, bridge.
    net_down
    [[ ! -d $dir ]] || rm -f "$dir"/*/*.pid
    local left
    left=$(existing_namespaces; existing_links)
    [[ -z $left ]] || die "could not remove: $left"
    log "stack down in $((SECONDS - t0)) s (state/logs kept in $dir)"
}

cmd_status() {
    local dir c m json rest
    dir=$(canon_dir "${1:-}")
    if rest=$(curl -fsS --noproxy '*' --max-time 2 "http://$ETCD_ADDR:2379/health" 2>/dev/null); then
        echo "etcd $ETCD_ADDR:2379: $rest"
    else
        echo "etcd $ETCD_ADDR:2379: NOT REACHABLE"
    fi
    for c in "${CELLS[@]}"; do
        echo
        echo "cell $c  (scope cell-$c, HAProxy $(proxy_addr "$c"):$PG_PORT, stats http://$(proxy_addr "$c"):$STATS_PORT/)"
        if json=$(cluster_json "$c"); then
            {
                echo "member host role state timeline lag"
                jq -r '.members[] | [.name, (.host // "-"), .role, .state,
                    ((.timeline // "-") | tostring), ((.lag // "-") | tostring)] | @tsv' <<<"$json"
            } | { if command -v column >/dev/null; then column -t; else cat; fi; } | sed 's/^/  /'
        else
            echo "  no patroni member answers on :$REST_PORT"
        fi
        for m in $(cell_members "$c"); do
            pid_is_ours "$(head -n1 "$dir/$m/patroni.pid" 2>/dev/null || true)" "$dir" ||
                echo "  ($m: patroni process not running)"
        done
        local csv
        if csv=$(curl -fsS --noproxy '*' --max-time 2 "http://$(proxy_addr "$c"):$STATS_PORT/;csv" 2>/dev/null); then
            printf '  haproxy (UP = gets the traffic): %s\n' "$(awk -F, '$1 == "postgres" && $2 != "FRONTEND" && $2 != "BACKEND" {printf "%s=%s ", $2, $18}' <<<"$csv")"
        else
            echo "  haproxy: stats page NOT REACHABLE"
        fi
    done
}

cmd_primary() {
    local c=${2:-}
    cell_num "$c" >/dev/null
    cell_primary "$c" || die "cell $c has no primary right now"
}

cmd_kill_primary() {
    require_root
    local dir c=${2:-} primary ns pids=() p
    dir=$(canon_dir "${1:-}")
    cell_num "$c" >/dev/null
    primary=$(cell_primary "$c") || die "cannot find cell $c's primary through Patroni's REST API"
    ns=$(member_ns "$primary")
    # Every process of that "host": patroni, the postmaster and its children.
    for p in $(ip netns pids "$ns"); do pid_alive "$p" && pids+=("$p"); done
    ((${#pids[@]})) || die "no process in $ns"
    log "SIGKILL primary $primary of cell $c (pids ${pids[*]})"
    kill -KILL "${pids[@]}" 2>/dev/null || true
    local deadline=$((SECONDS + 5))
    for p in "${pids[@]}"; do
        while pid_alive "$p" && ((SECONDS < deadline)); do sleep 0.05; done
    done
    echo "$primary"
}

cmd_restart_member() {
    require_root
    local dir c=${2:-} m=${3:-} nowait=${4:-} pid
    dir=$(canon_dir "${1:-}")
    cell_num "$c" >/dev/null
    [[ $(member_cell "$m") == "$c" ]] || die "member $m is not in cell $c"
    [[ -f $dir/$m/patroni.yml ]] || die "no config for $m in $dir (stack not up?)"
    pid=$(head -n1 "$dir/$m/patroni.pid" 2>/dev/null || true)
    ! pid_is_ours "$pid" "$dir" || die "patroni of $m is still running (pid $pid)"
    # Killed less than ttl (10 s) ago, the member still owns the leader lock;
    # started now it would simply resume as primary.  Wait for the failover
    # so it rejoins as a standby (if none happens, start it anyway).
    if [[ $(cell_primary "$c" 2>/dev/null || true) == "$m" ]]; then
        wait_for "$TIMEOUT" "cell $c to fail over away from $m" leader_other_than "$c" "$m" ||
            log "warning: $m still holds cell $c's leader lock; starting it anyway"
    fi
    start_patroni "$dir" "$m"
    [[ $nowait == --no-wait ]] && return 0
    wait_for "$TIMEOUT" "$m to run again" member_running "$c" "$m" ||
        { dump_member_logs "$dir" "$m"; die "$m did not come back"; }
    wait_cell_ready "$dir" "$c"
    log "$m is back as $(cluster_json "$c" | jq -r --arg m "$m" '.members[] | select(.name == $m) | .role')"
}

leader_other_than() { # cell member
    local p
    p=$(cell_primary "$1") || return 1
    [[ $p != "$2" ]]
}

member_running() { # cell member: running (any role); a standby must report its lag
    cluster_json "$1" | jq -e --arg m "$2" '.members[] | select(.name == $m
        and (.state == "running" or .state == "streaming")
        and (.role == "leader" or (.lag | type) == "number"))' >/dev/null
}

cmd_wait_ready() {
    local dir c
    dir=$(canon_dir "${1:-}")
    if [[ -n ${2:-} ]]; then
        cell_num "$2" >/dev/null
        wait_cell_ready "$dir" "$2"
    else
        for c in "${CELLS[@]}"; do wait_cell_ready "$dir" "$c"; done
    fi
}

cmd_addr() {
    case ${1:-} in
        root | bridge) echo "$ROOT_ADDR" ;;
        subnet) echo "$NET.0/24" ;;
        etcd) echo "$ETCD_ADDR" ;;
        node) node_addr "${2:-}" ;;
        cell | haproxy) proxy_addr "${2:-}" ;;
        member) member_addr "${2:-}" ;;
        url) cell_num "${2:-}" >/dev/null; echo "postgres://$PG_USER@$(proxy_addr "$2"):$PG_PORT/plylog" ;;
        *) die "addr: expected root|bridge|subnet|etcd|node <i>|cell <a|b>|member <pg-xN>|url <a|b>" ;;
    esac
}

main() {
    local cmd=${1:-}
    shift || true
    case $cmd in
        up) cmd_up "$@" ;;
        down) cmd_down "$@" ;;
        status) cmd_status "$@" ;;
        primary) cmd_primary "$@" ;;
        kill-primary) cmd_kill_primary "$@" ;;
        restart-member) cmd_restart_member "$@" ;;
        wait-ready) cmd_wait_ready "$@" ;;
        node-ns) canon_dir "${1:-}" >/dev/null; node_ns "${2:-}" ;;
        addr) cmd_addr "$@" ;;
        cut) require_root; canon_dir "${1:-}" >/dev/null; check_node "${2:-}"; net_cut "$2" ;;
        heal) require_root; canon_dir "${1:-}" >/dev/null; check_node "${2:-}"; net_heal "$2" ;;
        logs) dump_all_logs "$(canon_dir "${1:-}")" 2>&1 ;;
        -h | --help | help | "") usage ;;
        *) log "unknown command '$cmd'"; usage ;;
    esac
}

main "$@"
