#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A hostile peer against a real ngauge: the --server/--client bootstrap spoken
by a client and by a server that mean harm.

1. Records a legitimate session between a real client and a real server
   through a relay (both directions, split into the protocol's messages:
   core/boot_tcp.c has the protocol).
2. Hostile client: the named cases of doc/security.md (the manifest's host
   text length at -1, 0, 2^31, 2^63 in a live session; one and 40 silent
   peers; a peer idle after its handshake; a trickling peer; argument lists
   too long; the server's own options; the limits; the recorded session
   replayed from another address, whose published listener the server must
   refuse), then MUTATIONS mutations of the client's side (truncations, bit
   flips, frame lengths and aligned 4- and 8-byte fields at 0, -1, 2^31,
   2^63, len +- 1): LIVE of them in live sessions of a real client through a
   relay that changes one message (deep into the run), the rest replayed
   from 127.0.0.2, so that every address they publish for 127.0.0.1 is one
   the server must refuse: a trap listener on 127.0.0.1 at the recorded
   client's tcp port counts connections, which must stay 0.  After each
   case the server must welcome a real client (its handshake answered with
   the verdict 0 by a child that parsed the run) within 3 s; every
   CHECK_EVERY cases a whole run of the real ngauge client must pass.
3. Hostile server: the named cases (the host text length, live; a server
   that closes, truncates, announces a 4 GiB verdict or refusal, or goes
   silent) and SERVER_MUTATIONS mutations of the server's side in live
   sessions, each against a real `ngauge --client`, which must end within
   its --timeout plus 10 s with exit 0, 1 or 2, never by a signal.
Throughout, no sanitizer report may appear in any ngauge's output.  Prints
what it ran: cases, mutations, seconds.

