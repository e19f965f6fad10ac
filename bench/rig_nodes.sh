#!/bin/bash
# Start the shared rig (../shared/rig) afresh with N fake nodes instead of its three, so that a
# fleet of 1,000 one-pod CRs fits (each node takes 110 pods): the control plane is the rig's
# own, unchanged; only its fake kubelet serves more nodes, from a copy of it kept under the
# rig's directory. `down.sh` stops that copy as it stops the original.
#
#   bench/rig_nodes.sh [N]      # N from 3 to 250, default 10; RIG_SCRIPTS: where the rig's
#                               # scripts are (default ../shared/rig beside the repository)
#   .venv/bin/python -m bench --kubeconfig ~/k8s-rig/kubeconfig --crs 1000 coldstart
set -euo pipefail
NODES=${1:-10}
[[ $NODES =~ ^[0-9]+$ ]] && (( NODES >= 3 && NODES <= 250 )) || { echo "usage: $0 [N: 3-250]" >&2; exit 2; }
SHARED="$(cd "${RIG_SCRIPTS:-$(dirname "${BASH_SOURCE[0]}")/../../shared/rig}" && pwd)"
RIG="${K8S_RIG:-$HOME/k8s-rig}"
RUN=$RIG/run
KC=(kubectl --kubeconfig "$RIG/kubeconfig")

"$SHARED/up.sh" --fresh
if grep -q "address already in use" "$RUN/etcd.log"; then
  echo "etcd could not bind its ports (the previous one still going?): run $SHARED/down.sh, then this again" >&2
  exit 1
fi

# The copy keeps the name fake_kubelet.py: down.sh finds its process by it.
mkdir -p "$RIG/nodes"
sed "s/for i in (1, 2, 3)\$/for i in range(1, $((NODES + 1)))/" "$SHARED/fake_kubelet.py" \
  > "$RIG/nodes/fake_kubelet.py"
grep -q "range(1, $((NODES + 1)))" "$RIG/nodes/fake_kubelet.py" || {
  echo "the rig's fake_kubelet.py no longer lists its nodes as this script expects" >&2; exit 1; }

pid=$(cat "$RUN/fake-kubelet.pid")
kill -TERM -- "-$pid"
while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
rm -f "$RUN/fake-kubelet.pid"
setsid -f bash -c 'echo $$ > "$0"; exec "$@"' "$RUN/fake-kubelet.pid" \
  env K8S_RIG="$RIG" RIG_KUBECONFIG="$RIG/pki/admin.kubeconfig" \
  "$RIG/venv/bin/python" -u "$RIG/nodes/fake_kubelet.py" >>"$RUN/fake-kubelet.log" 2>&1 </dev/null

ready=0
for _ in $(seq 120); do
  ready=$("${KC[@]}" get nodes -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}/{.spec.taints}{"\n"}{end}' 2>/dev/null | grep -c '^True/$' || true)
  if (( ready == NODES )); then echo "rig is up with $NODES nodes.  export KUBECONFIG=$RIG/kubeconfig"; exit 0; fi
  sleep 1
done
echo "only $ready of $NODES nodes became Ready: see $RUN/fake-kubelet.log" >&2
exit 1
