# SPDX-License-Identifier: Apache-2.0
# Sourced by scripts/fake-cluster.sh --slurm: a real Slurm over the fake hosts. munged with its own
# key and socket, slurmctld on the first host, one slurmd per host, all in the work folder, all
# started here and stopped by PID by fake-cluster.sh. No systemd, no cgroups: linuxproc tracking.
# Ports 16817/16818: one such cluster per machine at a time. Daemon logs: $FB_CLUSTER_DIR/log.

slurm_wait() {  # SECONDS WHAT COMMAND...: polls COMMAND until it succeeds
  local seconds=$1 what=$2
  shift 2
  for _ in $(seq $((seconds * 10))); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "fake-cluster: $what did not happen within $seconds s" >&2
  return 1
}

slurm_up() {
  local dir=$FB_CLUSTER_DIR/slurm munge=$FB_CLUSTER_DIR/munge first=${FB_CLUSTER_HOSTS%% *}
  mkdir -p "$dir"/{state,spool,run,tmp} "$FB_CLUSTER_DIR/log" "$munge"
  for host in $FB_CLUSTER_HOSTS; do mkdir -p "$dir/spool/$host" "$dir/tmp/$host"; done

  chown munge:munge "$munge"
  chmod 755 "$munge"  # munged insists that clients can reach its socket
  setpriv --reuid=munge --regid=munge --clear-groups mungekey --create --keyfile "$munge/munge.key"
  setpriv --reuid=munge --regid=munge --clear-groups munged --foreground --key-file "$munge/munge.key" \
    --socket "$munge/munge.socket" --pid-file "$munge/munged.pid" --seed-file "$munge/munged.seed" \
    --log-file "$munge/munged.log" > /dev/null 2>&1 &
  daemons+=($!)
  slurm_wait 10 "munged start" test -S "$munge/munge.socket"

  export SLURM_CONF=$dir/slurm.conf
  local controller_address=127.1.0.1 extra=
  if ((loopback)); then  # one node on this machine's loopback
    controller_address=127.0.0.1 extra=CommunicationParameters=NoInAddrAny
  fi
  cat > "$SLURM_CONF" <<CONF
ClusterName=fabricbench
SlurmctldHost=$first($controller_address)
$extra
SlurmUser=root
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/munge
AuthInfo=socket=$munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd-%n.pid
SlurmctldLogFile=$FB_CLUSTER_DIR/log/slurmctld.log
SlurmdLogFile=$FB_CLUSTER_DIR/log/slurmd-%n.log
# Slurm's PMIx plugin makes its directory under TmpFS, and the fake hosts share /tmp.
TmpFS=$dir/tmp/%n
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
KillWait=5
CONF
  if ((prolog)); then  # --prolog: COMMAND writes $FB_CLUSTER_DIR/prolog before it submits a job
    printf 'Prolog=%s/prolog\nPrologFlags=Alloc\nSchedulerParameters=nohold_on_prolog_fail\n' "$FB_CLUSTER_DIR" >> "$SLURM_CONF"
  fi
  local i=1
  for host in $FB_CLUSTER_HOSTS; do
    local address=127.1.0.$i
    ((loopback)) && address=127.0.0.1
    echo "NodeName=$host NodeAddr=$address CPUs=$slots State=UNKNOWN" >> "$SLURM_CONF"
    i=$((i + 1))
  done
  echo "PartitionName=fake Nodes=ALL Default=YES MaxTime=INFINITE State=UP" >> "$SLURM_CONF"

  "$here/fake-cluster/on" "$first" "exec slurmctld -D -i -f $SLURM_CONF" > /dev/null 2>&1 &
  daemons+=($!)
  slurm_wait 20 "slurmctld answering (log: $FB_CLUSTER_DIR/log/slurmctld.log)" \
    "$here/fake-cluster/on" "$first" "scontrol ping | grep -q UP"
  for host in $FB_CLUSTER_HOSTS; do
    "$here/fake-cluster/on" "$host" "exec slurmd -D -N $host -f $SLURM_CONF" > /dev/null 2>&1 &
    daemons+=($!)
  done
  slurm_wait 30 "every slurmd idle (sinfo)" \
    "$here/fake-cluster/on" "$first" "test \$(sinfo -h -N -o %T | grep -c idle) -eq $(wc -w <<< "$FB_CLUSTER_HOSTS")"
  echo "fake-cluster: Slurm up (slurmctld on $first, $(wc -w <<< "$FB_CLUSTER_HOSTS") slurmd, partition 'fake'); SLURM_CONF=$SLURM_CONF"
}
