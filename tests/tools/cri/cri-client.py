#!/usr/bin/python3
# cri-client.py - a minimal CRI client (Kubernetes CRI v1, runtime.v1) that
# plays the kubelet against containerd's CRI plugin, for tests/engines/cri.bats
# and bench/cri.sh.  There is no crictl or kubelet in Debian 12.
#
# Uses Debian's python3-grpcio and python3-grpc-tools.  The messages are the
# project's own subset of the CRI (cri.proto beside this file), compiled with
# grpc_tools.protoc into CRI_PB_DIR (`compile DIR` once, then export
# CRI_PB_DIR=DIR; without it every call compiles into a temporary dir).
#
# The pod and container configs are the kubelet's usual ones for a
# BestEffort pod in the "default" namespace: a log directory per pod
# (<log root>/<ns>_<name>_<uid>, containers log to <name>/0.log), a cgroup
# parent per pod (cgroupfs syntax), cluster-style DNS options, no port
# mappings, the pod's namespace options (network and ipc POD, pid
# CONTAINER), seccomp Unconfined (the kubelet's default without
# SeccompDefault), the kubelet's masked and read-only /proc and /sys paths,
# cpu shares 2 and oom_score_adj 1000, an /etc/hosts and a
# /dev/termination-log bind mount, and the io.kubernetes.* labels.
# RunPodSandbox's config is saved in CRI_STATE/<pod id>.json, because
# CreateContainer carries it again, as the kubelet sends it.
#
# Streaming Exec: the URL the Exec RPC returns is opened as a WebSocket
# (RFC 6455, written here on the standard library's socket module) with the
# v4.channel.k8s.io subprotocol of the kubelet streaming server that
# containerd embeds: every binary message starts with its channel byte,
# 0 stdin, 1 stdout, 2 stderr, 3 the exit status (a JSON v1 Status), 4
# terminal resize.  SPDY, the other protocol that server speaks, needs a
# zlib-compressed header format and stream multiplexing that nothing in
# Debian's Python packages provides.
#
# Usage: cri-client.py [--socket PATH] [--timeout S] COMMAND ...
#   compile DIR                          compile cri.proto into DIR
#   version                              Version, as JSON
#   runp [--handler H] [--annotation K=V]... [--hostname H] [--host-net]
#        [--host-ipc] [--host-pid] [--share-pid] [--cgroup-parent P]
#        [--log-root DIR] [--dns IP] [--seccomp unconfined|runtime-default]
#        NAME                            RunPodSandbox; prints the pod id
#   create [--env K=V]... [--mount HOST:CTR[:ro]]... [--annotation K=V]...
#        [--tty] [--stdin] [--workdir D] [--user UID] [--image REF]
#        [--seccomp ...] [--no-new-privs] POD NAME -- CMD...
#                                        CreateContainer; prints its id
#   start ID | stop [-t S] ID | rm ID | stopp POD | rmp POD
#   status ID                            ContainerStatus (verbose) as JSON
#   pstatus POD                          PodSandboxStatus (verbose) as JSON
#   pods | ctrs                          ListPodSandbox / ListContainers ids
#   exec-sync [-t S] ID -- CMD...        ExecSync: stdout, stderr, exit code
#   exec [--tty] [--stdin] [--size RxC] ID -- CMD...
#                                        streaming Exec over WebSocket
#   cleanup                              stop and remove every pod
#   oci-archive --ref REF [--cmd ARG]... [--entrypoint ARG]... [--env K=V]...
#        [-o FILE] SOURCE...             an OCI image archive, one layer per
#                                        SOURCE (a tar file or a directory)
#   bench --handler H --image REF [-n N] [--cgroup-parent P]
#                                        RPC latencies, medians as JSON
# A gRPC error prints "cri-client: RPC: CODE: details" and exits 2.

import argparse
import base64
import hashlib
import io
import json
import os
import select
import socket
import statistics
import struct
import sys
import tarfile
import tempfile
import threading
import time
import urllib.parse
import uuid
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
EXIT_RPC = 2

