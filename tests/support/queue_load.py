"""A queue's producers and consumer-group worker that reach the master only through Sentinel,
and what they count: the writes acknowledged by ``WAIT`` and the entries processed. Shared by
the failover tests (a master killed, a migration between Redis and Brook)."""

from __future__ import annotations

import threading
import time

import redis

from bench.failover import SERVICE, Cluster, wait_for

STREAM = "jobs"
GROUP = "workers"


def recoverable(error: redis.RedisError) -> bool:
    """What a client may see while a failover goes on, and retries after: a lost connection,
    a timeout, a replica refusing writes, or a blocked command (WAIT, XREADGROUP BLOCK) on a
    master turned replica, which Redis and Brook answer ``-UNBLOCKED ... (master -> replica?)``.
    The last happens when a client still pointed at a killed master reaches it restarted, just
    before Sentinel makes it a replica; what it wrote there was not acknowledged."""
    return (isinstance(error, (redis.ConnectionError, redis.TimeoutError, redis.ReadOnlyError))
            or "UNBLOCKED force unblock from blocking operation" in str(error))


class Load:
    """Producers and a worker that only ever reach the master through Sentinel."""

    def __init__(self, cluster: Cluster, replicas: int = 1) -> None:
        self.sentinel = cluster.sentinel()
        self.replicas = replicas  # what WAIT asks for before a write counts as acknowledged
        self.stopping = threading.Event()  # producers stop
        self.drained = threading.Event()  # the worker stops once it finds nothing more
        self.lock = threading.Lock()
        self.acknowledged: set[bytes] = set()  # tokens whose XADD ``WAIT`` confirmed
        self.processed: set[bytes] = set()  # tokens the worker handled
        self.threads = [threading.Thread(target=self.produce, args=(name,), daemon=True)
                        for name in ("p1", "p2")]
        self.threads.append(threading.Thread(target=self.work, daemon=True))

    def master(self) -> redis.Redis:
        return self.sentinel.master_for(SERVICE, socket_timeout=2.0, protocol=2)

    def start(self) -> None:
        for thread in self.threads:
            thread.start()

    def produce(self, name: str) -> None:
        client = self.master()
        number = 0
        while not self.stopping.is_set():
            token = f"{name}-{number}".encode()
            number += 1  # a token is never sent twice: a lost reply may hide a stored entry
            try:
                # One connection for both: WAIT counts the connection's own last write.
                added, replicas = (client.pipeline(transaction=False)
                                   .xadd(STREAM, {"token": token})
                                   .execute_command("WAIT", self.replicas, 1000)
                                   .execute())
            except redis.RedisError as error:
                if not recoverable(error):
                    raise
                time.sleep(0.05)
                continue
            if replicas >= self.replicas:
                with self.lock:
                    self.acknowledged.add(token)

    def work(self) -> None:
        """Own pending entries first (after every reconnection: a claim may have survived
        the failover while the XACK did not), then new ones."""
        client = self.master()
        recovering = True
        last_pass = False  # the pass over its own pending entries before it stops
        while True:
            try:
                start = "0" if recovering else ">"
                reply = client.xreadgroup(GROUP, "w1", {STREAM: start}, count=100,
                                          block=None if recovering else 200)
                entries = reply[0][1] if reply else []
                if recovering and not entries:
                    if last_pass:
                        return
                    recovering = False
                    continue
                if not entries and self.drained.is_set():
                    # redis-py retries a command whose connection broke on the next master
                    # without telling: an XACK the old master answered but did not pass on
                    # leaves entries pending on the new one, found only by reading them.
                    recovering = last_pass = True
                    continue
                for _entry_id, fields in entries:
                    with self.lock:
                        self.processed.add(fields[b"token"])
                if entries:
                    client.xack(STREAM, GROUP, *[entry_id for entry_id, _ in entries])
            except redis.RedisError as error:
                if not recoverable(error):
                    raise
                recovering = True
                time.sleep(0.05)

    def wait_for_acknowledged(self, more: int) -> None:
        with self.lock:
            target = len(self.acknowledged) + more
        wait_for(lambda: len(self.acknowledged) >= target, 60, f"{more} more acknowledged writes")

    def stop(self) -> None:
        self.stopping.set()
        for thread in self.threads[:-1]:
            thread.join(30)
        self.drained.set()
        self.threads[-1].join(60)
        assert not any(thread.is_alive() for thread in self.threads)


def stream_state(client: redis.Redis, lag: bool = True) -> object:
    """What a server holds of the stream and its group (not the consumers' seen-times: a
    replica's are when it applied the claims). Without ``lag``, not the group's entries-read
    and lag either: see :data:`ENTRIES_READ_REPLICATED`."""
    groups = client.xinfo_groups(STREAM)
    if not lag:
        groups = [{name: value for name, value in group.items()
                   if name not in ("entries-read", "lag")} for group in groups]
    return (client.xrange(STREAM), groups,
            client.xpending_range(STREAM, GROUP, "-", "+", 1_000_000))


# A Redis master before 7.2.4 propagates XREADGROUP as XCLAIMs only, without the group's
# entries-read (redis/redis#12898 added XGROUP SETID ... ENTRIESREAD): its replicas, Redis's
# own as much as Brook, do not know the group's lag.
ENTRIES_READ_REPLICATED = (7, 2, 4)




def assert_nothing_lost(cluster: Cluster, load: Load, lag: bool = True) -> None:
    """Once the servers settle: every write ``WAIT`` acknowledged is in the master's stream,
    every entry was processed, the group has nothing pending, every replica holds what the
    master holds (``lag``: the group's lag too), and Sentinel's CONFIG REWRITE left each
    server's file naming its role."""
    wait_for(cluster.settled, 60, "the replicas in step")
    master_port = cluster.master_port()
    master = cluster.client(master_port)
    entries = master.xrange(STREAM)
    stored = [fields[b"token"] for _, fields in entries]
    assert len(stored) == len(set(stored))
    assert load.acknowledged <= set(stored)  # nothing acknowledged by WAIT is lost
    # Every entry was handled (a few maybe twice; one read but lost with the master, too).
    assert load.processed >= set(stored)
    group = master.xinfo_groups(STREAM)[0]
    assert group["pending"] == 0
    assert group["last-delivered-id"] == entries[-1][0]
    state = stream_state(master, lag)
    for port in cluster.ports:
        if port != master_port:
            assert stream_state(cluster.client(port), lag) == state
    # Sentinel's CONFIG REWRITE left every server's file naming its role now.
    for port in cluster.ports:
        lines = (cluster.workdir / f"server-{port}" / "server.conf").read_text().splitlines()
        following = [line for line in lines if line.startswith(("replicaof", "slaveof"))]
        assert following == ([] if port == master_port
                             else [f"replicaof 127.0.0.1 {master_port}"])