Usage: hostile.py [MUTATIONS [LIVE [SERVER_MUTATIONS]]]   (NGAUGE: the binary)
"""
import os
import random
import re
import select
import socket
import struct
import subprocess
import sys
import tempfile
import time

NGAUGE = os.environ.get("NGAUGE", "./build/ngauge")
MUTATIONS = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
LIVE_MUTATIONS = int(sys.argv[2]) if len(sys.argv) > 2 else 200
SERVER_MUTATIONS = int(sys.argv[3]) if len(sys.argv) > 3 else 150
CHECK_EVERY = 250
SEED = int(os.environ.get("NGAUGE_FUZZ_SEED", "20261206"))
SANITIZER = re.compile(r"AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|runtime error:|"
                       r"free\(\): |double free|stack smashing|Segmentation|core dumped")
# --timer clock: a session without the TSC's calibration (100 ms a rank), so that a case costs what the protocol does
CLIENT_ARGS = ["-x", "tcp", "-p", "pingpong", "-s", "1,64", "-c", "10", "-w", "2", "--timer", "clock"]
HOSTILE_SRC = "127.0.0.2"
BIG = [0, 0xFFFFFFFFFFFFFFFF, 1 << 31, 1 << 63, 0xFFFFFFFF, 1 << 32]

rng = random.Random(SEED)
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, flush=True)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def u32(b, o):
    return struct.unpack_from(">I", b, o)[0]


def u64(b, o):
    return struct.unpack_from(">Q", b, o)[0]


# ---- the protocol's messages ----

def split(stream, c2s):
    """A recorded direction cut into the protocol's messages (the live relay's Splitter, fed at once)."""
    return [m for _, m in Splitter(c2s).feed(stream)]


def hello(flags=0):
    return b"NGBOOT01" + struct.pack(">II", 2, flags) + os.urandom(32)


def args_msg(args):
    blob = b"".join(a.encode() + b"\0" for a in args)
    return struct.pack(">I", len(blob)) + blob


# ---- processes ----

class Server:
    def __init__(self, extra=()):
        self.port = free_port()
        self.log = tempfile.TemporaryFile(mode="w+", errors="replace")
        self.proc = subprocess.Popen([NGAUGE, "--server", "--bind", "127.0.0.1", "--port", str(self.port),
                                      "--timeout", "2", *extra],
                                     stdout=subprocess.DEVNULL, stderr=self.log)
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise SystemExit("the server did not start")

    def text(self):
        self.log.seek(0)
        return self.log.read()

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def connect(port, src=HOSTILE_SRC):
    s = socket.socket()
    s.bind((src, 0))
    s.settimeout(5)
    s.connect(("127.0.0.1", port))
    return s


def drain(s, secs):
    """Reads what the peer says for up to @secs (until it closes)."""
    got = b""
    end = time.time() + secs
    s.setblocking(False)
    while time.time() < end:
        r, _, _ = select.select([s], [], [], max(0.0, end - time.time()))
        if not r:
            break
        try:
            d = s.recv(65536)
        except (BlockingIOError, InterruptedError):
            continue
        except OSError:
            break
        if not d:
            break
        got += d
    return got


def welcome_check(port, limit=3.0):
    """A real client's handshake: True when the server's child accepts the run within @limit s."""
    end = time.time() + limit
    while time.time() < end:
        try:
            s = connect(port, "127.0.0.1")
            s.sendall(hello() + args_msg(CLIENT_ARGS))
            got = b""
            s.settimeout(max(0.1, end - time.time()))
            while len(got) < 48 + 16:
                d = s.recv(4096)
                if not d:
                    break
                got += d
            s.close()
        except OSError:
            time.sleep(0.05)
            continue
        if got[48:56] == b"NGBUSY01":
            time.sleep(0.05)
            continue
        return got[48:56] == b"NGBOOT01" and u32(got, 56) == 0
    return False


def real_client(port, extra=(), timeout=60):
    r = subprocess.run([NGAUGE, "--client", "127.0.0.1", "--port", str(port), "--timeout", "5", *CLIENT_ARGS,
                        *extra], capture_output=True, text=True, timeout=timeout)
    return r


# ---- recording ----

def record():
    srv = Server()
    relay = socket.socket()
    relay.bind(("127.0.0.1", 0))
    relay.listen(1)
    rport = relay.getsockname()[1]
    cli = subprocess.Popen([NGAUGE, "--client", "127.0.0.1", "--port", str(rport), *CLIENT_ARGS],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace")
    c, _ = relay.accept()
    s = socket.create_connection(("127.0.0.1", srv.port))
    up, down = b"", b""
    open_ = {c: s, s: c}
    while open_:
        r, _, _ = select.select(list(open_), [], [], 30)
        if not r:
            break
        for fd in r:
            d = fd.recv(65536)
            if not d:
                other = open_.pop(fd)
                try:
                    other.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
                continue
            if fd is c:
                up += d
            else:
                down += d
            open_[fd].sendall(d)
    out, err = cli.communicate(timeout=60)
    srv.stop()
    if cli.returncode != 0:
        raise SystemExit("recording: the real client failed: " + err)
    if SANITIZER.search(err + srv.text()):
        fail("sanitizer report in the recorded session")
    return split(up, True), split(down, False)


def tcp_ports(msgs):
    """The recorded client's published tcp listener ports (modules/tcp/tcp_setup.c's struct ng_tcp_addr:
    IPv4 address and port in network order, 2 bytes of padding: an 8-byte frame of 127.0.0.1)."""
    ports = set()
    for m in msgs[2:]:
        if len(m) == 16 and m[8:12] == b"\x7f\x00\x00\x01":
            ports.add(struct.unpack_from(">H", m, 12)[0])
    return ports


# ---- mutations ----

def set_field(m, off, width, val):
    b = bytearray(m)
    if off + width <= len(b):
        b[off:off + width] = (val & ((1 << (8 * width)) - 1)).to_bytes(width, "little" if off >= 8 else "big")
    return bytes(b)


def mutate(msgs, framed_from=2):
    """One mutation of the message list; returns (description, bytes to send)."""
    i = rng.randrange(len(msgs))
    m = msgs[i]
    kind = rng.choice(["trunc", "flip", "len", "field4", "field8", "drop", "dup"])
    out = list(msgs)
    if kind == "trunc":
        cut = rng.randrange(sum(len(x) for x in msgs))
        return "truncate at %d" % cut, b"".join(msgs)[:cut]
    if kind == "flip":
        if not m:
            return "empty", b"".join(msgs)
        b = bytearray(m)
        for _ in range(rng.choice([1, 1, 2, 8])):
            k = rng.randrange(len(b))
            b[k] ^= 1 << rng.randrange(8)
        out[i] = bytes(b)
        return "flip bits in message %d" % i, b"".join(out)
    if kind == "len":
        if i >= framed_from:
            val = rng.choice(BIG + [len(m) - 8 + 1, max(0, len(m) - 8 - 1)])
            out[i] = struct.pack(">Q", val & 0xFFFFFFFFFFFFFFFF) + m[8:]
        elif i == 1:
            val = rng.choice([0, 0xFFFFFFFF, 1 << 31, 65537, len(m) - 4 + 1])
            out[i] = struct.pack(">I", val) + m[4:]
        else:
            out[i] = set_field(m, 8, 4, rng.choice(BIG))
        return "length of message %d at %d" % (i, val if i else 0), b"".join(out)
    if kind in ("field4", "field8"):
        w = 4 if kind == "field4" else 8
        if len(m) < 8 + w:
            return "short", b"".join(msgs)
        off = 8 + rng.randrange(0, (len(m) - 8) // w) * w
        val = rng.choice(BIG + [rng.getrandbits(32)])
        out[i] = set_field(m, off, w, val)
        return "field of %d bytes at %d of message %d = %#x" % (w, off, i, val), b"".join(out)
    if kind == "drop":
        del out[i]
        return "drop message %d" % i, b"".join(out)
    out.insert(i, m)
    return "repeat message %d" % i, b"".join(out)


def host_len_cases(msgs):
    """The manifest's host text length (an 8-byte frame right after the 208-byte rank record)."""
    for i in range(3, len(msgs)):
        if len(msgs[i - 1]) == 8 + 208 and len(msgs[i]) == 16:
            return i
    return None