# The kubelet's defaults for a container without procMount: Unmasked
# (pkg/securitycontext/util.go, DefaultProcMountType).
MASKED_PATHS = ["/proc/asound", "/proc/acpi", "/proc/kcore", "/proc/keys",
                "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats",
                "/proc/sched_debug", "/proc/scsi", "/sys/firmware"]
READONLY_PATHS = ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys",
                  "/proc/sysrq-trigger"]


def die(msg, code=1):
    print("cri-client: " + msg, file=sys.stderr)
    sys.exit(code)


# ------------------------------------------------------------------ proto

def compile_proto(out):
    from grpc_tools import protoc
    os.makedirs(out, exist_ok=True)
    include = os.path.join(os.path.dirname(protoc.__file__), "_proto")
    rc = protoc.main(["protoc", "-I" + HERE, "-I" + include,
                      "--python_out=" + out, "--grpc_python_out=" + out,
                      os.path.join(HERE, "cri.proto")])
    if rc != 0:
        die("protoc failed on cri.proto (exit %d)" % rc)


def load_modules():
    out = os.environ.get("CRI_PB_DIR")
    if not out or not os.path.exists(os.path.join(out, "cri_pb2_grpc.py")):
        out = tempfile.mkdtemp(prefix="cri-pb.")
        compile_proto(out)
    sys.path.insert(0, out)
    import cri_pb2
    import cri_pb2_grpc
    return cri_pb2, cri_pb2_grpc


class Client:
    def __init__(self, socket_path, timeout):
        import grpc
        self.grpc = grpc
        self.pb, pb_grpc = load_modules()
        self.channel = grpc.insecure_channel("unix://" + socket_path)
        self.rt = pb_grpc.RuntimeServiceStub(self.channel)
        self.timeout = timeout

    def call(self, name, req, timeout=None):
        try:
            return getattr(self.rt, name)(req, timeout=timeout or self.timeout)
        except self.grpc.RpcError as e:
            die("%s: %s: %s" % (name, e.code().name, e.details()), EXIT_RPC)


# ------------------------------------------------------------- pod state

def state_dir():
    d = os.environ.get("CRI_STATE")
    if not d:
        die("CRI_STATE must name a directory for the pods' sandbox configs")
    os.makedirs(d, exist_ok=True)
    return d


def save_sandbox(pod_id, cfg):
    from google.protobuf import json_format
    with open(os.path.join(state_dir(), pod_id + ".json"), "w") as f:
        f.write(json_format.MessageToJson(cfg))


def load_sandbox(c, pod_id):
    from google.protobuf import json_format
    path = os.path.join(state_dir(), pod_id + ".json")
    try:
        with open(path) as f:
            return json_format.Parse(f.read(), c.pb.PodSandboxConfig())
    except FileNotFoundError:
        die("no saved sandbox config for pod %s (made by runp)" % pod_id)


def kv_pairs(items):
    out = {}
    for it in items or []:
        if "=" not in it:
            die("expected KEY=VALUE, got `%s`" % it)
        k, v = it.split("=", 1)
        out[k] = v
    return out


def seccomp_profile(pb, name):
    kinds = {"unconfined": pb.SecurityProfile.Unconfined,
             "runtime-default": pb.SecurityProfile.RuntimeDefault}
    if name not in kinds:
        die("--seccomp: unconfined or runtime-default")
    return pb.SecurityProfile(profile_type=kinds[name])


def namespace_options(pb, a):
    NS = pb.NamespaceMode
    return pb.NamespaceOption(
        network=NS.Value("NODE") if a.host_net else NS.Value("POD"),
        ipc=NS.Value("NODE") if a.host_ipc else NS.Value("POD"),
        pid=NS.Value("NODE") if a.host_pid else (NS.Value("POD") if a.share_pid else NS.Value("CONTAINER")))


# ----------------------------------------------------------------- pods

