#!/bin/bash
# The ofi backend's ordering and eager limits over libfabric's shm and tcp;ofi_rxm providers:
# - a provider that completes writes before it places them and places their second half late
#   (NGAUGE_OFI_FAULT=late, in modules/rdmalayer/ofi_data.c): with the order only assumed, as the backend used to
#   (NGAUGE_OFI_SEM=assume), the rdma module's ping-pong and the rma pattern fail --verify; asked for what
#   they need, the backend falls back to delivery completion and both pass;
# - a provider that grants neither ordering nor delivery completion (NGAUGE_OFI_FAULT=late-nodc) is refused
#   with a message naming the provider and what it lacks;
# - --rdma-eager 64K: ping-pong --verify at sizes around every ring limit (the eager size, the ring
#   message's 24-byte header and trailer, the former 16 KiB staging);
# - libfabric's registration cache off unless FI_MR_CACHE_MAX_COUNT says otherwise (the device line).
. "$(dirname "$0")/lib.sh"

"$NGAUGE" --list 2>/dev/null | grep -q "ofi" || { echo "SKIP: no ofi backend"; exit 77; }
for prov in shm 'tcp;ofi_rxm'; do
	if ! "$NGAUGE" -x rdma --rdma-backend ofi --ofi-provider "$prov" -p pingpong -s 8 -c 3 -w 1 >/dev/null 2>&1; then
		echo "ofi provider $prov does not open here: skipped"
		continue
	fi
	set -- -x rdma --rdma-backend ofi --ofi-provider "$prov"
	# The old assumption under the fault: wrong bytes, found by --verify.
	if NGAUGE_OFI_FAULT=late NGAUGE_OFI_SEM=assume timeout -k 5 120 "$NGAUGE" "$@" -p pingpong -s 1K,4K -c 30 -w 2 \
		--verify >"$T/out" 2>"$T/err"; then
		fail "$prov: the faulty provider with assumed order passed --verify (the fault does not bite)"
	elif grep -q "verify: " "$T/err" && grep -q "assumed order" "$T/out"; then
		pass "$prov: notices overtaking data (assumed order) fail --verify"
	else
		fail "$prov: the faulty provider failed otherwise than by --verify"; tail -3 "$T/err" >&2
	fi
	# Asked for: delivery completion, and every byte right.
	NGAUGE_OFI_FAULT=late run 0 "$NGAUGE" "$@" -p pingpong -s 1K,4K,100K -c 30 -w 2 --verify &&
		grep -q "delivery-complete" "$T/out" && pass "$prov: the faulty provider with delivery completion passes --verify"
	# The same for the rma pattern (--verify).  Over shm the held halves land within the target's next
	# progress call, before the rma pattern reads them as often as not: the failure is checked over tcp.
	if [ "$prov" = shm ]; then
		:
	elif NGAUGE_OFI_FAULT=late NGAUGE_OFI_SEM=assume timeout -k 5 120 "$NGAUGE" -x rma --rdma-backend ofi \
		--ofi-provider "$prov" -p rma -s 1K,64K -c 10 -w 2 --verify >"$T/out" 2>"$T/err"; then
		fail "$prov: rma with the faulty provider and assumed order passed --verify"
	elif grep -q "verify: " "$T/err"; then
		pass "$prov: rma with assumed order fails --verify"
	else
		fail "$prov: rma with the faulty provider failed otherwise than by --verify"; tail -3 "$T/err" >&2
	fi
	NGAUGE_OFI_FAULT=late run 0 "$NGAUGE" -x rma --rdma-backend ofi --ofi-provider "$prov" -p rma -s 1K,64K -c 10 -w 2 \
		--verify && pass "$prov: rma with delivery completion passes --verify"
	# Neither: refused, naming the provider and what it lacks.
	NGAUGE_OFI_FAULT=late-nodc run 1 "$NGAUGE" "$@" -p pingpong -s 8 -c 3 &&
		{ grep -q "provider $prov (with NGAUGE_OFI_FAULT) grants neither.*FI_ORDER_WAW.*FI_DELIVERY_COMPLETE.*could overtake" "$T/err" ||
			fail "$prov: the refusal does not name the provider and what it lacks: $(cat "$T/err")"; } &&
		pass "$prov: a provider without ordering or delivery completion is refused"
	# libfabric's registration cache: off unless the user set it (then the device line says so).
	run 0 "$NGAUGE" "$@" -p pingpong -s 8 -c 3 -w 1 -o "$T/c0.json" && ! grep -q "MR cache" "$T/c0.json" &&
		FI_MR_CACHE_MAX_COUNT=7 run 0 "$NGAUGE" "$@" -p pingpong -s 8 -c 3 -w 1 -o "$T/c7.json" &&
		grep -q '"device": "ofi [^"]*, MR cache 7' "$T/c7.json" &&
		pass "$prov: libfabric's registration cache is off unless FI_MR_CACHE_MAX_COUNT says otherwise" ||
		fail "$prov: the registration cache setting is not what the device line says"
	# Eager 64K: around every ring limit.
	run 0 "$NGAUGE" "$@" --rdma-eager 64K -p pingpong -c 10 -w 2 --verify \
		-s 0,1,7,8,9,16359,16360,16361,16383,16384,16385,65511,65512,65513,65535,65536,65537,200000 &&
		pass "$prov: --rdma-eager 64K pingpong --verify around the ring limits"
done
finish