# ---- the hostile client ----

def hostile_client(srv, data, linger=3.0):
    """Sends @data, then says no more and reads until the server closes (at most @linger s)."""
    try:
        s = connect(srv.port)
    except OSError as e:
        fail("the server refused a connection: %s" % e)
        return b""
    try:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    got = drain(s, linger)
    s.close()
    return got


class Splitter:
    """Cuts one direction of a live session into the protocol's messages."""

    def __init__(self, c2s):
        self.c2s = c2s
        self.buf = b""
        self.k = 0

    def need(self):
        b = self.buf
        if self.k == 0:
            return 48
        if self.k == 1:
            if self.c2s:
                return 4 + u32(b, 0) if len(b) >= 4 else None
            if b[:8] != b"NGBOOT01":
                return 8 + 4 + u32(b, 8) if len(b) >= 12 else None
            return 16 + u32(b, 12) if len(b) >= 16 else None
        return 8 + u64(b, 0) if len(b) >= 8 else None

    def feed(self, data):
        self.buf += data
        out = []
        while True:
            n = self.need()
            if n is None or len(self.buf) < n:
                return out
            out.append((self.k, self.buf[:n]))
            self.buf = self.buf[n:]
            self.k += 1


def live(port, c2s, change):
    """A real client through a relay to the server on @port; @change(k, message) rewrites the k-th message
    of one direction (client to server when @c2s), None closing the connection there.  Returns the
    client's (exit status, stderr)."""
    relay = socket.socket()
    relay.bind(("127.0.0.1", 0))
    relay.listen(1)
    cli = subprocess.Popen([NGAUGE, "--client", "127.0.0.1", "--port", str(relay.getsockname()[1]),
                            "--timeout", "2", *CLIENT_ARGS], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True, errors="replace")
    relay.settimeout(10)
    try:
        c, _ = relay.accept()
        s = socket.create_connection(("127.0.0.1", port))
    except OSError:
        relay.close()
        cli.kill()
        return -1, cli.communicate()[1]
    relay.close()
    mut, raw = (c, s) if c2s else (s, c)
    sp = Splitter(c2s)
    peers = {c: s, s: c}
    end = time.time() + 20
    while peers and time.time() < end:
        r, _, _ = select.select(list(peers), [], [], 1)
        for fd in r:
            try:
                d = fd.recv(65536)
            except OSError:
                d = b""
            if not d:
                for x in (c, s):
                    x.close()
                peers = {}
                break
            if fd is mut:
                out = b""
                for k, m in sp.feed(d):
                    x = change(k, m)
                    if x is None:
                        peers = {}
                        break
                    out += x
                try:
                    peers.get(fd, raw).sendall(out)
                except OSError:
                    peers = {}
                if not peers:
                    c.close()
                    s.close()
                    break
            else:
                try:
                    peers[fd].sendall(d)
                except OSError:
                    pass
    for x in (c, s):
        x.close()
    try:
        _, err = cli.communicate(timeout=2 + 10)
    except subprocess.TimeoutExpired:
        cli.kill()
        _, err = cli.communicate()
        return None, err
    return cli.returncode, err