def cmd_runp(c, a):
    pb = c.pb
    uid = str(uuid.uuid4())
    ns = "default"
    log_dir = os.path.join(a.log_root, "%s_%s_%s" % (ns, a.name, uid))
    os.makedirs(log_dir, exist_ok=True)
    annotations = {"kubernetes.io/config.source": "api",
                   "kubernetes.io/config.seen": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    annotations.update(kv_pairs(a.annotation))
    labels = {"io.kubernetes.pod.name": a.name, "io.kubernetes.pod.namespace": ns,
              "io.kubernetes.pod.uid": uid}
    cgroup_parent = ""
    if a.cgroup_parent:
        cgroup_parent = "%s/pod%s" % (a.cgroup_parent.rstrip("/"), uid)
    dns = pb.DNSConfig(servers=a.dns or [],
                       searches=["%s.svc.cluster.local" % ns, "svc.cluster.local", "cluster.local"],
                       options=["ndots:5"])
    sc = pb.LinuxSandboxSecurityContext(namespace_options=namespace_options(pb, a),
                                        seccomp=seccomp_profile(pb, a.seccomp))
    cfg = pb.PodSandboxConfig(
        metadata=pb.PodSandboxMetadata(name=a.name, uid=uid, namespace=ns, attempt=0),
        # The kubelet leaves the hostname empty for a host-network pod.
        hostname="" if a.host_net else (a.hostname or a.name),
        log_directory=log_dir, dns_config=dns, port_mappings=[],
        labels=labels, annotations=annotations,
        linux=pb.LinuxPodSandboxConfig(cgroup_parent=cgroup_parent, security_context=sc))
    r = c.call("RunPodSandbox", pb.RunPodSandboxRequest(config=cfg, runtime_handler=a.handler))
    save_sandbox(r.pod_sandbox_id, cfg)
    print(r.pod_sandbox_id)


def pod_dir(sandbox):
    return sandbox.log_directory


def cmd_create(c, a):
    pb = c.pb
    sandbox = load_sandbox(c, a.pod)
    if not a.cmd:
        die("create: no command after --")
    # The kubelet's per-container files: an /etc/hosts it manages and the
    # termination-message file, both bind mounts from the pod's directory.
    pdir = pod_dir(sandbox)
    os.makedirs(os.path.join(pdir, a.name), exist_ok=True)
    hosts = os.path.join(pdir, "etc-hosts")
    if not os.path.exists(hosts):
        with open(hosts, "w") as f:
            f.write("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
            if sandbox.hostname:
                f.write("127.0.1.1\t%s\n" % sandbox.hostname)
    termlog = os.path.join(pdir, a.name, "termination-log")
    open(termlog, "a").close()
    mounts = [pb.Mount(container_path="/etc/hosts", host_path=hosts),
              pb.Mount(container_path="/dev/termination-log", host_path=termlog)]
    for m in a.mount or []:
        parts = m.split(":")
        if len(parts) not in (2, 3) or (len(parts) == 3 and parts[2] != "ro"):
            die("--mount HOST:CTR[:ro], got `%s`" % m)
        mounts.append(pb.Mount(host_path=parts[0], container_path=parts[1], readonly=len(parts) == 3))
    envs = [pb.KeyValue(key=k, value=v) for k, v in kv_pairs(a.env).items()]
    labels = dict(sandbox.labels)
    labels["io.kubernetes.container.name"] = a.name
    annotations = {"io.kubernetes.container.hash": "%08x" % zlib.crc32(a.name.encode()),
                   "io.kubernetes.container.restartCount": "0",
                   "io.kubernetes.container.terminationMessagePath": "/dev/termination-log",
                   "io.kubernetes.container.terminationMessagePolicy": "File"}
    annotations.update(kv_pairs(a.annotation))
    nsopt = pb.NamespaceOption()
    nsopt.CopyFrom(sandbox.linux.security_context.namespace_options)
    sc = pb.LinuxContainerSecurityContext(
        namespace_options=nsopt, masked_paths=MASKED_PATHS, readonly_paths=READONLY_PATHS,
        seccomp=seccomp_profile(pb, a.seccomp), no_new_privs=a.no_new_privs)
    if a.user is not None:
        sc.run_as_user.value = a.user
    cfg = pb.ContainerConfig(
        metadata=pb.ContainerMetadata(name=a.name, attempt=0),
        image=pb.ImageSpec(image=a.image), command=a.cmd, working_dir=a.workdir or "",
        envs=envs, mounts=mounts, labels=labels, annotations=annotations,
        log_path=os.path.join(a.name, "0.log"), stdin=a.stdin, tty=a.tty,
        linux=pb.LinuxContainerConfig(
            resources=pb.LinuxContainerResources(cpu_shares=2, oom_score_adj=1000),
            security_context=sc))
    r = c.call("CreateContainer", pb.CreateContainerRequest(pod_sandbox_id=a.pod, config=cfg,
                                                            sandbox_config=sandbox))
    print(r.container_id)


def cmd_start(c, a):
    c.call("StartContainer", c.pb.StartContainerRequest(container_id=a.id))


def cmd_stop(c, a):
    c.call("StopContainer", c.pb.StopContainerRequest(container_id=a.id, timeout=a.t),
           timeout=c.timeout + a.t)


def cmd_rm(c, a):
    c.call("RemoveContainer", c.pb.RemoveContainerRequest(container_id=a.id))


def cmd_stopp(c, a):
    c.call("StopPodSandbox", c.pb.StopPodSandboxRequest(pod_sandbox_id=a.pod))


def cmd_rmp(c, a):
    c.call("RemovePodSandbox", c.pb.RemovePodSandboxRequest(pod_sandbox_id=a.pod))
    try:
        os.unlink(os.path.join(state_dir(), a.pod + ".json"))
    except FileNotFoundError:
        pass


def info_json(info):
    out = {}
    for k, v in info.items():
        try:
            out[k] = json.loads(v)
        except ValueError:
            out[k] = v
    return out


def cmd_status(c, a):
    pb = c.pb
    r = c.call("ContainerStatus", pb.ContainerStatusRequest(container_id=a.id, verbose=True))
    s = r.status
    print(json.dumps({"id": s.id, "name": s.metadata.name, "state": pb.ContainerState.Name(s.state),
                      "exit_code": s.exit_code, "reason": s.reason, "message": s.message,
                      "started_at": s.started_at, "finished_at": s.finished_at,
                      "log_path": s.log_path, "info": info_json(r.info)}))


def cmd_pstatus(c, a):
    pb = c.pb
    r = c.call("PodSandboxStatus", pb.PodSandboxStatusRequest(pod_sandbox_id=a.pod, verbose=True))
    s = r.status
    print(json.dumps({"id": s.id, "name": s.metadata.name, "state": pb.PodSandboxState.Name(s.state),
                      "ip": s.network.ip, "runtime_handler": s.runtime_handler,
                      "info": info_json(r.info)}))


def cmd_pods(c, a):
    for p in c.call("ListPodSandbox", c.pb.ListPodSandboxRequest()).items:
        print(p.id)


def cmd_ctrs(c, a):
    for x in c.call("ListContainers", c.pb.ListContainersRequest()).containers:
        print(x.id)


def cmd_cleanup(c, a):
    pb = c.pb
    for p in c.call("ListPodSandbox", pb.ListPodSandboxRequest()).items:
        c.call("StopPodSandbox", pb.StopPodSandboxRequest(pod_sandbox_id=p.id))
        c.call("RemovePodSandbox", pb.RemovePodSandboxRequest(pod_sandbox_id=p.id))


def cmd_version(c, a):
    r = c.call("Version", c.pb.VersionRequest(version="v1"))
    print(json.dumps({"version": r.version, "runtime_name": r.runtime_name,
                      "runtime_version": r.runtime_version, "runtime_api_version": r.runtime_api_version}))


# ----------------------------------------------------------------- exec

def cmd_exec_sync(c, a):
    if not a.cmd:
        die("exec-sync: no command after --")
    r = c.call("ExecSync", c.pb.ExecSyncRequest(container_id=a.id, cmd=a.cmd, timeout=a.t),
               timeout=c.timeout + a.t)
    sys.stdout.buffer.write(r.stdout)
    sys.stdout.flush()
    sys.stderr.buffer.write(r.stderr)
    sys.stderr.flush()
    sys.exit(r.exit_code)


class WebSocket:
    """A client WebSocket (RFC 6455) over a plain TCP socket: the opening
    handshake, masked binary frames out, frames in (continuations joined,
    pings answered), and the close handshake."""

    def __init__(self, url, protocols, timeout):
        u = urllib.parse.urlsplit(url)
        if u.scheme != "http":
            die("exec: streaming URL `%s` is not http" % url)
        self.sock = socket.create_connection((u.hostname, u.port or 80), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        path = u.path + ("?" + u.query if u.query else "")
        req = ("GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n"
               "Sec-WebSocket-Protocol: %s\r\n\r\n") % (path, u.netloc, key, ", ".join(protocols))
        self.sock.sendall(req.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                die("exec: the streaming server closed during the handshake: %r" % head)
            head += chunk
        head, self.buf = head.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        if not lines[0].startswith("HTTP/1.1 101"):
            die("exec: WebSocket handshake refused: %s" % lines[0])
        headers = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        want = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest())
        if headers.get("sec-websocket-accept", "").encode() != want:
            die("exec: bad Sec-WebSocket-Accept from the streaming server")
        self.protocol = headers.get("sec-websocket-protocol", "")
        self.lock = threading.Lock()
        self.sock.settimeout(None)

    def _recv_exact(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def send(self, payload, opcode=0x2):
        mask = os.urandom(4)
        n = len(payload)
        if n < 126:
            hdr = struct.pack("!BB", 0x80 | opcode, 0x80 | n)
        elif n < 65536:
            hdr = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
        else:
            hdr = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
        body = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        with self.lock:
            self.sock.sendall(hdr + mask + body)

    def recv(self):
        """The next data message's payload, or None once the peer closed."""
        message = b""
        while True:
            try:
                b0, b1 = self._recv_exact(2)
                n = b1 & 0x7f
                if n == 126:
                    n = struct.unpack("!H", self._recv_exact(2))[0]
                elif n == 127:
                    n = struct.unpack("!Q", self._recv_exact(8))[0]
                mask = self._recv_exact(4) if b1 & 0x80 else None
                data = self._recv_exact(n)
            except (EOFError, ConnectionError):
                return None
            if mask:
                data = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
            opcode = b0 & 0x0f
            if opcode == 0x8:                      # close: answer it
                try:
                    self.send(data[:2], opcode=0x8)
                except OSError:
                    pass
                return None
            if opcode == 0x9:                      # ping
                self.send(data, opcode=0xA)
                continue
            if opcode == 0xA:
                continue
            message += data
            if b0 & 0x80:
                return message


def exit_code_of_status(text):
    """The exit code in the error channel's v1 Status: 0 for Success,
    the ExitCode cause for NonZeroExitCode, else 126 with the message."""
    try:
        st = json.loads(text)
    except ValueError:
        print(text, file=sys.stderr)
        return 126
    if st.get("status") == "Success":
        return 0
    for cause in (st.get("details") or {}).get("causes") or []:
        if cause.get("reason") == "ExitCode":
            return int(cause.get("message", "126"))
    print(st.get("message", text), file=sys.stderr)
    return 126


def cmd_exec(c, a):
    if not a.cmd:
        die("exec: no command after --")
    pb = c.pb
    r = c.call("Exec", pb.ExecRequest(container_id=a.id, cmd=a.cmd, tty=a.tty, stdin=a.stdin,
                                      stdout=True, stderr=not a.tty))
    ws = WebSocket(r.url, ["v4.channel.k8s.io"], c.timeout)
    if ws.protocol != "v4.channel.k8s.io":
        die("exec: the streaming server chose subprotocol `%s`" % ws.protocol)
    if a.tty and a.size:
        rows, cols = (int(x) for x in a.size.split("x"))
        ws.send(b"\x04" + json.dumps({"Width": cols, "Height": rows}).encode())
    if a.stdin:
        def pump():
            fd = sys.stdin.fileno()
            while True:
                data = os.read(fd, 32768)
                if not data:
                    return       # v4 has no way to close stdin alone
                try:
                    ws.send(b"\x00" + data)
                except OSError:
                    return
        threading.Thread(target=pump, daemon=True).start()
    code = None
    out = {1: sys.stdout.buffer, 2: sys.stderr.buffer}
    while True:
        msg = ws.recv()
        if msg is None:
            break
        if not msg:
            continue
        ch, data = msg[0], msg[1:]
        if ch in out and data:
            out[ch].write(data)
            out[ch].flush()
        elif ch == 3 and data:
            code = exit_code_of_status(data.decode("utf-8", "replace"))
    if code is None:
        die("exec: the stream ended without an exit status", 126)
    sys.exit(code)


# ---------------------------------------------------------- image archive

def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def tar_add_bytes(tar, name, data):
    ti = tarfile.TarInfo(name)
    ti.size = len(data)
    ti.mode = 0o644
    tar.addfile(ti, io.BytesIO(data))


def layer_file(source, tmps):
    """SOURCE as an uncompressed layer tar: a tar file as it is, a
    directory packed (numeric owners as on disk)."""
    if not os.path.isdir(source):
        return source
    fd, tmp = tempfile.mkstemp(prefix="oci-layer.")
    os.close(fd)
    tmps.append(tmp)
    with tarfile.open(tmp, "w", format=tarfile.PAX_FORMAT) as t:
        for entry in sorted(os.listdir(source)):
            t.add(os.path.join(source, entry), arcname=entry)
    return tmp


def cmd_oci_archive(a):
    """An OCI image layout (image-spec 1.0 image-layout.md) in a tar: one
    uncompressed layer per SOURCE (the first at the bottom), the config and
    manifest, and index.json naming the image for `ctr images import`
    (io.containerd.image.name)."""
    tmps = []
    try:
        layers = [layer_file(src, tmps) for src in a.source]
        digests = [sha256_file(f) for f in layers]
        config = {"architecture": "amd64", "os": "linux",
                  "config": {"Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]
                             + (a.env or []),
                             "WorkingDir": "/"},
                  "rootfs": {"type": "layers", "diff_ids": ["sha256:" + d for d in digests]},
                  "history": [{"created_by": "tests/tools/cri/cri-client.py oci-archive"} for _ in layers]}
        if a.cmd:
            config["config"]["Cmd"] = a.cmd
        if a.entrypoint:
            config["config"]["Entrypoint"] = a.entrypoint
        config_b = json.dumps(config, sort_keys=True).encode()
        config_d = hashlib.sha256(config_b).hexdigest()
        manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                    "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                               "digest": "sha256:" + config_d, "size": len(config_b)},
                    "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar",
                                "digest": "sha256:" + d, "size": os.path.getsize(f)}
                               for f, d in zip(layers, digests)]}
        manifest_b = json.dumps(manifest, sort_keys=True).encode()
        manifest_d = hashlib.sha256(manifest_b).hexdigest()
        tag = a.ref.rsplit(":", 1)[1] if ":" in a.ref.rsplit("/", 1)[-1] else "latest"
        index = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
                 "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json",
                                "digest": "sha256:" + manifest_d, "size": len(manifest_b),
                                "platform": {"architecture": "amd64", "os": "linux"},
                                "annotations": {"io.containerd.image.name": a.ref,
                                                "org.opencontainers.image.ref.name": tag}}]}
        out = open(a.o, "wb") if a.o else sys.stdout.buffer
        with tarfile.open(fileobj=out, mode="w|", format=tarfile.PAX_FORMAT) as t:
            tar_add_bytes(t, "oci-layout", b'{"imageLayoutVersion": "1.0.0"}')
            for d, f in dict(zip(digests, layers)).items():   # a blob once
                t.add(f, arcname="blobs/sha256/" + d)
            tar_add_bytes(t, "blobs/sha256/" + config_d, config_b)
            tar_add_bytes(t, "blobs/sha256/" + manifest_d, manifest_b)
            tar_add_bytes(t, "index.json", json.dumps(index, sort_keys=True).encode())
        out.flush()
        if a.o:
            out.close()
    finally:
        for f in tmps:
            os.unlink(f)


