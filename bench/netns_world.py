"""A private network for the corpus benches: a network namespace with loopback only, whose
DNS answers every name but localhost with one address the bench chooses, so a page's
third-party hosts either stall or are refused -- the same for an inline browser, a host and
the plain-HTTP path, since every process of the bench runs inside.

- `enter(argv)`: from outside, create the namespace (`ip netns add`, lo up,
  /etc/netns/NAME/resolv.conf -> 127.0.0.1), run `argv` in it with a deadline, and delete
  both afterwards, whatever happened.
- Inside: `World()` starts the DNS server (UDP, 127.0.0.1:53) and the stall listener
  (127.0.0.2, ports 80 and 443: accepts and never answers). `world.condition("stalled")`
  points every name at 127.0.0.2; `"refused"` at 127.0.0.3, where nothing listens, so a
  connection is refused at once. Answers carry TTL 0 and AAAA/HTTPS queries get an empty
  answer, so a browser's resolver cache never carries one condition into the next.
"""
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading

NETNS_ENV = "AFHTTP_BENCH_NETNS"
CONDITIONS = {"stalled": "127.0.0.2", "refused": "127.0.0.3"}
DESCRIBE = ("every name but localhost resolves (the namespace's own DNS on 127.0.0.1, TTL 0) to "
            "127.0.0.2, where a listener on :80 and :443 accepts and never answers (**stalled**), or to "
            "127.0.0.3, where nothing listens, so connections are refused at once (**refused**); "
            "the bench, its page server, the hosts and the inline browsers all run in a network namespace "
            "with loopback only")


def inside():
    """True when running in the bench's namespace."""
    return bool(os.environ.get(NETNS_ENV))


def enter(argv, deadline_s):
    """Run `argv` inside a fresh namespace; returns its exit code. Needs root and `ip`."""
    if os.geteuid() != 0 or not shutil.which("ip"):
        raise SystemExit("the corpus benches need root and iproute2 (`ip netns`) for their private network")
    name = f"afhttp-bench-{os.getpid()}"
    etc = f"/etc/netns/{name}"
    try:
        subprocess.run(["ip", "netns", "add", name], check=True, timeout=30)
        subprocess.run(["ip", "netns", "exec", name, "ip", "link", "set", "lo", "up"], check=True, timeout=30)
        os.makedirs(etc, exist_ok=True)
        with open(os.path.join(etc, "resolv.conf"), "w") as f:
            f.write("nameserver 127.0.0.1\noptions timeout:1 attempts:1\n")
        env = dict(os.environ, **{NETNS_ENV: name})
        p = subprocess.Popen(["ip", "netns", "exec", name, *argv], env=env, start_new_session=True)
        try:
            return p.wait(timeout=deadline_s)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=30)
            print(f"bench: the run passed its deadline of {deadline_s} s and was killed", file=sys.stderr)
            return 124
        except KeyboardInterrupt:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=30)
            raise
    finally:
        # Anything left in the namespace dies with it only once its processes are gone.
        pids = subprocess.run(["ip", "netns", "pids", name], capture_output=True, text=True, timeout=30).stdout.split()
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
        subprocess.run(["ip", "netns", "del", name], timeout=30)
        shutil.rmtree(etc, ignore_errors=True)


def dns_answer(query, address):
    """The DNS response to `query` (bytes): an A record of `address` (127.0.0.1 for localhost)
    with TTL 0 for an A question, an empty NOERROR answer for any other type."""
    if len(query) < 12:
        return None
    i = 12
    labels = []
    while i < len(query) and query[i]:
        n = query[i]
        labels.append(query[i + 1:i + 1 + n].decode("ascii", "replace"))
        i += 1 + n
    qend = i + 5
    if qend > len(query):
        return None
    qtype = struct.unpack("!H", query[i + 1:i + 3])[0]
    name = ".".join(labels).lower().rstrip(".")
    ip = "127.0.0.1" if name == "localhost" or name.endswith(".localhost") else address
    answers = b""
    if qtype == 1:
        answers = b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 0, 4) + socket.inet_aton(ip)
    flags = struct.pack("!BB", 0x84 | (query[2] & 0x01), 0x80)
    header = query[:2] + flags + struct.pack("!HHHH", 1, 1 if answers else 0, 0, 0)
    return header + query[12:qend] + answers


class World:
    """The namespace's DNS and stall listener; switch with `condition(name)`."""

    def __init__(self):
        if not inside():
            raise SystemExit("World() runs inside the bench namespace only")
        self.address = CONDITIONS["stalled"]
        self.held = []
        dns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        dns.bind(("127.0.0.1", 53))
        threading.Thread(target=self._dns, args=(dns,), daemon=True).start()
        for port in (80, 443):
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((CONDITIONS["stalled"], port))
            s.listen(1024)
            threading.Thread(target=self._hold, args=(s,), daemon=True).start()

    def condition(self, name):
        self.address = CONDITIONS[name]

    def _dns(self, sock):
        while True:
            query, peer = sock.recvfrom(4096)
            answer = dns_answer(query, self.address)
            if answer:
                sock.sendto(answer, peer)

    def _hold(self, sock):
        while True:
            conn, _ = sock.accept()
            self.held.append(conn)
            if len(self.held) > 4000:
                # Bound the file descriptors: the oldest stalled connections are closed.
                for c in self.held[:1000]:
                    c.close()
                del self.held[:1000]

    def resolve(self, name):
        """What a process in the namespace gets for `name` (a self-check)."""
        return socket.gethostbyname(name)