def change_at(k0, fn):
    """A change of the k0-th message by @fn (others pass)."""
    return lambda k, m: fn(m) if k == k0 else m


def random_change(msgs):
    """A random change of one message of a recorded direction, as mutate() makes them."""
    desc, _ = "", None
    i = rng.randrange(len(msgs))
    kind = rng.choice(["flip", "len", "field4", "field8", "cut"])
    if kind == "cut":
        return "close before message %d" % i, change_at(i, lambda m: None)
    if kind == "flip":
        bits = [(rng.random(), rng.randrange(8)) for _ in range(rng.choice([1, 2, 8]))]

        def flip(m):
            b = bytearray(m)
            for f, bit in bits:
                if b:
                    b[int(f * len(b))] ^= 1 << bit
            return bytes(b)
        return "flip bits in message %d" % i, change_at(i, flip)
    if kind == "len":
        val = rng.choice(BIG)
        if i >= 2:
            return "length of message %d at %#x" % (i, val), change_at(i, lambda m: struct.pack(">Q", val) + m[8:])
        return "header field of message %d at %#x" % (i, val), change_at(i, lambda m: set_field(m, 8, 4, val))
    w = 4 if kind == "field4" else 8
    f = rng.random()
    val = rng.choice(BIG + [rng.getrandbits(32)])

    def field(m):
        if len(m) < 8 + w:
            return m
        off = 8 + int(f * ((len(m) - 8) // w)) * w
        return set_field(m, off, w, val)
    return "field of %d bytes in message %d = %#x" % (w, i, val), change_at(i, field)


def run_client_side(client_msgs, traps):
    srv = Server()
    cases = 0
    t0 = time.time()

    def after(desc):
        nonlocal cases
        cases += 1
        if not welcome_check(srv.port):
            fail("after %s: no real client was welcomed within 3 s" % desc)
        if cases % CHECK_EVERY == 0:
            r = real_client(srv.port)
            if r.returncode != 0:
                fail("after %s: a real run failed: %s" % (desc, r.stderr.strip()))

    def live_case(desc, change):
        code, err = live(srv.port, True, change)
        if code is None or code < 0 or code >= 128:
            fail("%s: the real client behind the relay ended with %s: %s" % (desc, code, err.strip()[-300:]))
        after(desc)

    # named cases: the manifest's host text length, in a live session
    hl = host_len_cases(client_msgs)
    if hl is None:
        fail("the recorded session has no manifest host text length")
    else:
        for val in [0xFFFFFFFFFFFFFFFF, 0, 1 << 31, 1 << 63]:
            live_case("host text length %#x" % val,
                      change_at(hl, lambda m, v=val: m[:8] + struct.pack("<Q", v)))
        if "rank 0 sent a host text length of -1" not in srv.text():
            fail("the server did not name the bad host text length: " + srv.text()[-600:])
    # a silent peer, 40 silent peers, a trickling one
    idle = connect(srv.port)
    t = time.time()
    ok = welcome_check(srv.port, 3.0)
    if not ok or time.time() - t > 1.0:
        fail("a real client behind one idle connection took %.1f s" % (time.time() - t))
    idles = [connect(srv.port) for _ in range(40)]
    t = time.time()
    ok = welcome_check(srv.port, 3.0)
    if not ok or time.time() - t > 1.0:
        fail("a real client behind 40 silent connections took %.1f s" % (time.time() - t))
    for s in idles + [idle]:
        s.close()
    # a peer idle after its handshake holds the child: served within --timeout (2) + 2 s
    s = connect(srv.port)
    s.sendall(hello() + args_msg(CLIENT_ARGS))
    if not welcome_check(srv.port, 2 + 2.0):
        fail("a peer idle after its handshake held the server past --timeout + 2 s")
    s.close()
    cases += 3
    # a trickling peer (a byte every 0.15 s) is dropped at its handshake's deadline
    trick = connect(srv.port)
    t = time.time()
    try:
        for b in hello():
            trick.send(bytes([b]))
            time.sleep(0.15)
    except OSError:
        pass
    trick.close()
    if time.time() - t > 2 + 1.0:
        fail("a trickling peer was kept %.1f s, past --timeout (2 s)" % (time.time() - t))
    after("a trickling peer")
    for data, desc in [(hello() + struct.pack(">I", 1 << 30), "an argument list of 1 GiB"),
                       (hello() + struct.pack(">I", 0xFFFFFFFF), "an argument list of 2^32 - 1 bytes"),
                       (hello() + args_msg(["--server-max-size", "1T", *CLIENT_ARGS]), "the server's own option"),
                       (hello() + args_msg(["-x", "tcp", "-p", "pingpong", "-s", "1,64", "-c", "100000000"]), "-c 10^8"),
                       (hello() + args_msg(["-x", "tcp", "-p", "pingpong", "-s", "2G"]), "-s 2G"),
                       (hello() + args_msg(["-x", "tcp", "-p", "pingpong", "--time", "86400"]), "--time 86400"),
                       (hello(1), "a client with a key the server does not ask for"),
                       (b"NGBOOT01" + struct.pack(">II", 1, 0), "protocol 1")]:
        hostile_client(srv, data)
        after(desc)
    for want in ["--server-max-size", "--server-max-count", "--server-max-time", "is the server's own option",
                 "an argument list of 1073741824 bytes"]:
        if want not in srv.text():
            fail("the server's log does not say '%s'" % want)
    # the recorded session replayed whole from 127.0.0.2: its listener, 127.0.0.1, is not the peer's
    hostile_client(srv, b"".join(client_msgs))
    after("the recorded session from another address")
    if "refused to connect there" not in srv.text():
        fail("the server did not refuse the published 127.0.0.1 listener")
    named = cases
    # mutations: in live sessions (deep into the run), and replayed from another address (fast)
    nlive = min(LIVE_MUTATIONS, MUTATIONS)
    for k in range(nlive):
        desc, change = random_change(client_msgs)
        live_case("live mutation %d (%s)" % (k, desc), change)
    for k in range(MUTATIONS - nlive):
        desc, data = mutate(client_msgs)
        hostile_client(srv, data)
        after("mutation %d (%s)" % (k, desc))
    r = real_client(srv.port)
    if r.returncode != 0 or "# ngauge" not in r.stdout:
        fail("the last real run failed: %s" % r.stderr.strip())
    srv.stop()
    text = srv.text()
    m = SANITIZER.search(text)
    if m:
        i = text.find(m.group(0))
        fail("sanitizer report in the server's output: " + text[max(0, i - 200):i + 800])
    for code in re.findall(r"client \d+ done \(exit (\d+)\)", text):
        if int(code) >= 128:
            fail("a server child ended by a signal (exit %s)" % code)
            break
    hits = sum(t.hits() for t in traps)
    if hits:
        fail("%d connections reached the published 127.0.0.1 listener ports" % hits)
    return named, cases - named, time.time() - t0


class Trap:
    """A listener at an address a hostile peer publishes: nothing may connect."""

    def __init__(self, port):
        self.s = socket.socket()
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.s.bind(("127.0.0.1", port))
            self.s.listen(16)
            self.s.setblocking(False)
        except OSError:
            self.s.close()
            self.s = None
        self.n = 0

    def hits(self):
        while self.s:
            try:
                c, _ = self.s.accept()
                c.close()
                self.n += 1
            except OSError:
                break
        return self.n


# ---- the hostile server ----

def hostile_server(data, desc, keep_open=0.0):
    """Answers a real client with @data; the client must end with 1 or 2, unsignalled, in time."""
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", 0))
    ls.listen(1)
    port = ls.getsockname()[1]
    cli = subprocess.Popen([NGAUGE, "--client", "127.0.0.1", "--port", str(port), "--timeout", "2",
                            *CLIENT_ARGS], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, errors="replace")
    ls.settimeout(10)
    try:
        c, _ = ls.accept()
        got = drain(c, 0.2)
        c.setblocking(True)
        c.sendall(data)
        drain(c, keep_open)
        c.close()
    except OSError:
        pass
    ls.close()
    try:
        _, err = cli.communicate(timeout=2 + 5 + 5)
    except subprocess.TimeoutExpired:
        cli.kill()
        cli.communicate()
        fail("hostile server (%s): the client did not end within its --timeout + 10 s" % desc)
        return
    if cli.returncode not in (0, 1, 2):
        fail("hostile server (%s): the client exited %d: %s" % (desc, cli.returncode, err.strip()[-500:]))
    if SANITIZER.search(err):
        fail("hostile server (%s): sanitizer report: %s" % (desc, err[-2000:]))
    return err


def run_server_side(server_msgs):
    t0 = time.time()
    named = 0
    srv = Server()

    def live_case(desc, change):
        code, err = live(srv.port, False, change)
        if code is None:
            fail("hostile server (%s): the client did not end within its --timeout + 10 s" % desc)
        elif code not in (0, 1, 2):
            fail("hostile server (%s): the client exited %d: %s" % (desc, code, err.strip()[-500:]))
        if SANITIZER.search(err or ""):
            fail("hostile server (%s): sanitizer report: %s" % (desc, err[-2000:]))
        return err or ""

    # the manifest host text length from a hostile server, live
    hl = host_len_cases(server_msgs)
    if hl is None:
        fail("the recorded server side has no manifest host text length")
    else:
        for val in [0xFFFFFFFFFFFFFFFF, 0, 1 << 31, 1 << 63]:
            err = live_case("host text length %#x" % val,
                            change_at(hl, lambda m, v=val: m[:8] + struct.pack("<Q", v)))
            named += 1
            if val == 0xFFFFFFFFFFFFFFFF and "rank 1 sent a host text length of -1" not in err:
                fail("the client did not name the bad host text length: " + err.strip()[-300:])
    for data, desc in [(b"", "closes at once"), (b"NGBOOT01", "a truncated answer"),
                       (server_msgs[0][:8] + struct.pack(">II", 2, 0) + b"\0" * 32 + b"NGBOOT01" +
                        struct.pack(">II", 0, 0xFFFFFFFF), "a verdict of 4 GiB"),
                       (b"NGNOPE01" + struct.pack(">I", 1 << 31), "a refusal of 2 GiB"),
                       (server_msgs[0] + server_msgs[1], "silent after the verdict")]:
        hostile_server(data, desc, 3.0 if "silent" in desc else 0.0)
        named += 1
    for k in range(SERVER_MUTATIONS):
        desc, change = random_change(server_msgs)
        live_case("live mutation %d (%s)" % (k, desc), change)
    srv.stop()
    if SANITIZER.search(srv.text()):
        fail("sanitizer report in the server's output behind the hostile relay")
    return named, SERVER_MUTATIONS, time.time() - t0


def main():
    if not os.access(NGAUGE, os.X_OK):
        print("no ngauge at %s" % NGAUGE)
        return 77
    try:
        socket.socket().bind((HOSTILE_SRC, 0))
    except OSError:
        print("no %s on loopback" % HOSTILE_SRC)
        return 77
    t0 = time.time()
    client_msgs, server_msgs = record()
    traps = [Trap(p) for p in tcp_ports(client_msgs)]
    if not traps:
        fail("found no published tcp listener in the recorded session")
    n1, m1, s1 = run_client_side(client_msgs, traps)
    print("hostile client: %d named cases, %d mutations of a %d-message session, %.0f s; %d trap port(s), "
          "0 connections expected, %d seen" % (n1, m1, len(client_msgs), s1, len(traps),
                                                sum(t.hits() for t in traps)), flush=True)
    n2, m2, s2 = run_server_side(server_msgs)
    print("hostile server: %d named cases, %d mutations of a %d-message session, %.0f s" %
          (n2, m2, len(server_msgs), s2), flush=True)
    print("hostile peer: %d cases, %d mutations, %.0f s in all, seed %d" %
          (n1 + n2, m1 + m2, time.time() - t0, SEED))
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
