#!/usr/bin/env python3
"""Hostile clients for the egress helper (tests/security/egress.bats).

usage: hostile-client.py PROXY_PORT HELPER_PID MODE [ARGS]

Every mode runs its attack, and meanwhile probes the helper with a normal
request (PROBE env: the request line's absolute URL; the probe passes when
an HTTP status line comes back within PROBE_TIMEOUT seconds).  Prints
"key=value" lines: probe results, the helper's peak RSS (kB, from
/proc/PID/status) and its fd count.  Loopback only; bounded in count and
time.
"""
import os, resource, socket, sys, time

port, helper, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
args = sys.argv[4:]
PROBE = os.environ.get("PROBE", "http://denied.test/")
PROBE_TIMEOUT = float(os.environ.get("PROBE_TIMEOUT", "5"))
peak = 0

def authority(url):
    # The Host field a forward request must carry: its target's authority.
    return url.split("/")[2].encode()

def rss():
    global peak
    try:
        for l in open("/proc/%d/status" % helper):
            if l.startswith("VmRSS:"):
                v = int(l.split()[1]); peak = max(peak, v); return v
    except OSError:
        pass
    return 0

def nfds():
    try:
        return len(os.listdir("/proc/%d/fd" % helper))
    except OSError:
        return -1

def probe(tag):
    t = time.time()
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=PROBE_TIMEOUT)
        s.settimeout(PROBE_TIMEOUT)
        s.sendall(b"GET " + PROBE.encode() + b" HTTP/1.1\r\nHost: " + authority(PROBE) + b"\r\nConnection: close\r\n\r\n")
        line = s.recv(4096).split(b"\r\n")[0].decode("latin1")
        s.close()
    except OSError as e:
        line = "ERR " + type(e).__name__
    dt = time.time() - t
    ok = line.startswith("HTTP/1.")
    print("probe_%s=%s %.2fs %s" % (tag, "ok" if ok else "FAIL", dt, line), flush=True)
    return ok

def raise_nofile(n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(max(n, soft), hard)
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))

def connect_many(n):
    socks = []
    for i in range(n):
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        except OSError:
            s.close(); break
        socks.append(s)
    return socks

def read_status(s, timeout):
    s.setblocking(True)
    s.settimeout(timeout)
    try:
        d = s.recv(4096)
        return d.split(b"\r\n")[0].decode("latin1") if d else "EOF"
    except socket.timeout:
        return "TIMEOUT"
    except OSError as e:
        return "ERR " + type(e).__name__

fd0 = nfds()
rss()
print("fds_before=%d" % fd0)
bad = 0

if mode == "slowloris":
    # N clients each send the request line and then one header byte per
    # second, never finishing the head.
    n, secs = int(args[0]), int(args[1])
    raise_nofile(n + 100)
    socks = connect_many(n)
    time.sleep(0.5)
    for s in socks:
        try: s.send(b"GET http://denied.test/ HTTP/1.1\r\nX-Slow: ")
        except OSError: pass
    start = time.time(); i = 0
    while time.time() - start < secs:
        for s in socks:
            try: s.send(b"a")
            except OSError: pass
        if not probe("during%d" % i): bad += 1
        rss(); i += 1
        time.sleep(1)
    # After the head deadline, the helper must have closed them.
    closed = 0
    for s in socks:
        st = read_status(s, 0.05)
        if st in ("EOF",) or st.startswith("HTTP/1.1 4") or st.startswith("ERR"): closed += 1
    print("slow_closed=%d/%d" % (closed, len(socks)))
    for s in socks: s.close()

elif mode == "oversized":
    # N clients each send a head of SIZE bytes with no end.
    n, size = int(args[0]), int(args[1])
    replies = {}
    for i in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(b"GET http://denied.test/ HTTP/1.1\r\n")
        sent = 0; chunk = b"X-Big: " + b"a" * 65536 + b"\r\n"
        try:
            while sent < size:
                s.sendall(chunk); sent += len(chunk)
                rss()
        except OSError:
            pass
        st = read_status(s, 5)
        replies[st] = replies.get(st, 0) + 1
        s.close()
        if i % 10 == 0 and not probe("during%d" % i): bad += 1
    print("replies=%s" % replies)

elif mode == "chunks":
    # Forward requests to an allowed host (ARGS[0] = absolute URL) with
    # malformed chunked bodies; each must end that connection only.
    url = args[0]
    bodies = [b"zz\r\nhello\r\n0\r\n\r\n", b"fffffffffffffffff\r\n", b"-1\r\n\r\n",
              b"5;" + b"e" * 10000 + b"\r\nhello\r\n0\r\n\r\n", b"5\r\nhelloXX0\r\n\r\n",
              b"ffffffffffffffff\r\n" + b"a" * 100000, b"0x10\r\n", b" 5\r\nhello\r\n0\r\n\r\n"]
    for i, body in enumerate(bodies):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(b"POST " + url.encode() + b" HTTP/1.1\r\nHost: " + authority(url) + b"\r\nTransfer-Encoding: chunked\r\n\r\n")
        try:
            s.sendall(body)
        except OSError:
            pass
        st = read_status(s, 10)
        # Drain until the helper closes.
        end = "open"
        try:
            s.settimeout(10)
            while True:
                d = s.recv(65536)
                if not d: end = "closed"; break
        except OSError as e:
            end = "closed" if not isinstance(e, socket.timeout) else "STILL-OPEN"
        print("chunk%d=%s %s" % (i, st, end))
        if end == "STILL-OPEN": bad += 1
        s.close()
        if not probe("after%d" % i): bad += 1
        rss()

elif mode == "idle":
    # N connections that never send a byte.
    n, secs = int(args[0]), float(args[1])
    raise_nofile(n + 100)
    socks = connect_many(n)
    print("opened=%d" % len(socks))
    time.sleep(1)
    rss()
    print("fds_during=%d" % nfds())
    ok = probe("during")
    print("probe_during_ok=%d" % ok)
    t = time.time()
    while time.time() - t < secs:
        rss(); time.sleep(0.5)
    for s in socks: s.close()
    time.sleep(1)
    if not probe("after"): bad += 1

# Let the helper drop closed connections, then compare fd counts.
for _ in range(50):
    if nfds() <= fd0 + 2: break
    time.sleep(0.1)
print("fds_after=%d" % nfds())
print("peak_rss_kb=%d" % peak)
print("bad=%d" % bad)
