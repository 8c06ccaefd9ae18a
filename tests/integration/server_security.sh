#!/bin/bash
# --server on a network nobody trusts (doc/security.md): --auth (a keyless client, a wrong key, a key file others
# may read, a symbolic link as the key, a server without a key), --allow (a client from outside it is closed before
# a byte is read), the server's limits (size, count, time; a client cannot raise them or send the server's own
# options), each refused with one line the client sees and nothing of the run started; the warning of a server
# open to everyone; options of the server refused on a client.  The hostile peer (tests/fuzz/peer) covers lengths,
# silence and published addresses.
. "$(dirname "$0")/lib.sh"

head -c 32 /dev/urandom >"$T/key" && chmod 600 "$T/key"
head -c 32 /dev/urandom >"$T/other" && chmod 600 "$T/other"
cp "$T/key" "$T/open" && chmod 644 "$T/open"
ln -s "$T/key" "$T/link"
port=$((20000 + RANDOM % 20000))
args=(-x tcp -p pingpong -s 1,64 -c 50)

# one_line WHAT PATTERN: the client's stderr ($T/err) is one line that matches PATTERN
one_line() {
	if [ "$(wc -l <"$T/err")" = 1 ] && grep -q -- "$2" "$T/err"; then pass "$1: one line"; else
		fail "$1: $(cat "$T/err")"; fi
}

# A server with a key, serving clients one after another.
timeout 120 "$NGAUGE" --server --bind 127.0.0.1 --port $port --auth "$T/key" --timeout 3 \
	--server-max-size 64K --server-max-count 5000 --server-max-time 30 >/dev/null 2>"$T/serr" &
srv=$!
run 2 "$NGAUGE" --client 127.0.0.1 --port $port "${args[@]}" &&
	one_line "no key" "asks for a key: give --auth FILE"
run 2 "$NGAUGE" --client 127.0.0.1 --port $port --auth "$T/other" "${args[@]}" &&
	one_line "a wrong key" "does not have this key (--auth): nothing sent"
run 2 "$NGAUGE" --client 127.0.0.1 --port $port --auth "$T/open" "${args[@]}" &&
	one_line "a key file others may read" "may be read or written by others (mode 0644): chmod 600 it"
run 2 "$NGAUGE" --client 127.0.0.1 --port $port --auth "$T/link" "${args[@]}" &&
	one_line "a key file that is a symbolic link" "is a symbolic link"
grep -q "serving client" "$T/serr" && fail "a client without the key was served: $(cat "$T/serr")" ||
	pass "nothing of the server ran for a client without the key"
grep -q "dropped the connection from 127.0.0.1: has no key" "$T/serr" && pass "the server names the keyless client" ||
	fail "the server's log: $(cat "$T/serr")"

# With the key: served, result written; then the limits.
if run 0 "$NGAUGE" --client 127.0.0.1 --port $port --auth "$T/key" "${args[@]}" --verify -o "$T/ok.json"; then
	pycheck "$T/ok.json" "with the key: served and verified" '