# ----------------------------------------------------------------- bench

def cmd_bench(c, a):
    """N rounds of a pod's life: RunPodSandbox, CreateContainer,
    StartContainer, ExecSync (`true`), then stop and remove (not timed).
    Prints, per timed RPC, the median, min, max and every sample in
    milliseconds."""
    pb = c.pb
    times = {k: [] for k in ("RunPodSandbox", "CreateContainer", "StartContainer", "ExecSync")}
    ns_args = argparse.Namespace(host_net=False, host_ipc=False, host_pid=False, share_pid=False)
    for i in range(a.n):
        uid = str(uuid.uuid4())
        name = "bench-%d" % i
        log_dir = os.path.join(a.log_root, "default_%s_%s" % (name, uid))
        os.makedirs(os.path.join(log_dir, "c"), exist_ok=True)
        sc = pb.LinuxSandboxSecurityContext(namespace_options=namespace_options(pb, ns_args),
                                            seccomp=seccomp_profile(pb, "unconfined"))
        cfg = pb.PodSandboxConfig(
            metadata=pb.PodSandboxMetadata(name=name, uid=uid, namespace="default"),
            hostname=name, log_directory=log_dir,
            annotations=kv_pairs(a.annotation),
            linux=pb.LinuxPodSandboxConfig(
                cgroup_parent="%s/pod%s" % (a.cgroup_parent.rstrip("/"), uid) if a.cgroup_parent else "",
                security_context=sc))
        t = time.monotonic()
        pod = c.call("RunPodSandbox", pb.RunPodSandboxRequest(config=cfg, runtime_handler=a.handler)).pod_sandbox_id
        times["RunPodSandbox"].append(time.monotonic() - t)
        ccfg = pb.ContainerConfig(
            metadata=pb.ContainerMetadata(name="c"), image=pb.ImageSpec(image=a.image),
            command=["sleep", "1000"], log_path="c/0.log",
            linux=pb.LinuxContainerConfig(
                resources=pb.LinuxContainerResources(cpu_shares=2, oom_score_adj=1000),
                security_context=pb.LinuxContainerSecurityContext(
                    namespace_options=sc.namespace_options, masked_paths=MASKED_PATHS,
                    readonly_paths=READONLY_PATHS, seccomp=seccomp_profile(pb, "unconfined"))))
        t = time.monotonic()
        cid = c.call("CreateContainer", pb.CreateContainerRequest(pod_sandbox_id=pod, config=ccfg,
                                                                  sandbox_config=cfg)).container_id
        times["CreateContainer"].append(time.monotonic() - t)
        t = time.monotonic()
        c.call("StartContainer", pb.StartContainerRequest(container_id=cid))
        times["StartContainer"].append(time.monotonic() - t)
        t = time.monotonic()
        r = c.call("ExecSync", pb.ExecSyncRequest(container_id=cid, cmd=["true"], timeout=30))
        times["ExecSync"].append(time.monotonic() - t)
        if r.exit_code != 0:
            die("bench: ExecSync true exited %d: %r" % (r.exit_code, r.stderr))
        c.call("StopPodSandbox", pb.StopPodSandboxRequest(pod_sandbox_id=pod))
        c.call("RemovePodSandbox", pb.RemovePodSandboxRequest(pod_sandbox_id=pod))
    out = {"handler": a.handler, "rounds": a.n}
    for k, v in times.items():
        ms = sorted(x * 1000 for x in v)
        out[k] = {"median_ms": round(statistics.median(ms), 1), "min_ms": round(ms[0], 1),
                  "max_ms": round(ms[-1], 1), "samples_ms": [round(x * 1000, 2) for x in v]}
    print(json.dumps(out))


