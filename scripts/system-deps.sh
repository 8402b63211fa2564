#!/usr/bin/env bash
# Installs the Debian packages the real-network tests use, when root and missing.
# Without root it says what is missing; those tests then skip with that reason.
set -u
need=()
have() { command -v "$1" >/dev/null 2>&1; }
have ip || need+=(iproute2)
have ping || need+=(iputils-ping)
have iptables || need+=(iptables)
have ip6tables || need+=(iptables)
have tc || need+=(iproute2)
have nstat || need+=(iproute2)
have netstat || need+=(net-tools)
have tracepath || need+=(iputils-tracepath)
have scamper || need+=(scamper)
have nft || need+=(nftables)
have chromium || need+=(chromium)
have tmux || need+=(tmux)
have tshark || need+=(tshark)
have tcptrace || need+=(tcptrace)
have tcpdump || need+=(tcpdump)
have ethtool || need+=(ethtool)
have promtool || need+=(prometheus)                               # promtool: checks the audit's metrics
have prometheus-node-exporter || need+=(prometheus-node-exporter) # serves them back in the audit test
have collectd || need+=(collectd-core)                            # a real agent's JSON (protocols, write_log/write_http)
[ -e /usr/lib/x86_64-linux-gnu/libyajl.so.2 ] || [ -e /usr/lib/aarch64-linux-gnu/libyajl.so.2 ] || need+=(libyajl2)  # collectd's JSON writers
[ -x /usr/sbin/sshd ] || need+=(openssh-server)                    # one sshd per namespace host in the fleet tests
have ssh || need+=(openssh-client)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "system-deps: not root; missing ${need[*]} (namespace tests will skip)" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
# prometheus and node_exporter come with services: never start them (the tests run their own, on loopback)
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d
  trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
# tshark's wireshark-common asks whether non-root users may capture: answer no, unasked
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections 2>/dev/null || true
apt-get update -qq >/dev/null 2>&1 || true
pkgs=$(printf '%s\n' "${need[@]}" | sort -u)
# another apt run (a parallel `make test`) holds the dpkg lock for a while: wait for it
if ! apt-get install -o DPkg::Lock::Timeout=300 -y -qq --no-install-recommends $pkgs >/dev/null 2>&1; then
  # one missing package must not cost the others
  for p in $pkgs; do
    apt-get install -o DPkg::Lock::Timeout=300 -y -qq --no-install-recommends "$p" >/dev/null 2>&1 \
      || echo "system-deps: could not install $p (tests that need it will skip)" >&2
  done
fi
exit 0