assert r["complete"] and r["launch"] == "tcp" and [x["size"] for x in r["results"]] == [1, 64]
assert r["parameters"]["auth"].endswith("/key")
'
fi
for case in "-s 1M|--server-max-size (65536 bytes)" "-c 100000|--server-max-count (5000)" \
	"-w 6000|--server-max-count (5000)" "--time 20|--server-max-time (30 s)" \
	"--server-max-size 1G|--server-max-size applies to --server only"; do
	opt=${case%|*} want=${case#*|}
	# shellcheck disable=SC2086
	run 2 "$NGAUGE" --client 127.0.0.1 --port $port --auth "$T/key" -x tcp -p pingpong -s 1,64 $opt &&
		one_line "limit: $opt" "$want"
done
# The server's own options sent by a client are refused by the server (sent as if the client were another tool).
cat >"$T/own.py" <<'EOF'
import hashlib, hmac, os, socket, struct, sys
port, key = int(sys.argv[1]), hashlib.sha256(open(sys.argv[2], "rb").read()).digest()
s = socket.create_connection(("127.0.0.1", port), timeout=5)
cn = os.urandom(32)
s.sendall(b"NGBOOT01" + struct.pack(">II", 2, 1) + cn)
ans = b""
while len(ans) < 80:
    ans += s.recv(80 - len(ans))
sn = ans[16:48]
mac = lambda label, a, b, data=b"": hmac.new(key, label + b"\0" + a + b + bytes(16) + data, "sha256").digest()
assert ans[48:80] == mac(b"server", cn, sn), "the server's proof"
if os.environ.get("WRONG_PROOF"):
    s.sendall(bytes(32))
    r = b""
    while True:
        d = s.recv(4096)
        if not d:
            break
        r += d
    print(r[:8].decode(), r[12:].decode())
    sys.exit(0)
s.sendall(mac(b"client", sn, cn))
blob = b"-x\0tcp\0--once\0"
m = hmac.new(key, b"args\0" + sn + cn + bytes(8) + struct.pack("<Q", len(blob)) + blob, "sha256").digest()
s.sendall(struct.pack(">I", len(blob)) + blob + m)
v = b""
while len(v) < 16:
    d = s.recv(4096)
    if not d:
        break
    v += d
code, n = struct.unpack(">II", v[8:16])
while len(v) < 16 + n:
    v += s.recv(4096)
print(code, v[16:16 + n].decode())
EOF
python3 "$T/own.py" "$port" "$T/key" >"$T/own" 2>&1
WRONG_PROOF=1 python3 "$T/own.py" "$port" "$T/key" >"$T/wrong" 2>&1
grep -q "^NGNOPE01 authentication failed: the client's key is not this server's" "$T/wrong" &&
	grep -q "dropped the connection from 127.0.0.1: authentication failed" "$T/serr" &&
	pass "a wrong proof: refused, said on both sides" || fail "a wrong proof: $(cat "$T/wrong")"
grep -q "^2 --once is the server's own option" "$T/own" && pass "a client's --once refused by the server" ||
	fail "a client's --once: $(cat "$T/own")"
kill -TERM $srv
wait $srv
grep -q "refused the client at 127.0.0.1: messages of 1048576 bytes" "$T/serr" &&
	pass "the server says why it refused" || fail "server log: $(cat "$T/serr")"

# --allow: a client from 127.0.0.2 is closed at once; 127.0.0.1 is served.
port=$((port + 1))
timeout 60 "$NGAUGE" --server --port $port --allow 127.0.0.1/32 --timeout 3 >/dev/null 2>"$T/aerr" &
srv=$!
if python3 -c 'import socket; socket.socket().bind(("127.0.0.2", 0))' 2>/dev/null; then
	python3 - "$port" >"$T/allow" 2>&1 <<'EOF'
import socket, sys, time
for _ in range(100):
    try:
        s = socket.socket(); s.bind(("127.0.0.2", 0)); s.settimeout(5); s.connect(("127.0.0.1", int(sys.argv[1])))
        break
    except OSError:
        time.sleep(0.05)
t = time.time()
try:
    s.sendall(b"NGBOOT01")
    got = s.recv(100)
except (ConnectionResetError, BrokenPipeError):
    got = b""  # closed before or as the bytes arrived
print("closed" if got == b"" else "answered", round(time.time() - t, 2))
EOF
	grep -q "^closed" "$T/allow" && grep -q "127.0.0.2, which --allow does not admit" "$T/aerr" &&
		pass "--allow: a client from outside is closed ($(cat "$T/allow"))" ||
		fail "--allow: $(cat "$T/allow") / $(cat "$T/aerr")"
fi
run 0 "$NGAUGE" --client 127.0.0.1 --port $port "${args[@]}" && pass "--allow: a client from inside is served"
grep -q "with neither --auth nor --allow" "$T/aerr" && fail "--allow still warned" || pass "--allow: no warning"
kill -TERM $srv
wait $srv

# A server on every interface with neither --auth nor --allow says so once; one on loopback does not.
port=$((port + 1))
timeout 60 "$NGAUGE" --server --port $port >/dev/null 2>"$T/werr" &
srv=$!
run 0 "$NGAUGE" --client 127.0.0.1 --port $port "${args[@]}"
kill -TERM $srv
wait $srv
[ "$(grep -c "listens on every interface port $port with neither --auth nor --allow" "$T/werr")" = 1 ] &&
	pass "open server: one warning" || fail "open server: $(cat "$T/werr")"
run 2 "$NGAUGE" --server --auth "$T/open" && one_line "server with a key others may read" "chmod 600 it"
run 2 "$NGAUGE" --server --allow 10.0.0.0/33 && one_line "bad --allow" "prefix length that is not 0 .. 32"

schema_check "$T"/*.json
[ "$FAILS" = 0 ] && echo "server_security: all passed" || echo "server_security: $FAILS failure(s)"
[ "$FAILS" = 0 ]