# ------------------------------------------------------------------- CLI

def split_cmd(argv):
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1:]
    return argv, []


def main():
    argv, cmd = split_cmd(sys.argv[1:])
    p = argparse.ArgumentParser(prog="cri-client.py")
    p.add_argument("--socket", default=os.environ.get("CRI_SOCKET", "/run/containerd/containerd.sock"))
    p.add_argument("--timeout", type=float, default=float(os.environ.get("CRI_TIMEOUT", "60")))
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("compile")
    s.add_argument("dir")
    sub.add_parser("version")
    s = sub.add_parser("runp")
    s.add_argument("--handler", default="")
    s.add_argument("--annotation", action="append")
    s.add_argument("--hostname")
    s.add_argument("--host-net", action="store_true")
    s.add_argument("--host-ipc", action="store_true")
    s.add_argument("--host-pid", action="store_true")
    s.add_argument("--share-pid", action="store_true")
    s.add_argument("--cgroup-parent", default=os.environ.get("CRI_CGROUP_PARENT", ""))
    s.add_argument("--log-root", default=os.environ.get("CRI_LOG_ROOT", "/var/log/pods"))
    s.add_argument("--dns", action="append")
    s.add_argument("--seccomp", default="unconfined")
    s.add_argument("name")
    s = sub.add_parser("create")
    s.add_argument("--env", action="append")
    s.add_argument("--mount", action="append")
    s.add_argument("--annotation", action="append")
    s.add_argument("--tty", action="store_true")
    s.add_argument("--stdin", action="store_true")
    s.add_argument("--workdir")
    s.add_argument("--user", type=int)
    s.add_argument("--image", default=os.environ.get("CRI_IMAGE", ""))
    s.add_argument("--seccomp", default="unconfined")
    s.add_argument("--no-new-privs", action="store_true")
    s.add_argument("pod")
    s.add_argument("name")
    for name in ("start", "rm", "status"):
        sub.add_parser(name).add_argument("id")
    s = sub.add_parser("stop")
    s.add_argument("-t", type=int, default=0)
    s.add_argument("id")
    for name in ("stopp", "rmp", "pstatus"):
        sub.add_parser(name).add_argument("pod")
    sub.add_parser("pods")
    sub.add_parser("ctrs")
    sub.add_parser("cleanup")
    s = sub.add_parser("exec-sync")
    s.add_argument("-t", type=int, default=0)
    s.add_argument("id")
    s = sub.add_parser("exec")
    s.add_argument("--tty", action="store_true")
    s.add_argument("--stdin", action="store_true")
    s.add_argument("--size")
    s.add_argument("id")
    s = sub.add_parser("oci-archive")
    s.add_argument("--ref", required=True)
    s.add_argument("--cmd", action="append")
    s.add_argument("--entrypoint", action="append")
    s.add_argument("--env", action="append")
    s.add_argument("-o")
    s.add_argument("source", nargs="+")
    s = sub.add_parser("bench")
    s.add_argument("--handler", required=True)
    s.add_argument("--image", required=True)
    s.add_argument("--annotation", action="append")
    s.add_argument("-n", type=int, default=10)
    s.add_argument("--cgroup-parent", default=os.environ.get("CRI_CGROUP_PARENT", ""))
    s.add_argument("--log-root", default=os.environ.get("CRI_LOG_ROOT", "/var/log/pods"))

    a = p.parse_args(argv)
    a.cmd = cmd
    if a.command == "compile":
        compile_proto(a.dir)
        return
    if a.command == "oci-archive":
        cmd_oci_archive(a)
        return
    c = Client(a.socket, a.timeout)
    globals()["cmd_" + a.command.replace("-", "_")](c, a)


if __name__ == "__main__":
    main()
